"""Device memory: the allocator statistics and calls of anydev.accelerator
(as torch.accelerator's) and of the top namespace, stream-ordered reuse,
out-of-memory, anydev.Buffer (copies, fills, streams, DLPack, bad input) and a
multi-threaded stress test. The C++ twin is tests/cpp/memory_test.cc.

Runs on the conftest's configuration: 4 simulated devices of 256 MiB (the
exact-capacity cases are skipped on other accelerators)."""

from __future__ import annotations

import array
import inspect
import re
import threading
import time
from collections import OrderedDict

import pytest

import anydev
from conftest import acc_dev, sleep_or_skip

np = pytest.importorskip("numpy")
# NumPy 2.1 reads DLPack 1.0 (writable views, copy=); 2.0.2 is the last NumPy
# for Python 3.9.
NUMPY_DLPACK_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"
needs_numpy_dlpack_1 = pytest.mark.skipif(
    not NUMPY_DLPACK_1, reason=f"NumPy {np.__version__} < 2.1 has no DLPack 1.0 (copy=, writable)")

KiB = 1024
MiB = 1024 * KiB

STATS = ("allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes", "allocation",
         "segment", "active", "inactive_split", "inactive_split_bytes")
FIELDS = ("current", "peak", "allocated", "freed")
PYTORCH_KEYS = sorted(
    ["num_alloc_retries", "num_ooms", "max_split_size", "num_sync_all_streams",
     "num_device_alloc", "num_device_free"]
    + [f"{s}.{p}.{f}" for s in STATS for p in ("all", "small_pool", "large_pool") for f in FIELDS]
    + [f"{s}.{f}" for s in ("oversize_allocations", "oversize_segments") for f in FIELDS])


@pytest.fixture
def clean(acc):
    """An accelerator whose devices hold no cached blocks."""
    acc.empty_cache()
    return acc


@pytest.fixture
def sim(clean):
    """The simulated accelerator, for the cases that rely on its capacity."""
    if clean.current_accelerator().type != "sim":
        pytest.skip("needs the simulated accelerator's exact capacity")
    return clean


def stat(key: str, device=None) -> int:
    return anydev.accelerator.memory_stats(device)[key]


# --- statistics -----------------------------------------------------------------


def test_memory_stats_has_pytorchs_keys_sorted(acc):
    stats = acc.memory_stats()
    assert isinstance(stats, OrderedDict)
    assert list(stats) == PYTORCH_KEYS
    assert len(stats) == 122
    assert stats["max_split_size"] == -1  # no limit, as PyTorch without a config
    assert list(anydev.memory_stats()) == PYTORCH_KEYS
    assert list(anydev.memory_stats("cpu")) == PYTORCH_KEYS
    assert all(isinstance(v, int) for v in stats.values())


def test_signatures_are_torch_accelerators(acc):
    for name in ("memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "reset_accumulated_memory_stats",
                 "reset_peak_memory_stats", "get_memory_info"):
        fn = getattr(acc, name)
        (param,) = inspect.signature(fn).parameters.values()
        assert (param.name, param.kind, param.default) == (
            "device_index", inspect.Parameter.POSITIONAL_ONLY, None), name
        assert name in acc.__all__ and name in anydev.__all__
        with pytest.raises(TypeError):
            fn(device_index=0)
    assert inspect.signature(acc.empty_cache).parameters == {}
    assert anydev.acc.memory_stats is acc.memory_stats


