"""Times this server against the original Python one on the same folder, as
interleaved pairs: cold ingest wall and CPU of the whole process, its peak
RSS and the RSS once idle after indexing, and search latency over MCP with
the same queries. scripts/versus-original.sh installs the original and runs
this; docs/versus-original.md explains the method.

Usage: versus_original.py --ours BIN --original BIN --hf-home DIR --work DIR
       [--pages 80] [--pairs 3] [--idle 10] [--warmup 1] [--out FILE.jsonl]
       versus_original.py --table FILE.jsonl
"""
import argparse, gzip, json, os, re, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_stdio import Session

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "bench/eval/questions-manpages.jsonl"
PAGE_LIST = ROOT / "bench/eval/manpages.txt"

# Each server's line on stderr once its start-up indexing is over (both
# index the folder by themselves when started), and the one on failure.
DONE = {"ours": "initial reindex done", "original": "Initial background reindex completed"}
FAILED = {"ours": "initial reindex failed", "original": "Initial background reindex failed"}
# Where each logs its chunk count.
CHUNKS = {"ours": r"initial reindex done.*?chunks=(\d+)", "original": r"'chunks_total': (\d+)"}
# And the milliseconds its indexing took, model load and imports left out.
INDEX_MS = {"ours": r"initial reindex done.*? ms=(\d+)", "original": r"'elapsed_ms': (\d+)"}
TICK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(f"versus-original: {msg}", file=sys.stderr, flush=True)


def man_sources():
    """Maps a question target's stem (man5/ssh_config) to its roff source."""
    out = {}
    for line in PAGE_LIST.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, section = line.rsplit(".", 1)
        out[f"man{section[0]}/{name}"] = Path(f"/usr/share/man/man{section[0]}/{name}.{section}.gz")
    return out


