#!/usr/bin/env python3
"""`anydev scan` against ripgrep and GNU grep on generated trees, measured
interleaved in one run (issue 14's target: at most 1.5x `rg -n`).

    python benchmarks/scan/bench_vs_rg.py                  # 200 MB, all files GPU code
    python benchmarks/scan/bench_vs_rg.py --size-mb 200 --legacy-share 0.2   # mixed tree
    python benchmarks/scan/bench_vs_rg.py --size-mb 20 --callgrind           # + instructions/byte
    python benchmarks/scan/bench_vs_rg.py --size-mb 20 --callgrind --linear-mb 100   # + linearity
    python benchmarks/scan/bench_vs_rg.py --size-mb 20 --callgrind --language cpp    # C++ files only

Each round runs, in turn: ``rg -n -e A -e B ... CORPUS`` and ``grep -rEn
'A|B|...' CORPUS`` with the prefilter's own needles as the alternatives (the
byte strings one of which every finding contains: the same work of
finding them, none of the work of telling a call from a comment), writing
their matches to a file; then ``anydev scan --no-config --format json
--output FILE CORPUS``, the command users run, start-up and report
included (the script installed beside the interpreter, else ``python -m
anydev``); and the native scan alone (``scan_native``, built by
tools/setup.sh, with the same rules as ``anydev scan``: the literal rules
on) to separate the scanner from the interpreter, once as shipped and once
with its full lexer (``ANYDEV_SCAN_FULL_LEXER=1``: every byte lexed, the
Python fast path off; the figure before it existed). The best of --runs
rounds is reported, with the ratios to rg.

--callgrind also counts the native scanner's instructions per byte of the
corpus (valgrind's callgrind, one thread; the corpus should be small, it
runs ~50x slower), both paths, the whole `anydev scan` command's (-j 1), and
rg's (-j1) for comparison. --linear-mb N
also times scan_native on an N MB corpus of the same kind and prints the
ratio of its seconds per MB to those on --size-mb (1.0: linear). --language
python|cpp keeps only that language's files of the generated corpus (a copy
beside it), for the figures of one scanner.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gen_corpus  # noqa: E402


def corpus(base: str, size_mb: float, seed: int, share: float) -> tuple[str, int, int]:
    path = os.path.join(base, f"corpus-{size_mb:g}mb-{share:g}")
    stamp = os.path.join(path, ".stamp")
    # The generator's bytes, not its mtime: worktrees of the same commit then
    # share a corpus instead of regenerating it under each other.
    with open(gen_corpus.__file__, "rb") as g:
        want = f"{size_mb} {seed} {share} {hashlib.sha256(g.read()).hexdigest()[:16]}"
    if not (os.path.exists(stamp) and open(stamp).read().split("|")[0] == want):
        print(f"generating a {size_mb:g} MB corpus in {path} ...", file=sys.stderr, flush=True)
        files, total = gen_corpus.generate(path, size_mb, seed, share)
        with open(stamp, "w") as f:
            f.write(f"{want}|{files} {total}")
    files, total = map(int, open(stamp).read().split("|")[1].split())
    return path, files, total


EXTENSIONS = {"python": (".py",), "cpp": (".cpp", ".cc", ".cu", ".h", ".cuh", ".hpp")}


def one_language(path: str, language: str) -> tuple[str, int, int]:
    """A copy of the corpus at `path` with only `language`'s files."""
    out = f"{path}-{language}"
    stamp = os.path.join(out, ".stamp")
    want = open(os.path.join(path, ".stamp")).read()
    if not (os.path.exists(stamp) and open(stamp).read().split("#")[0] == want):
        shutil.rmtree(out, ignore_errors=True)
        files = total = 0
        for d, _, names in os.walk(path):
            for n in names:
                if n.endswith(EXTENSIONS[language]):
                    dst = os.path.join(out, os.path.relpath(d, path))
                    os.makedirs(dst, exist_ok=True)
                    shutil.copyfile(os.path.join(d, n), os.path.join(dst, n))
                    files += 1
                    total += os.path.getsize(os.path.join(d, n))
        os.makedirs(out, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(f"{want}#{files} {total}")
    files, total = map(int, open(stamp).read().split("#")[1].split())
    return out, files, total


def rules_tsv(path: str) -> list[str]:
    """Writes the compat table's rules for scan_native; returns the needles."""
    from anydev import scan
    native, rows = scan._rules()
    covered = {n for row in rows for n in row.covers}
    with open(path, "w") as f:
        for row in rows:  # as `anydev scan` builds them: literal rules on
            code, language, kept, spellings, detector = scan._native_rule(row, covered)
            f.write("\t".join([code, language, "1" if kept else "0", detector, *spellings]) + "\n")
    needles = []
    for lang in ("python", "cpp"):
        for n in scan._native().needles(native, lang):
            if n.decode() not in needles:
                needles.append(n.decode())
    return needles


FULL = {**os.environ, "ANYDEV_SCAN_FULL_LEXER": "1"}


def timed(argv: list[str], out: str, env: dict | None = None,
          report: str | None = None) -> float:
    """Wall seconds of one run, its stdout to ``out``. Every tool writes a
    new file: the last run's output (and ``report``, the file `anydev scan
    -o` writes) is removed first, untimed. Truncating or replacing a 40 MB
    file frees its pages in the kernel (about 15 ms here), which rg's stdout,
    truncated by open() before the clock starts, never paid and `anydev
    scan -o`, renaming its report over the last, did."""
    for old in (out, report):
        if old and os.path.exists(old):
            os.unlink(old)
    with open(out, "wb") as f:
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    return wall


def callgrind(argv: list[str], tmp: str, env: dict | None = None) -> int:
    out = os.path.join(tmp, "callgrind.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        raise SystemExit(f"callgrind failed: {p.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=200)
    ap.add_argument("--legacy-share", type=float, default=1.0,
                    help="fraction of files that use the GPU API (gen_corpus.py)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--corpus-dir", default=os.path.join(ROOT, "build", "scan-bench"))
    ap.add_argument("--scan-native", default=os.path.join(ROOT, "build", "py", "benchmarks",
                                                          "scan", "scan_native"))
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per byte")
    ap.add_argument("--language", choices=["all", "python", "cpp"], default="all",
                    help="scan only this language's files of the corpus")
    ap.add_argument("--linear-mb", type=float, default=0,
                    help="also time scan_native on a corpus of this size (linearity)")
    a = ap.parse_args()

    path, files, total = corpus(os.path.abspath(a.corpus_dir), a.size_mb, a.seed, a.legacy_share)
    if a.language != "all":
        path, files, total = one_language(path, a.language)
    tmp = tempfile.mkdtemp(prefix="anydev-vs-rg-")
    tsv = os.path.join(tmp, "rules.tsv")
    needles = rules_tsv(tsv)
    tools = {}
    if shutil.which("rg"):
        tools["rg"] = ["rg", "-n", "--no-config", *sum((["-e", n] for n in needles), []), path]
    tools["grep"] = ["grep", "-rEn", "|".join(needles), path]
    # The `anydev` command the package installs beside the interpreter, as
    # users run it (`python -m anydev` adds runpy: 17.5M instructions, 5 ms).
    script = os.path.join(os.path.dirname(sys.executable), "anydev")
    command = [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "anydev"]
    report = os.path.join(tmp, "scan.json")
    tools["anydev"] = [*command, "scan", "--no-config", "--format", "json",
                       "--output", report, path]
    reports = {"anydev": report}
    envs: dict[str, dict] = {}
    if os.path.exists(a.scan_native):
        tools["scan_native"] = [a.scan_native, tsv, path]
        tools["native full"] = [a.scan_native, tsv, path]
        envs["native full"] = FULL
    print(f"{total / 1e6:.1f} MB in {files} files ({a.legacy_share:g} of them GPU code), "
          f"{a.language + ' files, ' if a.language != 'all' else ''}{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; needles: {' '.join(needles)}",
          flush=True)
    best: dict[str, float] = {}
    for name, argv in tools.items():  # warm-up: the page cache, the interpreter
        timed(argv, os.path.join(tmp, name + ".out"), envs.get(name), reports.get(name))
    for _ in range(a.runs):
        for name, argv in tools.items():
            w = timed(argv, os.path.join(tmp, name + ".out"), envs.get(name), reports.get(name))
            best[name] = min(best.get(name, w), w)
    base = best.get("rg") or best["grep"]
    for name, w in best.items():
        print(f"  {name:12} {w:8.3f} s  {total / 1e6 / w:8.1f} MB/s  x{w / base:5.2f} of "
              f"{'rg' if 'rg' in best else 'grep'}", flush=True)
    if a.callgrind:
        per_byte = {}
        if os.path.exists(a.scan_native):
            per_byte["scan_native"] = callgrind([a.scan_native, tsv, "--jobs", "1", path], tmp)
            per_byte["native full"] = callgrind([a.scan_native, tsv, "--jobs", "1", path], tmp,
                                                FULL)
        # The command itself: the interpreter, the report and its writing on
        # top of the native scan (Note [Native reports] in bind_scan.cc), its
        # modules' bytecode written first (as an installed package has it;
        # compiling them is no part of the command's cost).
        import compileall
        from anydev import scan as _scan_module
        compileall.compile_dir(os.path.dirname(_scan_module.__file__), quiet=1)
        argv = tools["anydev"]
        at = len(command) + 1  # after "scan"
        per_byte["anydev -j1"] = callgrind([*argv[:at], "-j", "1", *argv[at:]], tmp)
        if "rg" in tools:
            per_byte["rg -j1"] = callgrind(["rg", "-j1", *tools["rg"][1:]], tmp)
        for name, n in per_byte.items():
            print(f"  {name:12} {n / total:8.2f} instructions/byte (callgrind, whole process)")
    if a.linear_mb and os.path.exists(a.scan_native):
        big, _, big_total = corpus(os.path.abspath(a.corpus_dir), a.linear_mb, a.seed,
                                   a.legacy_share)
        if a.language != "all":
            big, _, big_total = one_language(big, a.language)
        argv = [a.scan_native, tsv, big]
        timed(argv, os.path.join(tmp, "big.out"))
        w = min(timed(argv, os.path.join(tmp, "big.out")) for _ in range(a.runs))
        small = best["scan_native"] / total
        print(f"  linearity: scan_native {w:.3f} s on {big_total / 1e6:.0f} MB; seconds per MB "
              f"x{(w / big_total) / small:.2f} of those on {total / 1e6:.0f} MB", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
