"""The CUDA, HIP and Level Zero backends from Python, on machines with and
without their GPUs (the C++ pair is tests/cpp/vendor_backend_test.cc).

Each vendor runtime is opened with dlopen when anydev first probes; the
ANYDEV_CUDA_LIBRARY, ANYDEV_HIP_LIBRARY and ANYDEV_LEVEL_ZERO_LIBRARY
variables name the library to open instead. Pointing one at a file that does
not exist makes the runtime unloadable, which is how these tests check, in a
fresh interpreter per backend, that anydev says exactly why and that the rest
of it (the CPU, the simulated accelerator) keeps working. Where a vendor
backend has devices, the whole conformance suite runs on it, unchanged.
"""

from __future__ import annotations

import os
import sys

import pytest

import anydev
from conftest import run_command, run_python

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.join(HERE, "test_accelerator_conformance.py")

VENDORS = {
    # name: (override variable, how the vendor's error names start)
    "cuda": ("ANYDEV_CUDA_LIBRARY", "cudaError"),
    "hip": ("ANYDEV_HIP_LIBRARY", "hipError"),
    "xpu": ("ANYDEV_LEVEL_ZERO_LIBRARY", "ZE_RESULT_"),
}


def backend(name: str) -> anydev.BackendInfo:
    return {b.name: b for b in anydev.backends()}[name]


def require_built(name: str) -> None:
    if not backend(name).built:
        pytest.skip(f"the {name} backend is not built here")


@pytest.mark.parametrize("name", list(VENDORS))
def test_each_built_backend_has_devices_or_names_the_vendor_error(name):
    require_built(name)
    info = backend(name)
    if info.available:
        assert info.device_count >= 1 and info.reason == ""
        p = anydev.get_device_properties(anydev.device(name, 0))
        assert p.name and p.total_memory > 0 and p.multi_processor_count > 0
        return
    assert info.device_count == 0
    assert info.reason.startswith(f"{name}: ")
    _, vendor_prefix = VENDORS[name]
    not_loaded = "(dlopen: " in info.reason
    assert not_loaded or vendor_prefix in info.reason or "no devices" in info.reason \
        or "no GPU devices" in info.reason, info.reason
    if not not_loaded:
        assert " [/" in info.reason, "the reason names the library that answered"
    with pytest.raises(RuntimeError, match="^" + name):
        anydev.Stream(name)


@pytest.mark.parametrize("name", list(VENDORS))
def test_unloadable_library_is_a_reason_and_the_rest_works(name):
    require_built(name)
    var, _ = VENDORS[name]
    missing = f"/nonexistent/lib{name}-runtime.so"
    rc, out, err = run_python(
        f"""
        import anydev
        from anydev import testing
        info = {{b.name: b for b in anydev.backends()}}[{name!r}]
        print(repr(info.reason))
        assert info.built and not info.available and info.device_count == 0
        assert anydev.device_count({name!r}) == 0
        assert not anydev.is_available({name!r})
        try:
            anydev.Stream({name!r})
        except RuntimeError as e:
            assert "not found (dlopen: " in str(e), e
        else:
            raise AssertionError("a stream of an unavailable backend")
        # The rest of anydev: the simulated accelerator, streams, events, timing.
        acc = anydev.accelerator
        assert acc.current_accelerator().type == "sim"
        assert acc.device_count() == 2
        with acc.device_index(1):
            s = anydev.Stream()
            start = anydev.Event(enable_timing=True)
            end = anydev.Event(enable_timing=True)
            start.record(s)
            testing.sleep(0.02, s)
            end.record(s)
            assert not s.query()
            end.synchronize()
            assert start.elapsed_time(end) >= 15
        assert acc.current_device_index() == 0
        acc.synchronize()
        assert anydev.device_count("cpu") == 1
        print("ok")
        """,
        env={var: missing, "ANYDEV_SIM_DEVICES": "2", "ANYDEV_ACCELERATOR": "sim"},
    )
    assert rc == 0, out + err
    assert out.splitlines()[-1] == "ok", out
    expected = (f"{name}: {missing} not found (dlopen: {missing}: cannot open shared object "
                f"file: No such file or directory), named by {var}")
    assert out.splitlines()[0] == repr(expected)
    assert err == "", "probing must never print"


