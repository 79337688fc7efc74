"""A fix is a promise: the target torch, version guards, device homes, branch
bindings, CUDA-only objects, integers for device_index and half-migrated
guards (anydev._migrate.torch_versions, anydev._fix_analysis and their use in anydev.fix)."""

from __future__ import annotations

import textwrap

import pytest

from anydev._migrate import torch_versions as _versions
from anydev.fix import fix_paths, fix_source
from anydev.scan import scan_source
from fix_default import newest_default_target  # noqa: F401 (autouse)


def fix(src: str, name: str = "m.py", unsafe: bool = True, target: str = "2.13", keep=()):
    data = textwrap.dedent(src).encode()
    # The API rows: the device literals and idioms (AD9xx) are left by this fixer.
    findings, _ = scan_source(data, name, ignore=["AD9"])
    new, applied, skipped = fix_source(data, name, findings, unsafe=unsafe, target_torch=target,
                                       keep=keep)
    return new.decode(), {(f.line, f.rule): why for f, why in skipped}


# --- the target torch ------------------------------------------------------------------


@pytest.mark.parametrize("req,want", [
    ("torch>=2.1", (2, 1)), ("torch >= 2.1.2, <3", (2, 1)), ("torch~=2.4.0", (2, 4)),
    ("torch==2.6.*", (2, 6)), ("torch>2.0", (2, 0)), ("torch>=2", (2, 0)),
    ("torch[opt]>=1.8; python_version>'3.8'", (1, 8)), ("torch<3", None), ("torch", None),
    ("torchvision>=0.15", None), ("numpy>=1.20", None),
])
def test_lower_bound_of_a_requirement(req, want):
    assert _versions.lower_bound(req) == want


def test_target_comes_from_the_project_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").write_text(
        '[project]\nname = "a"\ndependencies = ["numpy", "torch>=2.1,<3"]\n')
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "setup.cfg").write_text("[options]\ninstall_requires =\n    torch>=1.8\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='c', install_requires=['torch>=2.4'])\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "requirements.txt").write_text("# pinned\ntorch>=2.6  # cpu\n")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "pyproject.toml").write_text(
        '[project]\nname = "e"\ndependencies = ["torch>=2.0"]\n[tool.anydev]\ntarget-torch = "2.9"\n')
    (tmp_path / "f" / "pkg").mkdir(parents=True)
    t = _versions.ProjectTargets()
    got = {d: t.for_file(str(tmp_path / d / "pkg" / "m.py")) for d in "abcdef"}
    assert {d: (g.text if g else None) for d, g in got.items()} == {
        "a": "2.1", "b": "1.8", "c": "2.4", "d": "2.6", "e": "2.9", "f": None}
    assert "setup.py" in got["c"].source and "[tool.anydev]" in got["e"].source


def test_a_fix_newer_than_the_target_is_not_applied():
    src = "import torch\ntorch.cuda.synchronize()\ntorch.cuda.amp.GradScaler()\n"
    new, left = fix(src, target="2.1", unsafe=False)
    assert new == src
    assert left == {(2, "AD107"): "needs torch >= 2.6 (target 2.1)",
                    (3, "AD314"): "needs torch >= 2.4 (target 2.1)"}
    new, left = fix(src, target="2.4", unsafe=False)
    assert new == 'import torch\ntorch.cuda.synchronize()\ntorch.amp.GradScaler("cuda")\n'


def test_a_replacement_no_release_has_is_never_applied():
    new, left = fix("import torch\ntorch.cuda.manual_seed(1)\n", target="2.13")
    assert "no released PyTorch has torch.accelerator.random.manual_seed" in left[(2, "AD301")]