def test_memory_stats_as_pytorchs_test(clean):
    """PyTorch's test_accelerator.py::test_memory_stats, with a Buffer for the tensor."""
    acc = clean
    acc.reset_peak_memory_stats()
    acc.reset_accumulated_memory_stats()
    prev_allocated = acc.memory_allocated()
    prev_reserved = acc.memory_reserved()
    assert acc.max_memory_allocated() == prev_allocated
    assert acc.max_memory_reserved() == prev_reserved
    prev_active = stat("active_bytes.all.current")
    tmp = anydev.Buffer(256 * 4)  # torch.randn(256) is 1 KiB
    assert stat("active_bytes.all.current") - prev_active == 1024
    assert acc.memory_allocated() > prev_allocated
    assert acc.memory_reserved() > prev_reserved
    assert acc.max_memory_allocated() == acc.memory_allocated()
    del tmp
    assert stat("active_bytes.all.current") == prev_active
    assert acc.memory_allocated() == prev_allocated
    assert acc.max_memory_allocated() > prev_allocated
    assert stat("active_bytes.all.freed") == 1024
    acc.reset_accumulated_memory_stats()
    assert stat("active_bytes.all.freed") == 0
    assert stat("active_bytes.all.allocated") == 0
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == acc.memory_allocated() == prev_allocated
    assert acc.max_memory_reserved() == acc.memory_reserved()
    acc.empty_cache()
    assert acc.memory_reserved() == prev_reserved


def test_allocated_and_reserved_grow_and_shrink(clean):
    acc = clean
    base = acc.memory_stats()
    buf = anydev.Buffer(1000)
    s = acc.memory_stats()
    assert s["allocated_bytes.all.current"] - base["allocated_bytes.all.current"] == 1024
    assert s["allocated_bytes.small_pool.current"] - base["allocated_bytes.small_pool.current"] == 1024
    assert s["requested_bytes.all.current"] - base["requested_bytes.all.current"] == 1000
    assert s["reserved_bytes.all.current"] - base["reserved_bytes.all.current"] == 2 * MiB
    assert s["allocation.all.current"] - base["allocation.all.current"] == 1
    assert s["segment.all.current"] - base["segment.all.current"] == 1
    assert s["num_device_alloc"] - base["num_device_alloc"] == 1
    big = anydev.Buffer(3 * MiB)  # the large pool: a 20 MiB segment
    s = acc.memory_stats()
    assert s["reserved_bytes.large_pool.current"] - base["reserved_bytes.large_pool.current"] == 20 * MiB
    assert s["allocated_bytes.large_pool.current"] - base["allocated_bytes.large_pool.current"] == 3 * MiB
    del buf, big
    s = acc.memory_stats()
    assert s["allocated_bytes.all.current"] == base["allocated_bytes.all.current"]
    assert s["reserved_bytes.all.current"] - base["reserved_bytes.all.current"] == 22 * MiB
    acc.empty_cache()
    s = acc.memory_stats()
    assert s["reserved_bytes.all.current"] == base["reserved_bytes.all.current"]
    assert s["num_device_free"] - base["num_device_free"] == 2


def test_empty_cache_keeps_live_memory(clean):
    acc = clean
    live = anydev.Buffer(5000)
    live.fill_(3)
    cached = anydev.Buffer(12 * MiB)
    del cached
    acc.empty_cache()
    assert acc.memory_reserved() == 2 * MiB  # only live's segment
    assert bytes(live.copy_to_host()) == b"\x03" * 5000


def test_device_arguments(multi_device):
    acc = multi_device
    acc.empty_cache()
    buf = anydev.Buffer(4096, acc_dev(1))
    assert buf.device == acc_dev(1)
    for d in (1, str(acc_dev(1)), acc_dev(1)):
        assert acc.memory_allocated(d) == 4096
        assert anydev.memory_allocated(d) == 4096
    with acc.device_index(1):
        assert acc.memory_allocated() == 4096
        assert anydev.memory_allocated() == 4096
        assert anydev.memory_allocated(acc.current_accelerator().type) == 4096
        assert anydev.Buffer(16).device == acc_dev(1)
    assert acc.memory_allocated(0) == 0
    anydev.reset_peak_memory_stats(acc_dev(1))
    anydev.reset_accumulated_memory_stats(acc_dev(1))
    assert anydev.memory_stats(acc_dev(1))["allocation.all.allocated"] == 0
    del buf
    anydev.empty_cache(acc_dev(0))  # only device 0
    assert anydev.memory_reserved(acc_dev(1)) == 2 * MiB
    anydev.empty_cache(acc.current_accelerator().type)  # every device of the type
    assert anydev.memory_reserved(acc_dev(1)) == 0
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.memory_allocated("cpu")
    with pytest.raises(RuntimeError, match="out of range"):
        acc.memory_stats(acc.device_count())
    with pytest.raises(RuntimeError, match="out of range"):
        anydev.memory_stats(acc_dev(acc.device_count()))
    with pytest.raises(TypeError):
        anydev.memory_stats(object())
    assert anydev.memory_allocated("cpu") >= 0


