#!/usr/bin/env python3
"""Reference embeddings for every model of internal/model's table, computed
the way their model cards say, independently of the Go code: Hugging Face
`tokenizers` on the model's tokenizer.json (truncated at 512 ids for bge,
256 for MiniLM), the ONNX file run by Python's onnxruntime one text at a
time (no padding), the [CLS] vector (bge) or the mean of the token vectors
(MiniLM), L2-normalised; bge queries get the retrieval instruction first.

Regenerate (from the repository root, after `make models`):

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install onnxruntime==1.24.3 tokenizers==0.23.3 numpy==2.4.6
    for m in all-MiniLM-L6-v2 all-MiniLM-L6-v2-int8 bge-small-en-v1.5 bge-small-en-v1.5-int8 bge-small-zh-v1.5-int8; do
        /tmp/refvenv/bin/python internal/embed/testdata/gen_golden_onnx.py $m > internal/embed/testdata/golden-$m.jsonl
    done

Each line: {"text": ..., "query": true when embedded as a query, "tokens":
ids after truncation incl. [CLS]/[SEP] and the prefix, "embedding": 384
floats rounded to 7 significant digits}. The texts are those of
golden.jsonl (written by gen_golden.py) and the extra ones below.
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

# name prefix: (max length, pooling, query prefix)
SPECS = {
    "all-MiniLM-L6-v2": (256, "mean", ""),
    "bge-small-en-v1.5": (512, "cls", "Represent this sentence for searching relevant passages: "),
    "bge-small-zh-v1.5": (512, "cls", "为这个句子生成表示以用于检索相关文章："),
}

EXTRA = [
    "Der Bundestag hat das Gesetz zur Förderung erneuerbarer Energien verabschiedet.",
    "Wie lange dauert die Rückerstattung? Bearbeitung innerhalb von fünf Werktagen.",
    "机器学习是人工智能的一个分支，它使计算机能够从数据中学习。",
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "如何重置我的密码？请在设置页面点击“忘记密码”。",
    "東京タワーは1958年に完成した電波塔で、高さは333メートルです。",
    "ラーメンの作り方：スープを作り、麺を茹で、具材をのせます。",
    "서울은 대한민국의 수도이며 가장 큰 도시입니다.",
    "Mixed 中文 and English: GPU 加速的向量检索 with FAISS.",
    "MiXeD CaSe WoRdS Keep Their Case In A Cased Vocabulary: Ärger, École, İstanbul.",
    ("中文长文本会被截断。" * 80),  # beyond 512 ids
    ("The indexer walks the data folder and skips files that did not change. " * 50),  # beyond 512 ids
]

QUERIES = [
    "how do I reset my password",
    "what converts light into chemical energy?",
    "Wie lange dauert die Rückerstattung?",
    "机器学习是什么？",
    "中国的首都是哪里",
    "東京タワーの高さは？",
    "when was the tower completed",
    "who processes refunds within 5-7 business days",
]


def main():
    name = sys.argv[1]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    d = os.path.join(cache, "micro-rag-mcp", "models", name)
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.no_padding()
    max_len, pooling, prefix = SPECS[name.removesuffix("-int8")]
    tok.enable_truncation(max_length=max_len)
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"])
    inputs = {i.name for i in sess.get_inputs()}

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "golden.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    items = [(t, False) for t in texts + EXTRA] + [(q, True) for q in QUERIES]

    long = 0
    for text, query in items:
        enc = tok.encode((prefix if query else "") + text)
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = sess.run(["last_hidden_state"], feed)[0]
        vec = (hidden[0, 0] if pooling == "cls" else hidden[0].mean(axis=0)).astype(np.float64)
        vec = vec / max(np.linalg.norm(vec), 1e-12)
        long += len(enc.ids) == max_len
        rec = {"text": text, "query": query, "tokens": len(enc.ids),
               "embedding": [float(f"{x:.7g}") for x in vec.tolist()]}
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
    assert long >= 2, long
    print(f"{name}: {len(items)} texts, {long} truncated at {max_len}", file=sys.stderr)


if __name__ == "__main__":
    main()
