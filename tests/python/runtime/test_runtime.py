"""Device-generic calls in the top namespace (rule 2: an optional device or
device type), anydev.accelerator's argument checking, backends(), and the
device modules anydev.sim / anydev.cpu. Run with the default configuration
of conftest.py (the simulated accelerator)."""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings

import pytest

import anydev

from conftest import accelerator_type

needs_sim = pytest.mark.skipif(accelerator_type() != "sim",
                               reason="checks the simulated accelerator")


def parse_size(text: str) -> int:
    units = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 10**3, "MB": 10**6, "GB": 10**9}
    for suffix, mult in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * mult)
    return int(text)


def acc_type() -> str:
    return anydev.accelerator.current_accelerator().type


# --- device_count / is_available / synchronize ------------------------------------


def test_device_count(acc):
    assert anydev.device_count() == acc.device_count() >= 1
    assert anydev.device_count(acc_type()) == acc.device_count()
    assert anydev.device_count(anydev.device(acc_type(), 0)) == acc.device_count()
    assert anydev.device_count("cpu") == 1
    assert anydev.device_count(anydev.device("cpu")) == 1


@needs_sim
def test_device_count_matches_environment():
    assert anydev.device_count() == int(os.environ["ANYDEV_SIM_DEVICES"])
    assert anydev.device_count("sim") == int(os.environ["ANYDEV_SIM_DEVICES"])


@pytest.mark.parametrize("name", ["cuda", "hip", "xpu"])
def test_unbuilt_backends_have_no_devices(name):
    info = {b.name: b for b in anydev.backends()}[name]
    if info.available:
        pytest.skip(f"{name} is available here")
    assert anydev.device_count(name) == 0
    assert anydev.is_available(name) is False
    if name == "hip":  # a per-type device module; anydev.cuda/xpu are legacy shims
        assert anydev.hip.device_count() == 0
        assert anydev.hip.is_available() is False


def test_is_available(acc):
    assert anydev.is_available() is True
    assert anydev.is_available("cpu") is True
    assert acc.is_available() is True


def test_device_type_argument_errors():
    with pytest.raises(RuntimeError, match="foo"):
        anydev.device_count("foo")
    with pytest.raises(TypeError, match="3"):
        anydev.device_count(3)
    with pytest.raises(TypeError, match="1.5"):
        anydev.is_available(1.5)


def test_synchronize(acc):
    anydev.synchronize("cpu")
    anydev.synchronize(anydev.device("cpu"))
    anydev.synchronize()
    anydev.synchronize(0)
    anydev.synchronize(f"{acc_type()}:0")
    acc.synchronize()
    acc.synchronize(0)
    acc.synchronize(anydev.device(acc_type(), 0))
    acc.synchronize(-1)  # the current device


def test_synchronize_errors(acc):
    n = acc.device_count()
    with pytest.raises(RuntimeError, match=str(n + 7)):
        anydev.synchronize(anydev.device(acc_type(), n + 7))
    with pytest.raises(RuntimeError, match=str(n + 7)):
        acc.synchronize(n + 7)
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.synchronize("cpu")
    with pytest.raises(TypeError, match="1.5"):
        anydev.synchronize(1.5)
    with pytest.raises(TypeError, match="1.5"):
        acc.synchronize(1.5)


# --- get_device_properties ----------------------------------------------------------


def test_get_device_properties(acc):
    p = anydev.get_device_properties()
    assert p.type == acc_type()
    assert p.index == acc.current_device_index()
    assert isinstance(p.name, str) and p.name
    assert isinstance(p.total_memory, int) and p.total_memory > 0
    assert p.multi_processor_count >= 1
    for i in range(acc.device_count()):
        q = anydev.get_device_properties(anydev.device(acc_type(), i))
        assert (q.type, q.index) == (acc_type(), i)
        assert anydev.get_device_properties(i).index == i
        assert anydev.get_device_properties(f"{acc_type()}:{i}").index == i
    assert repr(p).startswith("_DeviceProperties(device=")
    assert p.name in repr(p)