def test_get_memory_info(clean):
    acc = clean
    free, total = acc.get_memory_info()
    assert isinstance(free, int) and isinstance(total, int)
    assert 0 <= free <= total
    assert anydev.get_memory_info() == acc.get_memory_info(acc.current_device_index())
    assert anydev.get_memory_info("cpu")[1] > 0
    if acc.current_accelerator().type == "sim":
        assert total == anydev.get_device_properties().total_memory
        buf = anydev.Buffer(MiB)
        free2, _ = acc.get_memory_info()
        assert free - free2 == 2 * MiB  # the cached segment counts as used
        del buf


# --- splitting, coalescing, stream-ordered reuse ------------------------------------


def test_splitting_and_coalescing(clean):
    # The large pool merges a freed block with its free neighbours at once.
    k = 3 * MiB
    tail = 20 * MiB - 3 * k
    a, b, c = anydev.Buffer(k), anydev.Buffer(k), anydev.Buffer(k)
    assert (b.data_ptr - a.data_ptr, c.data_ptr - b.data_ptr) == (k, k)  # one 20 MiB segment
    first = a.data_ptr
    assert stat("segment.all.current") == 1
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (1, tail)
    b.free()
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (2, k + tail)
    a.free()
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (2, 2 * k + tail)
    c.free()
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (0, 0)
    whole = anydev.Buffer(2 * k)  # the coalesced segment's first part
    assert whole.data_ptr == first
    assert stat("segment.all.current") == 1


def test_small_blocks_are_reused_unmerged_and_coalesced_before_growing(clean):
    k = 512 * KiB
    a, b, c = anydev.Buffer(k), anydev.Buffer(k), anydev.Buffer(k)  # and a 512 KiB tail
    first, second = a.data_ptr, b.data_ptr
    b.free()
    a.free()
    c.free()
    # Freed small blocks wait, unmerged, for a request of their size.
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (4, 2 * MiB)
    again = anydev.Buffer(k - 1)
    assert again.data_ptr == second + k  # c, the last one freed
    again.free()
    # A request that no free block fits merges them rather than asking the
    # device for more.
    whole = anydev.Buffer(MiB)
    assert whole.data_ptr == first
    assert stat("segment.all.current") == 1
    assert (stat("inactive_split.all.current"), stat("inactive_split_bytes.all.current")) == (1, MiB)


def test_same_stream_reuses_at_once_others_after_the_work(clean):
    n = 10 * MiB  # an exact segment, no remainder to share
    s, t = anydev.Stream(), anydev.Stream()
    sleep_or_skip(0.3, s)
    b = anydev.Buffer(n, stream=s)
    p = b.data_ptr
    b.free()
    b2 = anydev.Buffer(n, stream=s)
    assert b2.data_ptr == p, "the freeing stream reuses its block at once"
    b2.free()
    c = anydev.Buffer(n, stream=t)
    assert c.data_ptr != p, "another stream waits until the work queued on s has finished"
    assert not s.query()
    s.synchronize()
    d = anydev.Buffer(n, stream=t)
    assert d.data_ptr == p, "then the block is lent to it"


def test_record_stream_holds_the_block(clean):
    n = 10 * MiB
    s, t = anydev.Stream(), anydev.Stream()
    b = anydev.Buffer(n, stream=s)
    p = b.data_ptr
    b.record_stream(t)
    sleep_or_skip(0.3, t)
    active = stat("active.all.current")
    del b
    assert stat("active.all.current") == active, "still in use by t"
    c = anydev.Buffer(n, stream=s)
    assert c.data_ptr != p
    t.synchronize()
    d = anydev.Buffer(n, stream=s)
    assert d.data_ptr == p


