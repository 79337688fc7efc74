"""The fixer's rewritten lines wrapped to the project's line length
(anydev._migrate.fix.wrap, Note [Wrapping rewritten lines]): the configured
length is found (ruff, black, flake8; 88), a line the rewrite took over it is
wrapped inside its brackets with the file's indentation, a line over it
before is never reflowed, and the result means what the unwrapped one did."""

from __future__ import annotations

import ast
import random

import pytest

from anydev._migrate.fix import wrap as _wrap
from anydev.fix import fix_paths, fix_source
from anydev.scan import scan_source
from fix_default import newest_default_target  # noqa: F401 (autouse)

ACC_TYPE = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'


@pytest.fixture(autouse=True)
def _fresh_cache():
    _wrap._dir_cache.clear()
    yield
    _wrap._dir_cache.clear()


def _fix(src: str, path: str = "m.py", unsafe: bool = True) -> str:
    data = src.encode()
    findings, _ = scan_source(data, path)
    new, _, _ = fix_source(data, path, findings, unsafe=unsafe, target_torch="2.13")
    return new.decode()


def _width(text: str) -> int:
    return max(len(ln) for ln in text.splitlines())


# --- the configured line length -----------------------------------------------------

@pytest.mark.parametrize("name, body, want", [
    ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", 100),
    ("pyproject.toml", "[tool.black]\nline-length = 119\n", 119),
    ("pyproject.toml", "[tool.ruff]\nline-length = 100\n[tool.black]\nline-length = 120\n", 100),
    ("pyproject.toml", "[project]\nname = 'x'\n", 88),
    ("ruff.toml", "line-length = 110\n", 110),
    (".ruff.toml", "line-length = 90\n", 90),
    ("setup.cfg", "[flake8]\nmax-line-length = 79\n", 79),
    ("tox.ini", "[flake8]\nmax_line_length = 120  # wide\n", 120),
    (".flake8", "[flake8]\nmax-line-length = 99\n", 99),
    ("setup.cfg", "[yapf]\ncolumn_limit = 79\n", 79),
    ("pyproject.toml", "[tool.ruff\nbroken", 88),
])
def test_the_configured_line_length_is_found(tmp_path, name, body, want):
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(body)
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    assert _wrap.line_length_for(str(sub / "m.py")) == want