@needs_sim
def test_sim_memory_is_environment_value():
    want = parse_size(os.environ["ANYDEV_SIM_MEMORY"])
    for i in range(anydev.device_count()):
        assert anydev.get_device_properties(anydev.device("sim", i)).total_memory == want


def test_get_device_properties_cpu():
    p = anydev.get_device_properties("cpu")
    assert (p.type, p.index) == ("cpu", 0)
    assert p.total_memory > 0
    assert p.multi_processor_count >= 1


def test_get_device_properties_errors(acc):
    n = acc.device_count()
    with pytest.raises(RuntimeError, match=str(n)):
        anydev.get_device_properties(anydev.device(acc_type(), n))
    with pytest.raises(TypeError, match="1.5"):
        anydev.get_device_properties(1.5)


def test_get_device_properties_without_index_is_current(multi_device):
    with multi_device.device_index(1):
        assert anydev.get_device_properties(anydev.device(acc_type())).index == 1
        assert anydev.get_device_properties().index == 1


# --- get_device_module ------------------------------------------------------------


def test_get_device_module(acc):
    mod = anydev.get_device_module()
    assert mod is getattr(anydev, acc_type())
    assert mod.__name__ == f"anydev.{acc_type()}"
    assert anydev.get_device_module(anydev.device(acc_type(), 0)) is mod
    assert anydev.get_device_module(f"{acc_type()}:0") is mod
    assert anydev.get_device_module("cpu") is anydev.cpu
    assert anydev.get_device_module(anydev.device("cpu")) is anydev.cpu
    for name in ("cuda", "hip", "xpu", "sim"):
        assert anydev.get_device_module(name) is importlib.import_module(f"anydev.{name}")


@needs_sim
def test_get_device_module_is_sim():
    assert anydev.get_device_module() is anydev.sim


def test_get_device_module_errors():
    with pytest.raises(RuntimeError, match=re.escape(
            "Invalid value of device '3', expect anydev.device, str, or None")):
        anydev.get_device_module(3)
    with pytest.raises(RuntimeError, match="foo"):
        anydev.get_device_module("foo")


# --- backends() ---------------------------------------------------------------------


def test_backends():
    records = anydev.backends()
    assert [b.name for b in records] == ["cuda", "hip", "xpu", "sim", "cpu"]
    for b in records:
        assert isinstance(b, anydev.BackendInfo)
        assert isinstance(b.built, bool) and isinstance(b.available, bool)
        assert b.device_count == anydev.device_count(b.name)
        if b.available:
            assert b.built and b.device_count >= 1 and b.reason == ""
        else:
            assert b.device_count == 0 and b.reason  # says why
        if not b.built:
            assert not b.available
            assert "not enabled in this build" in b.reason
    cpu = records[-1]
    assert (cpu.built, cpu.available, cpu.device_count) == (True, True, 1)
    assert records[3].built  # sim is always built


@needs_sim
def test_backends_sim_record():
    sim = {b.name: b for b in anydev.backends()}["sim"]
    assert sim.available and sim.device_count == int(os.environ["ANYDEV_SIM_DEVICES"])


def test_backend_info_is_a_named_tuple():
    b = anydev.backends()[0]
    assert b == tuple(b)
    assert b._fields == ("name", "built", "available", "device_count", "reason")


# --- the accelerator module -----------------------------------------------------------


def test_acc_alias():
    assert anydev.acc is anydev.accelerator
    acc_mod = importlib.import_module("anydev.acc")
    assert acc_mod is anydev.accelerator
    assert sys.modules["anydev.acc"] is anydev.accelerator
    from anydev import acc as a

    assert a is anydev.accelerator


