"""The shims answer as torch 2.13 does, call by call (issue 30): the RNG rows'
messages name what exists, torch devices are retyped as device strings are,
set_stream(None) does nothing, signatures are the legacy ones, the legacy
submodules import, and memory_summary answers."""

from __future__ import annotations

import inspect
import sys
import warnings

import pytest

import anydev
import anydev.cuda
import anydev.xpu
from anydev import compat
from anydev._compat import shims
from anydev._compat.table import ROWS

from conftest import run_python

SIM = {"ANYDEV_SIM_DEVICES": "2"}


@pytest.fixture
def quiet():
    """Silences LegacyAPIWarning for tests about behaviour, not warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", compat.LegacyAPIWarning)
        yield


RNG_MAIN = [r for r in ROWS if r.legacy.startswith(("torch.cuda.", "torch.xpu."))
            and r.since == "main" and "random" in (r.replacement or "")]


def test_rng_rows_do_not_send_users_to_a_module_their_torch_lacks():
    # torch.accelerator.random is on PyTorch main only: 2.13 and 1.13 lack it.
    assert len(RNG_MAIN) >= 14
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        with pytest.raises(compat.NoEquivalentError) as e:
            anydev.cuda.manual_seed(0)
    for text in (str(e.value), str(log[-1].message), anydev.cuda.manual_seed.__deprecated__):
        assert "use torch.accelerator.random" not in text, text
        assert "no PyTorch release up to 2.13 has a device-generic replacement" in text, text
        assert "torch.cuda.manual_seed is still the call to make there" in text, text
        assert "torch.accelerator.random.manual_seed is expected in a later release" in text
    for row in RNG_MAIN:
        module = anydev.cuda if row.legacy.startswith("torch.cuda.") else anydev.xpu
        doc = getattr(module, row.legacy.rsplit(".", 1)[1]).__deprecated__
        assert "expected in a later release" in doc and "use torch.accelerator" not in doc, doc
    stub = open(anydev.cuda.__file__[:-3] + ".pyi", encoding="utf-8").read()
    assert "use torch.accelerator.random" not in stub


def test_a_replacement_the_users_torch_has_is_named_as_one_to_use():
    torch = pytest.importorskip("torch")
    row = next(r for r in ROWS if r.legacy == "torch.cuda.device_count")
    assert shims.torch_has(row.replacement) is True
    assert "in PyTorch: torch.accelerator.device_count" in shims.legacy_message(row, "x")
    assert shims.torch_has("torch.accelerator.random.manual_seed") is (
        hasattr(torch.accelerator, "random"))


def test_torch_devices_are_retyped_as_device_strings_are():
    pytest.importorskip("torch")
    rc, out, err = run_python("""
        import warnings
        warnings.simplefilter("ignore")
        import torch
        import anydev, anydev.cuda
        anydev.cuda.set_device(torch.device("cuda", 1))
        print(anydev.accelerator.current_device_index())
        anydev.cuda.set_device("cuda:0")
        s = anydev.cuda.Stream(torch.device("cuda", 1))
        print(s.device)
        print(anydev.cuda.Stream(device=torch.device("cuda", 1), priority=-1).device)
        print(anydev.cuda.current_stream(torch.device("cuda", 1)).device)
        print(anydev.cuda.get_device_name(torch.device("cuda", 1)) != "")
        with anydev.cuda.device(torch.device("cuda", 1)):
            print(anydev.accelerator.current_device_index())
    """, env=SIM)
    assert rc == 0, err
    assert out.split() == ["1", "sim:1", "sim:1", "sim:1", "True", "1"], (out, err)


def test_set_stream_none_does_nothing_as_in_torch(quiet):
    assert anydev.cuda.set_stream(None) is None
    assert anydev.xpu.set_stream(None) is None
    with pytest.raises(TypeError):
        anydev.cuda.set_stream(3)  # anything else still goes to set_stream


def _functions(module):
    for name in sorted(module.__all__):
        obj = vars(module).get(name)  # not the deprecated attributes' __getattr__
        if isinstance(obj, anydev._C._compat.Forwarder):
            yield name, obj


def test_forwarders_show_the_legacy_signature():
    # inspect.signature followed __wrapped__ to the replacement: 29 forwarders
    # showed its parameters, not the legacy ones.
    row_of = {r.legacy: r for r in ROWS}
    seen = 0
    for module, legacy in ((anydev.cuda, "torch.cuda"), (anydev.xpu, "torch.xpu")):
        for name, f in _functions(module):
            row = row_of[f"{legacy}.{name}"]
            if not row.signature:
                continue
            got = str(inspect.signature(f))
            want = row.signature.replace('"', "'")
            assert got == want, (name, got, want)
            seen += 1
    assert seen >= 60


def test_forwarders_take_the_parameters_torch_2_13_takes():
    torch = pytest.importorskip("torch")
    differ = []
    for module, legacy in ((anydev.cuda, torch.cuda), (anydev.xpu, torch.xpu)):
        for name, f in _functions(module):
            theirs = getattr(legacy, name, None)
            if theirs is None or inspect.isclass(theirs) or name == "graph":
                continue  # classes; torch.cuda.graph has grown two keyword-only options
            try:
                want = inspect.signature(theirs)
            except (TypeError, ValueError):
                continue
            got = inspect.signature(f)
            a = [(p.name, p.kind, p.default) for p in got.parameters.values()]
            b = [(p.name, p.kind, p.default) for p in want.parameters.values()]
            if a != b:
                differ.append((module.__name__, name, str(got), str(want)))
    assert differ == []


@pytest.mark.parametrize("package,sub", [("cuda", "memory"), ("cuda", "random"),
                                         ("cuda", "graphs"), ("cuda", "streams"),
                                         ("xpu", "memory"), ("xpu", "random"),
                                         ("xpu", "graphs"), ("xpu", "streams")])
def test_the_legacy_submodules_import(package, sub, quiet):
    import importlib

    mod = importlib.import_module(f"anydev.{package}.{sub}")
    parent = importlib.import_module(f"anydev.{package}")
    assert getattr(parent, sub) is mod
    assert mod.__all__ and all(getattr(mod, n) is getattr(parent, n) for n in mod.__all__)
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F811
        except ImportError:
            return
    theirs = importlib.import_module(f"torch.{package}.{sub}")
    names = set(getattr(theirs, "__all__", ())) or {
        n for n, v in vars(theirs).items()
        if isinstance(v, type) and v.__module__.startswith(f"torch.{package}")}
    assert set(mod.__all__) == names & set(parent.__all__)


def test_accelerator_graphs_is_torch_accelerator_graphs():
    import anydev.accelerator
    import anydev.accelerator.graphs as graphs

    assert graphs.Graph is anydev.accelerator.Graph and anydev.accelerator.graphs is graphs


def test_memory_summary_answers():
    rc, out, err = run_python("""
        import anydev, anydev.cuda
        b = anydev.Buffer(3000)
        print(anydev.cuda.memory_summary())
        print(anydev.cuda.memory_summary(1, abbreviated=True))
        print(anydev.cuda.memory.memory_summary is anydev.cuda.memory_summary)
    """, env=SIM)
    assert rc == 0, err
    full, short, same = out.split("\n\n")
    assert same.strip() == "True"
    assert "anydev sim memory summary, device ID 0" in full
    assert "| Allocated memory      |   3072 B   |   3072 B   |   3072 B   |      0 B   |" in full
    assert "from small pool" in full and "from small pool" not in short
    assert "device ID 1" in short
    assert {len(line) for line in full.splitlines()} == {77}
    rc, out, err = run_python("""
        import anydev.cuda
        try:
            anydev.cuda.memory_summary()
        except RuntimeError as e:
            print(e)
    """, env={"ANYDEV_SIM_DEVICES": None})
    if "none is available" not in out:
        pytest.skip("this machine has an accelerator")
