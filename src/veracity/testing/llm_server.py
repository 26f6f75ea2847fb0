"""A scripted OpenAI-compatible chat server on loopback, for tests and the scripted evaluation.

``with scripted_server(script) as url:`` serves ``POST {url}/chat/completions`` (JSON, or
server-sent events when the request says ``"stream": true``) and llama.cpp's ``POST /tokenize``
on ``127.0.0.1`` at a free port, in a thread, until the block ends. ``script(request)`` gets the
request's JSON and returns the reply text, or a :class:`Fault` that makes the server misbehave
the way endpoints do: an HTTP status (429 with ``Retry-After``, 500), a delay (a timeout), a
body that is not JSON, or a stream cut off after some pieces.

:func:`faithful_reply` is a script that writes an answer a careful model would: for each part
the prompt says is covered, the sentence of each named block that shares most words with the
part, with its block number (list markers and table pipes removed). Nothing here reaches
beyond 127.0.0.1.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..text.sentences import split_sentences
from ..text.tokens import tokenize

__all__ = ["Fault", "Script", "faithful_reply", "prompt_blocks", "prompt_parts", "scripted_server"]


@dataclass(frozen=True, slots=True)
class Fault:
    """How the server misbehaves for one request (see the module docstring)."""

    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    body: bytes | None = None
    text: str = ""
    cut_after: int | None = None
    """Stream: send this many pieces of ``text``, then close without finishing."""


Script = Callable[[Mapping[str, Any]], "str | Fault"]

_BLOCK = re.compile(r'<data id="(\d+)"[^>]*>\n(.*?)\n(.*?)\n</data>', re.DOTALL)
_PART = re.compile(r"^\d+\. (.*?)(?: \(answered in block ((?:\[\d+\](?:, )?)+)\))?$", re.MULTILINE)


def _user_text(request: Mapping[str, Any]) -> str:
    return "\n".join(m.get("content", "") for m in request.get("messages", []) if m.get("role") == "user")


def prompt_blocks(request: Mapping[str, Any]) -> dict[int, str]:
    """The data blocks of a veracity prompt: number → chunk text (unescaped)."""
    return {int(n): html.unescape(text) for n, _, text in _BLOCK.findall(_user_text(request))}


def prompt_parts(request: Mapping[str, Any]) -> list[tuple[str, list[int]]]:
    """The covered parts of a veracity prompt: their text and the blocks named for each."""
    text = _user_text(request)
    section = text.split("Answer these parts:", 1)[-1].split("\n\n", 1)[0]
    return [
        (html.unescape(part), [int(n) for n in re.findall(r"\d+", blocks or "")])
        for part, blocks in _PART.findall(section)
    ]


def _plain(sentence: str) -> str:
    sentence = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", sentence)
    if sentence.startswith("|"):
        cells = [cell.strip() for cell in sentence.strip("|").split("|") if cell.strip()]
        sentence = "，".join(cells) + "。"
    return sentence.strip()


def faithful_reply(request: Mapping[str, Any]) -> str:
    """For each covered part and each block named for it, the block's sentence that shares most
    words with the part, cited (see above); a part that names no block reads every block."""
    blocks = prompt_blocks(request)
    lines = []
    for part, numbers in prompt_parts(request):
        wanted = set(tokenize(part))
        for number in numbers or sorted(blocks):
            text = blocks.get(number, "")
            best: tuple[int, str] | None = None
            for start, end in split_sentences(text):
                sentence = _plain(text[start:end])
                overlap = len(wanted & set(tokenize(sentence)))
                if sentence and (best is None or overlap > best[0]):
                    best = (overlap, sentence)
            if best is not None:
                lines.append(f"{best[1]} [{number}]")
    return "\n".join(dict.fromkeys(lines))


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the test output stays quiet
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(request)
        self.server.authorizations.append(self.headers.get("Authorization"))
        if self.path.endswith("/tokenize"):
            self._json({"tokens": list(range(len(str(request.get("content", "")).split())))})
            return
        if not self.path.endswith("/chat/completions"):
            self._json({"error": "not found"}, status=404)
            return
        reply = self.server.script(request)
        fault = reply if isinstance(reply, Fault) else Fault(text=reply)
        if fault.delay_s:
            time.sleep(fault.delay_s)
        if fault.status != 200:
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            self._json({"error": {"message": "scripted failure"}}, status=fault.status, headers=headers)
            return
        if fault.body is not None:
            self._raw(fault.body, "application/json")
        elif request.get("stream"):
            self._stream(fault)
        else:
            self._json(
                {
                    "id": "scripted",
                    "object": "chat.completion",
                    "model": request.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": fault.text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": len(_user_text(request)) // 4,
                        "completion_tokens": len(fault.text) // 4,
                    },
                }
            )

    def _json(self, data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> None:
        self._raw(json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json", status, headers)

    def _raw(
        self, body: bytes, kind: str, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, fault: Fault) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        pieces = re.findall(r"\S+\s*", fault.text) or [""]
        for sent, piece in enumerate(pieces):
            if fault.cut_after is not None and sent >= fault.cut_after:
                self.wfile.flush()
                self.close_connection = True
                return
            event = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
            self.wfile.flush()
        final = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.script = script
        self.requests: list[Mapping[str, Any]] = []
        self.authorizations: list[str | None] = []


@dataclass(frozen=True, slots=True)
class ScriptedEndpoint:
    """A running scripted server: its base URL (ends in ``/v1``), the requests it received
    (their JSON) and their ``Authorization`` headers, in order."""

    base_url: str
    requests: list[Mapping[str, Any]]
    authorizations: list[str | None]


@contextmanager
def scripted_server(script: Script = faithful_reply) -> Iterator[ScriptedEndpoint]:
    """Serve ``script`` on 127.0.0.1 until the block ends (see the module docstring)."""
    server = _Server(script)
    thread = threading.Thread(target=server.serve_forever, name="scripted-llm", daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield ScriptedEndpoint(f"http://{host!s}:{port}/v1", server.requests, server.authorizations)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    """``python -m veracity.testing.llm_server [--port N]``: serve :func:`faithful_reply` on
    127.0.0.1 until interrupted, for trying ``--llm-base-url`` without a model (the README's
    example). It prints its base URL; it is a scripted stand-in, not a language model."""
    import argparse

    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible server on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8399, help="port on 127.0.0.1 (0: any free one)")
    args = parser.parse_args(argv)
    server = _Server(faithful_reply, port=args.port)
    host, port = server.server_address[:2]
    print(f"scripted OpenAI-compatible server at http://{host!s}:{port}/v1 (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
