"""Conformance of the current accelerator with PyTorch's device-generic API.

Written only against ``anydev.accelerator``, ``anydev.Stream``,
``anydev.Event`` and ``anydev.device``, so it runs unchanged on whatever
accelerator the process resolves: the simulated one in CI (with 4 devices by
default, and with 1 through test_single_device.py), a GPU where there is one.
The only helper beyond that API is ``anydev.testing.sleep``, which queues busy
work on a stream; a test that needs it is skipped on a backend that cannot.

The first part mirrors PyTorch's test/test_accelerator.py (the tests that
need no tensors); the rest covers what legacy code relies on: per-thread
state, ordering across streams and devices, and event timing.

Asynchronous checks are deterministic: "not done yet" is only asserted right
after queueing LONG seconds of work, far above scheduling noise.
"""

from __future__ import annotations

import operator
import re
import threading

import pytest

import anydev
from conftest import sleep_or_skip

LONG = 0.2  # seconds of queued work before asserting that it is still in flight


def dev(acc, index: int) -> anydev.device:
    return anydev.device(acc.current_accelerator().type, index)


def run_in_thread(fn):
    """Runs ``fn`` in a new thread; returns its result or re-raises its error."""
    out: dict = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised below
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "the thread did not finish"
    if "error" in out:
        raise out["error"]
    return out["value"]


# --- PyTorch's test/test_accelerator.py ---------------------------------------


def test_current_accelerator(acc):
    assert acc.is_available()
    assert acc.device_count() >= 1
    current = acc.current_accelerator()
    assert isinstance(current, anydev.device)
    assert current.type in ("cuda", "hip", "xpu", "sim")
    assert current.index is None
    assert acc.current_accelerator(check_available=True) == current
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

    s1 = anydev.Stream(target)
    assert s1.device_index == target
    acc.set_stream(s1)
    assert acc.current_device_index() == target
    assert acc.current_stream() == s1
    acc.synchronize(orig)
    assert acc.current_device_index() == target


def test_set_device_index_accepts_int_device_and_string(multi_device):
    acc = multi_device
    last = acc.device_count() - 1
    acc.set_device_index(dev(acc, last))
    assert acc.current_device_index() == last
    acc.set_device_index(str(dev(acc, 0)))
    assert acc.current_device_index() == 0
    acc.set_device_index(last)
    assert acc.current_device_index() == last


def test_generic_stream_behavior(acc):
    s1 = anydev.Stream()
    s2 = anydev.Stream()
    assert s1 != s2
    assert s1.device == s2.device == dev(acc, acc.current_device_index())
    acc.set_stream(s1)
    assert acc.current_stream() == s1
    event = anydev.Event()
    acc.set_stream(s2)
    assert acc.current_stream() == s2
    event.record(s2)
    event.synchronize()
    assert event.query()


def test_current_stream_query(acc):
    s = acc.current_stream()
    assert acc.current_stream(s.device) == s
    assert acc.current_stream(s.device.index) == s
    assert acc.current_stream(str(s.device)) == s
    assert acc.current_stream(None) == s
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.current_stream(anydev.device("cpu"))
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.current_stream("cpu")


def test_stream_compare_with_non_stream(acc):
    s1 = anydev.Stream()
    for other in (42, "hello", 3.14, None, object()):
        assert not (s1 == other)
        assert s1 != other
    assert s1 in [1, "a", s1]
    assert s1 not in [1, "a"]
    for op in (operator.lt, operator.le, operator.gt, operator.ge):
        with pytest.raises(TypeError):
            op(s1, 42)
        with pytest.raises(TypeError):
            op(s1, s1)
    s2 = anydev.Stream(stream_id=s1.stream_id, device_index=s1.device_index,
                       device_type=s1.device_type)
    assert s2 == s1
    assert hash(s2) == hash(s1)


def test_device_context_manager(acc):
    last = acc.device_count() - 1
    acc.set_device_index(last)
    with acc.device_index(None):
        assert acc.current_device_index() == last
    assert acc.current_device_index() == last
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert acc.current_device_index() == last


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
        assert isinstance(s, anydev.Stream)
        assert s != prev
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
    src_prev = acc.current_stream()
    dst_prev = acc.current_stream(dst)
    with anydev.Stream(dev(acc, dst)) as dst_stream:
        assert acc.current_device_index() == dst
        assert acc.current_stream() == dst_stream
        assert acc.current_stream(dst) == dst_stream
        assert acc.current_stream(src) == src_prev
    assert acc.current_device_index() == src
    assert acc.current_stream() == src_prev
    assert acc.current_stream(dst) == dst_prev