def test_buffer_ops_on_another_stream_are_recorded(clean):
    n = 10 * MiB
    t = anydev.Stream()
    b = anydev.Buffer(n)  # for the current (default) stream
    p = b.data_ptr
    sleep_or_skip(0.3, t)
    b.fill_(1, stream=t)
    del b  # the fill is still queued on t
    assert anydev.Buffer(n).data_ptr != p
    t.synchronize()
    assert anydev.Buffer(n).data_ptr == p


# --- out of memory ----------------------------------------------------------------------


def test_out_of_memory_retries_then_raises(sim):
    dev = acc_dev(sim.device_count() - 1)
    total = sim.get_memory_info(dev.index)[1]
    assert total == 256 * MiB, "the conftest's ANYDEV_SIM_MEMORY"
    sim.reset_accumulated_memory_stats(dev.index)
    cached = anydev.Buffer(150 * MiB, dev)
    del cached  # 150 MiB cached
    big = anydev.Buffer(160 * MiB, dev)  # fits only once the cache is released
    s = sim.memory_stats(dev.index)
    assert (s["num_alloc_retries"], s["num_ooms"], s["num_sync_all_streams"]) == (1, 0, 1)
    assert sim.memory_reserved(dev.index) == 160 * MiB
    with pytest.raises(anydev.OutOfMemoryError) as info:
        anydev.Buffer(100 * MiB, dev)
    assert isinstance(info.value, RuntimeError)
    msg = str(info.value)
    assert "SIM out of memory. Tried to allocate 100.00 MiB." in msg
    assert (f"GPU {dev.index} ({dev}) has a total capacity of 256.00 MiB of which 96.00 MiB "
            "is free") in msg
    assert "160.00 MiB is allocated by anydev, and 0 bytes is reserved by anydev" in msg
    assert f"requested {100 * MiB} bytes" in msg
    s = sim.memory_stats(dev.index)
    # Nothing was cached: no second retry, no device wait (docs/memory.md).
    assert (s["num_alloc_retries"], s["num_ooms"], s["num_sync_all_streams"]) == (1, 1, 1)
    assert s["allocation.all.current"] == 1
    del big


def test_absurd_sizes(clean):
    with pytest.raises(ValueError, match="must not be negative"):
        anydev.Buffer(-1)
    with pytest.raises(ValueError, match="too large"):
        anydev.Buffer(2**70)
    with pytest.raises(anydev.OutOfMemoryError, match="Tried to allocate"):
        anydev.Buffer(2**62)
    with pytest.raises(TypeError):
        anydev.Buffer(1.5)
    with pytest.raises(TypeError):
        anydev.Buffer(True)
    with pytest.raises(RuntimeError, match="out of range"):
        anydev.Buffer(10, acc_dev(clean.device_count()))
    with pytest.raises(TypeError, match="stream"):
        anydev.Buffer(10, stream=42)
    empty = anydev.Buffer(0)
    assert (empty.nbytes, empty.data_ptr) == (0, 0)
    assert empty.copy_to_host() == bytearray()


# --- Buffer -------------------------------------------------------------------------------


def test_buffer_properties(acc):
    b = anydev.Buffer(100)
    assert b.nbytes == 100
    assert b.device == acc_dev(acc.current_device_index())
    assert b.data_ptr != 0 and not b.is_freed
    assert re.fullmatch(r"anydev\.Buffer\(nbytes=100, device='\w+:\d+', data_ptr=0x[0-9a-f]+\)",
                        repr(b))
    cpu = anydev.Buffer(10, "cpu")
    assert cpu.device == anydev.device("cpu", 0)
    assert cpu.__dlpack_device__() == (1, 0)
    b.free()
    assert b.is_freed and b.data_ptr == 0 and "freed" in repr(b)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "array", "numpy"])
