"""`anydev scan`'s `[*]` and "fixable" at the run's target torch (Note [Marks
of the fixer] in anydev/_cli/scan.py): what `anydev fix` would fix, not what
the row could fix on the newest release; and the target reader it needs, read
by hand (Note [A light target reader] in anydev/_migrate/torch_versions.py)."""

from __future__ import annotations

import json
import random
import re

import pytest

from anydev._migrate import torch_versions as _versions
from conftest import run_cli

SRC = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n    return torch.cuda.device_count()\n"
# AD107 (safe, torch >= 2.6) and AD102 (safe, torch >= 2.6)


def _scan(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    return run_cli("scan", *args)


def _fixed(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("fix", "--diff", *args)
    return {line.split(": ")[0] for line in err.splitlines() if ": not fixed" in line}, out


@pytest.mark.parametrize("declared,marked", [(None, False), ("torch>=2.1", False),
                                             ("torch>=2.6", True), ("torch<2.6", False)])
def test_marks_follow_the_declared_torch(tmp_path, monkeypatch, declared, marked):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC)
    if declared is not None:
        (tmp_path / "requirements.txt").write_text(declared + "\n")
    for where in (".", "pkg/m.py", "pkg"):  # the streamed tree, one file, a folder
        rc, out, err = _scan(tmp_path, monkeypatch, where)
        assert rc == 1, err
        lines = out.splitlines()
        assert len(lines) == 3 and all(("[*]" in ln) is marked for ln in lines[:2]), out
        if marked:
            assert lines[2] == "Found 2 legacy references in 1 file (2 fixable with `anydev fix`)."
        else:
            assert "(2 more with a newer `--target-torch`). Target torch: " in lines[2], lines[2]
    # and `anydev fix` agrees: it fixes exactly what was marked
    _left, diff = _fixed(tmp_path, monkeypatch, ".")
    assert ("torch.accelerator.synchronize()" in diff) is marked


def test_the_target_option_and_the_configuration_decide_too(tmp_path, monkeypatch):
    (tmp_path / "m.py").write_text(SRC)
    rc, out, _ = _scan(tmp_path, monkeypatch, "m.py", "--target-torch", "2.6")
    assert out.count("[*]") == 2
    rc, out, _ = _scan(tmp_path, monkeypatch, "m.py", "--target-torch", "2.5")
    assert out.count("[*]") == 0 and "Target torch: 2.5, from --target-torch." in out
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "2.13"\n')
    rc, out, _ = _scan(tmp_path, monkeypatch, "m.py")
    assert out.count("[*]") == 2


def test_unsafe_rows_count_only_where_the_target_has_them(tmp_path, monkeypatch):
    # torch.device("cuda") (AD901, unsafe, torch >= 2.7) and torch.cuda.set_device (AD104,
    # unsafe, 2.7)
    (tmp_path / "m.py").write_text("import torch\n\n\ndef f():\n    torch.cuda.set_device(0)\n"
                                   "    return torch.device(\"cuda\")\n")
    rc, out, _ = _scan(tmp_path, monkeypatch, "m.py", "--target-torch", "2.6")
    assert out.splitlines()[-1].startswith(
        "Found 2 legacy references in 1 file (2 more with a newer `--target-torch`).")
    rc, out, _ = _scan(tmp_path, monkeypatch, "m.py", "--target-torch", "2.7")
    assert out.splitlines()[-1] == ("Found 2 legacy references in 1 file (2 more with "
                                    "`anydev fix --unsafe-fixes`).")


def test_a_notebook_counts_at_the_target(tmp_path, monkeypatch):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["import torch\n", "torch.cuda.synchronize()\n"]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    (tmp_path / "m.py").write_text(SRC)
    rc, out, _ = _scan(tmp_path, monkeypatch, ".")
    assert "[*]" not in out and "(3 more with a newer `--target-torch`)" in out, out
    rc, out, _ = _scan(tmp_path, monkeypatch, ".", "--target-torch", "2.6")
    assert out.count("[*]") == 3 and "(3 fixable with `anydev fix`)" in out, out


def test_the_dry_run_also_sees_the_site(tmp_path, monkeypatch):
    # what the target allows, the plain report marks; what a site's code shows (here a
    # count returned to callers the fixer does not follow) only the fixer's dry run sees,
    # which --show-fixes asks (Note [Marks of the fixer])
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n")
    (tmp_path / "m.py").write_text(SRC)
    rc, plain, _ = _scan(tmp_path, monkeypatch, ".")
    rc, exact, _ = _scan(tmp_path, monkeypatch, ".", "--show-fixes")
    assert plain.count("[*]") == 2 and exact.count("[*]") == 1
    assert "AD107 [*]" in exact and "AD102 [*]" not in exact


# --- the target reader, by hand ------------------------------------------------------------

# The regular expressions the reader used before it was written by hand: the oracle.
_REQ = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?|===)[^;#]*)?(?:;.*)?$",
                  re.IGNORECASE)