def test_generic_event_behavior(acc):
    timing_msg = re.escape("Both events must be created with argument 'enable_timing=True'.")
    recorded_msg = re.escape("Both events must be recorded before calculating elapsed time.")
    with pytest.raises(ValueError, match=timing_msg):
        anydev.Event(enable_timing=False).elapsed_time(anydev.Event(enable_timing=False))
    # The default is enable_timing=False.
    with pytest.raises(ValueError, match=timing_msg):
        anydev.Event().elapsed_time(anydev.Event())
    with pytest.raises(ValueError, match=timing_msg):
        anydev.Event(enable_timing=True).elapsed_time(anydev.Event())
    start, end = anydev.Event(enable_timing=True), anydev.Event(enable_timing=True)
    with pytest.raises(ValueError, match=recorded_msg):
        start.elapsed_time(end)
    start.record()
    with pytest.raises(ValueError, match=recorded_msg):
        start.elapsed_time(end)
    with pytest.raises(ValueError, match=recorded_msg):
        end.elapsed_time(start)


# --- current device and stream belong to the calling thread -------------------


def test_device_index_is_per_thread(multi_device):
    acc = multi_device
    last = acc.device_count() - 1
    acc.set_device_index(last)

    def other_thread():
        seen = acc.current_device_index()  # a new thread starts on device 0
        acc.set_device_index(1)
        with acc.device_index(0):
            inside = acc.current_device_index()
        return seen, inside, acc.current_device_index()

    assert run_in_thread(other_thread) == (0, 0, 1)
    assert acc.current_device_index() == last


def test_device_index_context_is_per_thread(multi_device):
    acc = multi_device
    barrier = threading.Barrier(2, timeout=10)
    acc.set_device_index(0)

    def other_thread():
        with acc.device_index(1):
            barrier.wait()  # both threads are inside their blocks
            inside = acc.current_device_index()
            barrier.wait()
        return inside, acc.current_device_index()

    result: dict = {}
    t = threading.Thread(target=lambda: result.update(r=other_thread()))
    t.start()
    with acc.device_index(0):
        barrier.wait()
        assert acc.current_device_index() == 0
        barrier.wait()
    t.join(timeout=10)
    assert result["r"] == (1, 0)
    assert acc.current_device_index() == 0


def test_current_stream_is_per_thread(acc):
    default = acc.current_stream()
    mine, theirs = anydev.Stream(), anydev.Stream()
    acc.set_stream(mine)

    def other_thread():
        seen = acc.current_stream()  # a new thread starts on the default stream
        acc.set_stream(theirs)
        return seen, acc.current_stream()

    assert run_in_thread(other_thread) == (default, theirs)
    assert acc.current_stream() == mine


def test_stream_context_is_per_thread(acc):
    # The same stream object entered by two threads at once, each restoring its own.
    shared = anydev.Stream()
    barrier = threading.Barrier(2, timeout=10)
    main_prev = anydev.Stream()
    acc.set_stream(main_prev)

    def other_thread():
        before = acc.current_stream()
        with shared:
            barrier.wait()
            inside = acc.current_stream()
            barrier.wait()
        return before, inside, acc.current_stream()

    result: dict = {}
    t = threading.Thread(target=lambda: result.update(r=other_thread()))
    t.start()
    with shared:
        barrier.wait()
        assert acc.current_stream() == shared
        barrier.wait()
    t.join(timeout=10)
    before, inside, after = result["r"]
    assert inside == shared
    assert after == before != main_prev
    assert acc.current_stream() == main_prev


# --- device_index details -------------------------------------------------------


def test_device_index_none_does_not_restore(multi_device):
    # As torch.accelerator.device_index(None): no switch on entry, none on exit.
    acc = multi_device
    acc.set_device_index(0)
    with acc.device_index(None):
        acc.set_device_index(1)
    assert acc.current_device_index() == 1


def test_device_index_nested_same_and_reused(multi_device):
    acc = multi_device
    acc.set_device_index(0)
    with acc.device_index(1):
        with acc.device_index(1):
            assert acc.current_device_index() == 1
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    ctx = acc.device_index(1)
    with ctx:
        acc.set_device_index(0)
        with ctx:  # re-entered: saves 0, switches to 1
            assert acc.current_device_index() == 1
        assert acc.current_device_index() == 0
    assert acc.current_device_index() == 0
    with ctx:  # usable again after exit
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0


def test_device_index_restores_on_exception(multi_device):
    acc = multi_device
    acc.set_device_index(0)
    with pytest.raises(KeyError):
        with acc.device_index(1):
            raise KeyError("boom")
    assert acc.current_device_index() == 0