def test_copies_from_and_to_host_objects(acc, kind):
    data = bytes(range(256)) * 4
    src = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
           "array": array.array("i", data), "numpy": np.frombuffer(data, dtype=np.uint8)}[kind]
    b = anydev.Buffer(len(data))
    b.copy_from_host(src)
    assert bytes(b.copy_to_host()) == data
    out = {"bytes": bytearray(len(data)), "bytearray": bytearray(len(data)),
           "memoryview": memoryview(bytearray(len(data))), "array": array.array("i", bytes(len(data))),
           "numpy": np.zeros(len(data), dtype=np.uint8)}[kind]
    assert b.copy_to_host(out) is out
    assert bytes(out) == data


def test_partial_copies_with_offsets(acc):
    b = anydev.Buffer(10)
    b.fill_(0)
    b.copy_from_host(b"\x01\x02", offset=8)
    assert bytes(b.copy_to_host()) == b"\0" * 8 + b"\x01\x02"
    assert bytes(b.copy_to_host(offset=7)) == b"\0\x01\x02"
    view = memoryview(bytearray(4))
    b.copy_to_host(view[1:3], offset=8)
    assert bytes(view) == b"\0\x01\x02\0"


def test_fill_and_device_copies(multi_device):
    a = anydev.Buffer(3000, acc_dev(0))
    a.copy_from_host(bytes(i % 251 for i in range(3000)))
    same = anydev.Buffer(3000, acc_dev(0))
    assert same.copy_(a) is same
    assert bytes(same.copy_to_host()) == bytes(a.copy_to_host())
    other = anydev.Buffer(3000, acc_dev(1))  # across devices
    other.copy_(a)
    assert bytes(other.copy_to_host()) == bytes(a.copy_to_host())
    assert other.fill_(0xee) is other
    assert bytes(other.copy_to_host()) == b"\xee" * 3000
    bigger = anydev.Buffer(4000, acc_dev(1))
    bigger.fill_(1).copy_(a)  # a smaller source fills the start
    out = bytes(bigger.copy_to_host())
    assert out[:3000] == bytes(a.copy_to_host()) and out[3000:] == b"\x01" * 1000


def test_async_copies_on_a_stream(acc):
    s = anydev.Stream()
    b = anydev.Buffer(1 << 16)
    sleep_or_skip(0.3, s)
    b.copy_from_host(bytes([7]) * (1 << 16), stream=s)  # the bytes object is dropped at once
    b.fill_(9, stream=s)
    dst = bytearray(1 << 16)
    assert b.copy_to_host(dst, stream=s) is dst
    fresh = b.copy_to_host(stream=s, offset=(1 << 16) - 4)
    assert not s.query(), "asynchronous calls return before the work runs"
    assert dst[0] == 0
    with pytest.raises(BufferError):
        dst.append(1)  # the pending copy holds the bytearray's export
    s.synchronize()
    assert dst == bytearray([9]) * (1 << 16)
    assert fresh == bytearray([9]) * 4
    b.fill_(1)  # any Buffer call lets go of finished exports
    dst.append(1)


def test_async_copy_keeps_the_source_alive(acc):
    s = anydev.Stream()
    b = anydev.Buffer(4 * MiB)
    sleep_or_skip(0.1, s)
    b.copy_from_host(np.full(4 * MiB, 5, dtype=np.uint8), stream=s)
    np.zeros(4 * MiB, dtype=np.uint8)  # reuses the freed memory if it was not kept
    s.synchronize()
    assert np.all(np.from_dlpack(b) == 5) if acc.current_accelerator().type == "sim" else True
    assert bytes(b.copy_to_host(offset=4 * MiB - 3)) == b"\x05" * 3