@pytest.mark.parametrize("name", list(VENDORS))
def test_doctor_shows_the_reason(name):
    require_built(name)
    var, _ = VENDORS[name]
    missing = f"/nonexistent/lib{name}-runtime.so"
    rc, out, err = run_command([sys.executable, "-m", "anydev", "doctor"], env={var: missing})
    assert rc == 0, out + err
    row = next(line for line in out.splitlines() if line.startswith(f"{name} "))
    assert row.split()[1:4] == ["yes", "unavailable", "0"], row
    assert f"{missing} not found (dlopen:" in row, row
    assert f"{var}={missing}" in out  # the environment line shows the override


@pytest.mark.parametrize("name", list(VENDORS))
def test_forced_unavailable_backend_is_a_clear_error(name):
    require_built(name)
    var, _ = VENDORS[name]
    missing = f"/nonexistent/lib{name}-runtime.so"
    rc, out, err = run_python(
        """
        import anydev
        try:
            anydev.accelerator.current_device_index()
        except RuntimeError as e:
            print(e)
        """,
        env={var: missing, "ANYDEV_ACCELERATOR": name},
    )
    assert rc == 0, err
    assert out.strip().startswith(
        f"ANYDEV_ACCELERATOR={name} but {name} is not available: {name}: {missing} not found "
        "(dlopen: "), out


@pytest.mark.parametrize("name", list(VENDORS))
def test_conformance_on_each_available_vendor_backend(name):
    """The whole conformance suite, unchanged, on a real GPU."""
    require_built(name)
    if not backend(name).available:
        pytest.skip(f"{name} has no devices here: {backend(name).reason}")
    if os.environ.get("ANYDEV_ACCELERATOR", name) != name:
        pytest.skip("this run targets another accelerator")
    var, _ = VENDORS[name]
    rc, out, err = run_command(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", CONFORMANCE],
        # The same runtime as this process (an override passes through).
        env={"ANYDEV_ACCELERATOR": name, var: os.environ.get(var)}, timeout=600)
    assert rc == 0, f"conformance suite failed on {name}:\n{out}\n{err}"
    assert " passed" in out and "failed" not in out, out


@pytest.mark.parametrize("name", list(VENDORS))
def test_properties_of_available_vendor_devices(name):
    require_built(name)
    info = backend(name)
    if not info.available:
        pytest.skip(f"{name} has no devices here: {info.reason}")
    for i in range(info.device_count):
        p = anydev.get_device_properties(anydev.device(name, i))
        assert p.name and p.total_memory > 0 and p.multi_processor_count > 0
        assert p.driver_version
        if name == "cuda":
            assert p.major >= 3 and p.arch == f"sm_{p.major}{p.minor}"
        if name == "hip":
            assert p.arch.startswith("gfx")


# --- the fake vendor runtimes of the C++ tests (tests/cpp/fake_runtimes) -------------

FAKES = {
    # name: (override variable, file); HIP shares CUDA's backend code, so the C++
    # suite's conformance.fake_hip covers it.
    "cuda": ("ANYDEV_CUDA_LIBRARY", "libanydev_fake_cudart.so"),
    "xpu": ("ANYDEV_LEVEL_ZERO_LIBRARY", "libanydev_fake_ze_loader.so"),
}


def fake_runtime(name: str) -> str:
    """The fake runtime's path in the build tree (ANYDEV_FAKE_RUNTIME_DIR, else
    tools/setup.sh's build/py), or skips."""
    build = os.environ.get("ANYDEV_FAKE_RUNTIME_DIR",
                           os.path.join(HERE, "..", "..", "..", "build", "py", "tests", "cpp"))
    path = os.path.abspath(os.path.join(build, FAKES[name][1]))
    if not os.path.exists(path):
        pytest.skip(f"no fake {name} runtime at {path} (built with the C++ tests)")
    return path


@pytest.mark.parametrize("name", list(FAKES))
def test_conformance_on_a_fake_vendor_runtime(name):
    """The Python conformance suite through the vendor backend's own code, on a
    fake runtime of host threads with two devices (no GPU needed)."""
    require_built(name)
    if os.environ.get("ANYDEV_ACCELERATOR", "sim") != "sim":
        pytest.skip("this run targets another accelerator")
    var, _ = FAKES[name]
    rc, out, err = run_command(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", CONFORMANCE],
        env={var: fake_runtime(name), "ANYDEV_ACCELERATOR": name}, timeout=300)
    assert rc == 0, f"conformance suite failed on the fake {name} runtime:\n{out}\n{err}"
    assert " passed" in out and "failed" not in out and "skipped" not in out, out
