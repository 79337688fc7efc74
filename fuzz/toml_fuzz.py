"""Fuzzes anydev's TOML reader (anydev._common.toml, what reads pyproject.toml and
anydev.toml) against the standard library's tomllib with atheris: for any
bytes, the reader gives the value tomllib gives, or refuses a document that
tomllib refuses too (it may refuse more: the caller then asks tomllib, Note
[Agreeing with tomllib]); it raises nothing but its own Invalid.

    .venv/bin/python fuzz/toml_fuzz.py -max_total_time=60 CORPUS_DIR

tools/fuzz.sh runs it with a copy of fuzz/corpus/toml (Python >= 3.11).
"""

import math
import sys
import tomllib

if __name__ == "__main__":
    import atheris

    with atheris.instrument_imports():
        from anydev._common import toml as _toml
else:  # tests/python/common/test_toml.py takes `same` from here
    from anydev._common import toml as _toml


def same(a, b) -> bool:
    """Equal values of equal types; floats by their bits' meaning (-0.0, nan)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is float:
        if math.isnan(a):
            return math.isnan(b) and math.copysign(1, a) == math.copysign(1, b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b and repr(a) == repr(b)  # datetimes: their zones too


def test_one(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    try:
        want = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        want = None
    try:
        got = _toml.loads(text)
    except _toml.Invalid:
        return  # refused: the caller asks tomllib
    if want is None:
        raise AssertionError(f"accepts what tomllib refuses: {text!r} -> {got!r}")
    if not same(want, got):
        raise AssertionError(f"{text!r}: tomllib {want!r}, anydev {got!r}")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()