def test_bad_buffer_arguments(multi_device):
    b = anydev.Buffer(100, acc_dev(0))
    with pytest.raises(ValueError, match="overrun the buffer of 100"):
        b.copy_from_host(bytes(101))
    with pytest.raises(ValueError, match="offset 95"):
        b.copy_from_host(bytes(10), offset=95)
    with pytest.raises(ValueError, match="overrun"):
        b.copy_to_host(bytearray(101))
    with pytest.raises(ValueError, match="past the end"):
        b.copy_to_host(offset=101)
    with pytest.raises(ValueError, match="must not be negative"):
        b.copy_to_host(offset=-1)
    with pytest.raises(ValueError, match="overruns the destination of 100"):
        b.copy_(anydev.Buffer(101, acc_dev(0)))
    with pytest.raises(TypeError, match="buffer protocol"):
        b.copy_from_host(123)
    with pytest.raises(TypeError, match="writable"):
        b.copy_to_host(b"x" * 100)
    with pytest.raises(TypeError, match="C-contiguous"):
        b.copy_from_host(memoryview(bytes(200))[::2])
    with pytest.raises(TypeError, match="anydev.Buffer"):
        b.copy_(b"abc")
    with pytest.raises(ValueError, match="0..255"):
        b.fill_(256)
    with pytest.raises(TypeError):
        b.fill_("a")
    with pytest.raises(TypeError):
        b.record_stream(None)
    # A buffer of one device on another device's stream.
    s1 = anydev.Stream(acc_dev(1))
    for call in (lambda: b.fill_(1, stream=s1), lambda: b.copy_from_host(b"a", stream=s1),
                 lambda: b.copy_to_host(stream=s1), lambda: anydev.Buffer(8, acc_dev(0), stream=s1)):
        with pytest.raises(RuntimeError, match=f"is not a stream of {acc_dev(0)}"):
            call()
    with pytest.raises(RuntimeError, match="different types"):
        b.copy_(anydev.Buffer(10, "cpu"))


def test_freed_buffers(acc):
    b = anydev.Buffer(64)
    b.free()
    b.free()  # a no-op
    for call in (b.copy_to_host, lambda: b.fill_(1), lambda: b.copy_from_host(b"x"),
                 lambda: b.record_stream(acc.current_stream()),
                 lambda: anydev.Buffer(64).copy_(b)):
        with pytest.raises(RuntimeError, match="has been freed"):
            call()
    with pytest.raises(BufferError, match="freed"):
        b.__dlpack__()
    with pytest.raises(BufferError, match="freed"):
        np.from_dlpack(b)
    assert b.nbytes == 64 and b.__dlpack_device__() is not None


# --- DLPack -----------------------------------------------------------------------------


def capsule_name(capsule) -> str:
    return re.search(r'capsule object "(\w+)"', repr(capsule)).group(1)


def test_dlpack_device_codes(acc):
    codes = {"cpu": 1, "cuda": 2, "hip": 10, "xpu": 14, "sim": 1}
    b = anydev.Buffer(8)
    kind = acc.current_accelerator().type
    assert b.__dlpack_device__() == (codes[kind], b.device.index if kind in ("cuda", "hip", "xpu") else 0)
    assert not hasattr(b, "__cuda_array_interface__") or kind == "cuda"
    if kind != "cuda":
        with pytest.raises(AttributeError, match="only CUDA buffers"):
            b.__cuda_array_interface__  # noqa: B018


