#!/usr/bin/env python3
"""Count the o200k tokens one MCP search answer costs a client, and say
whether each half of it holds the answer.

Runs the server over stdio on a data folder, waits for indexing, calls the
search tool for a few queries and prints per query the tokens of the text
blocks, of structuredContent and of the resource_link blocks (each as
compact JSON, the way a client would hand it on), then the mean and p50.
With --questions (JSONL: query, answer[, target]) it asks those instead and
says whether the answer phrase is in the text a client reads (Claude.ai,
ChatGPT) and in JSON.stringify(structuredContent) (what Claude Code and
VS Code forward: a result's snippet), whitespace and case ignored; with a target, only in a
result citing that file. A measurement aid, not a product dependency:
needs `pip install bpe-openai`, whose o200k_base table ships inside the
wheel and matches tiktoken's (tiktoken itself fetches the table at first
use, which needs more than a package registry).

  python3 scripts/search_tokens.py --bin bin/micro-rag-mcp --data testdata/sample
"""
import argparse, json, os, re, shutil, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_stdio import Session

QUERIES = [
    "how do I fail over the database",
    "what caused the checkout outage",
    "how many days of parental leave",
    "what changed in release 2.4",
    "event ingestion design",
    "who do I ask on my first day",
]


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def text_blocks(text, target):
    """The result blocks of the tool's text ("[N] path… (score)" then the
    passage; "N. path…" before), only those citing target when it is set."""
    mark = r"\[\d+\] " if re.search(r"\n\[1\] ", text) else r"\d+\. "
    blocks = re.split(r"\n(?=" + mark + ")", text)[1:]
    return [b for b in blocks if not target or b.split("\n", 1)[0].split(" ", 1)[-1].startswith(target)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bin/micro-rag-mcp")
    ap.add_argument("--data", default="testdata/sample")
    ap.add_argument("--top-k", type=int, default=5)
    # 0 by default: the sample folder is small, and a full top_k is what is measured.
    ap.add_argument("--threshold", type=float, default=0.0)
    ap.add_argument("--questions", help="JSONL of query, answer and optionally target")
    ap.add_argument("--index", help="index folder to use (and keep); default a temporary one")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    a = ap.parse_args()
    import bpe_openai
    enc = bpe_openai.get_encoding("o200k_base")
    count = lambda s: len(enc.encode(s))
    qs = [{"query": q} for q in QUERIES]
    if a.questions:
        qs = [json.loads(l) for l in open(a.questions) if l.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        data = a.data if a.index else shutil.copytree(a.data, tmp + "/data")
        s = Session([a.bin, "--data-folder", data, "--index-folder", a.index or tmp + "/index",
                     "--title", "sample", "--inst", "Search the sample documents."])
        s.settle()  # reindex answers once the index is complete
        cols = {"text": [], "structured": [], "links": []}
        hits = {"text": 0, "structured": 0}
        if not a.quiet:
            print("query\ttext\tstructured\tlinks\ttotal\tresults" + ("\tin_text\tin_structured" if a.questions else ""))
        for q in qs:
            r = s.call("tools/call", {"name": "search", "arguments": {"query": q["query"], "top_k": a.top_k, "score_threshold": a.threshold}})["result"]
            text = "\n".join(c["text"] for c in r["content"] if c["type"] == "text")
            sc = r.get("structuredContent") or {}
            js = json.dumps(sc, ensure_ascii=False, separators=(",", ":"))
            links = sum(count(json.dumps(c, ensure_ascii=False, separators=(",", ":")))
                        for c in r["content"] if c["type"] == "resource_link")
            row = [count(text), count(js), links]
            for k, v in zip(cols, row):
                cols[k].append(v)
            line = f"{q['query'][:60]}\t{row[0]}\t{row[1]}\t{row[2]}\t{sum(row)}\t{len(sc.get('results', []))}"
            if a.questions:
                ans, target = norm(q["answer"]), q.get("target", "")
                in_text = any(ans in norm(b) for b in text_blocks(text, target))
                in_st = any(ans in norm(x.get("snippet", "")) and (not target or x["path"] == target or target in x.get("paths", []))
                            for x in sc.get("results", []))
                hits["text"] += in_text
                hits["structured"] += in_st
                line += f"\t{int(in_text)}\t{int(in_st)}"
            if not a.quiet:
                print(line)
        k = len(qs)
        print("mean\t" + "\t".join(f"{sum(v) / k:.0f}" for v in cols.values()))
        print("p50\t" + "\t".join(f"{statistics.median(v):.0f}" for v in cols.values()))
        if a.questions:
            print(f"answer@{a.top_k}\ttext {hits['text'] / k:.3f}\tstructured {hits['structured'] / k:.3f}\t({k} questions)")
        s.close()


if __name__ == "__main__":
    main()
