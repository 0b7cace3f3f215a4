#!/usr/bin/env python3
"""Count the o200k tokens of each half of the search results that
bench/cmd/eval -dump wrote: per run, the median (p50) and p90 of the text
content and of structuredContent as compact JSON, over the answerable
questions' searches that returned something. A measurement aid like search_tokens.py, with the same
dependency (`pip install bpe-openai`).

  go run ./bench/cmd/eval -set manpages -settings default -dump bin/dump.jsonl
  python3 scripts/eval_tokens.py bin/dump.jsonl
"""
import json, sys
from collections import defaultdict


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else 0


def main():
    import bpe_openai
    enc = bpe_openai.get_encoding("o200k_base")
    text, structured = defaultdict(list), defaultdict(list)
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                if d["noanswer"] or '"results":[]' in d["structured"]:
                    continue  # only answerable questions' results are counted
                key = (d["set"], d["run"])
                text[key].append(len(enc.encode(d["text"])))
                structured[key].append(len(enc.encode(d["structured"])))
    print("| set | run | searches | text p50 | text p90 | structuredContent p50 | structuredContent p90 |")
    print("|---|---|---|---|---|---|---|")
    for key in text:
        t, s = text[key], structured[key]
        print(f"| {key[0]} | {key[1]} | {len(t)} | {pct(t, .5)} | {pct(t, .9)} | {pct(s, .5)} | {pct(s, .9)} |")


if __name__ == "__main__":
    main()
