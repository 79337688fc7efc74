"""anydev's own TOML reader (anydev._common.toml), what reads pyproject.toml and
anydev.toml without importing tomllib: it gives tomllib's values, refuses only
what tomllib may be asked about, and the configuration's errors stay
tomllib's (Note [Agreeing with tomllib])."""

from __future__ import annotations

import datetime as dt
import math
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

from anydev._common import config as _config, toml as _toml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "fuzz"))
from toml_fuzz import same  # noqa: E402  (values equal, types, float signs, zones too)


PYPROJECT = textwrap.dedent('''\
    [build-system]
    requires = ["scikit-build-core>=0.9", "pybind11>=2.12"]
    build-backend = "scikit_build_core.build"

    [project]
    name = "trainer"
    version = "0.3.1"
    requires-python = ">=3.9"
    dependencies = [
        "torch>=1.13,<3",  # the oldest we test
        'numpy',
    ]
    authors = [{ name = "A. Person", email = "a@example.org" }]

    [project.optional-dependencies]
    test = ["pytest>=7", "anydev>=0.1"]

    [tool.anydev]
    target-torch = "2.1"
    exclude = ["third_party/**", "build/"]
    legacy-override = [{ module = "trainer.old", policy = "ignore" }]

    [tool.anydev.per-file-ignores]
    "tests/**" = ["AD107"]

    [[tool.mypy.overrides]]
    module = "torch.*"
    ignore_missing_imports = true
    ''')

VALID = [
    PYPROJECT,
    PYPROJECT.replace("\n", "\r\n"),
    "",
    "# only a comment é\n\n",
    "a = 1\nb.c = 2\nb.d = 3\n",
    'ints = [+1, -0, 0x1F, 0xdead_BEEF, 0o17, 0b101, 1_000, 0]\n',
    "floats = [3.14, -0.0, +0.5, 1e5, 1E-5, 6.02e+2_3, 1_0.5_0, inf, -inf, +inf, nan, -nan]\n",
    's = ["a\\tb", "\\u00e9\\U0001F600", "\\"q\\"\\\\", "tab\tin"]\n',
    "lit = ['C:\\path', '']\n",
    'ml = """\nline \\\n    joined \\  \n  too"""\n',
    "mll = '''\nraw \\n'''\n",
    'quotes = [""""a"""", """""b""""", \'\'\'\'c\'\'\'\'\']\n',
    "d = [1979-05-27, 1979-05-27T07:32:00Z, 1979-05-27 07:32:00.999999999-07:00, "
    "1979-05-27t07:32:00.5+05:30, 1979-05-27T07:32:00, 07:32:00, 00:00:00.123]\n",
    "arr = [ 1 , [2, 'x'] , { a = 1 } , ]\n",
    "multi = [\n  1, # one\n  2,\n\n  # end\n]\n",
    "t = {}\nu = { a.b = 1, a.c = [ { d = 2 } ] }\n",
    '"quoted key" = 1\n\'lit.key\' = 2\na."b.c" . d = 3\n"" = 4\n',
    "1234 = 1\n-_- = 2\ntrue = 3\ninf = 4\n",
    "[a]\nb.c = 1\n[a.b.d]\ne = 2\n",
    "[a.b]\nc = 1\n[a]\nd = 2\n",
    "[[arr]]\nn = 1\n[arr.sub]\nm = 2\n[[arr]]\nn = 2\n[arr.sub]\nm = 3\n",
    "[[a.b]]\n[a]\nc = 1\n",
    "[ a . \"b\" . 'c' ]\n[[ x ]]\n",
    "a = 1 # trailing\n\t b = 2\t\n",
    "truthy = true\nfalsy = false",
]