_PART = re.compile(r"(===|==|>=|~=|>|<=|<|!=)\s*([0-9][0-9A-Za-z.*+-]*)")
_VERSION = re.compile(r"\s*v?(\d+)\.(\d+)(?:\.\d+)?(?:[.+-]?[A-Za-z0-9.+-]*)?\s*")


def _oracle_version(text: str):
    m = _VERSION.fullmatch(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _oracle_lower_bound(requirement: str):
    m = _REQ.match(requirement.strip())
    if not m or not m.group("spec"):
        return None
    best = None
    for part in m.group("spec").split(","):
        pm = _PART.match(part.strip())
        if not pm or pm.group(1) in ("<", "<=", "!="):
            continue
        ver = pm.group(2)
        v = _oracle_version(ver.replace(".*", ".0") if ver.count(".") else ver + ".0")
        if v is not None and (best is None or v > best):
            best = v
    return best


def _version_or_none(text: str):
    try:
        return _versions.parse_version(text)
    except _versions.VersionError:
        return None


def test_the_hand_reader_reads_as_the_regular_expressions_did():
    rng = random.Random(29)
    words = ["torch", "Torch", "TORCH", "torchvision", " ", "[", "]", "cuda", ">=", "==", "===",
             "<", "<=", "~=", "!=", ">", "=", "1", "2", ".", "13", "*", "+cpu", ",", ";", "#",
             "x", "v", "-", "\t", "a0", "python_version"]
    for _ in range(40000):
        s = "".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
        if rng.random() < 0.7:
            s = "torch" + s
        assert _versions.lower_bound(s) == _oracle_lower_bound(s), s
        assert _versions._has_spec(s) == bool(_REQ.match(s.strip()) and
                                              _REQ.match(s.strip()).group("spec")), s
        assert (_versions._torch_spec(s) is not None) == bool(_REQ.match(s.strip())), s
    chars = list("0123456789.v+-a x_\t") + ["\u0662"]  # an Arabic-Indic 2: \d takes it too
    for _ in range(40000):
        s = "".join(rng.choice(chars) for _ in range(rng.randint(0, 8)))
        assert _version_or_none(s) == _oracle_version(s), s


def test_the_target_is_read_once_while_the_tree_is_scanned_and_only_where_marks_need_it(
        tmp_path, monkeypatch):
    # Note [The target while the tree is scanned]
    from anydev._cli import scan as _scan_cli

    asked = []
    real = _scan_cli.Selection.run_target
    monkeypatch.setattr(_scan_cli.Selection, "run_target",
                        lambda self: asked.append(1) or real(self))
    (tmp_path / "clean.py").write_text("import torch\n")
    rc, out, _ = _scan(tmp_path, monkeypatch, "clean.py")
    assert rc == 0 and asked == []  # one file, no findings: never read
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n")
    (tmp_path / "m.py").write_text(SRC)
    rc, out, _ = _scan(tmp_path, monkeypatch, ".")
    assert asked == [1] and out.count("[*]") == 2  # the tree: read once, in its thread
    levels = _scan_cli.RowLevels(resolve=lambda: 1 / 0, background=True)
    with pytest.raises(ZeroDivisionError):  # a failure of the thread reaches the caller
        levels.target


@pytest.mark.parametrize("src", [
    "import torch\nassert torch.__version__ >= '1.8'\n",
    "import torch as th\nif th.__version__ < '2.1':\n    raise ImportError('old')\n",
    "import torch\nTORCH_VER = tuple(torch.__version__.split('.'))\n"
    "if TORCH_VER < (1, 8):\n    raise RuntimeError\n",
    "from x import torch_version\nassert torch_version >= [1, 8]\n",
    "from x import VERSION_OF_TORCH as v\nassert VERSION_OF_TORCH >= (2, 0)\n",
    "from x import torch_é_ver\nassert torch_é_ver >= (2, 0)\n",  # a non-ASCII name
    "import torch\nassert digit_version(torch.__version__) >= digit_version('1.6.0')\n",
])
def test_a_package_init_that_checks_torch_is_read(tmp_path, src):
    # the gate before parsing an __init__.py (Note [A light target reader]) lets through
    # every check _version_check finds
    import ast

    p = tmp_path / "__init__.py"
    p.write_text(src)
    assert _versions._version_check(ast.parse(src)) is not None
    assert _versions._may_check_torch_version(p.read_bytes())


def test_the_gate_never_hides_a_check(tmp_path):
    # every module of the fixtures and of this checkout: where the gate says no,
    # _version_check finds nothing
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    seen = 0
    for p in list((root / "tests" / "fixtures").rglob("*.py")) + \
            list((root / "python" / "anydev").rglob("*.py")):
        try:
            tree = ast.parse(p.read_bytes())
        except (SyntaxError, ValueError):
            continue
        seen += 1
        if not _versions._may_check_torch_version(p.read_bytes()):
            assert _versions._version_check(tree) is None, p
    assert seen > 100
