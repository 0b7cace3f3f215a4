#!/usr/bin/env python3
"""Dense ranking of an evaluation set recomputed outside the Go program, to
check that the server's dense results are the model's own (issue 25).

It reads the chunks the server indexed (INDEX/manifest.jsonl), embeds them
and the questions with Python's `tokenizers` and `onnxruntime` on the same
model files, pooled as the model card says, ranks the files by their best
chunk's cosine and compares with the server's dense run recorded by
`go run ./bench/cmd/noise -modes dense -json DUMP`: per question the
target's rank among distinct files in both, and the cosine of each of the
server's top files against Python's best cosine for that file.

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install onnxruntime==1.24.3 tokenizers==0.23.3 numpy==2.4.6
    /tmp/refvenv/bin/python bench/eval/refrank.py MODEL SET INDEX DUMP [IDS]

MODEL is a folder name under ~/.cache/micro-rag-mcp/models; IDS, comma
separated, limits the check to those questions and embeds only the chunks
of their targets and of the server's top files (the target's rank is then
among those files).
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

BGE_EN = "Represent this sentence for searching relevant passages: "
# name prefix: (max length, pooling, query prefix), as internal/model's table.
SPECS = {
    "all-MiniLM-L6-v2": (256, "mean", ""),
    "bge-small-en-v1.5": (512, "cls", BGE_EN),
}
FILES = {"godoc": "questions.jsonl", "manpages": "questions-manpages.jsonl",
         "crowded": "questions-crowded.jsonl", "heldout": "questions-heldout.jsonl"}


def spec(model):
    for prefix, s in SPECS.items():
        if model.startswith(prefix):
            return s
    sys.exit(f"no spec for {model}")


class Embedder:
    def __init__(self, model):
        d = os.path.expanduser(f"~/.cache/micro-rag-mcp/models/{model}")
        self.max_len, self.pooling, self.query_prefix = spec(model)
        self.int8 = model.endswith("-int8")
        self.tok = Tokenizer.from_file(f"{d}/tokenizer.json")
        self.tok.enable_truncation(self.max_len)
        self.tok.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        self.sess = ort.InferenceSession(f"{d}/model.onnx", opts, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]

    def embed(self, texts, batch=16):
        if self.int8:
            batch = 1  # dynamic quantisation scales by the whole batch; the server runs one text at a time
        encs = [self.tok.encode(t).ids for t in texts]
        out = np.zeros((len(texts), 384), dtype=np.float64)
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i]))
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            n = len(encs[idx[0]])
            ids = np.zeros((len(idx), n), dtype=np.int64)
            mask = np.zeros((len(idx), n), dtype=np.int64)
            for r, i in enumerate(idx):
                ids[r, :len(encs[i])] = encs[i]
                mask[r, :len(encs[i])] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self.sess.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0].astype(np.float64)
            if self.pooling == "cls":
                v = hidden[:, 0, :]
            else:
                v = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            out[idx] = v
        return out


def live_chunks(index):
    live = {}
    with open(os.path.join(index, "manifest.jsonl")) as f:
        for line in f:
            c = json.loads(line)
            if c.get("deleted"):
                live.pop(c["id"], None)
            else:
                live[c["id"]] = c
    return list(live.values())


def main():
    model, set_name, index, dump = sys.argv[1:5]
    qfile = os.path.join(os.path.dirname(os.path.abspath(__file__)), FILES[set_name])
    qs = [json.loads(l) for l in open(qfile) if l.strip()]
    go = {(d["Set"], d["ID"]): d for d in json.load(open(dump)) if d["Mode"] == "dense" and d["Real"]}
    emb = Embedder(model)
    chunks = live_chunks(index)
    cache = os.path.join(index, f"refrank-{model}.npy")
    if len(sys.argv) > 5:
        ids = set(sys.argv[5].split(","))
        qs = [q for q in qs if q["id"] in ids]
        files = {q["target"] for q in qs} | {h["Path"] for q in qs for h in go[(set_name, q["id"])]["Hits"]}
        chunks = [c for c in chunks if c["path"] in files]
        cache = None
    if cache and os.path.exists(cache):
        cv = np.load(cache)
    else:
        cv = emb.embed([c["text"] for c in chunks])
        if cache:
            np.save(cache, cv)
    paths = [c["path"] for c in chunks]
    qv = emb.embed([emb.query_prefix + q["query"] for q in qs], batch=1)
    sims = qv @ cv.T
    agree, rows, max_dcos = 0, [], 0.0
    for q, s in zip(qs, sims):
        best = {}
        for p, c in zip(paths, s):
            best[p] = max(best.get(p, -2.0), c)
        ranked = sorted(best, key=lambda p: -best[p])
        py_rank = ranked.index(q["target"]) + 1 if q["target"] in ranked[:10] else 0
        g = go.get((set_name, q["id"]))
        seen, go_files = set(), []
        for h in g["Hits"] if g else []:
            if h["Path"] not in seen:
                seen.add(h["Path"])
                go_files.append(h)
        for h in go_files:
            max_dcos = max(max_dcos, abs(h["Why"]["cosine"] - best[h["Path"]]))
        go_rank = next((i + 1 for i, h in enumerate(go_files) if h["Path"] == q["target"]), 0)
        if cache is None and py_rank > len(go_files):
            py_rank = 0  # behind every file the server listed: out of its list too
        agree += (py_rank == go_rank)
        rows.append((q["id"], go_rank, py_rank, ranked[0], best[q["target"]]))
    print(f"{model} {set_name}: {len(qs)} questions, {len(chunks)} chunks; target's file rank equal in "
          f"{agree}/{len(qs)}; max |cos(server) - cos(python)| over the server's top files {max_dcos:.2e}")
    h5 = lambda k: sum(1 for r in rows if 0 < r[k] <= 5) / len(rows)
    print(f"file hit@5: server {h5(1):.3f}, python {h5(2):.3f}")
    for r in rows:
        if r[1] != r[2]:
            print(f"  {r[0]}: server rank {r[1]}, python rank {r[2]}")


if __name__ == "__main__":
    main()