INVALID = [
    "a = 1\na = 2\n",  # a key twice
    "[a]\n[a]\n",  # a table twice
    "[a]\nb.c = 1\n[a.b]\n",  # a dotted key's table reopened by a header
    "[a.b]\n[a]\nb.c = 1\n",  # ... and a header's table by a dotted key
    "a = {b = 1}\n[a]\n",  # an inline table is frozen
    "a = {b = 1}\na.c = 2\n",
    "a = [1]\n[[a]]\n",  # a static array is no array of tables
    "[a]\n[[a]]\n",
    "[[a]]\n[a]\n",
    "a = {b = 1, b = 2}\n",
    "a = { b = {c = 1}, b.d = 2 }\n",
    "a = 01\n", "a = 1__0\n", "a = 1_\n", "a = +0x1\n", "a = 0x\n", "a = 1.\n", "a = .5\n",
    "a = 1e\n", "a = tru\n", "a = infinity\n", "a = 1979-02-30\n", "a = 0000-01-01\n",
    "a = 24:00:00\n", "a = 1979-05-27T07:32:00+25:00\n", "a = 07:32\n",
    'a = "\\x"\n', 'a = "\\uD800"\n', 'a = "\\u12"\n', 'a = "open\n', "a = 'open\n",
    'a = """open\n', "a = '''open\n", 'a = "\x7f"\n', 'a = "a\x00b"\n', "# \x01\n",
    "a = 1\r\n\rb = 2\n", "a = 1 b = 2\n", "a =\n", "= 1\n", "a\n", "[a]]\n", "[[a]\n",
    "[a\n", "[]\n", "a = [1 2]\n", "a = [1,,]\n", "a = {a = 1,}\n", "a = {a = 1\n}\n",
    "a.b = 1\na.b.c = 2\n", "\ufeffa = 1\n", "a = 'x' 'y'\n", "a = 1\n[a]\n",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_documents_read_as_tomllib_reads_them(text):
    assert same(_toml.loads(text), tomllib.loads(text))


@pytest.mark.parametrize("text", INVALID)
def test_invalid_documents_are_refused(text):
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    with pytest.raises(_toml.Invalid):
        _toml.loads(text)


def test_values_of_every_kind():
    doc = _toml.loads("i = 0x1F\nf = -0.0\nn = nan\nd = 1979-05-27\n"
                      "t = 1979-05-27T07:32:00.1234567-07:30\nl = 07:32:00\n")
    assert doc["i"] == 31 and type(doc["i"]) is int
    assert math.copysign(1, doc["f"]) == -1 and math.isnan(doc["n"])
    assert doc["d"] == dt.date(1979, 5, 27)
    assert doc["t"] == dt.datetime(1979, 5, 27, 7, 32, 0, 123456,
                                   tzinfo=dt.timezone(-dt.timedelta(hours=7, minutes=30)))
    assert doc["l"] == dt.time(7, 32)


def _generated(rng: random.Random) -> str:
    atoms = ["1", "+1", "0x1F", "0o17", "0b1", "1_0", "01", "3.5", "-0.0", "1e5", "inf",
             "nan", "true", "false", '"s"', '"\\u00e9"', '"\\x"', "'l'", '"""\nm\\\n x"""',
             "'''\nm\n'''", "1979-05-27", "1979-05-27T07:32:00Z", "07:32:00", "1979-02-30",
             "[]", "[1, [2],]", "[\n1, # c\n2\n]", "{}", "{a = 1}", "{a.b = 1, a.c = 2}",
             "{a = 1, a = 2}", "[{a = 1}]"]
    keys = ["a", "b", "a.b", "a . b", '"a"', "'a.b'", 'a."b"', "c.d.e", "tool.anydev", "1"]
    lines = []
    for _ in range(rng.randint(1, 10)):
        r = rng.random()
        if r < 0.5:
            lines.append(f"{rng.choice(keys)} = {rng.choice(atoms)}{rng.choice(['', ' # c'])}")
        elif r < 0.7:
            lines.append(f"[{rng.choice(keys)}]")
        elif r < 0.85:
            lines.append(f"[[{rng.choice(keys)}]]")
        else:
            lines.append(rng.choice(["", "# é", "a = 1 b", "[a]]", "= 1", "\ta\t=\t1"]))
    text = rng.choice(["\n", "\r\n"]).join(lines)
    for _ in range(rng.choice([0, 0, 1, 2])):  # a stray character, or one less
        i = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:i] + text[i + 1:]
        else:
            text = text[:i] + rng.choice("\"'[]{}=.,#\n \\0_+-:T") + text[i:]
    return text