def test_device_index_takes_only_an_int(multi_device):
    # As torch.accelerator.device_index, whose __enter__ hands its argument to
    # _accelerator_exchangeDevice(int): a device or a string is a TypeError,
    # and nothing switches.
    acc = multi_device
    acc.set_device_index(0)
    for bad in (dev(acc, 1), str(dev(acc, 1))):
        with pytest.raises(TypeError, match="expected a device index"):
            with acc.device_index(bad):
                pass
        assert acc.current_device_index() == 0


def test_set_device_index_negative_is_noop(acc):
    last = acc.device_count() - 1
    acc.set_device_index(last)
    acc.set_device_index(-1)
    assert acc.current_device_index() == last


@pytest.mark.parametrize("past_end", [0, 1, 99])
def test_out_of_range_index(acc, past_end):
    # RuntimeError naming the index, and nothing changes.
    bad = acc.device_count() + past_end
    before = acc.current_device_index()
    with pytest.raises(RuntimeError, match=str(bad)):
        acc.set_device_index(bad)
    with pytest.raises(RuntimeError, match=str(bad)):
        acc.current_stream(bad)
    with pytest.raises(RuntimeError, match=str(bad)):
        acc.synchronize(bad)
    with pytest.raises(RuntimeError, match=str(bad)):
        anydev.Stream(dev(acc, bad))
    with pytest.raises(RuntimeError, match=str(bad)):
        with acc.device_index(bad):
            pass
    assert acc.current_device_index() == before


# --- streams ---------------------------------------------------------------------


def test_stream_identity(acc):
    s = anydev.Stream()
    assert s == s and not (s != s)
    assert acc.current_stream() == acc.current_stream()
    assert hash(acc.current_stream()) == hash(acc.current_stream())
    assert len({anydev.Stream() for _ in range(4)} | {s}) == 5  # each new stream differs
    with s:
        assert acc.current_stream() == s
        assert acc.current_stream().stream_id == s.stream_id


def test_stream_query_and_synchronize(acc):
    s = anydev.Stream()
    assert s.query()  # nothing queued
    sleep_or_skip(LONG, s)
    assert not s.query()
    s.synchronize()
    assert s.query()


def test_work_on_a_stream_runs_in_order(acc):
    s = anydev.Stream()
    sleep_or_skip(LONG, s)
    e1 = s.record_event()
    sleep_or_skip(0.01, s)
    e2 = s.record_event()
    assert not e1.query() and not e2.query()
    e2.synchronize()
    assert e1.query()  # recorded before e2 on the same stream
    assert s.query()


def test_streams_are_independent(acc):
    busy, idle = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, busy)
    assert idle.query()
    e = idle.record_event()
    e.synchronize()  # does not wait for `busy`
    assert not busy.query()


def test_wait_event_across_streams(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, s1)
    done1 = s1.record_event()
    s2.wait_event(done1)
    after = s2.record_event()
    assert not after.query()  # must not complete before s1's work
    after.synchronize()
    assert done1.query()
    assert s1.query()


def test_event_wait_makes_stream_wait(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, s1)
    done1 = s1.record_event()
    done1.wait(s2)
    after = s2.record_event()
    assert not after.query()
    after.synchronize()
    assert s1.query()


def test_event_wait_defaults_to_current_stream(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, s1)
    done1 = s1.record_event()
    with s2:
        done1.wait()
    after = s2.record_event()
    assert not after.query()
    after.synchronize()
    assert s1.query()


def test_wait_stream_across_streams(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, s1)
    s2.wait_stream(s1)
    after = s2.record_event()
    assert not after.query()
    after.synchronize()
    assert s1.query()


def test_wait_across_devices(multi_device):
    acc = multi_device
    s0, s1 = anydev.Stream(dev(acc, 0)), anydev.Stream(dev(acc, 1))
    sleep_or_skip(LONG, s0)
    s1.wait_stream(s0)
    after = s1.record_event()
    assert after.device == dev(acc, 1)
    assert not after.query()
    after.synchronize()
    assert s0.query()

    sleep_or_skip(LONG, s1)
    done1 = s1.record_event()
    s0.wait_event(done1)
    after0 = s0.record_event()
    assert not after0.query()
    after0.synchronize()
    assert s1.query()


