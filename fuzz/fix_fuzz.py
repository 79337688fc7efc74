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
  made a finding: Note [Rounds] in anydev/_fix/engine.py);
- a Python file that parsed still parses after the fix (the fixer's own
  promise: it checks and refuses, so a failure here is a bug in that check);
- a fix is a fixed point: scanning the fixed bytes and fixing them again
  changes nothing (the documented "running the fixer twice changes nothing").

tools/fuzz.sh runs it with a copy of fuzz/corpus/fix.
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


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