def test_generated_documents_agree_with_tomllib():
    # Every generated document is read as tomllib reads it, or refused where
    # tomllib refuses it too (fuzz/toml_fuzz.py does the same on any bytes).
    rng = random.Random(14)
    read = refused = 0
    for _ in range(4000):
        text = _generated(rng)
        try:
            want = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            want = None
        try:
            got = _toml.loads(text)
        except _toml.Invalid:
            assert want is None, text
            refused += 1
            continue
        assert want is not None, f"accepts what tomllib refuses: {text!r}"
        assert same(got, want), text
        read += 1
    assert read > 500 and refused > 500  # both kinds were generated


def test_deep_nesting_is_refused_not_a_crash():
    with pytest.raises(_toml.Invalid):
        _toml.loads("a = " + "[" * 100_000 + "]" * 100_000 + "\n")


def test_long_keys_and_headers_are_read_in_linear_work():
    # A key of many dotted parts, and a header of many parts with many keys
    # under it, are read in one walk each (Note [Linear in the keys]); the
    # table they make is the one tomllib makes (at a size tomllib reads fast).
    for n in (200, 20_000):
        doc = _toml.loads("a" + ".a" * n + " = 1\n")
        depth = 0
        while isinstance(doc, dict):
            doc = doc["a"]
            depth += 1
        assert doc == 1 and depth == n + 1
        doc = _toml.loads("[" + "h." * n + "h]\n" + "".join(f"k{i} = {i}\n" for i in range(n)))
        for _ in range(n + 1):
            doc = doc["h"]
        assert len(doc) == n and doc["k7"] == 7
    text = "[x.y]\na.b.c = 1\n[x.y.a.d]\ne = 2\n"
    assert same(_toml.loads(text), tomllib.loads(text))


def test_importing_the_reader_imports_nothing(tmp_path):
    # The point of the reader: `anydev scan` in a project with a [tool.anydev]
    # table imports neither tomllib nor what tomllib imports.
    code = textwrap.dedent("""
        import sys
        before = set(sys.modules)
        from anydev._common import toml as _toml
        _toml.loads(open(sys.argv[1]).read())
        print(sorted(set(sys.modules) - before - {"anydev", "anydev._common", "anydev._common.toml", "__future__"}))
    """)
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


# --- through the configuration -------------------------------------------------------


def test_config_errors_are_tomllibs(tmp_path):
    path = tmp_path / "anydev.toml"
    path.write_text('select = ["AD1"]\nselect = ["AD2"]\n')
    with pytest.raises(_config.ConfigError) as e:
        _config.load_file(str(path))
    assert str(e.value).startswith(f"{path}: not valid TOML: ")
    assert "(at line 2, column" in str(e.value)  # where, as tomllib says it


def test_config_too_deep_is_a_clear_error(tmp_path):
    path = tmp_path / "anydev.toml"
    path.write_text("select = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(_config.ConfigError, match="nested too deeply"):
        _config.load_file(str(path))


def test_a_refused_file_tomllib_would_take_long_on_is_not_handed_on(tmp_path, monkeypatch):
    # tomllib is quadratic in a key's parts: a broken file with such a key
    # gets anydev's verdict at once, not minutes of tomllib.
    asked = []
    monkeypatch.setattr(_config, "_toml", lambda: asked.append(1) or tomllib)
    path = tmp_path / "anydev.toml"
    path.write_text("select" + ".a" * 100_000 + " = [\n")
    with pytest.raises(_config.ConfigError, match="one line has 100000 dots"):
        _config.load_file(str(path))
    assert asked == []
    # on any line, not only the first (a pyproject.toml's starts with a header)
    path.write_text("[tool]\nselect" + ".a" * 100_000 + " = [\n")
    with pytest.raises(_config.ConfigError, match="one line has 100000 dots"):
        _config.load_file(str(path))
    assert asked == []
    path.write_text("select.a = [\n")  # a short one still gets tomllib's message
    with pytest.raises(_config.ConfigError, match="at end of document|line 1"):
        _config.load_file(str(path))
    assert asked == [1]


def test_what_the_reader_refuses_tomllib_still_reads(tmp_path, monkeypatch):
    # A document the reader refuses but tomllib accepts (a newer TOML, say)
    # is read: the reader never makes a file unreadable.
    def refuse(text):
        raise _toml.Invalid

    monkeypatch.setattr(_toml, "loads", refuse)
    path = tmp_path / "anydev.toml"
    path.write_text('ignore = ["AD107"]\n')
    assert "AD107" in _config.load_file(str(path)).ignore
