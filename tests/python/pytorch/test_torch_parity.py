"""anydev against the installed torch (2.13 CPU): the same names, signatures
and exception types for the same mistakes, and anydev and torch objects
accepted by each other's calls."""

from __future__ import annotations

import inspect

import pytest

import anydev
from conftest import run_python

torch = pytest.importorskip("torch")


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


# --- names and signatures ---------------------------------------------------------


def test_accelerator_has_every_name_of_torchs():
    missing = set(torch.accelerator.__all__) - set(anydev.accelerator.__all__)
    assert not missing
    for name in torch.accelerator.__all__:
        assert hasattr(anydev.accelerator, name), name
    # The deprecated aliases are listed by dir(), as on torch.
    for name in ("current_device_idx", "set_device_idx"):
        assert name in dir(torch.accelerator)
        assert name in dir(anydev.accelerator)


def test_memory_submodule_has_every_name_of_torchs():
    import anydev.accelerator.memory as mem

    assert mem is anydev.accelerator.memory
    assert set(torch.accelerator.memory.__all__) <= set(mem.__all__)
    for name in torch.accelerator.memory.__all__:
        assert _params(getattr(mem, name)) == _params(getattr(torch.accelerator.memory, name)), name
        # Re-exported from the accelerator module, as torch's.
        assert getattr(anydev.accelerator, name) is getattr(mem, name)


@pytest.mark.parametrize("name", sorted(set(torch.accelerator.__all__)
                                        - {"Graph", "current_device_idx", "set_device_idx"}))
def test_signature_matches_torchs(name):
    # The four fast-path builtins included: inspect.signature works on them.
    assert _params(getattr(anydev.accelerator, name)) == _params(getattr(torch.accelerator, name))


@pytest.mark.parametrize("call", [
    "synchronize(device=0)", "current_stream(device=0)", "set_device_index(device=0)",
    "memory_stats(device_index=0)", "memory_allocated(device_index=0)",
    "get_memory_info(device_index=0)", "get_device_capability(device=0)",
    "device_index(device=0)", "current_device_index(0)", "empty_cache(0)",
])
def test_keywords_torch_rejects_are_rejected(acc, call):
    with pytest.raises(TypeError):
        eval(f"torch.accelerator.{call}")
    with pytest.raises(TypeError):
        eval(f"anydev.accelerator.{call}")


# --- exception types ------------------------------------------------------------


def test_set_device_index_none_is_value_error_even_without_accelerator():
    with pytest.raises(ValueError, match="Expected a torch.device with a specified index"):
        torch.accelerator.set_device_index(None)
    rc, out, err = run_python("""
        import anydev
        try:
            anydev.accelerator.set_device_index(None)
        except ValueError as e:
            print("ValueError", e)
    """)
    assert rc == 0, err
    assert out.startswith("ValueError Expected a device with a specified index"), out


def test_set_device_index_negative_is_noop(acc):
    before = acc.current_device_index()
    acc.set_device_index(-1)
    assert acc.current_device_index() == before


def test_device_index_takes_an_int_only(acc):
    # torch's __enter__ hands the argument to _accelerator_exchangeDevice,
    # which takes an int: a string or a device is a TypeError.
    for bad in ("sim:0", acc.current_accelerator(), 1.5):
        ctx = acc.device_index(bad)  # built without complaint, as torch's
        with pytest.raises(TypeError, match="expected a device index"):
            with ctx:
                pass
    with pytest.raises(TypeError, match="cuda:0"):
        with torch.accelerator.device_index("cuda:0"):
            pass
    with pytest.raises(TypeError, match="unexpected keyword argument 'device'"):
        acc.device_index(device=0)


def test_device_index_negative_is_an_error(acc):
    before = acc.current_device_index()
    with pytest.raises(RuntimeError, match="negative device index"):
        with acc.device_index(-1):
            pass
    assert acc.current_device_index() == before


