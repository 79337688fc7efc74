"""PyTorch's test/test_accelerator.py, case by case, against anydev.

Written from the table of the upstream test's cases (the project's
reference, section 5.1: TestAccelerator at 006a1148), one test per upstream
case, with anydev's objects in place of torch's. Where an upstream case uses a
tensor only to move bytes, an ``anydev.Buffer`` moves them; a case that needs
kernels or ``torch.compile`` is skipped, and the skip says why. As upstream,
the file needs an accelerator (the simulated one in CI), and the multi-device
cases need two devices.
"""

from __future__ import annotations

import gc
import inspect
import operator
import sys

import pytest

import anydev

pytestmark = pytest.mark.usefixtures("acc")


def _acc_device(index=None):
    return anydev.device(anydev.accelerator.current_accelerator().type, index)


def test_current_accelerator(acc):
    assert acc.is_available()
    current = acc.current_accelerator()
    assert current.type == anydev.accelerator.current_accelerator(check_available=True).type
    assert current.index is None
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.set_device_index("cpu")


def test_generic_multi_device_behavior(multi_device):
    acc = multi_device
    orig = acc.current_device_index()
    target = (orig + 1) % acc.device_count()
    acc.set_device_index(target)
    assert acc.current_device_index() == target
    acc.set_device_index(orig)
    assert acc.current_device_index() == orig

    s = anydev.Stream(target)
    acc.set_stream(s)
    assert acc.current_device_index() == target
    acc.set_device_index(orig)
    acc.synchronize(orig)
    assert acc.current_device_index() == orig


