"""The Python scanner's fast path (Note [Fast path] in core/scan/src/python_scan.cc)
against its full path: the same findings and errors, to the byte, on the
generated corpora of benchmarks/scan, on the fixtures, on adversarial inputs
(needles in strings, comments and docstrings, aliases and scopes, calls over
several lines, CRLF, tabs, a BOM, invalid UTF-8, NUL bytes, huge lines,
syntax errors) and on random mutations of generated files. The full path is
what ANYDEV_SCAN_FULL_LEXER=1 gives; each side runs in its own process, with
every rule on (the literal rules included).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "scan"))
import gen_corpus  # noqa: E402

DUMP = r"""
import json, sys
from anydev.scan import scan_paths
r = scan_paths(sys.argv[1:], select=["ALL"], jobs=2, respect_gitignore=False)
json.dump({"findings": [[f.path, f.line, f.column, f.end_line, f.end_column, f.rule, f.kind,
                         f.symbol, f.start, f.end, f.call_end, f.text] for f in r.findings],
           "errors": [[e.path, e.line, e.message] for e in r.errors],
           "files": r.files, "bytes": r.bytes}, sys.stdout)
"""


def scan(paths: list[str], full: bool) -> dict:
    env = dict(os.environ)
    env.pop("ANYDEV_SCAN_FULL_LEXER", None)
    if full:
        env["ANYDEV_SCAN_FULL_LEXER"] = "1"
    p = subprocess.run([sys.executable, "-c", DUMP, *paths], env=env, capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)


def assert_same(paths: list[str]) -> dict:
    fast, full = scan(paths, False), scan(paths, True)
    assert fast["files"] == full["files"] and fast["bytes"] == full["bytes"]
    if fast != full:  # the first difference, readably
        a = {tuple(x) for x in fast["findings"]}
        b = {tuple(x) for x in full["findings"]}
        raise AssertionError(f"fast only: {sorted(a - b)[:5]}\nfull only: {sorted(b - a)[:5]}\n"
                             f"errors: {fast['errors'][:5]} / {full['errors'][:5]}")
    return full


@pytest.mark.parametrize("share", [1.0, 0.2])
def test_generated_corpus(tmp_path, share):
    gen_corpus.generate(str(tmp_path / "c"), 3, seed=7, legacy_share=share)
    full = assert_same([str(tmp_path / "c")])
    assert len(full["findings"]) > 100  # the corpus is what the benchmark scans


def test_fixtures():
    full = assert_same([os.path.join(ROOT, "tests", "fixtures")])
    assert full["findings"]


ADVERSARIAL = {
    "strings.py": '''import torch
"""torch.cuda.synchronize() in a docstring
import torch.cuda as tc
"""
x = "torch.cuda.current_device()"  # torch.cuda.synchronize()
y = 'import torch as t'; z = r"\\"cuda\\"" + b"cuda"
s = f"{torch.cuda.current_device()} {'cuda'!r:>{w}} {x:{'cuda'}}"
q = f'{f"{torch.cuda.synchronize()}"}' f"""{
    torch.cuda.device_count()}"""
w = rb"torch.cuda" Rb'x' br"y" u"cuda" t = 1
''',
    "aliases.py": '''from torch.cuda import current_device as cd, synchronize
import torch.cuda as tc
import torch as th
dev = th.cuda
D = th.device
a = 1
b = 2
cd()
synchronize()
tc.empty_cache()
dev.synchronize()
x = D("cuda")
y = D("cuda", 0)
z = th.zeros(2, device="cuda:1")
''',
    "scopes.py": '''import os


def f():
    import torch.cuda as tc
    tc.synchronize()
    x = 1
y = 2
if y:
    z = 3
    tc.synchronize()


class A:
    def g(self, torch):
        torch.cuda.synchronize()

    def h(self):
        from torch import cuda
        for cuda in range(3):
            pass
        cuda.synchronize()

import torch
torch = None
torch.cuda.synchronize()
import torch as torch
def k():
    global torch
    torch.cuda.synchronize()
lambda torch: torch.cuda.current_device()
''',
    "multiline.py": '''import torch
torch.cuda.set_device(
    rank)
x = torch.zeros(
    4,
    device=
    "cuda",
)
y = torch \\
    .cuda.current_device()
if torch.cuda.is_available():
    d = "cuda"
else:
    d = "cpu"
if torch.cuda.is_available():

    # a comment between
    e = "cuda"
else:
    e = "cpu"
    more = 1
if torch.accelerator.is_available(): g = "cuda"
else: g = "cpu"
dev = "cuda" if torch.cuda.is_available() else "cpu"
dev = torch.device("cuda:0" if torch.cuda.device_count() > 0 else "cpu")
m = model.cuda(non_blocking=True); ok = t.is_cuda; same = t.device.type == "cuda"
torch.distributed.init_process_group("nccl")
torch.distributed.init_process_group(backend="nccl")
with torch.autocast("cuda"):
    pass
''',
    "suppress.py": '''import torch
torch.cuda.synchronize()  # anydev: ignore
torch.cuda.synchronize()  # anydev: ignore[AD1]
torch.cuda.synchronize()  # noqa
x = torch.zeros(1, device="cuda")  # anydev: ignore[AD9]
torch.cuda.current_device(  # anydev: ignore
)
''',
    "mock.py": '''from unittest import mock
import torch.cuda as tc
@mock.patch("torch.cuda.synchronize")
def t(m):
    with mock.patch.object(tc, "current_device"):
        pass
''',
    "tabs.py": "import torch\nif x:\n\tif y:\n\t\ttorch.cuda.synchronize()\n\f\ttorch.cuda.synchronize()\n"
               "def f():\n\timport torch.cuda as tc\n\ttc.synchronize()\n  \tz = 1\ntc.synchronize()\n",
    "prefix.py": 'import torch\nx = 1if"cuda"else 2\ny = x.f"{torch.cuda.synchronize()}"\n'
                 'z = 1.f"{torch.cuda.synchronize()}"\nw = 1e+f"{torch.cuda.synchronize()}"\n',
    "errors_bracket.py": "import torch\ntorch.cuda.synchronize()\nx = (1]\ntorch.cuda.synchronize()\n",
    "errors_string.py": "import torch\ntorch.cuda.synchronize()\nx = 'abc\ntorch.cuda.synchronize()\n",
    "errors_char.py": "import torch\ntorch.cuda.synchronize()\nx = a ? b\ntorch.cuda.synchronize()\n",
    "errors_unclosed.py": "import torch\ntorch.cuda.synchronize()\nx = (1,\n",
    "errors_backslash.py": "import torch\ntorch.cuda.synchronize()\nx = 1 \\ 2\n",
    "errors_fstring.py": "import torch\ntorch.cuda.synchronize()\nx = f'{a'\ntorch.cuda.synchronize()\n",
    "bang.py": "import torch\nx = a != b # ? $ `\ny = '? $ `'\ntorch.cuda.synchronize()\n",
    "no_newline.py": "import torch\ntorch.cuda.synchronize()",
    # matches in dead text (comments, strings no rule reads) are skipped
    "dead_text.py": "import torch\nfrom unittest import mock\n"
                    "# torch.cuda.synchronize() import torch.cuda as tc\n"
                    "'''cuda'''; b'cuda'; 'on cuda'; \"cu da\"; 'import torch as th'\n"
                    "x = torch.zeros(1, device='cuda')  # cuda\n"
                    "y = t.to(u'cuda:0'); z = t.to(r\"cuda\"); w = t.to(rb\"cuda\")\n"
                    "@mock.patch('torch.cuda.synchronize')\ndef f(m):\n"
                    "    a = \"torch.cuda.synchronize\"; b = 'torch.cuda.synchronize x'\n"
                    "    d = 'cuda' if torch.cuda.is_available() else 'cpu'  # 'cuda'\n"
                    "g = f'cuda:{rank}'; h = torch.device(f\"cuda:{i}\"); "
                    "k = f\"{th.cuda.synchronize()} cuda\"\n"
                    "s = 'cuda \\' cuda'; n = torch.distributed.init_process_group('nccl')\n"
                    "e = 'cuda\\\n'; torch.cuda.synchronize(); tc.synchronize()\n",
    "only_comments.py": "# torch.cuda.synchronize()\n\n   \n# import torch\n",
    # issue 12: config containers' device= keywords, the comparison in both orders
    "config_compare.py": 'import torch, types\na = types.SimpleNamespace(\n    device="cuda")\n'
                         'b = dict(device="cuda", x=torch.zeros(1, device="cuda"))\n'
                         'if ("cuda" != torch.zeros(\n        2).device.type): pass\n'
                         'c = "cuda" == xs[0].device.type; d = x.device.type == "cuda"\n',
}

BINARY = {
    "bom.py": b"\xef\xbb\xbfimport torch\ntorch.cuda.synchronize()\nx = 'caf\xc3\xa9'; torch.cuda.synchronize()\n",
    "invalid_utf8.py": b"import torch\ntorch.cuda.synchronize()\nx = '\xff'\ntorch.cuda.synchronize()\n",
    "nul.py": b"import torch\ntorch.cuda.synchronize()\n\x00\n",
    "latin1_cookie.py": b"# -*- coding: latin-1 -*-\nimport torch\nx = '\xe9'; torch.cuda.synchronize()\n",
    "huge_line.py": b"import torch\nx = [" + b"torch.cuda.synchronize(), 'cuda', " * 2000 + b" " * 300000 + b"]\n",
    "deep.py": b"import torch\nx = " + b"(" * 300 + b"torch.cuda.synchronize()" + b")" * 300 + b"\n",
    # issue 14: every string of one long call, and nested .cuda( calls
    "many_literals.py": b"import torch\nf(" + b'device="cuda", "cuda", torch.device("cuda"), '
                        b'x.to("cuda"), ["cuda", "cpu"], ' * 3000 + b")\n",
    "nested_cuda.py": b"import torch\nx" + b".cuda(y" * 2000 + b")" * 2000 + b"\n",
    # issue 14: malformed nested conditionals (each value's scan for its `else`)
    "conditionals.py": b"import torch\nd = " + b'"cuda" if torch.cuda.is_available() if ' * 500
                       + b' else "gpu"\ne = ' + b'"cuda" if ' * 500
                       + b'torch.cuda.is_available() else "cpu"\nf = '
                       + b'("cuda" if ' * 100 + b"torch.cuda.is_available()" + b' else "gpu")' * 100
                       + b"\n",
}


def test_adversarial(tmp_path):
    for name, text in ADVERSARIAL.items():
        (tmp_path / name).write_text(text)
        crlf = text.replace("\n", "\r\n")
        (tmp_path / name.replace(".py", "_crlf.py")).write_bytes(crlf.encode())
        (tmp_path / name.replace(".py", "_cr.py")).write_bytes(text.replace("\n", "\r").encode())
    for name, data in BINARY.items():
        (tmp_path / name).write_bytes(data)
    full = assert_same([str(tmp_path)])
    assert len(full["findings"]) > 50 and full["errors"]


def mutate(r: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(r.randint(1, 6)):
        i = r.randrange(len(lines))
        k = r.random()
        if k < 0.25:  # a line moved
            lines.insert(r.randrange(len(lines)), lines.pop(i))
        elif k < 0.5:  # a byte that opens or closes something
            line = lines[i]
            at = r.randint(0, len(line))
            lines[i] = line[:at] + r.choice(['"', "'", '"""', "(", ")", "[", "{", "}", "#", "\\",
                                             "f'", "\t", " cuda ", "import torch.cuda as th",
                                             "\r"]) + line[at:]
        elif k < 0.75:  # re-indented
            lines[i] = r.choice(["", "    ", "        ", "\t"]) + lines[i].lstrip()
        else:  # a line from the legacy and literal forms
            lines.insert(i, lines[i][:len(lines[i]) - len(lines[i].lstrip())] + r.choice(
                gen_corpus.PY_LEGACY + gen_corpus.PY_LITERAL).replace("{x}", "t")
                .replace("{{rank}}", "{rank}"))
    return "\n".join(lines)


def test_mutations(tmp_path):
    r = random.Random(14)
    g = gen_corpus.Gen(14)
    for k in range(150):
        (tmp_path / f"m{k}.py").write_text(mutate(r, g.py_file(r.randint(500, 6000))))
    assert_same([str(tmp_path)])
