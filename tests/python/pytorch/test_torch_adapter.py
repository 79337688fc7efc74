"""anydev.torch on a real PyTorch: forwarders on torch.cuda / torch.cuda.amp /
torch.xpu, their scope, warnings alongside PyTorch's own, the report, both
modes, uninstall, and the torch.accelerator backport.

Runs against whatever PyTorch the interpreter has: the .venv's (2.13, CPU
build, with torch.accelerator) under the normal pytest run, and Debian's
python3-torch (1.13, no torch.accelerator) under /usr/bin/python3, which
tools/test.sh runs too. Skipped where torch cannot be imported.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import uuid
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this interpreter (tools/setup.sh installs "
                    "torch==2.13.0 into .venv, and Debian's python3-torch for /usr/bin/python3)")

from anydev import _C, compat, report  # noqa: E402
from anydev._torch import adapter  # noqa: E402
from anydev._torch import backport  # noqa: E402
from anydev.compat import LegacyAPIError, LegacyAPIWarning  # noqa: E402

import torch.cuda  # noqa: E402
import torch.cuda.amp  # noqa: E402

# The tests that look at warnings record them themselves; elsewhere anydev's
# once-per-site warnings for the test packages' calls are expected noise.
pytestmark = pytest.mark.filterwarnings("ignore::anydev.compat.LegacyAPIWarning")

REPO = Path(__file__).resolve().parents[3]
TORCH_VERSION = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
NATIVE_ACCELERATOR = "accelerator" in torch.__dict__ and not getattr(
    torch.__dict__["accelerator"], "__anydev_backport__", False)
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
# tools/gpu_check_torch.sh runs these tests on a machine with a CUDA GPU too.
HAVE_CUDA = torch.cuda.is_available()

# The legacy calls the tests make, from an in-scope and an out-of-scope package.
CALLS = '''\
import torch


def device_count(n=1):
    return [torch.cuda.device_count() for _ in range(n)]  # SITE device_count


def is_available():
    return torch.cuda.is_available()  # SITE is_available


def current_device():
    return torch.cuda.current_device()  # SITE current_device


def autocast(n=1):
    for _ in range(n):
        with torch.cuda.amp.autocast(enabled=False):  # SITE autocast
            pass


def grad_scaler():
    return torch.cuda.amp.GradScaler(enabled=False)  # SITE grad_scaler


def memory_cached():
    return torch.cuda.memory_cached()  # SITE memory_cached
'''


def site_line(name: str) -> int:
    for i, line in enumerate(CALLS.splitlines(), 1):
        if line.endswith(f"# SITE {name}"):
            return i
    raise AssertionError(name)


def legacy_modules() -> dict[str, object]:
    mods = {"torch.cuda": torch.cuda, "torch.cuda.amp": torch.cuda.amp}
    if "xpu" in torch.__dict__:
        mods["torch.xpu"] = torch.xpu
    if "accelerator" in torch.__dict__:
        mods["torch.accelerator"] = torch.accelerator
    return mods


def snapshot_torch() -> dict[str, dict[str, object]]:
    """Every attribute of the modules anydev.torch touches, by identity."""
    snap = {name: dict(vars(m)) for name, m in legacy_modules().items()}
    snap["torch"] = {k: v for k, v in vars(torch).items() if k == "accelerator"}
    snap["sys.modules"] = {k: v for k, v in sys.modules.items() if k == "torch.accelerator"}
    return snap


def assert_same(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for name in before:
        b, a = before[name], after[name]
        assert b.keys() == a.keys(), (name, set(b) ^ set(a))
        changed = [k for k in b if b[k] is not a[k]]
        assert not changed, f"{name}: {changed} are not the original objects"


@pytest.fixture
def pkgs(tmp_path, monkeypatch):
    """Two fresh packages with the same legacy calls: ``inside`` (named as
    the scope by the tests) and ``outside`` (another library)."""
    uid = uuid.uuid4().hex[:8]
    out = {}
    for role in ("inside", "outside"):
        name = f"ad_{role}_{uid}"
        d = tmp_path / name
        d.mkdir()
        (d / "__init__.py").write_text("")
        (d / "calls.py").write_text(CALLS)
        out[role] = name
    monkeypatch.syspath_prepend(str(tmp_path))
    return SimpleNamespace(
        root=tmp_path, inside_name=out["inside"], outside_name=out["outside"],
        inside=importlib.import_module(f"{out['inside']}.calls"),
        outside=importlib.import_module(f"{out['outside']}.calls"))


@pytest.fixture
def fresh():
    """A clean engine (no sites, no counts) and anydev.torch uninstalled after the test."""
    _C._compat.reset()
    yield adapter
    adapter.uninstall()
    compat.reset_policy()
    _C._compat.reset()


def calls_of(pkg_name: str) -> list[dict]:
    return [c for c in _C._compat.snapshot() if f"{os.sep}{pkg_name}{os.sep}" in c["file"]]


def legacy_warnings(records, path: str) -> list:
    return [r for r in records if issubclass(r.category, LegacyAPIWarning) and r.filename == path]


def torch_warnings(records, path: str) -> list:
    return [r for r in records if r.category is FutureWarning and r.filename == path]


# --- install / uninstall --------------------------------------------------------------


def test_uninstall_restores_every_original_object(fresh, pkgs):
    before = snapshot_torch()
    for mode in adapter.MODES:
        st = adapter.install(mode=mode, packages=[pkgs.inside_name])
        assert st["installed"] and st["mode"] == mode
        assert torch.cuda.current_device is not before["torch.cuda"]["current_device"]
        assert "torch.cuda.device_count" in st["wrapped"]
        pkgs.inside.device_count(2)
        pkgs.outside.device_count(2)
        pkgs.inside.autocast()
        adapter.uninstall()
        assert_same(before, snapshot_torch())
        assert torch.cuda.current_device is before["torch.cuda"]["current_device"]
        assert not adapter.installed()
    adapter.uninstall()  # a second uninstall does nothing
    assert_same(before, snapshot_torch())


def test_install_again_reinstalls_with_the_new_options(fresh, pkgs):
    before = snapshot_torch()
    adapter.install(packages=[pkgs.inside_name])
    adapter.install(mode="forward", packages=[pkgs.outside_name])
    assert adapter.status()["mode"] == "forward"
    assert adapter.status()["scope"]["packages"] == [pkgs.outside_name]
    adapter.uninstall()
    assert_same(before, snapshot_torch())


def test_nothing_changes_on_import_of_anydev():
    code = """
        import sys, warnings, torch, torch.cuda, torch.cuda.amp
        mods = [torch.cuda, torch.cuda.amp] + [getattr(torch, n) for n in ("xpu", "accelerator")
                                               if n in vars(torch)]
        before = [dict(vars(m)) for m in mods]
        filters = list(warnings.filters)
        import anydev, anydev.compat, anydev.report, anydev.cuda, anydev._torch.adapter
        after = [dict(vars(m)) for m in mods]
        assert all(b.keys() == a.keys() and all(b[k] is a[k] for k in b)
                   for b, a in zip(before, after))
        assert "accelerator" in vars(torch) or "torch.accelerator" not in sys.modules
        assert warnings.filters == filters
        print("unchanged")
    """
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "unchanged" in p.stdout


def test_import_anydev_torch_installs_with_defaults(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(textwrap.dedent("""
        import warnings
        warnings.simplefilter("default")
        import torch
        import anydev.torch
        from anydev import _C
        assert anydev.torch.installed()
        st = anydev.torch.status()
        assert st["mode"] == "observe" and st["scope"]["main"], st
        n = torch.cuda.device_count()
        calls = [c for c in _C._compat.snapshot() if c["legacy"] == "torch.cuda.device_count"]
        assert [(c["line"], c["count"], c["scope"]) for c in calls] == [(10, 1, "in")], calls
        anydev.torch.uninstall()
        print("ok", n)
    """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["ok", "0"]
    assert "LegacyAPIWarning: torch.cuda.device_count is a legacy device-specific API; use " \
           "torch.accelerator.device_count [AD102]" in p.stderr


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode 'fast' is not one of observe, forward"):
        adapter.install(mode="fast")
    with pytest.raises(adapter.ScopeError, match="`packages` must be a list of strings"):
        adapter.install(packages="myproj")
    assert not adapter.installed()


def test_a_held_forwarder_passes_through_after_uninstall(fresh, pkgs):
    original = torch.cuda.device_count
    adapter.install(packages=[pkgs.inside_name])
    held = torch.cuda.device_count
    assert held is not original and held.__wrapped__ is original
    adapter.uninstall()
    _C._compat.reset()
    assert held() == original()
    assert _C._compat.snapshot() == []


# --- scope ----------------------------------------------------------------------------


def test_scope_warns_and_counts_inside_and_only_counts_outside(fresh, pkgs):
    adapter.install(packages=[pkgs.inside_name])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        n = torch.cuda.device_count()
        assert pkgs.inside.device_count(3) == [n] * 3
        assert pkgs.outside.device_count(4) == [n] * 4
        assert pkgs.inside.is_available() is HAVE_CUDA
        assert pkgs.outside.is_available() is HAVE_CUDA
    inside_file, outside_file = pkgs.inside.__file__, pkgs.outside.__file__
    w = legacy_warnings(rec, inside_file)
    assert [(r.lineno, str(r.message)) for r in w] == [
        (site_line("device_count"), "torch.cuda.device_count is a legacy device-specific API; "
                                    "use torch.accelerator.device_count [AD102]"),
        (site_line("is_available"), "torch.cuda.is_available is a legacy device-specific API; "
                                    "use torch.accelerator.is_available [AD101]")]
    assert legacy_warnings(rec, outside_file) == []
    got = {(c["line"], c["legacy"], c["scope"], c["count"]) for c in calls_of(pkgs.inside_name)}
    assert got == {(site_line("device_count"), "torch.cuda.device_count", "in", 3),
                   (site_line("is_available"), "torch.cuda.is_available", "in", 1)}
    got = {(c["line"], c["legacy"], c["scope"], c["count"]) for c in calls_of(pkgs.outside_name)}
    assert got == {(site_line("device_count"), "torch.cuda.device_count", "out", 4),
                   (site_line("is_available"), "torch.cuda.is_available", "out", 1)}


def test_report_has_the_calls_of_both_scopes(fresh, pkgs):
    adapter.install(packages=[pkgs.inside_name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pkgs.inside.device_count(5)
        pkgs.outside.device_count(7)
    calls = [c for c in report.snapshot()["calls"] if c["legacy"] == "torch.cuda.device_count"]
    assert sorted((c["module"], c["count"], c["rule"]) for c in calls) == sorted([
        (f"{pkgs.inside_name}.calls", 5, "AD102"), (f"{pkgs.outside_name}.calls", 7, "AD102")])
    assert "torch.cuda.device_count -> torch.accelerator.device_count" in report.render(
        report.snapshot())


def test_path_globs_and_default_scope(fresh, pkgs):
    adapter.install(paths=[str(pkgs.root / pkgs.outside_name / "*")])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        pkgs.inside.device_count()
        pkgs.outside.device_count()
    assert legacy_warnings(rec, pkgs.inside.__file__) == []
    assert len(legacy_warnings(rec, pkgs.outside.__file__)) == 1
    # By default only __main__ is in scope: neither package is.
    adapter.install()
    scope = adapter.status()["scope"]
    assert scope["packages"] == [] and scope["paths"] == [] and scope["main"]
    _C._compat.reset()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        pkgs.inside.device_count()
    assert [r for r in rec if issubclass(r.category, LegacyAPIWarning)] == []
    assert [c["scope"] for c in calls_of(pkgs.inside_name)] == ["out"]


def test_scope_from_pyproject(fresh, pkgs):
    (pkgs.root / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.anydev]\npackages = ["{pkgs.inside_name}"]\n'
        f'paths = ["elsewhere/*.py"]\n')
    adapter.install(project=str(pkgs.root / pkgs.inside_name / "calls.py"))
    scope = adapter.status()["scope"]
    assert scope["packages"] == [pkgs.inside_name]
    assert scope["paths"] == [str(pkgs.root / "elsewhere" / "*.py")]
    assert scope["source"] == str(pkgs.root / "pyproject.toml")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        pkgs.inside.device_count()
        pkgs.outside.device_count()
    assert len(legacy_warnings(rec, pkgs.inside.__file__)) == 1
    assert legacy_warnings(rec, pkgs.outside.__file__) == []
    (pkgs.root / "pyproject.toml").write_text('[tool.anydev]\npackages = "oops"\n')
    with pytest.raises(adapter.ScopeError, match=r"pyproject.toml: \[tool.anydev\]: `packages` "
                                                 r"must be a list of strings"):
        adapter.install(project=str(pkgs.root))


def test_pytorch_and_anydev_are_internal():
    scope = adapter.make_scope(packages=["torch", "anydev"], paths=["/*"])
    torch_file = os.path.join(os.path.dirname(torch.__file__), "cuda", "__init__.py")
    assert scope.decide("torch.cuda", torch_file) == 2
    assert scope.decide("anydev._cli.main", adapter.__file__) == 2
    assert scope.decide("myproj.x", "/somewhere/myproj/x.py") == 1
    narrow = adapter.make_scope(packages=["myproj"], main=False)
    assert narrow.decide("myproj", "/a/myproj/__init__.py") == 1
    assert narrow.decide("myproj.sub.x", "/a/myproj/sub/x.py") == 1
    assert narrow.decide("myprojx", "/a/myprojx.py") == 0
    assert narrow.decide("__main__", "/a/run.py") == 0
    assert adapter.make_scope(packages=["myproj"]).decide("__main__", "/a/run.py") == 1


def test_policy_applies_in_scope_only(fresh, pkgs):
    adapter.install(packages=[pkgs.inside_name])
    compat.set_policy("error", module=f"ad_*")
    with pytest.raises(LegacyAPIError, match=r"torch.cuda.device_count .*\[AD102\]"):
        pkgs.inside.device_count()
    assert pkgs.outside.device_count() == [0]  # outside the scope: never refused
    compat.set_policy("ignore", module=f"ad_*")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        assert pkgs.inside.is_available() is False
    assert [r for r in rec if issubclass(r.category, LegacyAPIWarning)] == []


# --- PyTorch's own deprecation warnings -------------------------------------------------


@pytest.mark.parametrize("what", ["autocast", "grad_scaler", "memory_cached"])
def test_one_message_per_site_alongside_pytorchs_own(fresh, pkgs, what):
    legacy = {"autocast": "torch.cuda.amp.autocast", "grad_scaler": "torch.cuda.amp.GradScaler",
              "memory_cached": "torch.cuda.memory_cached"}[what]
    # PyTorch 2.4+ deprecates all three itself; 1.13 only memory_cached.
    has_own = TORCH_VERSION >= (2, 4) or what == "memory_cached"
    adapter.install(packages=[pkgs.inside_name])

    def naming(records):
        return [r for r in records if legacy in str(r.message)]

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        for _ in range(3):
            getattr(pkgs.inside, what)()
    # In scope: anydev's one warning replaces PyTorch's.
    assert [(r.category, r.filename, r.lineno) for r in naming(rec)] == [
        (LegacyAPIWarning, pkgs.inside.__file__, site_line(what))]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        for _ in range(3):
            getattr(pkgs.outside, what)()
    # Outside the scope: PyTorch's own behaviour, untouched (its own warning, once).
    assert [r.category for r in naming(rec)] == ([FutureWarning] if has_own else [])


def test_quiet_filter_hides_nothing_else(fresh, pkgs):
    adapter.install(packages=[pkgs.inside_name])
    matcher = _C._compat.QuietMatcher()
    text = "`torch.cuda.amp.autocast(args...)` is deprecated. Please use ..."
    assert not matcher.match(text)  # no in-scope call is running on this thread
    pkgs.inside.autocast()
    with warnings.catch_warnings(record=True) as rec:  # another thread's own warning
        warnings.simplefilter("always")
        t = threading.Thread(target=lambda: warnings.warn(text, FutureWarning))
        t.start()
        t.join()
    assert [str(r.message) for r in rec] == [text]
    adapter.uninstall()
    assert not any(isinstance(f[1], _C._compat.QuietMatcher) for f in warnings.filters)


# --- modes ------------------------------------------------------------------------------


def test_observe_calls_the_original(fresh, pkgs):
    original = torch.cuda.current_device
    adapter.install(packages=[pkgs.inside_name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if HAVE_CUDA:
            assert pkgs.inside.current_device() == pkgs.outside.current_device() == original()
        else:
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                pkgs.inside.current_device()
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                pkgs.outside.current_device()
        assert type(pkgs.inside.grad_scaler()).__module__.startswith("torch.cuda.amp")


def test_forward_sends_in_scope_calls_to_the_replacement(fresh, pkgs):
    st = adapter.install(mode="forward", packages=[pkgs.inside_name])
    assert st["targets"]["torch.cuda.device_count"] == "torch.accelerator.device_count"
    assert st["targets"]["torch.cuda.graph"] == "original"  # no mechanical replacement
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if HAVE_CUDA:  # the same answers through torch.accelerator
            assert st["targets"]["torch.cuda.set_device"] == \
                "torch.accelerator.set_device_index({device})"
            assert pkgs.inside.current_device() == pkgs.outside.current_device()
        else:
            # No CUDA device here: a replacement that would change the call's
            # behaviour on this machine is not used (see the next test).
            assert st["targets"]["torch.cuda.set_device"].startswith("original (")
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                pkgs.inside.current_device()
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                pkgs.outside.current_device()
        assert pkgs.inside.is_available() is HAVE_CUDA and pkgs.outside.is_available() is HAVE_CUDA
        scaler = pkgs.inside.grad_scaler()
        if HAVE_CUDA and hasattr(torch.amp, "GradScaler"):
            assert type(scaler) is torch.amp.GradScaler
            assert st["targets"]["torch.cuda.amp.GradScaler"] == 'torch.amp.GradScaler("cuda", {*})'
        else:  # PyTorch < 2.3 (no torch.amp.GradScaler), or no CUDA device: the original
            assert st["targets"]["torch.cuda.amp.GradScaler"].startswith("original")
            assert isinstance(scaler, torch.cuda.amp.GradScaler)
        assert type(pkgs.outside.grad_scaler()).__module__.startswith("torch.cuda.amp")


@pytest.mark.skipif(HAVE_CUDA, reason="the machine has a CUDA device")
def test_forward_without_the_device_keeps_the_legacy_behaviour(fresh, tmp_path, run_python):
    # On a CPU-only machine these legacy calls are no-ops or answer 0, and
    # their replacements raise: forward mode calls the originals, says so once
    # per module in status(), and forwards what is seen to behave the same.
    script = tmp_path / "legacy_cpu.py"
    script.write_text(textwrap.dedent("""
        import json, warnings
        import torch
        import anydev.torch as at
        st = at.install(mode="forward")
        warnings.simplefilter("ignore")
        out = {
            "empty_cache": repr(torch.cuda.empty_cache()),
            "memory_allocated": torch.cuda.memory_allocated(),
            "memory_stats": dict(torch.cuda.memory_stats()),
            "manual_seed_all": repr(torch.cuda.manual_seed_all(0)),
            "device_count": torch.cuda.device_count(),
        }
        with torch.cuda.device(-1):
            out["device_minus_one"] = "no-op"
        try:
            torch.cuda.current_device()
        except Exception as e:
            out["current_device"] = type(e).__name__
        out["no_device"] = st["no_device"]
        out["targets"] = {k: v for k, v in st["targets"].items() if k.startswith("torch.cuda.")}
        print(json.dumps(out))
    """))
    rc, out, err = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')")
    assert rc == 0, err
    got = json.loads(out)
    assert got["empty_cache"] == "None"
    assert got["memory_allocated"] == 0
    assert got["memory_stats"] == {}
    assert got["manual_seed_all"] == "None"
    assert got["device_minus_one"] == "no-op"
    assert got["current_device"] == "AssertionError"
    assert got["device_count"] == 0
    assert "torch.cuda has no device on this machine" in got["no_device"]["cuda"]
    targets = got["targets"]
    assert targets["torch.cuda.device_count"] == "torch.accelerator.device_count"  # same here
    assert targets["torch.cuda.empty_cache"].startswith("original (here the original returns")
    assert targets["torch.cuda.manual_seed_all"].startswith("original (it seeds")


def test_forward_templates_map_the_arguments(monkeypatch):
    """The row's template decides the call: device strings and devices of the
    legacy type take the accelerator's, `"cuda"` literals too, unsupplied
    items are dropped, and `{*}` passes everything on."""
    seen = []

    def recorder(name):
        def target(*args, **kwargs):
            seen.append((name, args, kwargs))
        return target

    monkeypatch.setattr(adapter, "_lookup", lambda dotted: recorder(dotted))
    devices = adapter._Devices("cuda")
    devices.acc = "xpu"  # as on a machine whose accelerator is an Intel GPU
    rows = {r.legacy: r for r in adapter.ROWS}

    def forward(legacy):
        r = rows[legacy]
        return adapter._compile(r, r.template or adapter._default_template(r), "cuda", devices)

    forward("torch.cuda.set_device")(device="cuda:1")
    forward("torch.cuda.set_device")(torch.device("cuda", 2))
    forward("torch.cuda.synchronize")()
    forward("torch.cuda.memory_allocated")("cuda")
    forward("torch.cuda.device")("cuda:3")
    forward("torch.cuda.amp.autocast")(dtype=torch.bfloat16)
    forward("torch.cuda.amp.GradScaler")(2.0, enabled=False)
    forward("torch.cuda.amp.custom_fwd")(cast_inputs=torch.float32)
    forward("torch.cuda.Stream")(priority=-1)
    forward("torch.cuda.device_count")()
    assert seen == [
        ("torch.accelerator.set_device_index", ("xpu:1",), {}),
        ("torch.accelerator.set_device_index", (torch.device("xpu", 2),), {}),
        ("torch.accelerator.synchronize", (), {}),
        ("torch.accelerator.memory_allocated", ("xpu",), {}),
        ("torch.accelerator.device_index", (3,), {}),
        ("torch.amp.autocast", ("xpu",), {"dtype": torch.bfloat16}),
        ("torch.amp.GradScaler", ("xpu", 2.0), {"enabled": False}),
        ("torch.amp.custom_fwd", (), {"cast_inputs": torch.float32, "device_type": "xpu"}),
        ("torch.Stream", (), {"priority": -1}),
        ("torch.accelerator.device_count", (), {}),
    ]


def test_forward_falls_back_to_the_original_where_pytorch_lacks_the_replacement(fresh, pkgs):
    st = adapter.install(mode="forward", packages=[pkgs.inside_name])
    for legacy, target in st["targets"].items():
        row = next(r for r in adapter.ROWS if r.legacy == legacy)
        if target == "original" and row.fix != "none":
            missing = adapter._lookup(row.replacement) is None
            assert missing, f"{legacy}: {row.replacement} exists but was not used"


# --- classes ----------------------------------------------------------------------------


def test_a_legacy_class_stays_a_class(fresh, pkgs):
    original = torch.cuda.amp.GradScaler
    adapter.install(packages=[pkgs.inside_name])
    facade = torch.cuda.amp.GradScaler
    assert facade is not original and isinstance(facade, type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = pkgs.outside.grad_scaler()

        class MyScaler(torch.cuda.amp.GradScaler):  # a subclass of the original itself
            pass

        mine = MyScaler(enabled=False)
    assert type(scaler) is original
    assert isinstance(scaler, facade) and isinstance(mine, facade)
    assert issubclass(MyScaler, facade) and MyScaler.__mro__[1] is original
    assert facade.__init__ is original.__init__ and facade.__name__ == original.__name__
    assert facade.__wrapped__ is original
    assert (facade | None) is not None
    import abc

    class Mixed(torch.cuda.amp.GradScaler, abc.ABC):  # mixes with an ABC
        pass

    assert Mixed.__mro__[1] is original
    adapter.uninstall()
    assert torch.cuda.amp.GradScaler is original


# --- the backport ---------------------------------------------------------------------


def test_backport_answers_without_an_accelerator():
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    b = backport
    assert b.device_count() == 0
    assert b.is_available() is False
    assert b.current_accelerator() is None
    assert b.current_accelerator(check_available=True) is None
    for fn, args in [(b.current_device_index, ()), (b.set_device_index, (0,)),
                     (b.current_stream, ()), (b.synchronize, ()), (b.empty_cache, ()),
                     (b.memory_stats, ()), (b.memory_allocated, ()), (b.max_memory_allocated, ()),
                     (b.memory_reserved, ()), (b.max_memory_reserved, ()),
                     (b.reset_accumulated_memory_stats, ()), (b.reset_peak_memory_stats, ()),
                     (b.get_memory_info, ()), (b.empty_host_cache, ())]:
        with pytest.raises(RuntimeError, match=NO_ACCELERATOR):
            fn(*args)
    with b.device_index(None):
        pass


@pytest.mark.skipif(not NATIVE_ACCELERATOR, reason="this PyTorch has no torch.accelerator")
def test_backport_answers_like_pytorchs_own():
    native = torch.accelerator
    # With a device, these answer with other objects (a torch.cuda.Stream, the
    # device module's statistics, free memory of the moment): compared below.
    loose = {"current_stream", "memory_stats", "get_memory_info"} if HAVE_CUDA else set()
    for name in backport.NAMES:
        if name not in vars(native) or name == "device_index" or name in loose:
            continue
        ours, theirs = getattr(backport, name), getattr(native, name)
        try:
            expected = ("ok", theirs())
        except Exception as e:  # noqa: BLE001
            expected = ("raises", type(e), str(e))
        try:
            got = ("ok", ours())
        except Exception as e:  # noqa: BLE001
            got = ("raises", type(e), str(e))
        assert got == expected, name
    if HAVE_CUDA:
        assert backport.current_stream().device_index == native.current_stream().device_index
        assert backport.get_memory_info()[1] == native.get_memory_info()[1]
        ours, theirs = backport.memory_stats(), native.memory_stats()
        common = set(ours) & set(theirs)
        assert "allocated_bytes.all.current" in common
        assert {k: ours[k] for k in common} == {k: theirs[k] for k in common}
        with backport.device_index(0):
            assert native.current_device_index() == 0


def test_backport_adds_only_what_is_missing(monkeypatch):
    import types

    fake = types.ModuleType("torch.accelerator")  # as PyTorch 2.6 had it, in part
    own_count = lambda: 42  # noqa: E731
    fake.device_count = own_count
    monkeypatch.setitem(vars(torch), "accelerator", fake)
    monkeypatch.setitem(sys.modules, "torch.accelerator", fake)
    before = dict(vars(fake))
    added = backport.install()
    try:
        assert "device_count" not in added and fake.device_count is own_count
        assert set(added) == set(backport.NAMES) - {"device_count"}
        assert fake.current_device_index is backport.current_device_index
    finally:
        backport.uninstall()
    assert vars(fake) == before


def test_backport_on_a_pytorch_without_torch_accelerator():
    code = """
        import sys, torch
        assert "accelerator" not in vars(torch)
        import anydev.torch
        import torch.accelerator as acc
        assert acc.__anydev_backport__ and sys.modules["torch.accelerator"] is acc
        assert anydev.torch.status()["backport"] == list(anydev.torch.BACKPORT_NAMES)
        print(acc.device_count(), acc.is_available(), acc.current_accelerator())
        anydev.torch.uninstall()
        assert "accelerator" not in vars(torch) and "torch.accelerator" not in sys.modules
    """
    if NATIVE_ACCELERATOR:
        code = code.replace('assert "accelerator" not in vars(torch)\n', "", 1)
        pytest.skip("this PyTorch has torch.accelerator (the old-PyTorch run covers this)")
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0", "False", "None"]


# --- legacy and migrated versions of one program -------------------------------------

LEGACY_PROGRAM = """\
import torch
from torch.cuda.amp import autocast