def make_corpus(folder, pages):
    """Renders the first `pages` distinct targets of the man-page questions
    to text as bench/eval renders its .txt pages (groff, 80 columns, no
    hyphenation); returns the questions whose target is in the folder, with
    their target renamed to the .txt file."""
    sources = man_sources()
    questions, stems = [], []
    for line in QUESTIONS.read_text().splitlines():
        q = json.loads(line)
        stem = q["target"].rsplit(".", 1)[0]
        if stem not in stems:
            if len(stems) == pages:
                continue
            stems.append(stem)
        q["target"] = stem + ".txt"
        questions.append(q)
    if len(stems) < pages:
        sys.exit(f"versus-original: the questions name only {len(stems)} pages, not {pages}")
    stamp = folder / ".complete"
    if stamp.exists() and stamp.read_text() == "\n".join(stems):
        return questions
    shutil.rmtree(folder, ignore_errors=True)
    for stem in stems:
        src = sources[stem]
        if not src.exists():
            sys.exit(f"versus-original: {src} missing (install the man pages with scripts/bench-setup.sh)")
        roff = b".nh\n.de hy\n..\n" + gzip.decompress(src.read_bytes())
        text = subprocess.run(["groff", "-mandoc", "-t", "-Kutf-8", "-Tutf8", "-P-cbou", "-rLL=80n", "-rLT=80n"],
                              input=roff, capture_output=True, check=True).stdout
        out = folder / (stem + ".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(text)
    stamp.write_text("\n".join(stems))
    return questions


def proc_cpu_s(pid):
    """User plus system CPU seconds of the process (all its threads) and of
    the children it waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / TICK


def proc_kb(pid, key):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/{pid}/status")


def paths_in(reply):
    """The result paths of a search reply, in rank order, once each."""
    seen = []
    for p in re.findall(r'\\?"path\\?":\s*\\?"([^"\\]+)', json.dumps(reply)):
        if p not in seen:
            seen.append(p)
    return seen


def run_one(which, cmd, env, folder, index, questions, idle_s, logfile):
    """One cold start of a server on folder with an empty index: returns its
    figures."""
    shutil.rmtree(index, ignore_errors=True)
    load = os.getloadavg()
    with open(logfile, "w") as errlog:
        t0 = time.monotonic()
        s = Session(cmd + ["--data-folder", str(folder), "--index-folder", str(index),
                           "--title", "versus", "--inst", "side-by-side timing"],
                    stderr=errlog, env=env)
        pid = s.p.pid
        wall = cpu = peak = None
        while wall is None:
            text = Path(logfile).read_text(errors="replace")
            if DONE[which] in text:
                wall = time.monotonic() - t0
                cpu = proc_cpu_s(pid)
                peak = proc_kb(pid, "VmHWM")
            elif FAILED[which] in text or s.p.poll() is not None:
                sys.exit(f"versus-original: {which} did not index; see {logfile}")
            else:
                time.sleep(0.05)
        chunks = re.search(CHUNKS[which], text)
        index_ms = re.search(INDEX_MS[which], text)
        time.sleep(idle_s)
        idle = proc_kb(pid, "VmRSS")
        lat, hits = [], 0
        for q in questions:
            t = time.monotonic()
            reply = s.call("tools/call", {"name": "search", "arguments": {"query": q["query"], "top_k": 5}})
            lat.append(time.monotonic() - t)
            if "error" in reply or reply.get("result", {}).get("isError"):
                sys.exit(f"versus-original: {which} search failed: {json.dumps(reply)[:300]}")
            hits += q["target"] in paths_in(reply)[:5]
        s.close()
    lat.sort()
    return {"server": which, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak / 1024,
            "idle_rss_mb": idle / 1024, "chunks": int(chunks[1]) if chunks else None,
            "index_s": int(index_ms[1]) / 1000 if index_ms else None,
            "search_p50_ms": 1000 * statistics.median(lat),
            "search_p95_ms": 1000 * lat[int(0.95 * (len(lat) - 1))],
            "hit5": hits / len(questions), "queries": len(questions), "load1": load[0]}


def table(runs, pairs):
    by = {(r["pair"], r["server"]): r for r in runs}
    rows = ["| pair (first) | load 1 min | wall s ours / orig | ratio | of it indexing s ours / orig | ratio | CPU s ours / orig | ratio "
            "| peak RSS MB ours / orig | idle RSS MB ours / orig | search p50 ms ours / orig | hit@5 ours / orig | chunks ours / orig |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    wr, ir, cr = [], [], []
    for i in range(pairs):
        o, g = by[(i, "ours")], by[(i, "original")]
        wr.append(o["wall_s"] / g["wall_s"])
        ir.append(o["index_s"] / g["index_s"])
        cr.append(o["cpu_s"] / g["cpu_s"])
        rows.append(f"| {i + 1} ({o['first']}) | {o['load1']:.1f} / {g['load1']:.1f} "
                    f"| {o['wall_s']:.1f} / {g['wall_s']:.1f} | {wr[-1]:.3f} "
                    f"| {o['index_s']:.1f} / {g['index_s']:.1f} | {ir[-1]:.3f} "
                    f"| {o['cpu_s']:.1f} / {g['cpu_s']:.1f} | {cr[-1]:.3f} "
                    f"| {o['peak_rss_mb']:.0f} / {g['peak_rss_mb']:.0f} | {o['idle_rss_mb']:.0f} / {g['idle_rss_mb']:.0f} "
                    f"| {o['search_p50_ms']:.1f} / {g['search_p50_ms']:.1f} | {o['hit5']:.3f} / {g['hit5']:.3f} | {o['chunks']} / {g['chunks']} |")
    rows.append(f"\n- median ratio ours/original: wall {statistics.median(wr):.3f} "
                f"({min(wr):.3f}–{max(wr):.3f}), "
                f"indexing alone {statistics.median(ir):.3f} ({min(ir):.3f}–{max(ir):.3f}), CPU {statistics.median(cr):.3f} ({min(cr):.3f}–{max(cr):.3f})")
    for key, what in (("peak_rss_mb", "peak RSS MB"), ("idle_rss_mb", "idle RSS MB"), ("search_p50_ms", "search p50 ms")):
        o = [r[key] for r in runs if r["server"] == "ours"]
        g = [r[key] for r in runs if r["server"] == "original"]
        rows.append(f"- {what}: ours {min(o):.0f}–{max(o):.0f}, original {min(g):.0f}–{max(g):.0f}")
    return "\n".join(rows)


def main():
    if sys.argv[1:2] == ["--table"]:
        # Prints the table of runs recorded by --out, one pair per two lines.
        runs = [json.loads(l) for l in Path(sys.argv[2]).read_text().splitlines() if l.strip()]
        for r in runs:  # recorded before index_s was: read it off the run's log
            if r.get("index_s") is None:
                text = (Path(sys.argv[2]).parent / f"pair{r['pair'] + 1}-{r['server']}.log").read_text(errors="replace")
                r["index_s"] = int(re.search(INDEX_MS[r["server"]], text)[1]) / 1000
        print(table(runs, max(r["pair"] for r in runs) + 1))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", required=True, help="this project's binary")
    ap.add_argument("--original", required=True, help="the original's console script in its venv")
    ap.add_argument("--hf-home", required=True, help="the Hugging Face cache holding the original's model")
    ap.add_argument("--work", required=True, help="folder for the corpus, indexes and logs")
    ap.add_argument("--pages", type=int, default=80)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--idle", type=float, default=10, help="seconds idle after indexing before the idle RSS")
    ap.add_argument("--warmup", type=int, default=1, choices=(0, 1),
                    help="start each once on two pages first, unrecorded (0 when the page cache is warm)")
    ap.add_argument("--out", help="append each run's figures here as JSON lines")
    a = ap.parse_args()
    work = Path(a.work)
    folder = work / f"manpages-{a.pages}"
    questions = make_corpus(folder, a.pages)
    log(f"{a.pages} man pages in {folder}, {len(questions)} queries")
    env_orig = dict(os.environ, HF_HOME=a.hf_home, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    servers = {"ours": ([a.ours], None), "original": ([a.original], env_orig)}
    # Unrecorded warm-up of each on two pages: both pairs then start with
    # their libraries and the corpus in the page cache.
    warm = work / "warm"
    shutil.rmtree(warm, ignore_errors=True)
    for f in sorted(folder.rglob("*.txt"))[:2]:
        (warm / f.name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(f, warm / f.name)
    for which, (cmd, env) in servers.items() if a.warmup else ():
        log(f"warm-up: {which}")
        run_one(which, cmd, env, warm, work / f"index-warm-{which}", questions[:1], 0, work / f"warm-{which}.log")
    runs = []
    for i in range(a.pairs):
        order = ["ours", "original"] if i % 2 == 0 else ["original", "ours"]
        for which in order:
            cmd, env = servers[which]
            r = run_one(which, cmd, env, folder, work / f"index-{which}", questions, a.idle,
                        work / f"pair{i + 1}-{which}.log")
            r.update(pair=i, first=order[0], pages=a.pages)
            log(json.dumps(r))
            runs.append(r)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(r) + "\n")
    print(table(runs, a.pairs))


if __name__ == "__main__":
    main()
