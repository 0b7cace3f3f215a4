#!/usr/bin/env python3
"""Count the o200k tokens one MCP search answer costs a client.

Runs the server over stdio on a data folder, waits for indexing, calls the
search tool (top_k 5) for a few queries and prints per query the tokens of
the text blocks, of structuredContent and of the resource_link blocks (each
as compact JSON, the way a client would hand it on). A measurement aid, not
a product dependency: needs `pip install bpe-openai`, whose o200k_base table
ships inside the wheel and matches tiktoken's (tiktoken itself fetches the
table at first use, which needs more than a package registry).

  python3 scripts/search_tokens.py --bin bin/micro-rag-mcp --data testdata/sample
"""
import argparse, json, os, shutil, sys, tempfile

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bin/micro-rag-mcp")
    ap.add_argument("--data", default="testdata/sample")
    ap.add_argument("--top-k", type=int, default=5)
    # 0 by default: the sample folder is small, and a full top_k is what is measured.
    ap.add_argument("--threshold", type=float, default=0.0)
    a = ap.parse_args()
    import bpe_openai
    enc = bpe_openai.get_encoding("o200k_base")
    count = lambda s: len(enc.encode(s))
    with tempfile.TemporaryDirectory() as tmp:
        data = shutil.copytree(a.data, tmp + "/data")
        s = Session([a.bin, "--data-folder", data, "--index-folder", tmp + "/index",
                     "--title", "sample", "--inst", "Search the sample documents."])
        s.settle()  # reindex answers once the index is complete
        totals = [0, 0, 0]
        print("query\ttext\tstructured\tlinks\ttotal\tresults")
        for q in QUERIES:
            r = s.call("tools/call", {"name": "search", "arguments": {"query": q, "top_k": a.top_k, "score_threshold": a.threshold}})["result"]
            text = sum(count(c["text"]) for c in r["content"] if c["type"] == "text")
            links = sum(count(json.dumps(c, ensure_ascii=False, separators=(",", ":")))
                        for c in r["content"] if c["type"] == "resource_link")
            st = count(json.dumps(r.get("structuredContent"), ensure_ascii=False, separators=(",", ":")))
            n = len(r.get("structuredContent", {}).get("results", []))
            for j, v in enumerate((text, st, links)):
                totals[j] += v
            print(f"{q}\t{text}\t{st}\t{links}\t{text + st + links}\t{n}")
        k = len(QUERIES)
        print(f"mean\t{totals[0] / k:.0f}\t{totals[1] / k:.0f}\t{totals[2] / k:.0f}\t{sum(totals) / k:.0f}")
        s.close()


if __name__ == "__main__":
    main()