def test_accelerator_synchronize_waits_for_all_streams(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    sleep_or_skip(LONG, s1)
    sleep_or_skip(LONG, s2)
    assert not s1.query() and not s2.query()
    acc.synchronize()
    assert s1.query() and s2.query()


def test_synchronize_a_given_device(multi_device):
    acc = multi_device
    acc.set_device_index(0)
    s1 = anydev.Stream(dev(acc, 1))
    sleep_or_skip(LONG, s1)
    assert not s1.query()
    acc.synchronize(1)
    assert s1.query()
    assert acc.current_device_index() == 0

    sleep_or_skip(LONG, s1)
    anydev.synchronize(dev(acc, 1))  # the device-generic call
    assert s1.query()


def test_default_stream_work_is_seen_by_synchronize(acc):
    s = acc.current_stream()
    sleep_or_skip(LONG, s)
    assert not s.query()
    acc.synchronize()
    assert s.query()


# --- events ----------------------------------------------------------------------


def test_event_query_before_record(acc):
    e = anydev.Event()
    assert e.query()
    e.synchronize()  # returns at once
    assert anydev.Event(enable_timing=True).query()


def test_event_defaults(acc):
    e = anydev.Event()
    assert e.device.type == acc.current_accelerator().type
    assert e.event_id == 0  # nothing recorded yet, as torch.Event


def test_record_event_returns_event(acc):
    s = anydev.Stream()
    e1, e2 = s.record_event(), s.record_event()
    assert isinstance(e1, anydev.Event) and isinstance(e2, anydev.Event)
    assert e1 is not e2
    e1.synchronize()
    assert e1.query()
    mine = anydev.Event(enable_timing=True)
    assert s.record_event(mine) is mine
    # record_event() makes an event without timing, as torch.Stream.record_event.
    with pytest.raises(ValueError, match="enable_timing=True"):
        mine.elapsed_time(e1)


def test_event_record_defaults_to_current_stream(acc):
    s = anydev.Stream()
    sleep_or_skip(LONG, s)
    e = anydev.Event()
    with s:
        e.record()
    assert not e.query()
    e.synchronize()
    assert e.query()
    assert s.query()


def test_event_record_and_query(acc):
    s = anydev.Stream()
    sleep_or_skip(LONG, s)
    e = anydev.Event()
    e.record(s)
    assert e.device == dev(acc, s.device_index)
    assert not e.query()
    e.synchronize()
    assert e.query()
    # re-recording moves the event to the stream's newest work
    sleep_or_skip(LONG, s)
    e.record(s)
    assert not e.query()
    s.synchronize()
    assert e.query()


def test_event_timing(acc):
    s = anydev.Stream()
    start, end = anydev.Event(enable_timing=True), anydev.Event(enable_timing=True)
    start.record(s)
    sleep_or_skip(0.05, s)
    end.record(s)
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float)
    assert 40.0 <= ms <= 1000.0
    assert end.elapsed_time(start) == pytest.approx(-ms, abs=1e-3)


def test_elapsed_time_before_completion_raises(acc):
    s = anydev.Stream()
    start, end = anydev.Event(enable_timing=True), anydev.Event(enable_timing=True)
    start.record(s)
    sleep_or_skip(LONG, s)
    end.record(s)
    with pytest.raises(RuntimeError, match="Both events must be completed"):
        start.elapsed_time(end)
    end.synchronize()
    assert start.elapsed_time(end) >= 0.8 * LONG * 1000


def test_event_of_fixed_device_recorded_on_other_device(multi_device):
    acc = multi_device
    e = anydev.Event(dev(acc, 0))
    with pytest.raises(RuntimeError, match="device index"):
        e.record(anydev.Stream(dev(acc, 1)))
    e.record(anydev.Stream(dev(acc, 0)))
    e.synchronize()


def test_event_takes_device_of_first_record(multi_device):
    acc = multi_device
    e = anydev.Event()
    assert e.device.index is None
    e.record(anydev.Stream(dev(acc, 1)))
    assert e.device == dev(acc, 1)
    with pytest.raises(RuntimeError, match="device index"):
        e.record(anydev.Stream(dev(acc, 0)))


def test_cpu_event_on_accelerator_stream(acc):
    with pytest.raises(RuntimeError, match="device type"):
        anydev.Event("cpu").record(acc.current_stream())


# --- streams and events of another device ---------------------------------------


def test_set_stream_of_other_device_switches_device(multi_device):
    acc = multi_device
    acc.set_device_index(0)
    s = anydev.Stream(dev(acc, 1))
    acc.set_stream(s)
    assert acc.current_device_index() == 1
    assert acc.current_stream() == s
    assert acc.current_stream(0) != s


def test_stream_properties(acc):
    index = acc.current_device_index()
    s = anydev.Stream()
    assert s.device_index == index
    assert s.device == dev(acc, index)
    assert isinstance(s.stream_id, int)
    assert isinstance(s.device_type, int)
    assert isinstance(s.priority, int)