def test_import_anydev_acc_statement(run_python):
    rc, out, err = run_python("""
        import anydev.acc
        import anydev
        from anydev.acc import current_device_index
        print(anydev.acc is anydev.accelerator, current_device_index is anydev.accelerator.current_device_index)
    """, env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    assert out.split() == ["True", "True"]


def test_accelerator_all_names_exist():
    for name in anydev.accelerator.__all__:
        assert callable(getattr(anydev.accelerator, name)), name
    for name in anydev.__all__:
        assert hasattr(anydev, name), name


def test_current_accelerator(acc):
    d = acc.current_accelerator()
    assert isinstance(d, anydev.device) and d.index is None
    assert acc.current_accelerator(check_available=True) == d
    assert acc.current_accelerator(True) == d


@pytest.mark.parametrize("bad", [42, "stream", None, 1.5, object()])
def test_set_stream_non_stream(acc, bad):
    with pytest.raises(TypeError, match=re.escape(repr(bad))):
        acc.set_stream(bad)


def test_set_stream_of_cpu_stream(acc):
    before = acc.current_stream()
    with pytest.raises(RuntimeError, match="cpu"):
        acc.set_stream(anydev.Stream("cpu"))
    assert acc.current_stream() == before


def test_set_device_index_errors(acc):
    n = acc.device_count()
    with pytest.raises(ValueError, match=re.escape(
            f"cpu doesn't match the current accelerator {acc_type()}.")):
        acc.set_device_index("cpu")
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.set_device_index(anydev.device("cpu"))
    with pytest.raises(ValueError, match=re.escape(
            "Expected a device with a specified index or an integer, but got:" + acc_type())):
        acc.set_device_index(acc_type())
    with pytest.raises(ValueError, match="Expected a device with a specified index"):
        acc.set_device_index(anydev.device(acc_type()))
    with pytest.raises(ValueError, match="but got:None"):
        acc.set_device_index(None)
    with pytest.raises(RuntimeError, match=r"\b99\b"):
        acc.set_device_index(99)
    with pytest.raises(RuntimeError, match=rf"\b{n}\b"):
        acc.set_device_index(f"{acc_type()}:{n}")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        acc.set_device_index("sim:x")
    with pytest.raises(ValueError, match="but got:1.5"):  # torch's _get_device_index
        acc.set_device_index(1.5)
    with pytest.raises(TypeError):
        acc.set_device_index()
    assert acc.current_device_index() == 0


def test_current_stream_errors(acc):
    with pytest.raises(RuntimeError, match=r"\b99\b"):
        acc.current_stream(99)
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.current_stream("cpu")
    with pytest.raises(TypeError, match="at most 1 argument"):
        acc.current_stream(0, 1)
    with pytest.raises(TypeError, match="1.5"):
        acc.current_stream(1.5)


def test_device_index_errors(acc):
    # As torch's: only an int or None; anything else is a TypeError on entry.
    with pytest.raises(TypeError, match="expected a device index"):
        with acc.device_index("cpu:0"):
            pass
    with pytest.raises(TypeError):
        acc.device_index()
    with pytest.raises(TypeError):
        acc.device_index(0, 1)
    with pytest.raises(TypeError, match="1.5"):
        with acc.device_index(1.5):
            pass


def test_device_index_attributes(acc):
    assert acc.device_index(0).idx == 0
    assert acc.device_index(None).idx is None
    assert repr(acc.device_index(0)) == "anydev.accelerator.device_index(0)"


def test_legacy_aliases_warn(acc):
    with pytest.warns(FutureWarning, match=re.escape("use anydev.accelerator.current_device_index")):
        assert acc.current_device_idx() == acc.current_device_index()
    with pytest.warns(FutureWarning, match=re.escape("use anydev.accelerator.set_device_index")):
        acc.set_device_idx(0)
    assert acc.current_device_index() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        acc.current_device_index()  # the new names do not warn
        acc.set_device_index(0)


# --- device modules -------------------------------------------------------------------


def test_device_module_of_accelerator(acc):
    mod = anydev.get_device_module()
    assert mod.device_count() == acc.device_count()
    assert mod.is_available()
    assert mod.current_device() == acc.current_device_index()
    assert mod.current_stream() == acc.current_stream()
    assert isinstance(mod.get_device_name(), str) and mod.get_device_name()
    assert mod.get_device_name(0) == anydev.get_device_properties(0).name
    assert mod.get_device_properties().index == acc.current_device_index()
    mod.synchronize()
    mod.synchronize(0)
    for name in ("device", "Stream", "Event"):
        assert getattr(mod, name).__module__ == mod.__name__
    assert set(mod.__all__) >= {"current_device", "set_device", "device", "Stream", "Event",
                                "current_stream", "set_stream", "synchronize", "device_count",
                                "get_device_name", "get_device_properties", "is_available"}


def test_device_module_set_device(multi_device):
    mod = anydev.get_device_module()
    mod.set_device(1)
    assert mod.current_device() == 1 == multi_device.current_device_index()
    mod.set_device(anydev.device(acc_type(), 0))
    assert mod.current_device() == 0
    mod.set_device(f"{acc_type()}:1")
    assert mod.current_device() == 1
    with pytest.raises(ValueError, match="cpu"):
        mod.set_device("cpu")
    with pytest.raises(RuntimeError, match=r"\b99\b"):
        mod.set_device(99)
    assert mod.current_device() == 1


def test_device_module_device_context(multi_device):
    mod = anydev.get_device_module()
    mod.set_device(0)
    with mod.device(1):
        assert mod.current_device() == 1
        with mod.device(0):
            assert mod.current_device() == 0
        assert mod.current_device() == 1
    assert mod.current_device() == 0
    with mod.device(None):
        assert mod.current_device() == 0
    with mod.device(-1):  # a no-op, as torch.cuda.device(-1)
        assert mod.current_device() == 0
    with mod.device(anydev.device(acc_type(), 1)):
        assert mod.current_device() == 1
    assert mod.current_device() == 0


def test_device_module_streams(multi_device):
    mod = anydev.get_device_module()
    s = mod.Stream(1)
    assert s.device_index == 1
    assert mod.Stream(priority=-1).priority == max(-1, mod.Stream(priority=-100).priority)
    mod.set_stream(s)
    assert mod.current_stream(1) == s
    assert mod.current_device() == 1  # as torch.cuda.set_stream: the stream's device too
    mod.set_stream(None)  # ignored
    assert mod.current_stream(1) == s
    with pytest.raises(ValueError):
        mod.set_stream(anydev.Stream("cpu"))
    with pytest.raises(TypeError, match="42"):
        mod.set_stream(42)


def test_cpu_module():
    assert anydev.cpu.device_count() == 1
    assert anydev.cpu.is_available()
    assert anydev.cpu.current_device() == 0
    assert anydev.cpu.current_stream() == anydev.Stream("cpu")
    assert anydev.cpu.Stream().device.type == "cpu"
    assert anydev.cpu.Event().device.type == "cpu"
    assert isinstance(anydev.cpu.get_device_name(), str)
    anydev.cpu.synchronize()
    anydev.cpu.set_device(0)
    with anydev.cpu.device(0):
        assert anydev.cpu.current_device() == 0
    with pytest.raises(RuntimeError, match=r"\b1\b"):
        anydev.cpu.set_device(1)
    with pytest.raises(ValueError, match="sim"):
        anydev.cpu.synchronize(anydev.device("sim", 0))


@pytest.mark.parametrize("name", ["hip"])  # anydev.cuda/xpu are legacy shims (test_compat)
def test_unbuilt_device_module(name):
    info = {b.name: b for b in anydev.backends()}[name]
    if info.built:
        pytest.skip(f"{name} is built here")
    mod = getattr(anydev, name)
    with pytest.raises(RuntimeError, match="not enabled in this build"):
        mod.current_device()
    with pytest.raises(RuntimeError, match="not enabled in this build"):
        mod.Stream()


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="nope"):
        anydev.nope  # noqa: B018
