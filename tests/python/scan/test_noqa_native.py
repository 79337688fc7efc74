"""The scanner's own reading of `# noqa` directives (Note [noqa directives] in
core/scan/src/scan_source.cc) against anydev/_migrate/noqa.py's, the reference: Python's
tokenize and ruff's expression. The two must give the same directives, line
for line and code for code, on every file the scanner reads them for; where it
leaves a file to tokenize (None), noqa.py still reads it, so a scan's findings
are the same either way."""

from __future__ import annotations

import os
import random
import re

import pytest

from anydev._migrate import noqa as _noqa
from anydev import scan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEVSET = "/work/devset"


def native(data: bytes):
    return scan._native().noqa_directives(data)


def same(data: bytes) -> bool:
    """Asserts the scanner's directives are noqa.py's where it reads them;
    returns whether it did."""
    got = native(data)
    if got is None:
        return False
    assert got == _noqa.directives(data), data
    return True


# --- what the expression means on a str: the tables the Note lists ----------


def test_the_notes_tables_are_pythons():
    # `\s` on a str, and [A-Za-z] with IGNORECASE: the characters the native
    # reading knows (a table of Python's that a new Unicode version could
    # change: then this fails, and the Note's tables need the new ones).
    spaces = [c for c in range(0x110000) if re.match(r"\s", chr(c))]
    assert spaces == [*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680,
                      *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
    letters = [c for c in range(0x80, 0x110000) if re.match(r"[A-Za-z]", chr(c), re.I)]
    assert letters == [0x130, 0x131, 0x17F, 0x212A]
    assert [c for c in range(0x80, 0x110000) if re.match("noqa", "noqa".replace("n", chr(c)),
                                                         re.I)] == []


@pytest.mark.parametrize("cp", [0x09, 0x0B, 0x0C, 0x1C, 0x1F, 0x20, 0x85, 0xA0, 0x1680, 0x2000,
                                0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x200B, 0x180E])
def test_every_space_of_the_expression(cp):
    w = chr(cp)
    for comment in (f"#{w}noqa", f"# noqa:{w}AD101", f"# noqa: AD101{w}AD102",
                    f"# noqa: AD101,{w}{w}ad2", f"#{w}{w}NOQA:{w}"):
        assert same(f"x = 1  {comment}\ny = 2\n".encode())


@pytest.mark.parametrize("letter", ["\u0130", "\u0131", "\u017f", "\u212a", "\u00e9", "\u0391"])
def test_every_letter_of_the_expression(letter):
    for comment in (f"# noqa: {letter}D101", f"# noqa: AD101, {letter}1", f"# noqa:{letter}",
                    f"# noqa: A{letter}1,AD2"):
        assert same(f"x = 1  {comment}\n".encode())


CASES = [
    "# noqa", "#noqa", "# NOQA", "# NoQa", "#   noqa", "# noqa:", "# noqa: ", "# noqa:AD101",
    "# noqa: AD101", "# noqa: ad101", "# noqa: AD101,AD102", "# noqa: AD101, AD102",
    "# noqa: AD101 AD102", "# noqa: AD101,,  AD102", "# noqa: AD1", "# noqa: AD", "# noqa: 101",
    "# noqa: AD101x", "# noqa: AD101 x", "# noqa: AD101, x9, E501", "# noqa : AD101",
    "# noqa:E501", "# noqa: E501 # noqa", "# noqa # noqa: AD1", "# type: ignore  # noqa: AD101",
    "# xnoqa", "# not noqa", "#noqa:AD101#noqa:AD2", "# noqa:,AD101", "# noqa:AD101,",
    "# noqa: AD101abc AD102", "# noqaAD101", "# noqa:\tAD101", "# NOQA:ad1,AD2 E3",
    "# anydev: ignore  # noqa: AD1", "## noqa", "# noqa:# noqa: AD2", "# noqa: A1B2",
    "# noqa: ADxyz101", "# noqa: AD1_2", "# noqa: AD101;AD102",
]


def test_comment_forms():
    for c in CASES:
        for data in (f"x = 1  {c}\n", f"{c}\nx = 2\n", f"def f():\n    return 1  {c}\n"):
            assert same(data.encode()), data


def test_not_comments_and_their_lines():
    texts = [
        's = "# noqa"\n',
        "s = '# noqa: AD101'  # noqa: AD102\n",
        's = """\n# noqa\n"""  # noqa: AD1\n',
        "s = f'{x}  # noqa'\n",
        "s = rb'# noqa'  # real\n",
        "x = (1,  # noqa: AD101\n     2,  # noqa: AD102\n)\n",
        "x = 1 + \\\n    2  # noqa\n",
        "if x:\n    y = 1  # noqa\nelse:\n    y = 2\n",
        "x = 1  # noqa\r\ny = 2  # noqa: AD1\r\n",
        "\ufeffx = 1  # noqa: AD1\n",
        "x = [\n    '''a\n# noqa\nb''',  # noqa: AD3\n]\n",
        "def f():\n    '''doc # noqa'''\n    return 1  # NOQA:ad105\n",
        "x = 1  # noqa",  # no newline at the end
    ]
    for t in texts:
        assert same(t.encode()), t


def test_a_dedent_that_matches_no_indent_stops_the_reading():
    # tokenize raises IndentationError at line 4: no directive from there on.
    data = b"if x:\n        a = 1  # noqa: AD1\n    # noqa: AD2\n    b = 2  # noqa: AD3\nc = 3  # noqa\n"
    got = native(data)
    assert got == _noqa.directives(data) == {2: ("AD1",), 3: ("AD2",)}


def test_what_tokenize_must_read():
    # The cases the scanner leaves to tokenize (None): an error, a coding
    # declaration, invalid UTF-8, a lone '\r', a tab in an indent, a comment
    # in an f-string's field.
    for data in (b"x = $  # noqa\n", b"# -*- coding: latin-1 -*-\nx = 1  # noqa\n",
                 b"x = 1  # noqa \xff\n", b"x = 1  # noqa\ry = 2\n",
                 b"if x:\n\ty = 1  # noqa\n", b"s = f'''{x # noqa\n}'''\n"):
        assert native(data) is None, data
    assert native(b"x = 1\n") == {}


# --- generated files -----------------------------------------------------------

SPACES = [" ", "  ", "\t", "", "\u00a0", "\u3000", "\x0c", "\x1f"]
WORDS = ["noqa", "NOQA", "NoQa", "noq", "noqa_", "xnoqa"]


def random_comment(r: random.Random) -> str:
    out = "#"
    for _ in range(r.randint(1, 3)):
        out += r.choice(SPACES) + r.choice(WORDS)
        if r.random() < 0.7:
            out += r.choice([":", ": ", ":\t", " :", ":\u2003"])
            for k in range(r.randint(0, 4)):
                if k:
                    out += r.choice([",", ", ", " ", ",,", "\t", " ,", "\u00a0"])
                out += r.choice(["AD", "ad", "E", "F", "AD1", "X", "\u0131d", "\u017f"]) + \
                    r.choice(["101", "1", "", "9", "1x", "5_0"])
        if r.random() < 0.3:
            out += r.choice(["  # ", " text ", " # type: ignore "])
    return out


def random_file(r: random.Random) -> str:
    lines = []
    indent = 0
    for _ in range(r.randint(1, 25)):
        ind = " " * indent
        k = r.random()
        c = random_comment(r)
        if k < 0.25:
            lines.append(f"{ind}x = torch.cuda.synchronize()  {c}")
        elif k < 0.35:
            lines.append(f"{ind}{c}")
        elif k < 0.45:
            lines.append(f"{ind}s = {r.choice(['', 'r', 'f', 'b'])}'{c}'  {random_comment(r)}")
        elif k < 0.52:
            lines.append(f'{ind}s = """\n{c}\n"""  {random_comment(r)}')
        elif k < 0.6:
            lines.append(f"{ind}y = (1,  {c}\n{ind}     2)  {random_comment(r)}")
        elif k < 0.68:
            lines.append(f"{ind}if x:  {c}")
            indent += 4
            lines.append(f"{' ' * indent}pass")
        elif k < 0.74 and indent:
            indent -= 4 if r.random() < 0.8 else 2  # 2: a dedent that matches no indent
            lines.append(f"{' ' * indent}z = 1  {c}")
        elif k < 0.8:
            lines.append(f"{ind}t = 1 + \\\n{ind}    2  {c}")
        elif k < 0.85:
            lines.append("")
        else:
            lines.append(f"{ind}w = f'{{a}} {{b!r:>4}}'  {c}")
    nl = r.choice(["\n", "\n", "\r\n"])
    return nl.join(lines) + (nl if r.random() < 0.9 else "")


def test_generated_files():
    r = random.Random(31)
    read = 0
    for _ in range(3000):
        if same(random_file(r).encode()):
            read += 1
    assert read > 2000  # the scanner read most of them itself


def test_the_scans_findings_are_the_same():
    # scan_source drops the findings (the scanner's directives, or where it
    # leaves them to tokenize, noqa.py's): what _noqa.filter_findings makes
    # of the findings with none dropped.
    r = random.Random(7)
    dropped = 0
    for i in range(600):
        data = b"import torch\n" + random_file(r).encode()
        got, _ = scan.scan_source(data, f"f{i}.py")
        native_rules, rows = scan._rules()
        raw = scan._native().scan_source(native_rules, data, "python", False)[0]
        every = [scan._finding(f"f{i}.py", t, rows[t[0]]) for t in raw]
        want = _noqa.filter_findings(every, lambda _p: data)
        assert [(f.line, f.rule, f.start) for f in got] == \
            [(f.line, f.rule, f.start) for f in want], data
        dropped += len(every) - len(want)
    assert dropped > 100


def test_the_scanner_reads_them_without_tokenize(monkeypatch, tmp_path):
    # The reading of these files is the scanner's: tokenize is not run (it
    # was, for every file with findings whose lexed comments mention noqa).
    def refuse(_data):
        raise AssertionError("tokenize ran")

    monkeypatch.setattr(_noqa, "directives", refuse)
    data = b"import torch\ntorch.cuda.synchronize()  # noqa: AD107\ntorch.cuda.synchronize()\n"
    found, _ = scan.scan_source(data, "x.py")
    assert [f.line for f in found] == [3]
    (tmp_path / "x.py").write_bytes(data)
    assert [f.line for f in scan.scan_paths([str(tmp_path)]).findings] == [3]


def test_the_fixers_directives_are_the_scanners():
    # What `anydev fix` asks for a finding the scan dropped: the findings with
    # none dropped, and the directives on their lines.
    native_rules, _rows = scan._rules()
    data = b"import torch\nx = torch.device('cuda')  # noqa: AD9\ny = 1  # noqa\n"
    raw, _errs, lines = scan._native().scan_source(native_rules, data, "python", False)
    assert [t[0] for t in raw] and lines == {2: ("AD9",)}
    kept = scan._native().scan_source(native_rules, data, "python")[0]
    assert len(kept) < len(raw)


def _python_files(top: str):
    for d, _dirs, names in os.walk(top):
        for n in names:
            if n.endswith((".py", ".pyi")):
                yield os.path.join(d, n)


@pytest.mark.parametrize("top", [os.path.join(ROOT, "tests"), os.path.join(ROOT, "python"),
                                 DEVSET])
def test_real_files(top):
    if not os.path.isdir(top):
        pytest.skip(f"{top} is not here")
    read = seen = 0
    for path in _python_files(top):
        with open(path, "rb") as f:
            data = f.read()
        if b"noqa" not in data.lower():
            continue
        seen += 1
        read += same(data)
    assert seen == 0 or read > seen // 2
