#!/usr/bin/env python3
"""`anydev scan` against grep on a generated corpus, in one run.

    python benchmarks/scan/bench_scan.py                    # 25 MB and 100 MB corpora
    python benchmarks/scan/bench_scan.py --sizes 100 --runs 5 --json out.json

For each corpus size it times, best of --runs (after one warm-up run that fills
the page cache):

- grep: ``grep -rEn 'torch\\.cuda\\.|at::cuda::|c10::cuda::' CORPUS`` writing
  its matches to a file (GNU grep stops at the first match of each file when
  its output is /dev/null, so a file keeps the comparison honest);
- anydev: ``anydev scan --no-config --format json --output FILE CORPUS`` (all
  cores by default), the command users run: interpreter start-up, the
  walk, the native scan, resolution of aliases, and the JSON report included.

and reports wall times, the ratio anydev/grep (target: at most 3), throughput
per core in MB/s (corpus bytes / wall time / threads), and the peak resident
memory of each process (from wait4), which should not grow with the corpus.
The corpus is written by gen_corpus.py under --corpus-dir (default build/,
never committed) and reused while its parameters are unchanged.
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


def run(argv: list[str], stdout_path: str, ok: tuple[int, ...]) -> tuple[float, int]:
    """Runs argv; returns (wall seconds, peak RSS in KiB of that process)."""
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        _, status, rusage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"{argv[0]} exited {code}: {err}")
    return wall, rusage.ru_maxrss


def warm(path: str) -> None:
    for root, _, names in os.walk(path):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                while f.read(1 << 20):
                    pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="25,100", help="corpus sizes in MB (default: 25,100)")
    ap.add_argument("--runs", type=int, default=3)
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
    for size in [int(s) for s in a.sizes.split(",")]:
        path, files, total = corpus(os.path.abspath(a.corpus_dir), size, a.seed)
        warm(path)
        grep = ["grep", "-rEn", LITERAL_PATTERN if a.literals else PATTERN, path]
        scan = [*a.anydev.split(), "scan", "--no-config", "--format", "json",
                "--output", os.path.join(tmp, "scan.json"), "--jobs", str(jobs), path]
        run(grep, os.path.join(tmp, "grep.txt"), (0, 1))  # warm-up
        run(scan, os.devnull, (0, 1))
        g = [run(grep, os.path.join(tmp, "grep.txt"), (0, 1)) for _ in range(a.runs)]
        s = [run(scan, os.devnull, (0, 1)) for _ in range(a.runs)]
        # The same walk and scan with no finding kept (the corpus has no
        # c10::xpu): the memory of the scanner itself, without the report.
        quiet = list(scan)
        at = quiet.index("--no-config") + 1
        quiet[at:at] = ["--select", "AD8"]
        quiet[quiet.index("--output") + 1] = os.path.join(tmp, "quiet.json")
        _, scan_rss = run(quiet, os.devnull, (0, 1))
        grep_lines = sum(1 for _ in open(os.path.join(tmp, "grep.txt"), "rb"))
        report = json.load(open(os.path.join(tmp, "scan.json")))["findings"]
        findings = len(report)
        literal = sum(1 for f in report if f["rule"].startswith("AD9"))
        gw, sw = min(w for w, _ in g), min(w for w, _ in s)
        row = {
            "size_mb": round(total / 1e6, 1), "files": files,
            "grep_s": round(gw, 3), "grep_median_s": round(statistics.median(w for w, _ in g), 3),
            "anydev_s": round(sw, 3),
            "anydev_median_s": round(statistics.median(w for w, _ in s), 3),
            "ratio": round(sw / gw, 2), "jobs": jobs,
            "anydev_mb_s_per_core": round(total / 1e6 / sw / jobs, 1),
            "grep_mb_s": round(total / 1e6 / gw, 1),
            "grep_rss_mb": round(max(r for _, r in g) / 1024, 1),
            "anydev_rss_mb": round(max(r for _, r in s) / 1024, 1),
            "anydev_rss_no_findings_mb": round(scan_rss / 1024, 1),
            "grep_lines": grep_lines, "findings": findings,
            "findings_api": findings - literal, "findings_literal": literal,
        }
        rows.append(row)
        print(f"{row['size_mb']:7.1f} MB {files:6d} files  grep {gw:6.3f} s  anydev {sw:6.3f} s"
              f"  ratio {row['ratio']:4.2f}x  {row['anydev_mb_s_per_core']:6.1f} MB/s/core "
              f"({jobs} threads)  RSS grep {row['grep_rss_mb']:.0f} MB, anydev "
              f"{row['anydev_rss_mb']:.0f} MB ({row['anydev_rss_no_findings_mb']:.0f} MB with no "
              f"finding kept)  ({grep_lines} grep lines, {findings} findings: "
              f"{findings - literal} API, {literal} literals and idioms)",
              flush=True)
    if len(rows) > 1:
        small, big = rows[0], rows[-1]
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