def test_fix_paths_infers_the_target_and_reports_what_the_code_needs(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.6"]\n')
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n")
    monkeypatch.chdir(tmp_path)
    r = fix_paths(["."])
    assert (tmp_path / "m.py").read_text() == \
        "import torch\ntorch.accelerator.synchronize()\ntorch.cuda.empty_cache()\n"
    [t] = r.targets.values()
    assert t.text == "2.6" and t.declared
    assert r.needs_torch == "2.6"
    assert [why for _, why in r.remaining] == ["needs torch >= 2.9 (target 2.6)"]


def test_a_malformed_target_is_an_error():
    with pytest.raises(ValueError, match="not a PyTorch version"):
        fix_source(b"import torch\ntorch.cuda.synchronize()\n", "m.py",
                   scan_source(b"import torch\ntorch.cuda.synchronize()\n", "m.py")[0],
                   target_torch="two")


# --- version guards ----------------------------------------------------------------------


@pytest.mark.parametrize("src", [
    """
    import torch
    s = torch.amp.GradScaler("cuda") if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
    """,
    """
    import torch
    if not TORCH_GE_2_6:
        torch.cuda.synchronize()
    """,
    """
    import torch
    if torch.__version__ < "2.6":
        torch.cuda.synchronize()
    """,
    """
    import torch
    from packaging import version
    if version.parse(torch.__version__) >= version.parse("2.6"):
        pass
    else:
        torch.cuda.synchronize()
    """,
    """
    import torch
    def f():
        if is_torch_version(">=", "2.6"):
            return None
        torch.cuda.synchronize()
    """,
    """
    import torch
    def f():
        if hasattr(torch, "accelerator") or FLAG:
            return torch.accelerator.synchronize()
        return torch.cuda.synchronize()
    """,
    """
    import torch
    try:
        from torch.amp import GradScaler
    except ImportError:
        from torch.cuda.amp import GradScaler
    """,
    """
    import torch
    try:
        sync = torch.accelerator.synchronize
    except (AttributeError, KeyError):
        sync = torch.cuda.synchronize
    """,
])
def test_code_for_an_older_torch_is_left(src):
    new, left = fix(src)
    assert new == textwrap.dedent(src)
    assert left and all("older PyTorch" in w or "fallback" in w for w in left.values()), left


def test_the_new_branch_and_unguarded_code_are_fixed():
    new, left = fix("""
    import torch
    if TORCH_GE_2_6:
        torch.cuda.synchronize()
    if FLAG or not TORCH_GE_2_6:
        torch.cuda.synchronize()
    """)
    assert new.count("torch.accelerator.synchronize()") == 2, new
    assert left == {}


# --- device homes -------------------------------------------------------------------------


def test_device_homes_keep_their_calls():
    src = """
    import torch
    class CUDAAccelerator:
        def setup(self):
            torch.cuda.synchronize()
    def is_cuda_available():
        return torch.cuda.is_available()
    def num_cuda_devices():
        return torch.cuda.device_count()
    def generic():
        torch.cuda.synchronize()
    """
    new, left = fix(src)
    assert new.count("torch.cuda.") == 3 and "torch.accelerator.synchronize()" in new
    assert "class CUDAAccelerator" in left[(5, "AD107")] and "rule 4" in left[(5, "AD107")]
    new, left = fix("import torch\ntorch.cuda.synchronize()\n", name="pkg/cuda_accelerator.py")
    assert "cuda_accelerator.py" in left[(2, "AD107")]
    new, left = fix("import torch\ntorch.cuda.synchronize()\n", name="pkg/backends/xpu/ops.py")
    assert "package folder `xpu`" in left[(2, "AD107")]
    new, left = fix("import torch\ntorch.cuda.synchronize()\n", name="pkg/train.py",
                    keep=["pkg/train*.py"])
    assert "keep" in left[(2, "AD107")]


def test_keep_from_the_configuration(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\nkeep = ["vendor_ops/"]\n')
    (tmp_path / "vendor_ops").mkdir()
    (tmp_path / "vendor_ops" / "k.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    from anydev._cli.main import main
    assert main(["fix", "."]) == 1
    assert (tmp_path / "vendor_ops" / "k.py").read_text() == "import torch\ntorch.cuda.synchronize()\n"
    assert (tmp_path / "m.py").read_text() == "import torch\ntorch.accelerator.synchronize()\n"


# --- bindings, objects, integers ------------------------------------------------------------


def test_a_name_bound_to_another_vendor_on_another_branch_is_left():
    new, left = fix("""
    if HAS_MUSA:
        from torch_musa.core.amp import autocast
    else:
        from torch.cuda.amp import autocast
    with autocast():
        pass
    """)
    assert "torch_musa.core.amp.autocast on another branch" in left[(6, "AD313")]
    assert "from torch.cuda.amp import autocast" in new


def test_cuda_only_objects_keep_their_class():
    new, left = fix("""
    import torch
    def f(lib):
        s = torch.cuda.Stream()
        lib.run(s.cuda_stream)
        g = torch.cuda.CUDAGraph()
        g.capture_begin(pool=None)
        t = torch.cuda.Stream()
        t.synchronize()
    class M:
        def __init__(self):
            self.e = torch.cuda.Event(interprocess=True)
        def share(self):
            return self.e.ipc_handle()
    """)
    assert "`.cuda_stream`" in left[(4, "AD113")]
    assert "capture_begin" in left[(6, "AD317")]
    assert "ipc_handle" in left[(12, "AD116")] and "self.e" in left[(12, "AD116")]
    assert "t = torch.Stream(" in new


def test_device_index_only_for_an_int():
    new, left = fix("""
    import torch
    def f(p, n: int, xs):
        with torch.cuda.device(p.device):
            pass
        with torch.cuda.device(n):
            pass
        with torch.cuda.device(0):
            pass
        k = len(xs) - 1
        with torch.cuda.device(k):
            pass
        with torch.cuda.device(p.device.index):
            pass
    """)
    assert "cannot tell that `p.device` is an int" in left[(4, "AD105")]
    assert new.count("torch.accelerator.device_index(") == 4


# --- half-migrated guards --------------------------------------------------------------------


@pytest.mark.parametrize("src,line", [
    ('import torch\ndev = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n', 2),
    ('import torch\nok = torch.cuda.is_available() and torch.cuda.get_device_properties(0).major >= 10\n', 2),
    ('import torch\nif torch.cuda.is_available():\n    x = x.cuda()\n', 2),
    ('import torch\nuse = torch.cuda.device_count() > 0\nif use:\n    t = t.to(f"cuda:{0}")\n', 2),
    ('import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n    return x.is_cuda\n', 3),
])
def test_a_guard_is_not_migrated_while_its_cuda_code_stays(src, line):
    new, left = fix(src)
    assert new == src
    [(key, why)] = [(k, w) for k, w in left.items() if k[0] == line]
    assert "stays device-specific" in why


def test_a_guard_migrates_with_the_code_it_guards():
    new, left = fix("import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n")
    assert new == "import torch\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
    # ... but not when the guarded call is left (here: its fix needs a newer torch)
    new, left = fix("import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n",
                    target="2.6")
    assert "torch.cuda.is_available()" in new and "stays device-specific" in left[(2, "AD101")]


# --- the command line ------------------------------------------------------------------------


def test_cli_target_torch(tmp_path, monkeypatch, capsys):
    from anydev._cli.main import main
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--target-torch", "2.1", "."]) == 1
    err = capsys.readouterr().err
    assert "needs torch >= 2.6 (target 2.1)" in err and "target torch 2.1 (from --target-torch)" in err
    assert main(["fix", "--target-torch", "banana", "."]) == 2
    assert "not a PyTorch version" in capsys.readouterr().err
    assert main(["scan", "--statistics", "--target-torch", "2.1", "."]) == 1
    out = capsys.readouterr().out
    assert "torch >= 2.6  (1 fixable at target 2.6)" in out
    assert "At target torch 2.1: 0 of 1 findings with a fix can be applied." in out
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "soon"\n')
    assert main(["fix", "."]) == 2
    assert "target-torch" in capsys.readouterr().err
    assert main(["fix", "."]) == 2
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "2.6"\n')
    assert main(["fix", "."]) == 0
    assert (tmp_path / "m.py").read_text() == "import torch\ntorch.accelerator.synchronize()\n"


# --- mock targets ---------------------------------------------------------------------------


def _tree(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def test_mock_targets_move_with_the_code_they_patch(tmp_path, monkeypatch):
    _tree(tmp_path, {
        "pkg/m.py": "import torch\n\ndef barrier():\n    torch.cuda.synchronize()\n",
        "tests/test_m.py": """
            from unittest import mock
            import torch as th

            def test_a():
                with mock.patch("torch.cuda.synchronize"):
                    pass

            def test_b(monkeypatch):
                monkeypatch.setattr(th.cuda, "synchronize", lambda: None)
                with mock.patch.object(th.cuda, 'empty_cache'):
                    pass
            """})
    monkeypatch.chdir(tmp_path)
    r = fix_paths(["."], target_torch="2.13")
    test = (tmp_path / "tests" / "test_m.py").read_text()
    assert 'mock.patch("torch.accelerator.synchronize")' in test
    assert 'monkeypatch.setattr(th.accelerator, "synchronize", lambda: None)' in test
    # no call of empty_cache in the tree: the code it patches is elsewhere
    assert "mock.patch.object(th.cuda, 'empty_cache')" in test
    left = {f.symbol: why for f, why in r.remaining if f.kind == "mock"}
    assert "the code this patches is elsewhere" in left["torch.cuda.empty_cache"]


def test_a_mock_stays_while_a_call_it_patches_stays(tmp_path, monkeypatch):
    _tree(tmp_path, {
        "pkg/m.py": """
            import torch

            def a():
                torch.cuda.synchronize()

            def b():
                if not TORCH_GE_2_6:
                    torch.cuda.synchronize()
            """,
        "tests/test_m.py": 'from unittest import mock\nP = mock.patch("torch.cuda.synchronize")\n'})
    monkeypatch.chdir(tmp_path)
    r = fix_paths(["."], target_torch="2.13")
    assert (tmp_path / "tests" / "test_m.py").read_text() == \
        'from unittest import mock\nP = mock.patch("torch.cuda.synchronize")\n'
    # the call of a() was rewritable, but the patch cannot follow it alone (b()'s
    # stays): the patched call and its patch stay together
    assert "torch.cuda.synchronize()" in (tmp_path / "pkg" / "m.py").read_text().split("def b")[0]
    [(f, why)] = [(f, w) for f, w in r.remaining if f.kind == "mock"]
    assert "the 2 call(s) of torch.cuda.synchronize in the fixed tree were not rewritten" in why
    [why_a] = [w for f, w in r.remaining if f.kind == "call" and f.line == 5]
    assert "a test patches torch.cuda.synchronize (tests/test_m.py:2)" in why_a
    # b()'s keeps its own reason
    [why_b] = [w for f, w in r.remaining if f.kind == "call" and f.line == 9]
    assert "version-guarded fallback" in why_b
