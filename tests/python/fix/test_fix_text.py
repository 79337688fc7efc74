"""The fixer's text of a file (anydev/_migrate/fix/text.py): its shortcut past
tokenize.detect_encoding for a file whose first two lines hold no coding
cookie and are valid UTF-8 answers what detect_encoding answers, and leaves
every other file (a cookie, a bad byte, a byte-order mark with a cookie) to it."""

from __future__ import annotations

import codecs
import io
import random
import tokenize

from anydev._migrate.fix.text import _plain_utf8, _Text
from fix_default import newest_default_target  # noqa: F401 (autouse)

PIECES = [b"", b"\n", b"\r\n", b"\r", b"# -*- coding: latin-1 -*-\n", b"# coding=utf-8\n",
          b"#!/usr/bin/env python\n", b"x = 1\n", b"\xff\xfe", b"\xc3\xa9", b"\xe9",
          b"# vim: set fileencoding=cp1252 :\n", b"   \n", b"coding", codecs.BOM_UTF8,
          b"# coding: utf-8\n", b"# coding: latin-1\n", b"\x00", b"'''\n", b"import torch\n"]


def _detected(data: bytes) -> str:
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return "an error"


def test_the_shortcut_agrees_with_detect_encoding():
    rnd = random.Random(3)
    taken = 0
    for _ in range(20000):
        data = b"".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 6)))
        got = _plain_utf8(data)
        if got is not None:
            taken += 1
            assert got == _detected(data), data
    assert 5000 < taken < 15000  # both ways are taken


def test_what_the_shortcut_leaves():
    for data in (b"# coding: latin-1\nx = '\xe9'\n", b"x = 1\n# -*- coding: cp1252 -*-\n",
                 b"\xe9 = 1\n", codecs.BOM_UTF8 + b"# coding: latin-1\n", b"#\n\xff\n"):
        assert _plain_utf8(data) is None, data
    assert _plain_utf8(b"x = 1\ny = 2\n# coding: latin-1\n") == "utf-8"  # a third line's is none
    assert _plain_utf8(codecs.BOM_UTF8 + b"x = 1\n") == "utf-8-sig"


def test_texts_are_decoded_as_before():
    assert _Text(b"# coding: latin-1\nx = '\xe9'\n", "python").text == "# coding: latin-1\nx = '\u00e9'\n"
    assert _Text(codecs.BOM_UTF8 + b"x = '\xc3\xa9'\n", "python").text == "x = '\u00e9'\n"
    assert _Text(b"x = 1\n\xff\n", "python").text == "x = 1\n\udcff\n"