def test_dlpack_capsule_versions(acc):
    b = anydev.Buffer(8)
    assert capsule_name(b.__dlpack__()) == "dltensor"
    assert capsule_name(b.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(b.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(b.__dlpack__(stream=None, max_version=(1, 2), dl_device=None,
                                     copy=None)) == "dltensor_versioned"
    with pytest.raises(TypeError):
        b.__dlpack__(max_version=1)
    with pytest.raises(TypeError):
        b.__dlpack__(copy="yes")
    with pytest.raises(BufferError, match="cannot export"):
        b.__dlpack__(dl_device=(7, 0))


@needs_numpy_dlpack_1
@pytest.mark.parametrize("device", ["acc", "cpu"])
def test_numpy_from_dlpack_shares_the_bytes(acc, device):
    if device == "acc" and acc.current_accelerator().type != "sim":
        pytest.skip("NumPy reads only host memory: sim and cpu buffers")
    b = anydev.Buffer(1000, None if device == "acc" else "cpu")
    b.copy_from_host(bytes(i % 256 for i in range(1000)))
    a = np.from_dlpack(b)
    assert (a.dtype, a.shape) == (np.uint8, (1000,))
    assert bytes(a) == bytes(i % 256 for i in range(1000))
    b.fill_(3)
    assert a[999] == 3, "the array is a view of the buffer"
    a[0] = 42
    assert b.copy_to_host()[0] == 42
    allocated = anydev.memory_allocated(b.device)
    b.free()
    assert a[0] == 42, "the array keeps the memory alive"
    assert anydev.memory_allocated(b.device) == allocated
    del a
    assert anydev.memory_allocated(b.device) == allocated - 1024


def test_numpy_from_dlpack_waits_for_queued_work(acc):
    if acc.current_accelerator().type != "sim":
        pytest.skip("NumPy reads only host memory")
    s = anydev.Stream()
    b = anydev.Buffer(4096)
    b.fill_(0)
    sleep_or_skip(0.1, s)
    b.fill_(9, stream=s)
    assert np.all(np.from_dlpack(b) == 9)


@needs_numpy_dlpack_1
def test_dlpack_copies(acc):
    b = anydev.Buffer(16)
    b.fill_(4)
    c = np.from_dlpack(b, copy=True)
    c[0] = 1
    assert b.copy_to_host()[0] == 4, "a copy does not share memory"
    host = np.from_dlpack(b, device="cpu")  # to the CPU: a view for sim, a copy elsewhere
    assert host[0] == 4
    if acc.current_accelerator().type != "sim":
        with pytest.raises(BufferError, match="only by a copy"):
            b.__dlpack__(dl_device=(1, 0), copy=False)
    assert np.from_dlpack(anydev.Buffer(0)).shape == (0,)


# --- threads ---------------------------------------------------------------------------------


def test_blocking_calls_release_the_gil(acc):
    b = anydev.Buffer(64)
    sleep_or_skip(0.2, acc.current_stream())  # the default stream, which the thread uses too
    done = threading.Event()

    def worker():
        b.fill_(1)  # synchronous: waits ~0.2 s behind the sleep
        done.set()

    th = threading.Thread(target=worker)
    th.start()
    spins = 0
    while not done.is_set():
        spins += 1
        time.sleep(0.001)
    th.join()
    assert spins > 10, "the main thread could not run while the copy waited"


def test_stress_threads_and_streams(clean):
    acc = clean
    dev = acc_dev(acc.current_device_index())
    acc.reset_accumulated_memory_stats()
    base = acc.memory_stats()
    errors: list[str] = []
    counts = [0] * 6

    def worker(k: int) -> None:
        s = anydev.Stream(dev)
        live = []
        try:
            for i in range(60):
                n = (1, 700, 4096, 100_000, 600_000, 1_300_000)[(i * 7 + k) % 6] + k
                b = anydev.Buffer(n, dev, stream=s if i % 2 else None)
                counts[k] += 1
                value = (i * 31 + k) % 256
                b.fill_(value, stream=s)
                live.append((b, value))
                if len(live) > 3:
                    old, v = live.pop(0)
                    s.synchronize()
                    if old.copy_to_host() != bytearray([v]) * old.nbytes:
                        errors.append(f"thread {k}: wrong bytes")
            s.synchronize()
            for b, v in live:
                if b.copy_to_host() != bytearray([v]) * b.nbytes:
                    errors.append(f"thread {k}: wrong bytes")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {k}: {e!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    # Blocks freed with work recorded on a stream stay active until the stream
    # has reached the marker their free queued; wait for that, then count.
    acc.synchronize(dev.index)
    s = acc.memory_stats()
    for key in ("allocation.all.current", "allocated_bytes.all.current", "active.all.current",
                "requested_bytes.all.current", "active_bytes.all.current"):
        assert s[key] == base[key], key
    assert s["allocation.all.allocated"] == s["allocation.all.freed"] == sum(counts)
    acc.empty_cache()
    s = acc.memory_stats()
    assert s["reserved_bytes.all.current"] == 0
    assert s["inactive_split.all.current"] == 0
