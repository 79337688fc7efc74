#!/usr/bin/env python3
"""`anydev scan` against ripgrep and GNU grep on generated and real trees,
measured interleaved in one run (issue 31's targets on real trees: at most
1.5x `rg -n` wall and 2x its instructions).

    python benchmarks/scan/bench_vs_rg.py                  # 200 MB, all files GPU code
    python benchmarks/scan/bench_vs_rg.py --devset --callgrind               # the real trees
    python benchmarks/scan/bench_vs_rg.py --tree ~/src/Megatron-LM --runs 7  # any tree
    python benchmarks/scan/bench_vs_rg.py --size-mb 20 --style real          # real-style tree
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

Real trees: --tree PATH (repeatable) measures that tree; --devset [DIR]
measures Megatron-LM, DeepSpeed and every tree of the development set
together (DIR, default /work/devset; skipped with a message where it does
not exist). A real tree holds files the scanner never reads (JSON, YAML,
Markdown), so rg runs twice: `rg` over the tree as a user runs it, and `rg
src` with -g globs for the scanner's own extensions (the same files). The
bytes "a byte" counts are the bytes scanned (scan_native's count: the
sources, after .gitignore).

Every round runs each tool once, in an order rotated from round to round
(interleaved: the load of a shared machine falls on all of them alike), and
the median of the rounds is reported beside the best; --baseline-anydev
SCRIPT adds another `anydev` (an older build's, installed elsewhere) to the
rounds, for before-and-after figures from one run. Peak memory is each
tool's own (ru_maxrss of its process, taken by GNU time's wait4 in one run
of its own: a child forked from this interpreter counts the interpreter's
pages until it execs, so wait4 here would report this script's memory for
rg). --json FILE writes every figure.

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
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gen_corpus  # noqa: E402


def corpus(base: str, size_mb: float, seed: int, share: float,
           style: str = "gpu") -> tuple[str, int, int]:
    path = os.path.join(base, f"corpus-{size_mb:g}mb-{share:g}" +
                        ("" if style == "gpu" else f"-{style}"))
    stamp = os.path.join(path, ".stamp")
    # The generator's bytes, not its mtime: worktrees of the same commit then
    # share a corpus instead of regenerating it under each other.
    with open(gen_corpus.__file__, "rb") as g:
        want = f"{size_mb} {seed} {share} {hashlib.sha256(g.read()).hexdigest()[:16]}"
    if not (os.path.exists(stamp) and open(stamp).read().split("|")[0] == want):
        print(f"generating a {size_mb:g} MB corpus in {path} ...", file=sys.stderr, flush=True)
        files, total = gen_corpus.generate(path, size_mb, seed, share, style=style)
        with open(stamp, "w") as f:
            f.write(f"{want}|{files} {total}")
    files, total = map(int, open(stamp).read().split("|")[1].split())
    return path, files, total


EXTENSIONS = {"python": (".py",), "cpp": (".cpp", ".cc", ".cu", ".h", ".cuh", ".hpp")}
# Every extension the scanner reads (anydev.scan.EXTENSIONS): `rg src`'s globs.
SOURCE_GLOBS = ["*.py", "*.pyi", "*.h", "*.hpp", "*.hh", "*.c", "*.cc", "*.cpp", "*.cxx", "*.cu",
                "*.cuh", "*.hip"]
DEVSET = "/work/devset"


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


def peak_rss_kb(argv: list[str], out: str, env: dict | None = None) -> int | None:
    """The peak resident memory (KiB) of the tool's own process: ru_maxrss
    as GNU time's wait4 reports it for its child (a process of about 1 MB
    before the exec), not this interpreter's fork, whose pages the child's
    count holds until it execs (a child of a 200 MB Python reports 200 MB
    for `true`). None without /usr/bin/time."""
    gnu_time = "/usr/bin/time"
    if not os.access(gnu_time, os.X_OK):
        return None
    rss = out + ".rss"
    with open(out, "wb") as f:
        p = subprocess.run([gnu_time, "-f", "%M", "-o", rss, *argv], stdout=f,
                           stderr=subprocess.DEVNULL, env=env)
    if p.returncode not in (0, 1):
        return None
    try:
        return int(open(rss).read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def callgrind(argv: list[str], tmp: str, env: dict | None = None) -> int:
    out = os.path.join(tmp, "callgrind.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        raise SystemExit(f"callgrind failed: {p.stderr[-2000:]}")
    return int(m.group(1))


def compile_package(command: list[str]) -> None:
    """Writes the bytecode of the anydev package that `command` runs (the
    interpreter its script names, or the one given), as an installed
    package has it: compiling its modules is no part of a scan."""
    python = command[0]
    if len(command) == 1:  # a script: its interpreter from the #! line
        with open(command[0], "rb") as f:
            first = f.readline().decode(errors="replace")
        if first.startswith("#!"):
            python = first[2:].strip().split()[0]
    subprocess.run([python, "-c", "import anydev, compileall, os; "
                    "compileall.compile_dir(os.path.dirname(anydev.__file__), quiet=1)"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def scanned(scan_native: str, tsv: str, paths: list[str], tmp: str) -> tuple[int, int]:
    """(files, bytes) the scanner reads under `paths` (after .gitignore)."""
    p = subprocess.run([scan_native, tsv, *paths], stdout=subprocess.PIPE, text=True)
    m = re.search(r"(\d+) files, (\d+) bytes", p.stdout)
    if not m:
        raise SystemExit(f"scan_native printed no count: {p.stdout[-500:]}")
    return int(m.group(1)), int(m.group(2))


def measure(label: str, paths: list[str], files: int, total: int, a, tsv: str,
            needles: list[str], tmp: str, generated: bool) -> dict:
    """One tree (or several scanned together): the tools interleaved, round
    by round; returns the figures."""
    tools: dict[str, list[str]] = {}
    envs: dict[str, dict] = {}
    pattern = sum((["-e", n] for n in needles), [])
    if shutil.which("rg"):
        tools["rg"] = ["rg", "-n", "--no-config", *pattern, *paths]
        if not generated:  # the same files as the scanner's
            tools["rg src"] = ["rg", "-n", "--no-config", *pattern,
                               *sum((["-g", g] for g in SOURCE_GLOBS), []), *paths]
    if generated or a.grep:
        tools["grep"] = ["grep", "-rEn", "|".join(needles), *paths]
    # The `anydev` command the package installs beside the interpreter, as
    # users run it (`python -m anydev` adds runpy: 17.5M instructions, 5 ms).
    script = os.path.join(os.path.dirname(sys.executable), "anydev")
    command = [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "anydev"]
    reports = {}
    commands = {"anydev": command}
    if a.baseline_anydev:
        commands["anydev base"] = [a.baseline_anydev]
    for name, cmd in commands.items():
        reports[name] = os.path.join(tmp, name.replace(" ", "_") + ".json")
        tools[name] = [*cmd, "scan", "--no-config", "--format", "json", "--output",
                       reports[name], *paths]
    if os.path.exists(a.scan_native):
        tools["scan_native"] = [a.scan_native, tsv, *paths]
        tools["native full"] = [a.scan_native, tsv, *paths]
        envs["native full"] = FULL
    print(f"{label}: {total / 1e6:.1f} MB in {files} files scanned, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    out = lambda name: os.path.join(tmp, name.replace(" ", "_") + ".out")  # noqa: E731
    names = list(tools)
    for name in names:  # warm-up: the page cache, the interpreter
        timed(tools[name], out(name), envs.get(name), reports.get(name))
    walls: dict[str, list[float]] = {name: [] for name in names}
    for k in range(a.runs):
        # Interleaved, each round in an order rotated by one: no tool always
        # runs first after a pause, or right after another's page cache use.
        for name in names[k % len(names):] + names[:k % len(names)]:
            walls[name].append(timed(tools[name], out(name), envs.get(name), reports.get(name)))
    rss = {name: peak_rss_kb(tools[name], out(name), envs.get(name)) for name in names}
    med = {name: statistics.median(w) for name, w in walls.items()}
    base_name = "rg" if "rg" in med else "grep"
    base = med[base_name]
    row: dict = {"tree": label, "files": files, "bytes": total, "runs": a.runs,
                 "load": os.getloadavg()[0], "tools": {}}
    for name in names:
        w = walls[name]
        row["tools"][name] = {"median_s": med[name], "best_s": min(w), "walls": w,
                              "rss_kb": rss[name]}
        mem = f"{rss[name] / 1024:6.1f} MB" if rss[name] else "     n/a"
        print(f"  {name:12} median {med[name]:7.3f} s  best {min(w):7.3f} s  "
              f"x{med[name] / base:5.2f} of {base_name} (medians)  peak RSS {mem}", flush=True)
    if a.callgrind:
        counts: dict[str, int] = {}
        if os.path.exists(a.scan_native):
            counts["scan_native"] = callgrind([a.scan_native, tsv, "--jobs", "1", *paths], tmp)
            if a.full_callgrind or generated:
                counts["native full"] = callgrind([a.scan_native, tsv, "--jobs", "1", *paths],
                                                  tmp, FULL)
        # The command itself: the interpreter, the report and its writing on
        # top of the native scan (Note [Native reports] in bind_scan.cc), its
        # modules' bytecode written first (as an installed package has it;
        # compiling them is no part of the command's cost).
        for name in commands:
            compile_package(commands[name])
            argv = tools[name]
            at = len(commands[name]) + 1  # after "scan"
            counts[name + " -j1"] = callgrind([*argv[:at], "-j", "1", *argv[at:]], tmp)
        for name in ("rg", "rg src"):
            if name in tools:
                counts[name + " -j1"] = callgrind(["rg", "-j1", *tools[name][1:]], tmp)
        row["instructions"] = counts
        rg_n = counts.get("rg -j1")
        for name, n in counts.items():
            vs = f"  x{n / rg_n:5.2f} of rg -j1" if rg_n else ""
            print(f"  {name:14} {n / 1e6:9.1f}M instructions  {n / total:6.2f} a byte scanned"
                  f"{vs}  (callgrind, whole process)", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=None,
                    help="a generated tree of this size (default 200 where no --tree or "
                         "--devset is given)")
    ap.add_argument("--legacy-share", type=float, default=1.0,
                    help="fraction of files that use the GPU API (gen_corpus.py)")
    ap.add_argument("--style", choices=["gpu", "real"], default="gpu",
                    help="the generated tree's kind (gen_corpus.py --style)")
    ap.add_argument("--tree", action="append", default=[], metavar="PATH",
                    help="a real tree to measure (repeatable)")
    ap.add_argument("--devset", nargs="?", const=DEVSET, default=None, metavar="DIR",
                    help=f"measure the development set's trees (default {DEVSET}): "
                         "Megatron-LM, DeepSpeed and all of them together")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--corpus-dir", default=os.path.join(ROOT, "build", "scan-bench"))
    ap.add_argument("--scan-native", default=os.path.join(ROOT, "build", "py", "benchmarks",
                                                          "scan", "scan_native"))
    ap.add_argument("--baseline-anydev", metavar="SCRIPT",
                    help="another `anydev` script to measure in the same rounds")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per byte")
    ap.add_argument("--full-callgrind", action="store_true",
                    help="on real trees, count the full lexer's instructions too")
    ap.add_argument("--grep", action="store_true", help="on real trees, time grep -rEn too")
    ap.add_argument("--language", choices=["all", "python", "cpp"], default="all",
                    help="scan only this language's files of the generated corpus")
    ap.add_argument("--linear-mb", type=float, default=0,
                    help="also time scan_native on a corpus of this size (linearity)")
    ap.add_argument("--json", metavar="FILE", help="write every figure here")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="anydev-vs-rg-")
    tsv = os.path.join(tmp, "rules.tsv")
    needles = rules_tsv(tsv)
    print(f"needles: {' '.join(needles)}", flush=True)
    trees: list[tuple[str, list[str]]] = [(os.path.basename(os.path.abspath(t)) or t, [t])
                                          for t in a.tree]
    if a.devset:
        if os.path.isdir(a.devset):
            all_trees = sorted(os.path.join(a.devset, d) for d in os.listdir(a.devset)
                               if os.path.isdir(os.path.join(a.devset, d)))
            for name in ("Megatron-LM", "DeepSpeed"):
                if os.path.join(a.devset, name) in all_trees:
                    trees.append((name, [os.path.join(a.devset, name)]))
            trees.append((f"{len(all_trees)} dev-set trees together", all_trees))
        else:
            print(f"the development set is skipped: {a.devset} does not exist", flush=True)
    rows = []
    for label, paths in trees:
        if not os.path.exists(a.scan_native):
            raise SystemExit(f"{a.scan_native} is needed for the bytes a real tree scans "
                             "(tools/setup.sh builds it)")
        files, total = scanned(a.scan_native, tsv, paths, tmp)
        rows.append(measure(label, paths, files, total, a, tsv, needles, tmp, False))
    if a.size_mb is not None or not (a.tree or a.devset):
        size = a.size_mb if a.size_mb is not None else 200
        path, files, total = corpus(os.path.abspath(a.corpus_dir), size, a.seed,
                                    a.legacy_share, a.style)
        if a.language != "all":
            path, files, total = one_language(path, a.language)
        label = (f"generated {size:g} MB ({a.legacy_share:g} of the files GPU code, "
                 f"{a.style} style{', ' + a.language + ' files' if a.language != 'all' else ''})")
        rows.append(measure(label, [path], files, total, a, tsv, needles, tmp, True))
        if a.linear_mb and os.path.exists(a.scan_native):
            big, _, big_total = corpus(os.path.abspath(a.corpus_dir), a.linear_mb, a.seed,
                                       a.legacy_share, a.style)
            if a.language != "all":
                big, _, big_total = one_language(big, a.language)
            argv = [a.scan_native, tsv, big]
            timed(argv, os.path.join(tmp, "big.out"))
            w = statistics.median(timed(argv, os.path.join(tmp, "big.out"))
                                  for _ in range(a.runs))
            small = rows[-1]["tools"]["scan_native"]["median_s"] / total
            print(f"  linearity: scan_native {w:.3f} s on {big_total / 1e6:.0f} MB; seconds per "
                  f"MB x{(w / big_total) / small:.2f} of those on {total / 1e6:.0f} MB",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpus": os.cpu_count(), "rows": rows}, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
