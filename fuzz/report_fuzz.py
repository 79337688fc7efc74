"""Fuzzes the runtime report loader (anydev.report.parse, then merge and
every render format) with atheris: any bytes give a report or a
ReportError, nothing else (no RecursionError, ValueError, KeyError...).

    .venv/bin/python fuzz/report_fuzz.py -max_total_time=60 CORPUS_DIR

tools/fuzz.sh runs it with a copy of fuzz/corpus/report.
"""

import sys

import atheris

with atheris.instrument_imports():
    from anydev import report


def test_one(data: bytes) -> None:
    try:
        r = report.parse(data, "fuzz.json")
    except report.ReportError:
        return
    merged = report.merge([r, r])
    for fmt in ("text", "markdown", "json", "sarif"):
        report.render(r, fmt, root="/")
        report.render(merged, fmt, root="/")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