def test_generic_stream_behavior(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    acc.set_stream(s1)
    assert acc.current_stream() == s1
    event = anydev.Event()
    a = bytes(range(256)) * 4
    # Upstream: a non-blocking H2D copy, then an add on the accelerator whose
    # result equals the CPU's. anydev has no kernels: the bytes go to the
    # device on s1 and back on s2, ordered by the event.
    buf = anydev.Buffer(len(a))
    buf.copy_from_host(a, stream=s1)
    event.record(s1)
    acc.set_stream(s2)
    assert acc.current_stream() == s2
    s2.wait_event(event)
    out = bytearray(len(a))
    buf.copy_to_host(out, stream=s2)
    event.record(s2)
    event.synchronize()
    assert event.query()
    assert bytes(out) == a


def test_current_stream_query(acc):
    s = acc.current_stream()
    assert acc.current_stream(s.device) == s
    assert acc.current_stream(s.device.index) == s
    assert acc.current_stream(str(s.device)) == s
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.current_stream(anydev.device("cpu"))


def test_stream_compare_with_non_stream(acc):
    s1 = anydev.Stream()
    for other in (42, "hello", 3.14, None, object()):
        assert not (s1 == other)
        assert s1 != other
    assert s1 in [1, "a", s1]
    for op in (operator.lt, operator.le, operator.gt, operator.ge):
        with pytest.raises(TypeError):
            op(s1, s1)
    s2 = anydev.Stream(stream_id=s1.stream_id, device_index=s1.device_index,
                       device_type=s1.device_type)
    assert s1 == s2


def test_device_context_manager(acc):
    prev = acc.current_device_index()
    with acc.device_index(None):
        assert acc.current_device_index() == prev
    assert acc.current_device_index() == prev
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert acc.current_device_index() == prev


def test_device_index_fullgraph():
    pytest.skip("needs tensors and torch.compile (randn(device=0) under "
                "torch.compile(fullgraph=True)): anydev has neither")


def test_multi_device_context_manager(multi_device):
    acc = multi_device
    src, dst = 0, 1
    acc.set_device_index(src)
    with acc.device_index(dst):
        assert acc.current_device_index() == dst
        with acc.device_index(src):
            assert acc.current_device_index() == src
        assert acc.current_device_index() == dst
    assert acc.current_device_index() == src


def test_stream_context_manager(acc):
    prev = acc.current_stream()
    with anydev.Stream() as s:
        assert acc.current_stream() == s
    assert acc.current_stream() == prev


def test_stream_context_manager_reentrance(acc):
    prev = acc.current_stream()
    s0, s1 = anydev.Stream(), anydev.Stream()
    with s0, s0:
        assert acc.current_stream() == s0
    assert acc.current_stream() == prev
    with s0:
        assert acc.current_stream() == s0
        with s1:
            assert acc.current_stream() == s1
            with s0:
                assert acc.current_stream() == s0
            assert acc.current_stream() == s1
        assert acc.current_stream() == s0
    assert acc.current_stream() == prev


def test_multi_device_stream_context_manager(multi_device):
    acc = multi_device
    src, dst = 0, 1
    acc.set_device_index(src)
    src_prev, dst_prev = acc.current_stream(src), acc.current_stream(dst)
    with anydev.Stream(dst) as s:
        assert acc.current_device_index() == dst
        assert acc.current_stream() == s
        assert acc.current_stream(src) == src_prev
    assert acc.current_device_index() == src
    assert acc.current_stream(src) == src_prev
    assert acc.current_stream(dst) == dst_prev


def test_pin_memory_on_non_blocking_copy():
    pytest.skip("needs tensors: asserts that tensor.to('cpu', non_blocking=True) from the "
                "accelerator yields a pinned tensor (anydev.HostBuffer is pinned memory, "
                "but anydev has no tensors to copy into it)")


# The next four cases test torch.utils.data's pin_memory(), which hands the
# DataLoader's device to a batch's own pin_memory(); they need torch, not the
# runtime, and run against the installed torch with anydev's device name.


def _torch_pin_memory():
    torch = pytest.importorskip("torch")
    from torch.utils.data._utils.pin_memory import pin_memory

    if "device" not in inspect.getsource(pin_memory).split("if hasattr(data, \"pin_memory\")")[1][:200]:
        pytest.skip(f"torch {torch.__version__}'s pin_memory() calls data.pin_memory() without "
                    "the device; the dispatch this case tests is newer than that torch")
    return pin_memory


def test_custom_pin_memory_device_argument():
    pin_memory = _torch_pin_memory()

    class Batch:
        def pin_memory(self, device=None):
            self.device = device
            return self

    assert pin_memory(Batch(), _acc_device().type).device == _acc_device().type


def test_custom_pin_memory_varargs():
    pin_memory = _torch_pin_memory()

    class Batch:
        def pin_memory(self, *device):
            self.device = device
            return self

    assert pin_memory(Batch(), _acc_device().type).device == (_acc_device().type,)


def test_custom_pin_memory_legacy_no_argument():
    pin_memory = _torch_pin_memory()

    class Batch:
        def pin_memory(self):
            self.called = True
            return self

    assert pin_memory(Batch(), _acc_device().type).called


def test_custom_pin_memory_unrelated_optional_argument():
    pin_memory = _torch_pin_memory()

    class Batch:
        def pin_memory(self, copy=False):
            self.copy = copy
            return self

    assert pin_memory(Batch(), _acc_device().type).copy is False


def test_generic_event_behavior(acc):
    event1 = anydev.Event(enable_timing=False)
    event2 = anydev.Event(enable_timing=False)
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        event1.elapsed_time(event2)
    event1, event2 = anydev.Event(), anydev.Event()  # the default is timing off
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        event1.elapsed_time(event2)
    event1 = anydev.Event(enable_timing=True)
    event2 = anydev.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time"):
        event1.elapsed_time(event2)


def test_empty_host_cache(acc):
    # Before any host allocation, as upstream (issue #197561), and after one.
    acc.empty_host_cache()
    hb = anydev.HostBuffer(4096)
    del hb
    acc.empty_host_cache()


def test_memory_stats(acc):
    # Upstream uses a 256-float tensor: an anydev.Buffer of its 1024 bytes.
    acc.synchronize()
    acc.empty_cache()
    acc.reset_peak_memory_stats()
    acc.reset_accumulated_memory_stats()
    keys = acc.memory_stats().keys()
    for stat in ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for metric in ("peak", "current", "allocated", "freed"):
                assert f"{stat}.{pool}.{metric}" in keys
    prev_allocated = acc.memory_allocated()
    prev_reserved = acc.memory_reserved()
    prev_active = acc.memory_stats()["active_bytes.all.current"]
    buf = anydev.Buffer(1024)
    assert acc.memory_allocated() > prev_allocated
    assert acc.memory_reserved() >= prev_reserved
    assert acc.memory_stats()["active_bytes.all.current"] - prev_active == 1024
    assert acc.max_memory_allocated() >= acc.memory_allocated()
    buf.free()
    acc.synchronize()
    assert acc.memory_allocated() == prev_allocated
    acc.empty_cache()
    assert acc.memory_reserved() <= prev_reserved  # the cached block went back
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == acc.memory_allocated()
    acc.reset_accumulated_memory_stats()
    buf = anydev.Buffer(1024)
    buf.free()
    acc.synchronize()
    assert acc.memory_stats()["active_bytes.all.freed"] == 1024


def test_get_memory_info(acc):
    free, total = acc.get_memory_info()
    assert free >= 0
    assert total >= 0


def test_device_capability_supported_dtypes(acc):
    caps = acc.get_device_capability()
    dtypes = caps["supported_dtypes"]
    assert isinstance(dtypes, set) and dtypes
    # Upstream allocates 16 elements of every dtype on the accelerator and
    # round-trips them through .to(); here 16 elements' bytes go there and back.
    torch = sys.modules.get("torch")
    for name in sorted(dtypes):
        itemsize = getattr(torch, name).itemsize if torch is not None else 8
        data = bytes((i * 7 + 1) % 256 for i in range(16 * itemsize))
        buf = anydev.Buffer(len(data))
        buf.copy_from_host(data)
        assert bytes(buf.copy_to_host()) == data, name
    gc.collect()
