#!/usr/bin/env python3
"""Idle memory of a server and its first search after the idle release
(--idle-release): for each round, a server on a small folder indexes it,
answers a warm search, waits until it logs the release, then answers the
same search again. Prints one Markdown row per round: RSS before and after
the release, the first search's time over MCP and whether its results are
the warm ones.

  scripts/idle_rss.py [--binary bin/micro-rag-mcp] [--files 5] [--rounds 3]
                      [--idle 5s] [--model NAME]
"""
import argparse, json, os, shutil, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_stdio import Session  # noqa: E402

RELEASED = "idle: model released"
QUERY = "how to restore a database backup after a failed upgrade"


def proc_kb(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def write_folder(folder, n):
    """n short notes of distinct topics, a few chunks each."""
    topics = ["database backups and restores after upgrades", "the office printer and its toner",
              "travel expenses and receipts", "onboarding laptops and accounts", "release notes of the API",
              "on-call rotation and paging", "holiday calendar and leave requests", "network outages at the branch"]
    for i in range(n):
        t = topics[i % len(topics)]
        body = "\n\n".join(f"Section {k} about {t}. This note explains step {k} of the procedure for {t}, "
                           f"who owns it, what to check first and whom to call when it fails." for k in range(12))
        (folder / f"note-{i}.md").write_text(f"# Notes on {t}\n\n{body}\n")


def paths_of(reply):
    res = reply.get("result", {}).get("structuredContent", {}).get("results", [])
    return [(r["path"], r.get("chunk_index")) for r in res]


def wait_log(logfile, text, count, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(logfile).read_text(errors="replace").count(text) >= count:
            return True
        time.sleep(0.05)
    return False


def one_round(args, folder, index, logfile):
    shutil.rmtree(index, ignore_errors=True)
    cmd = [args.binary, "--data-folder", str(folder), "--index-folder", str(index), "--title", "idle",
           "--inst", "idle memory", "--idle-release", args.idle, "--watch=false"]
    if args.model:
        cmd += ["--model", args.model]
    with open(logfile, "w") as errlog:
        s = Session(cmd, stderr=errlog)
        pid = s.p.pid
        s.settle()
        warm = s.call("tools/call", {"name": "search", "arguments": {"query": QUERY, "top_k": 5}})
        loaded = proc_kb(pid, "VmRSS")
        if not wait_log(logfile, RELEASED, 1, 600):
            sys.exit(f"idle_rss: no release logged; see {logfile}")
        time.sleep(0.5)
        released = proc_kb(pid, "VmRSS")
        t = time.monotonic()
        again = s.call("tools/call", {"name": "search", "arguments": {"query": QUERY, "top_k": 5}})
        first_ms = (time.monotonic() - t) * 1000
        after = proc_kb(pid, "VmRSS")
        t = time.monotonic()
        s.call("tools/call", {"name": "search", "arguments": {"query": QUERY, "top_k": 5}})
        warm_ms = (time.monotonic() - t) * 1000
        s.p.stdin.close()
        s.p.wait(timeout=30)
    return {"loaded_mb": loaded / 1024, "released_mb": released / 1024, "first_ms": first_ms, "warm_ms": warm_ms,
            "after_mb": after / 1024, "same": paths_of(warm) == paths_of(again) and paths_of(warm) != [],
            "load": os.getloadavg()[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="bin/micro-rag-mcp")
    ap.add_argument("--files", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", default="5s", help="--idle-release of the server")
    ap.add_argument("--model", default="")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="idle-rss-"))
    folder = tmp / "data"
    folder.mkdir()
    write_folder(folder, args.files)
    print("| round | load 1 min | RSS MB loaded, idle | RSS MB released | first search after ms | "
          "next search ms | RSS MB after it | same results |")
    print("|---|---|---|---|---|---|---|---|")
    for r in range(args.rounds):
        f = one_round(args, folder, tmp / "index", tmp / f"server-{r}.log")
        print(f"| {r + 1} | {f['load']:.1f} | {f['loaded_mb']:.0f} | {f['released_mb']:.0f} | {f['first_ms']:.0f} | "
              f"{f['warm_ms']:.0f} | {f['after_mb']:.0f} | {'yes' if f['same'] else 'NO'} |", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