def test_current_accelerator_checked_never_raises(run_python):
    for env in ({"ANYDEV_SIM_DEVICES": "abc"}, {"ANYDEV_ACCELERATOR": "nonsense"},
                {"ANYDEV_ACCELERATOR": "cuda", "ANYDEV_CUDA_LIBRARY": "/nonexistent/libcudart.so"},
                {"ANYDEV_ACCELERATOR": "mps"}, {}):
        rc, out, err = run_python("""
            import anydev
            print(anydev.accelerator.current_accelerator(check_available=True))
            print(anydev.accelerator.is_available(), anydev.accelerator.device_count())
        """, env=env)
        assert rc == 0, (env, err)
        assert out.split() == ["None", "False", "0"], (env, out)


def test_current_accelerator_names_a_built_backend_without_devices(run_python):
    # torch's answer is the compile-time accelerator: a forced, built backend
    # with no device is named unchecked, None checked.
    rc, out, err = run_python("""
        import anydev
        acc = anydev.accelerator
        print(repr(acc.current_accelerator()), acc.current_accelerator(check_available=True))
        try:
            acc.current_device_index()
        except RuntimeError as e:
            print("RuntimeError")
    """, env={"ANYDEV_ACCELERATOR": "cuda", "ANYDEV_CUDA_LIBRARY": "/nonexistent/libcudart.so"})
    assert rc == 0, err
    if "not enabled in this build" in err:
        pytest.skip("cuda is not built")
    assert out.split() == ["device(type='cuda')", "None", "RuntimeError"], out


def test_misconfiguration_still_reported_where_the_device_is_needed(run_python):
    rc, out, err = run_python("""
        import anydev
        try:
            anydev.accelerator.current_device_index()
        except RuntimeError as e:
            print("RuntimeError", e)
    """, env={"ANYDEV_SIM_DEVICES": "abc"})
    assert rc == 0, err
    assert out.startswith("RuntimeError") and "ANYDEV_SIM_DEVICES" in out


@pytest.mark.parametrize("text", ["mps", "meta:0", "privateuseone:1"])
def test_torchs_other_device_types_parse(text):
    ours, theirs = anydev.device(text), torch.device(text)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert str(ours) == str(theirs)
    assert anydev.device_count(ours.type) == 0
    assert not anydev.is_available(ours.type)
    with pytest.raises(RuntimeError, match="not enabled in this build"):
        anydev.Stream(anydev.device(ours.type, 0))


def test_unknown_type_lists_the_new_names():
    with pytest.raises(RuntimeError, match="mps, meta, privateuseone"):
        anydev.device("gpu")


# --- torch objects in anydev calls ----------------------------------------------------


def test_torch_device_is_accepted_wherever_a_device_is():
    d = anydev.device(torch.device("cpu"))
    assert d == anydev.device("cpu")
    assert anydev.device_count(torch.device("cpu")) == 1
    assert anydev.Stream(torch.device("cpu")).device.type == "cpu"
    assert anydev.get_device_properties(torch.device("cpu")).type == "cpu"
    assert anydev.device(torch.device("mps")) == anydev.device("mps")
    with pytest.raises(RuntimeError, match="device type at start of device string: xla"):
        anydev.device(torch.device("xla", 0))  # a torch type anydev does not know


def test_torch_cuda_device_names_anydevs_cuda():
    assert anydev.device(torch.device("cuda", 1)) == anydev.device("cuda", 1)


def test_torch_device_in_accelerator_calls(acc):
    t = acc.current_accelerator().type
    if t == "sim":
        # torch has no "sim": a torch device of another type is the mismatch error.
        with pytest.raises(ValueError, match="doesn't match the current accelerator"):
            acc.current_stream(torch.device("cpu"))
    else:  # pragma: no cover - on a GPU
        assert acc.current_stream(torch.device(t, 0)) == acc.current_stream(0)


def test_torch_stream_is_accepted():
    ts = torch.Stream("cpu")
    s = anydev.Stream("cpu")
    assert s.wait_stream is not None
    buf = anydev.Buffer(64, "cpu")
    buf.fill_(5, stream=ts)  # a torch.Stream where an anydev.Stream goes
    assert bytes(buf.copy_to_host(stream=ts)) == b"\x05" * 64
    with pytest.raises(TypeError, match="anydev.Stream"):
        buf.fill_(5, stream=object())


