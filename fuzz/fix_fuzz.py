"""Fuzzes the fixer (anydev.fix.fix_source on the findings of
anydev.scan.scan_source) with atheris, Python and C++ sources.

    .venv/bin/python fuzz/fix_fuzz.py -max_total_time=60 CORPUS_DIR

The first byte of an input picks the language (bit 0: Python or C++),
``--unsafe-fixes`` (bit 1) and the target PyTorch (bits 2-3: the newest
release, 2.1, 2.6 or 1.13); the rest is the file. For any input:

- the fixer returns the new bytes or raises ValueError with a message (a
  file it cannot fix soundly), nothing else;
- every skipped finding is one of the scanner's, with a reason; an applied
  one is the scanner's or one of a further round's rescans (what a rewrite
  made a finding: Note [Rounds] in anydev/_migrate/fix/engine.py);
- a Python file that parsed still parses after the fix (the fixer's own
  promise: it checks and refuses, so a failure here is a bug in that check);
- a fix is a fixed point: scanning the fixed bytes and fixing them again
  changes nothing (the documented "running the fixer twice changes nothing").

tools/fuzz.sh runs it with a copy of fuzz/corpus/fix (the inputs of bugs it
found) and seeds made from the scan and fix fixtures (``--seeds OUT DIR...``).
"""

import ast
import sys
import warnings

import atheris

with atheris.instrument_imports():
    from anydev import fix, scan

TARGETS = (None, "2.1", "2.6", "1.13")


def _parses(data: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes
            ast.parse(data)
    except (SyntaxError, ValueError):  # ValueError: NUL bytes
        return False
    return True


def _fix(data: bytes, path: str, unsafe: bool, target):
    findings, _ = scan.scan_source(data, path)
    try:
        new, applied, skipped = fix.fix_source(data, path, findings, unsafe=unsafe,
                                               target_torch=target)
    except ValueError as e:
        assert str(e), "a refusal without a message"
        return None, findings
    known = {(f.start, f.end, f.rule) for f in findings}
    for f in applied:  # or one of a further round's scans (Note [Rounds])
        assert (f.start, f.end, f.rule) in known or f.rule in fix.ROWS_BY_CODE, \
            f"applied a finding of no rule: {f}"
    for f, why in skipped:
        assert (f.start, f.end, f.rule) in known, f"skipped a finding not scanned: {f}"
        assert why, f"a skip without a reason: {f}"
    return new, findings


def test_one(raw: bytes) -> None:
    if not raw:
        return
    head, data = raw[0], raw[1:]
    python = not head & 1
    path = "fuzz.py" if python else "fuzz.cu"
    unsafe = bool(head & 2)
    target = TARGETS[(head >> 2) & 3]
    new, _ = _fix(data, path, unsafe, target)
    if new is None or new == data:
        return
    if python and _parses(data):
        assert _parses(new), "the fixed Python does not parse"
    again, _ = _fix(new, path, unsafe, target)
    assert again is None or again == new, "a second fix changed the file again"


def write_seeds(out: str, folders: list) -> None:
    """Seeds from fixture folders: each small Python or C++ file once, with a
    mode byte that varies over the files (both fix modes, several targets)."""
    import os

    n = 0
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            language = scan.language_of(name)
            path = os.path.join(folder, name)
            if language is None or os.path.getsize(path) > 2500:
                continue
            head = (0, 2, 6, 14)[n % 4] if language == "python" else (1, 3)[n % 2]
            with open(path, "rb") as f, open(os.path.join(out, f"seed-{name}"), "wb") as o:
                o.write(bytes([head]) + f.read())
            n += 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--seeds"]:
        write_seeds(sys.argv[2], sys.argv[3:])
    else:
        atheris.Setup(sys.argv, test_one)
        atheris.Fuzz()