def test_the_nearest_configuration_wins_and_the_repository_root_stops_the_walk(tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 70\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    (repo / "inner").mkdir()
    (repo / "inner" / "ruff.toml").write_text("line-length = 120\n")
    assert _wrap.line_length_for(str(repo / "inner" / "a.py")) == 120
    assert _wrap.line_length_for(str(repo / "a.py")) == 100
    bare = tmp_path / "bare"
    (bare / ".git").mkdir(parents=True)
    # the repository's root sets nothing: the folder above it is not asked
    assert _wrap.line_length_for(str(bare / "a.py")) == 88


# --- wrapping ------------------------------------------------------------------------

def test_a_call_made_long_is_wrapped_at_its_arguments():
    src = ("import torch\n\n\ndef f(model, local_rank):\n"
           "    model = some_wrapper(model, device_ids=[torch.cuda.current_device()], x=1)\n"
           "    return model\n")
    out = _fix(src)
    assert out == ("import torch\n\n\ndef f(model, local_rank):\n"
                   "    model = some_wrapper(\n"
                   "        model, device_ids=[torch.accelerator.current_device_index()], x=1\n"
                   "    )\n"
                   "    return model\n")
    # without the wrap the rewritten line is 94 columns
    assert _width(out) <= 88


def test_arguments_that_do_not_fit_on_one_line_go_one_a_line_with_a_trailing_comma():
    src = ("import torch\n\n\ndef f(x, rank):\n"
           "    return x.to(torch.device('cuda', rank), non_blocking=True, copy=False)\n")
    out = _fix(src)
    # (the device argument alone is 92 columns at its indentation: split too)
    assert out == ("import torch\n\n\ndef f(x, rank):\n"
                   "    return x.to(\n"
                   "        torch.device(\n"
                   f"            {ACC_TYPE}, rank\n"
                   "        ),\n"
                   "        non_blocking=True,\n"
                   "        copy=False,\n"
                   "    )\n")


def test_the_project_line_length_and_indentation_are_kept(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    two = ("import torch\n\n\ndef f(model):\n"
           "  model = some_wrapper(model, device_ids=[torch.cuda.current_device()], x=1, yy=2)\n"
           "  if model:\n"
           "    wrapped = some_wrapper(model, device_ids=[torch.cuda.current_device()], x=1, yy=222)\n"
           "  return model\n")
    p = tmp_path / "m.py"
    p.write_text(two)
    monkeypatch.chdir(tmp_path)
    fix_paths([str(p)], unsafe=True, target_torch="2.13")
    out = p.read_text()
    # the first is 95 columns after the rewrite (within 100: left), the second 101
    assert "  model = some_wrapper(model, device_ids=[torch.accelerator.current_device_index()]" \
        ", x=1, yy=2)\n" in out
    assert ("    wrapped = some_wrapper(\n"
            "      model, device_ids=[torch.accelerator.current_device_index()], x=1, yy=222\n"
            "    )\n") in out
    # a second run changes nothing
    before = p.read_bytes()
    fix_paths([str(p)], unsafe=True, target_torch="2.13")
    assert p.read_bytes() == before


def test_a_line_over_the_limit_before_is_not_reflowed():
    long_args = ", ".join(f"argument_{i}" for i in range(8))
    src = (f"import torch\n\n\ndef f():\n"
           f"    call_something({long_args}, torch.cuda.current_device())\n")
    assert len(src.splitlines()[4]) > 88
    out = _fix(src)
    assert out.splitlines()[4] == src.splitlines()[4].replace(
        "torch.cuda.current_device()", "torch.accelerator.current_device_index()")


def test_lines_the_fix_did_not_change_are_never_wrapped():
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(16))
    src = ("import torch\n\n" + long_line + "\n"
           "y = some_function(first_argument, second_arg, torch.cuda.current_device(), 1)\n")
    out = _fix(src)
    assert long_line + "\n" in out
    assert "y = some_function(\n    first_argument, second_arg, " \
        "torch.accelerator.current_device_index(), 1\n)\n" in out


def test_an_assignment_of_an_expression_gets_parentheses_not_a_split_of_a_one_word_call():
    src = ('import torch\n\nself_device = torch.device("cuda") if torch.cuda.is_available() '
           'else torch.device("cpu")\n')
    out = _fix(src)
    assert "self_device = (\n    torch.accelerator.current_accelerator(check_available=True) " \
        "or torch.device(\"cpu\")\n)\n" in out
    assert 'torch.device(\n    "cpu"\n)' not in out


def test_a_trailing_comment_stays_on_the_last_line():
    src = ("import torch\n\n\ndef f():\n"
           "    torch.cuda.set_device(torch.cuda.current_device())  # keep the current device\n")
    out = _fix(src)
    assert ("    torch.accelerator.set_device_index(\n"
            "        torch.accelerator.current_device_index()\n"
            "    )  # keep the current device\n") in out


# --- wrap_new_long_lines on its own: the text means what it meant --------------------------

def test_a_lambda_comprehension_or_string_line_is_never_split_where_it_would_change_meaning():
    old = ("f = g(lambda a, b: a + b, 1)\n"
           "xs = [h(a, b) for a, b in pairs]\n"
           's = """\ninside a string h(aaaa)\n"""\n')
    new = ("f = g(lambda a, b: a + b + torch.accelerator.current_device_index() * 1000000, 1)\n"
           "xs = [h(a, b, torch.accelerator.current_device_index() * 100000000) for a, b in pairs]\n"
           's = """\ninside a string h(aaaa, torch.accelerator.current_device_index(), 1, 2, 3, 4, 5)\n"""\n')
    got = _wrap.wrap_new_long_lines(old, new, 60)
    assert ast.dump(ast.parse(got)) == ast.dump(ast.parse(new))
    assert 'inside a string h(aaaa, torch.accelerator.current_device_index(), 1, 2' in got
    assert "lambda a, b: a" in got


def _random_call(rnd: random.Random, depth: int = 0) -> str:
    names = ["torch.accelerator.current_device_index()", "x", "model.weight", '"cuda"',
             "some_long_argument_name", "3", "y[0]", "a.b.c"]
    if depth > 2 or rnd.random() < 0.3:
        return rnd.choice(names)
    fn = rnd.choice(["f", "torch.device", "obj.method", "wrapper_function"])
    args = [_random_call(rnd, depth + 1) for _ in range(rnd.randint(1, 4))]
    if rnd.random() < 0.3:
        args.append(f"key={_random_call(rnd, depth + 1)}")
    if rnd.random() < 0.2:
        return f"[{', '.join(a for a in args if '=' not in a.split('(')[0])}]"
    return f"{fn}({', '.join(args)})"


@pytest.mark.parametrize("seed", range(40))
def test_generated_lines_wrap_to_the_same_tree_within_the_limit_or_stay(seed):
    rnd = random.Random(seed)
    stmts, olds = [], []
    for _ in range(6):
        expr = _random_call(rnd)
        lead = rnd.choice(["x = ", "return ", "", "if ", "value += "])
        end = ":" if lead == "if " else ""
        line = f"    {lead}{expr}{end}"
        body = "\n        pass" if end else ""
        stmts.append(line + body)
        olds.append(line.replace("torch.accelerator.current_device_index()", "i()") + body)
    new = "def f():\n" + "\n".join(stmts) + "\n"
    old = "def f():\n" + "\n".join(olds) + "\n"
    got = _wrap.wrap_new_long_lines(old, new, 60)
    assert ast.dump(ast.parse(got)) == ast.dump(ast.parse(new))
    # every line of the result is one of new's, or a wrapped one within the limit
    for ln in got.splitlines():
        assert ln in new.splitlines() or len(ln) <= 60, ln


@pytest.mark.parametrize("line, want", [
    # a comprehension: one clause a line
    ("    xs = [t.to(torch.accelerator.current_accelerator(), non_blocking=True) for t in "
     "tensors]",
     "    xs = [\n        t.to(torch.accelerator.current_accelerator(), non_blocking=True)\n"
     "        for t in tensors\n    ]"),
    # an assert's test in new parentheses, its message after them
    ("    assert a.device.type == torch.accelerator.current_accelerator().type and b.is_ok(), "
     "'msg'",
     "    assert (\n        a.device.type == torch.accelerator.current_accelerator().type "
     "and b.is_ok()\n    ), 'msg'"),
    # an if's condition, operators first
    ("    if torch.accelerator.is_available() and torch.accelerator.device_count() > 1 and "
     "not args.cpu:",
     "    if (\n        torch.accelerator.is_available()\n        and "
     "torch.accelerator.device_count() > 1\n        and not args.cpu\n    ):"),
    # a conditional expression
    ("    index = torch.accelerator.current_device_index() if torch.accelerator.is_available() "
     "else 0",
     "    index = (\n        torch.accelerator.current_device_index()\n        if "
     "torch.accelerator.is_available()\n        else 0\n    )"),
    # a lambda's parameters are no items of the call
    ("    m = torch.load(path, map_location=lambda s, loc: s.to(torch.accelerator."
     "current_accelerator()))",
     "    m = torch.load(\n        path, map_location=lambda s, loc: s.to("
     "torch.accelerator.current_accelerator())\n    )"),
    ("    m = torch.load(path_to_checkpoint, map_location=lambda s, loc: s.to(torch.accelerator."
     "current_accelerator()))",
     "    m = torch.load(\n        path_to_checkpoint,\n        map_location=lambda s, loc: s.to("
     "torch.accelerator.current_accelerator()),\n    )"),
])
def test_statement_forms_are_wrapped_as_black_would(line, want):
    old = "def f():\n    x = 1\n    pass\n"
    new = f"def f():\n{line}\n    pass\n"
    if line.lstrip().startswith("if "):
        new = f"def f():\n{line}\n        pass\n"
        old = "def f():\n    if x:\n        pass\n"
    got = _wrap.wrap_new_long_lines(old, new, 88)
    assert got.split("\n", 1)[1].startswith(want + "\n"), got
    assert ast.dump(ast.parse(got)) == ast.dump(ast.parse(new))


def test_the_tree_check_refuses_a_wrap_that_changes_the_code():
    new = "class C:\n    def f(self):\n        x = g(a, b)\n        return x\n"
    tree = ast.parse(new)
    good = "class C:\n    def f(self):\n        x = g(\n            a, b\n        )\n        return x\n"
    assert _wrap._same_tree(tree, good, [3])
    # an operand changed, a tuple made of a parenthesized value, a bracket left open
    assert not _wrap._same_tree(tree, good.replace("a, b", "a, c"), [3])
    assert not _wrap._same_tree(tree, good.replace("a, b\n", "(a, b),\n"), [3])
    with pytest.raises(SyntaxError):
        _wrap._same_tree(tree, good.replace("        )\n", ""), [3])