def test_device_to_torch():
    assert anydev.device("cpu").to_torch() == torch.device("cpu")
    assert anydev.device("cuda:1").to_torch() == torch.device("cuda", 1)
    assert anydev.device("meta").to_torch() == torch.device("meta")
    with pytest.raises(ValueError, match="no torch.device"):
        anydev.device("sim:0").to_torch()


def test_buffer_to_torch_tensor_through_dlpack():
    buf = anydev.Buffer(16, "cpu")
    buf.copy_from_host(bytes(range(16)))
    t = torch.from_dlpack(buf)
    assert t.dtype == torch.uint8 and t.shape == (16,)
    assert t.tolist() == list(range(16))


def test_sim_buffer_to_torch_tensor_through_dlpack(acc):
    if acc.current_accelerator().type != "sim":
        pytest.skip("sim memory is host memory (kDLCPU); a GPU buffer needs torch's GPU build")
    buf = anydev.Buffer(8)
    buf.fill_(7)
    assert torch.from_dlpack(buf).tolist() == [7] * 8


# --- smaller pieces of the API ----------------------------------------------------------


def test_get_device_capability(acc):
    caps = acc.get_device_capability()
    assert set(caps) == {"supported_dtypes"}
    dtypes = caps["supported_dtypes"]
    assert {"float32", "bfloat16", "int64", "bool"} <= dtypes
    for name in dtypes:
        assert isinstance(getattr(torch, name), torch.dtype), name
    assert acc.get_device_capability(0) == caps
    with pytest.raises(ValueError, match="doesn't match"):
        acc.get_device_capability("cpu")
    with pytest.raises(RuntimeError, match="out of range"):
        acc.get_device_capability(99)


def test_stream_native_handle_and_is_capturing(acc):
    s = anydev.Stream()
    assert s.is_capturing() is False
    assert torch.Stream("cpu").is_capturing() is False
    if acc.current_accelerator().type == "sim":
        with pytest.raises(RuntimeError, match="doesn't support getting stream native handle"):
            s.native_handle
    with pytest.raises(RuntimeError, match="doesn't support getting stream native handle"):
        anydev.Stream("cpu").native_handle
    with pytest.raises(RuntimeError, match="doesn't support getting stream native handle"):
        torch.Stream("cpu").native_handle


def test_device_is_a_context_manager(multi_device):
    acc = multi_device
    acc.set_device_index(0)
    with anydev.device(acc.current_accelerator().type, 1) as d:
        assert acc.current_device_index() == 1
        assert d.index == 1
        with anydev.device(acc.current_accelerator().type):  # no index: no switch
            assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    with anydev.device("cpu"):  # not the accelerator: no switch
        assert acc.current_device_index() == 0
    with torch.device("cpu"):
        pass


def test_empty_host_cache_and_host_buffer(acc):
    acc.empty_host_cache()
    stats = anydev._C._host_memory_stats()
    hb = anydev.HostBuffer(3000)
    view = memoryview(hb)
    assert view.nbytes == 3000 and len(hb) == 3000
    view[:3] = b"abc"
    buf = anydev.Buffer(3000)
    buf.copy_from_host(hb)
    out = anydev.HostBuffer(3000)
    buf.copy_to_host(out)
    assert bytes(memoryview(out)[:3]) == b"abc"
    assert hb.pinned_for == acc.current_accelerator().type
    del view, hb, out
    mid = anydev._C._host_memory_stats()
    assert mid["reserved_bytes.current"] - stats["reserved_bytes.current"] == 2 * 4096
    assert mid["allocated_bytes.current"] == stats["allocated_bytes.current"]
    again = anydev.HostBuffer(2049)  # the same size class: no new block
    assert anydev._C._host_memory_stats()["num_host_alloc"] == mid["num_host_alloc"]
    del again
    acc.empty_host_cache()
    after = anydev._C._host_memory_stats()
    assert after["reserved_bytes.current"] == stats["reserved_bytes.current"]
