#!/usr/bin/env python3
"""Measure the progress notifications of one MCP reindex.

Starts the server over stdio on an empty copy of nothing, waits for its
start-up indexing, copies --data into its folder and calls reindex with a
progressToken, timing every notifications/progress. Prints notifications
per second, the longest gap, how the chunk total and ETA in the message
moved (decreases of the total, its distinct values, the ETA's rises
against the time that passed: a stable ETA falls about one second per
second), and how progress/total relate to the chunks done in the message:
how far progress ran ahead of them or behind, values that did not rise,
and the totals given. A measurement aid, not a product dependency.

  python3 scripts/progress_watch.py --bin bin/micro-rag-mcp --data DIR [--trace out.tsv]
"""
import argparse, os, re, shutil, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_stdio import Session

MSG = re.compile(r"files (\d+)/(\d+), chunks (\d+)/~?(\d+)(?:, ETA (\S+))?")


def seconds(eta):
    """'1m20s', '45s', '2h3m4s' → seconds."""
    total, num = 0, ""
    for ch in eta:
        if ch.isdigit() or ch == ".":
            num += ch
        else:
            total += float(num or 0) * {"h": 3600, "m": 60, "s": 1}.get(ch, 0)
            num = ""
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bin/micro-rag-mcp")
    ap.add_argument("--data", required=True)
    ap.add_argument("--trace", help="write every notification here (t, files, chunks, total, eta)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = tmp + "/data"
        os.makedirs(data)
        with open(data + "/seed.md", "w") as f:
            f.write("# Seed\n\nA note so the first run has a file.\n")
        notes = []
        record = lambda m: m.get("method") == "notifications/progress" and notes.append((time.monotonic(), m["params"]))
        s = Session([a.bin, "--data-folder", data, "--index-folder", tmp + "/index", "--watch=false",
                     "--title", "progress", "--inst", "x"], record)
        s.settle()
        shutil.copytree(a.data, data + "/corpus")
        notes.clear()
        t0 = time.monotonic()
        r = s.call("tools/call", {"name": "reindex", "arguments": {}, "_meta": {"progressToken": "w"}})
        t1 = time.monotonic()
        s.call("ping", {})  # notifications may trail the answer
        s.close()
    res = r["result"].get("structuredContent", {})
    rows = []
    for t, prm in notes:
        m = MSG.search(prm.get("message", ""))
        if not m:
            continue
        n = lambda s: int(s.replace(",", ""))
        rows.append((t - t0, n(m[1]), n(m[3]), n(m[4]), seconds(m[5]) if m[5] else None,
                     prm.get("progress"), prm.get("total")))
    if a.trace:
        with open(a.trace, "w") as f:
            f.write("t\tfiles\tchunks\ttotal\teta_s\tprogress\tprogress_total\n")
            for row in rows:
                f.write("\t".join("" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v) for v in row) + "\n")
    gaps = [b[0] - a_[0] for a_, b in zip([(0,)] + rows, rows)]
    totals = [row[3] for row in rows]
    drops = sum(1 for x, y in zip(totals, totals[1:]) if y < x)
    final = res.get("chunks_total")
    # ETA: a rise of more than 10 s plus 20 % of the time since the previous
    # notification counts as a jump; after the first 10 % of the run.
    etas = [(row[0], row[4]) for row in rows if row[4] is not None and row[0] > 0.1 * (t1 - t0)]
    jumps = sum(1 for (ta, ea), (tb, eb) in zip(etas, etas[1:]) if eb > ea + 10 + 0.2 * (tb - ta))
    errs = [abs((ta + e) - (t1 - t0)) for ta, e in etas]
    print(f"reindex {t1 - t0:.1f} s, files_added {res.get('files_added')}, chunks_total {final}")
    print(f"notifications {len(notes)}, {len(notes) / (t1 - t0):.2f}/s, longest gap {max(gaps, default=0):.2f} s")
    print(f"chunk total: first {totals[0] if totals else None}, distinct values {len(set(totals))}, "
          f"decreases {drops}, min {min(totals, default=0)}, max {max(totals, default=0)}, final {final}")
    if etas:
        print(f"ETA: {len(etas)} values after 10% of the run, jumps up {jumps}, "
              f"median |predicted end - real end| {sorted(errs)[len(errs) // 2]:.1f} s, max {max(errs):.1f} s")
    else:
        print("ETA: none in the messages")
    # progress/total against the chunks done that the same message states.
    ahead = [row[5] - row[2] for row in rows]
    flat = sum(1 for x, y in zip(rows, rows[1:]) if y[5] <= x[5])
    given = [row[6] for row in rows if row[6] is not None]
    first = rows[0] if rows else None
    print(f"progress: first {first[5] if first else None}/{first[6] if first else None}, "
          f"ahead of the message's chunks by at most {max(ahead, default=0):g}, behind by at most {-min(ahead, default=0):g}, "
          f"not rising {flat}; total given in {len(given)} of {len(rows)}, distinct {sorted(set(given))}")
    for row in rows[:3] + rows[-2:]:
        print(f"  t={row[0]:.2f}s progress {row[5]:g}/{row[6]}  chunks {row[2]}/{row[3]}  files {row[1]}")


if __name__ == "__main__":
    main()
