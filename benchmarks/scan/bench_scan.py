#!/usr/bin/env python3
"""`anydev scan` against grep on generated and real trees, in one run.

    python benchmarks/scan/bench_scan.py                    # 25 MB and 100 MB corpora
    python benchmarks/scan/bench_scan.py --sizes 100 --runs 5 --json out.json
    python benchmarks/scan/bench_scan.py --sizes "" --devset --tree ~/src/repo

For each tree (a generated corpus of each --sizes, each --tree, and with
--devset each tree of the development set, /work/devset, skipped with a
message where it does not exist) it runs, after one warm-up run that fills
the page cache, --runs rounds of:

- grep: ``grep -rEn 'torch\\.cuda\\.|at::cuda::|c10::cuda::' TREE`` writing
  its matches to a file (GNU grep stops at the first match of each file when
  its output is /dev/null, so a file keeps the comparison honest);
- anydev: ``anydev scan --no-config --format json --output FILE TREE`` (all
  cores by default), the command users run: interpreter start-up, the
  walk, the native scan, resolution of aliases, and the JSON report included.

interleaved (each round runs both, in turn, the first of them alternating),
and reports the median wall times (and the best), their ratio anydev/grep,
throughput per core in MB/s (tree bytes / median wall / threads), and the
peak resident memory of each tool's own process, which should not grow with
the corpus: GNU time's wait4 of its child, since a child forked from this
interpreter counts the interpreter's pages until it execs (wait4 here gave
grep 15 MB, where it uses 2.4). The corpus is written by gen_corpus.py under
--corpus-dir (default build/, never committed) and reused while its
parameters are unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_corpus  # noqa: E402

PATTERN = r"torch\.cuda\.|at::cuda::|c10::cuda::"
# --literals: grep for the device literals and idioms too (the AD9xx rules).
LITERAL_PATTERN = PATTERN + r"|\"cuda|\.cuda\(|is_cuda|kCUDA|DeviceType::CUDA|\"nccl\""


def corpus(base: str, size_mb: int, seed: int) -> tuple[str, int, int]:
    path = os.path.join(base, f"corpus-{size_mb}mb")
    stamp = os.path.join(path, ".stamp")
    want = f"{size_mb} {seed} {os.path.getmtime(gen_corpus.__file__)}"
    if not (os.path.exists(stamp) and open(stamp).read().split("|")[0] == want):
        print(f"generating a {size_mb} MB corpus in {path} ...", file=sys.stderr, flush=True)
        files, total = gen_corpus.generate(path, size_mb, seed)
        with open(stamp, "w") as f:
            f.write(f"{want}|{files} {total}")
    files, total = map(int, open(stamp).read().split("|")[1].split())
    return path, files, total


def run(argv: list[str], stdout_path: str, ok: tuple[int, ...]) -> float:
    """Runs argv; returns its wall seconds."""
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
    if p.returncode not in ok:
        raise SystemExit(f"{argv[0]} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    return wall


def peak_rss_kb(argv: list[str], stdout_path: str) -> int:
    """The peak RSS (KiB) of argv's own process: ru_maxrss as GNU time's
    wait4 reports it for its child (a process of about 1 MB before the
    exec; 0 without /usr/bin/time)."""
    if not os.access("/usr/bin/time", os.X_OK):
        return 0
    rss = stdout_path + ".rss"
    with open(stdout_path, "wb") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss, *argv], stdout=out,
                       stderr=subprocess.DEVNULL)
    try:
        return int(open(rss).read().split()[-1])
    except (OSError, ValueError, IndexError):
        return 0


def warm(path: str) -> None:
    for root, _, names in os.walk(path):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                while f.read(1 << 20):
                    pass


def tree_size(path: str) -> tuple[int, int]:
    files = total = 0
    for d, dirs, names in os.walk(path):
        dirs[:] = [x for x in dirs if x != ".git"]
        for n in names:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                files += 1
                total += os.path.getsize(p)
    return files, total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="25,100",
                    help="generated corpus sizes in MB (default: 25,100; \"\": none)")
    ap.add_argument("--tree", action="append", default=[], metavar="PATH",
                    help="a real tree to measure (repeatable)")
    ap.add_argument("--devset", nargs="?", const="/work/devset", default=None, metavar="DIR",
                    help="measure each tree of the development set (default /work/devset)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=0, help="anydev --jobs (default: all cores)")
    ap.add_argument("--corpus-dir", default=os.path.join(HERE, "..", "..", "build", "scan-bench"))
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--anydev", default=f"{sys.executable} -m anydev",
                    help="the command to run (default: this interpreter's -m anydev)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures here")
    ap.add_argument("--literals", action="store_true",
                    help="grep for the device literals and idioms too (anydev scans for them "
                         "by default)")
    a = ap.parse_args()

    jobs = a.jobs or os.cpu_count() or 1
    rows = []
    tmp = tempfile.mkdtemp(prefix="anydev-bench-")
    trees: list[tuple[str, str, int, int]] = []
    for size in [int(x) for x in a.sizes.split(",") if x.strip()]:
        path, files, total = corpus(os.path.abspath(a.corpus_dir), size, a.seed)
        trees.append((f"generated {size} MB", path, files, total))
    tree_paths = list(a.tree)
    if a.devset:
        if os.path.isdir(a.devset):
            tree_paths += sorted(os.path.join(a.devset, d) for d in os.listdir(a.devset)
                                 if os.path.isdir(os.path.join(a.devset, d)))
        else:
            print(f"the development set is skipped: {a.devset} does not exist", flush=True)
    for t in tree_paths:
        trees.append((os.path.basename(os.path.abspath(t)), t, *tree_size(t)))
    for label, path, files, total in trees:
        warm(path)
        grep = ["grep", "-rEn", LITERAL_PATTERN if a.literals else PATTERN, path]
        scan = [*a.anydev.split(), "scan", "--no-config", "--format", "json",
                "--output", os.path.join(tmp, "scan.json"), "--jobs", str(jobs), path]
        run(grep, os.path.join(tmp, "grep.txt"), (0, 1))  # warm-up
        run(scan, os.devnull, (0, 1))
        g: list[float] = []
        s: list[float] = []
        for k in range(a.runs):  # interleaved, the first of the two alternating
            for which in ((g, grep), (s, scan))[::1 if k % 2 == 0 else -1]:
                out = os.path.join(tmp, "grep.txt") if which[1] is grep else os.devnull
                which[0].append(run(which[1], out, (0, 1)))
        grep_rss = peak_rss_kb(grep, os.path.join(tmp, "grep.txt"))
        scan_rss = peak_rss_kb(scan, os.path.join(tmp, "scan.out"))
        # The same walk and scan with no finding kept (the corpus has no
        # c10::xpu): the memory of the scanner itself, without the report.
        quiet = list(scan)
        at = quiet.index("--no-config") + 1
        quiet[at:at] = ["--select", "AD8"]
        quiet[quiet.index("--output") + 1] = os.path.join(tmp, "quiet.json")
        quiet_rss = peak_rss_kb(quiet, os.path.join(tmp, "quiet.out"))
        grep_lines = sum(1 for _ in open(os.path.join(tmp, "grep.txt"), "rb"))
        report = json.load(open(os.path.join(tmp, "scan.json")))["findings"]
        findings = len(report)
        literal = sum(1 for f in report if f["rule"].startswith("AD9"))
        gw, sw = statistics.median(g), statistics.median(s)
        row = {
            "tree": label, "size_mb": round(total / 1e6, 1), "files": files,
            "grep_median_s": round(gw, 3), "grep_best_s": round(min(g), 3),
            "anydev_median_s": round(sw, 3), "anydev_best_s": round(min(s), 3),
            "ratio": round(sw / gw, 2), "jobs": jobs,
            "anydev_mb_s_per_core": round(total / 1e6 / sw / jobs, 1),
            "grep_mb_s": round(total / 1e6 / gw, 1),
            "grep_rss_mb": round(grep_rss / 1024, 1),
            "anydev_rss_mb": round(scan_rss / 1024, 1),
            "anydev_rss_no_findings_mb": round(quiet_rss / 1024, 1),
            "grep_lines": grep_lines, "findings": findings,
            "findings_api": findings - literal, "findings_literal": literal,
        }
        rows.append(row)
        print(f"{label:24} {row['size_mb']:7.1f} MB {files:6d} files  grep {gw:6.3f} s  "
              f"anydev {sw:6.3f} s (medians)  ratio {row['ratio']:4.2f}x  "
              f"{row['anydev_mb_s_per_core']:6.1f} MB/s/core ({jobs} threads)  RSS grep "
              f"{row['grep_rss_mb']:.1f} MB, anydev {row['anydev_rss_mb']:.1f} MB "
              f"({row['anydev_rss_no_findings_mb']:.1f} MB with no finding kept)  "
              f"({grep_lines} grep lines, {findings} findings: {findings - literal} API, "
              f"{literal} literals and idioms)", flush=True)
    generated = [r for r in rows if r["tree"].startswith("generated")]
    if len(generated) > 1:
        small, big = generated[0], generated[-1]
        print(f"corpus x{big['size_mb'] / small['size_mb']:.1f} -> anydev peak RSS "
              f"x{big['anydev_rss_mb'] / small['anydev_rss_mb']:.2f} (the report grows with the "
              f"findings), x{big['anydev_rss_no_findings_mb'] / small['anydev_rss_no_findings_mb']:.2f}"
              f" with no finding kept")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpus": os.cpu_count(), "load": os.getloadavg(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
