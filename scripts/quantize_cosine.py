#!/usr/bin/env python3
"""Cosine of a quantised all-MiniLM-L6-v2 to the fp32 file, per evaluation
set: its questions and passages of its corpus (windows of about 200 words,
the size of the server's chunks), embedded as the server does (mean
pooling over the mask, unit length). Prints one row per set and kind.

  python3 scripts/quantize_cosine.py MODEL.onnx [MODEL2.onnx ...]
  python3 scripts/quantize_cosine.py --sets handbook,opsnotes MODEL.onnx ...

--sets keeps some sets and adds a row "all" over their questions and
passages together (the per-MatMul screening in BENCHMARKS.md); with it,
--scores also prints how far the variant moves each question's score
against each passage of its set (|int8 - fp32|: median, p90, max), the
figure to hold against the fp32 margins of the questions at the top-5
edge.

Run with the venv scripts/quantize.sh makes (onnxruntime, tokenizers).
--mancorpus names a folder of man pages that bench/cmd/eval -set manpages
rendered (bin/eval-mancorpus-*); without it the man-page set has questions
only.
"""

import argparse
import glob
import gzip
import json
import os
import re

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL = os.path.join(ROOT, "bench", "eval")
LIMIT = int(os.environ.get("COSINE_PASSAGES", "400"))  # passages per set


def windows(text, words=200, limit=400):
    w = text.split()
    return [" ".join(w[i : i + words]) for i in range(0, len(w), words)][:limit]


def read(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            text = f.read()
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    return re.sub(r"<[^>]+>", " ", text)


def questions(name):
    with open(os.path.join(EVAL, name), encoding="utf-8") as f:
        return [json.loads(l)["query"] for l in f if l.strip()]


def sets(mancorpus):
    def passages(paths, per_file=8, limit=LIMIT):
        out = []
        for p in sorted(paths):
            out += windows(read(p))[:per_file]
        return out[:limit]

    folders = os.path.join(EVAL, "folders")
    man = []
    if mancorpus:
        man = passages(glob.glob(os.path.join(mancorpus, "man*", "*.txt")), per_file=2)
    return [
        ("godoc", questions("questions.jsonl"), passages(glob.glob(os.path.join(EVAL, "godoc", "*.gz")), per_file=100)),
        ("handbook", questions("questions-handbook.jsonl"), passages(glob.glob(os.path.join(folders, "handbook", "*")))),
        ("opsnotes", questions("questions-opsnotes.jsonl"), passages(glob.glob(os.path.join(folders, "opsnotes", "*")))),
        ("manpages", questions("questions-manpages.jsonl"), man),
    ]


class Embedder:
    """batch is the texts a Run: 1 for a quantised file, as the server runs
    one (its activations' per-tensor scale would take a batch's other texts
    and their padding into account)."""

    def __init__(self, onnx_path, tok, batch):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 2
        self.s = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
        self.tok = tok
        self.batch = batch

    def embed(self, texts):
        out, batch = [], self.batch
        for i in range(0, len(texts), batch):
            enc = self.tok.encode_batch(texts[i : i + batch])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            h = self.s.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            v = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.concatenate(out)


def main():
    cache = os.environ.get("MICRO_RAG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "micro-rag-mcp"
    )
    fp32_dir = os.path.join(cache, "models", "all-MiniLM-L6-v2")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--fp32", default=os.path.join(fp32_dir, "model.onnx"))
    ap.add_argument("--tokenizer", default=os.path.join(fp32_dir, "tokenizer.json"))
    ap.add_argument("--mancorpus", default="")
    ap.add_argument("--sets", default="", help="comma-separated sets to keep (godoc,handbook,opsnotes,manpages), and a row over them all")
    ap.add_argument("--scores", action="store_true", help="with --sets: how far question-passage scores move")
    args = ap.parse_args()

    tok = Tokenizer.from_file(args.tokenizer)
    tok.enable_truncation(256)
    tok.enable_padding()
    data = sets(args.mancorpus)
    if args.sets:
        data = [d for d in data if d[0] in args.sets.split(",")]
    ref = Embedder(args.fp32, tok, 32)
    base = {(name, kind): ref.embed(texts) for name, qs, ps in data for kind, texts in (("questions", qs), ("passages", ps)) if texts}
    print("| model | set | kind | n | cos mean | cos min |")
    print("|---|---|---|---:|---:|---:|")
    for m in args.models:
        e = Embedder(m, tok, 1)
        label = f"{os.path.basename(os.path.dirname(m)) or m} {os.path.basename(m)}"
        pooled, vecs, moved = [], {}, []
        for name, qs, ps in data:
            for kind, texts in (("questions", qs), ("passages", ps)):
                if not texts:
                    continue
                vecs[kind] = e.embed(texts)
                cos = (vecs[kind] * base[(name, kind)]).sum(1)
                pooled.append(cos)
                print(f"| {label} | {name} | {kind} | {len(texts)} | {cos.mean():.5f} | {cos.min():.4f} |", flush=True)
            if qs and ps:
                fp32_scores = base[(name, "questions")] @ base[(name, "passages")].T
                moved.append(np.abs(vecs["questions"] @ vecs["passages"].T - fp32_scores).ravel())
        if args.sets:
            cos = np.concatenate(pooled)
            print(f"| {label} | all | both | {len(cos)} | {cos.mean():.5f} | {cos.min():.4f} |", flush=True)
        if args.scores and moved:
            d = np.concatenate(moved)
            print(f"{label}: {len(d)} question-passage scores moved by median {np.median(d):.4f}, p90 {np.percentile(d, 90):.4f}, max {d.max():.4f}")

if __name__ == "__main__":
    main()