torch.manual_seed(0)
print("available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
x = torch.randn(8, 8)
with autocast(enabled=False):
    y = x @ x.t()
print("sum %.4f" % float(y.sum()))
if torch.cuda.is_available():
    torch.cuda.set_device(0)
    print("device", torch.cuda.current_device(), "allocated", torch.cuda.memory_allocated())
    torch.cuda.synchronize()
"""

MIGRATED_PROGRAM = """\
import torch
import anydev.torch  # the torch.accelerator backport for an older PyTorch

torch.manual_seed(0)
print("available", torch.accelerator.is_available(), "devices", torch.accelerator.device_count())
x = torch.randn(8, 8)
with torch.amp.autocast("cuda", enabled=False):
    y = x @ x.t()
print("sum %.4f" % float(y.sum()))
if torch.accelerator.is_available():
    torch.accelerator.set_device_index(0)
    print("device", torch.accelerator.current_device_index(), "allocated",
          torch.accelerator.memory_allocated())
    torch.accelerator.synchronize()
"""


def test_legacy_and_migrated_programs_give_the_same_results(tmp_path):
    (tmp_path / "legacy.py").write_text(LEGACY_PROGRAM)
    (tmp_path / "migrated.py").write_text(MIGRATED_PROGRAM)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    outs = {}
    for name, argv in {
        "observe": [sys.executable, "-m", "anydev", "run", "--torch", "legacy.py"],
        "forward": [sys.executable, "-m", "anydev", "run", "--mode", "forward", "legacy.py"],
        "migrated": [sys.executable, "migrated.py"],
        "plain": [sys.executable, "legacy.py"],
    }.items():
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
        assert p.returncode == 0, (name, p.stderr)
        outs[name] = (p.stdout, p.stderr)
    assert outs["observe"][0] == outs["forward"][0] == outs["migrated"][0] == outs["plain"][0]
    assert outs["plain"][0].startswith(
        f"available {HAVE_CUDA} devices {torch.cuda.device_count()}\nsum ")
    # `anydev run` prints the report: the legacy calls of the script (in scope).
    assert "torch.cuda.is_available -> torch.accelerator.is_available  [AD101]" in outs["observe"][1]
    assert "legacy.py:7  torch.cuda.amp.autocast -> torch.amp.autocast  [AD313]" in outs["forward"][1]


def test_cli_run_torch_rejects_the_facade(tmp_path):
    (tmp_path / "s.py").write_text("print('hi')\n")
    p = subprocess.run([sys.executable, "-m", "anydev", "run", "--torch", "--facade", "s.py"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "exclude each other" in p.stderr


# --- the backport answers as PyTorch 2.13 does, call by call (issue 30) -------------

_NONE = NO_ACCELERATOR
_SET_STREAM = ("_accelerator_setStream(): incompatible function arguments. The following "
               "argument types are supported:\n    1. (arg0: torch.Stream) -> None\n\n"
               "Invoked with: {!r}")
_EXPECT_INDEX = "Expected a torch.device with a specified index or an integer, but got:{}"
# What torch.accelerator of PyTorch 2.13 (CPU build) answers on a machine
# without an accelerator, for the calls migrated code makes: the backport must
# answer the same on 1.13 (tools/test.sh runs this file on Debian's 1.13). On
# 1.13 the backport answered 8 of them otherwise (-1 raised, a wrong type was
# a RuntimeError, a device of the wrong type a different message, three
# names were missing).
NO_ACCELERATOR_ANSWERS = [
    ("device_count", (), ("ok", 0)), ("is_available", (), ("ok", False)),
    ("current_accelerator", (), ("ok", None)), ("current_accelerator", (True,), ("ok", None)),
    ("current_device_index", (), ("raise", RuntimeError, _NONE)),
    ("set_device_index", (0,), ("raise", RuntimeError, _NONE)),
    ("set_device_index", (-1,), ("ok", None)),
    ("set_device_index", (True,), ("raise", RuntimeError, _NONE)),
    ("set_device_index", ("cuda:0",), ("raise", RuntimeError, "Accelerator expected")),
    ("set_device_index", ("cpu",), ("raise", RuntimeError, "Accelerator expected")),
    ("set_device_index", (None,), ("raise", ValueError, _EXPECT_INDEX.format(None))),
    ("set_device_index", (1.5,), ("raise", ValueError, _EXPECT_INDEX.format(1.5))),
    ("current_device_idx", (), ("raise", RuntimeError, _NONE)),
    ("set_device_idx", (-1,), ("ok", None)),
    ("set_device_idx", (0,), ("raise", RuntimeError, _NONE)),
    ("current_stream", (), ("raise", RuntimeError, _NONE)),
    ("current_stream", (0,), ("raise", RuntimeError, _NONE)),
    ("current_stream", (1.5,), ("raise", RuntimeError, _NONE)),
    ("current_stream", ("cpu",), ("raise", RuntimeError, "Accelerator expected")),
    ("set_stream", (None,), ("raise", TypeError, _SET_STREAM.format(None))),
    ("set_stream", (1,), ("raise", TypeError, _SET_STREAM.format(1))),
    ("synchronize", (), ("raise", RuntimeError, _NONE)),
    ("synchronize", (None,), ("raise", RuntimeError, _NONE)),
    ("synchronize", (0,), ("raise", RuntimeError, _NONE)),
    ("synchronize", ("cpu",), ("raise", RuntimeError, "Accelerator expected")),
    ("empty_cache", (), ("raise", RuntimeError, _NONE)),
    ("empty_host_cache", (), ("raise", RuntimeError, _NONE)),
    ("memory_stats", (), ("raise", RuntimeError, _NONE)),
    ("memory_stats", (0,), ("raise", RuntimeError, _NONE)),
    ("memory_stats", ("cpu",), ("raise", RuntimeError, _NONE)),
    ("memory_allocated", (), ("raise", RuntimeError, _NONE)),
    ("memory_allocated", ("cuda",), ("raise", RuntimeError, _NONE)),
    ("max_memory_allocated", (), ("raise", RuntimeError, _NONE)),
    ("memory_reserved", (), ("raise", RuntimeError, _NONE)),
    ("max_memory_reserved", (), ("raise", RuntimeError, _NONE)),
    ("reset_accumulated_memory_stats", (), ("raise", RuntimeError, _NONE)),
    ("reset_peak_memory_stats", (), ("raise", RuntimeError, _NONE)),
    ("reset_peak_memory_stats", ("cpu",), ("raise", RuntimeError, _NONE)),
    ("get_memory_info", (), ("raise", RuntimeError, _NONE)),
    ("get_memory_info", (0,), ("raise", RuntimeError, _NONE)),
    ("get_memory_info", ("cpu",), ("raise", RuntimeError, "Accelerator expected")),
    ("get_device_capability", (), ("raise", RuntimeError, _NONE)),
    ("get_device_capability", ("cpu",), ("raise", RuntimeError, "Accelerator expected")),
]


def _answer(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the answer is what is compared
        return ("raise", type(e), str(e))


@pytest.mark.skipif(HAVE_CUDA, reason="the answers of a machine without an accelerator")
@pytest.mark.parametrize("name,args,expected", NO_ACCELERATOR_ANSWERS,
                         ids=[f"{n}{a!r}" for n, a, _ in NO_ACCELERATOR_ANSWERS])
def test_backport_answers_each_call_as_pytorch_2_13(name, args, expected):
    assert _answer(getattr(backport, name), args) == expected
    if NATIVE_ACCELERATOR and name in vars(torch.accelerator):  # the table is PyTorch's own
        assert _answer(getattr(torch.accelerator, name), args) == expected


def test_backport_makes_torch_accelerator_memory_importable(monkeypatch):
    import types

    fake = types.ModuleType("torch.accelerator")
    monkeypatch.setitem(vars(torch), "accelerator", fake)
    monkeypatch.setitem(sys.modules, "torch.accelerator", fake)
    had = sys.modules.pop("torch.accelerator.memory", None)
    try:
        backport.install()
        mem = importlib.import_module("torch.accelerator.memory")
        assert mem.memory_allocated is backport.memory_allocated and fake.memory is mem
    finally:
        backport.uninstall()
        if had is not None:
            sys.modules["torch.accelerator.memory"] = had
    assert "memory" not in vars(fake) and sys.modules.get("torch.accelerator.memory") is had


def test_a_replacement_this_pytorch_lacks_is_not_what_the_warning_says_to_use(fresh, tmp_path,
                                                                                monkeypatch):
    # torch.cuda.manual_seed's row names torch.accelerator.random.manual_seed,
    # which no release up to 2.13 has: the warning told users to use it.
    if hasattr(getattr(torch, "accelerator", None), "random"):
        pytest.skip("this PyTorch has torch.accelerator.random")
    name = f"ad_seed_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import torch\n\ndef seed():\n"
                                         "    torch.cuda.manual_seed(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    adapter.install(mode="observe", packages=[name])
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        mod.seed()
    texts = [str(w.message) for w in legacy_warnings(log, mod.__file__)]
    assert len(texts) == 1, texts
    assert "use torch.accelerator.random" not in texts[0]
    assert ("no PyTorch release up to 2.13 has a device-generic replacement, so "
            "torch.cuda.manual_seed is still the call to make there; "
            "torch.accelerator.random.manual_seed is expected in a later release") in texts[0]


def test_the_backport_probes_the_build_once(monkeypatch):
    # Note [The backport's cost]: it asked three modules what the build has on
    # every call, 38x torch 1.13's own device_count in forward mode.
    probes = []
    real = torch.cuda._is_compiled
    monkeypatch.setattr(torch.cuda, "_is_compiled", lambda: probes.append(1) or real())
    monkeypatch.setattr(backport, "_built", "?", raising=False)
    for _ in range(5):
        backport.device_count()
        backport.is_available()
    assert len(probes) == 1


@pytest.mark.skipif(not NATIVE_ACCELERATOR, reason="this PyTorch has no torch.accelerator")
def test_a_template_that_passes_nothing_forwards_to_the_replacement_itself():
    # Note [Forwarding without a frame]
    row = next(r for r in adapter.ROWS if r.legacy == "torch.cuda.device_count")
    target = adapter._compile(row, adapter._default_template(row), "cuda",
                              adapter._Devices("cuda"))
    assert target is torch.accelerator.device_count
