"""anydev.Stream and anydev.Event as torch.Stream and torch.Event: constructors,
attributes, comparisons, bad arguments, the GIL, and CPU streams."""

from __future__ import annotations

import re
import threading
import time

import pytest

import anydev
from conftest import acc_dev, sleep_or_skip

IPC_MSG = "ipc is not supported yet, please open an issue if you need this!"


def built(name: str) -> bool:
    return next(b for b in anydev.backends() if b.name == name).built


# --- Stream ---------------------------------------------------------------------


def test_stream_default_constructor(acc):
    s = anydev.Stream()
    assert isinstance(s, anydev.Stream)
    assert s.device == acc_dev(acc.current_device_index())
    assert s != acc.current_stream()  # a new stream, not the current one
    assert s.priority == 0


def test_stream_of_a_device(multi_device):
    for d in (acc_dev(1), str(acc_dev(1)), 1):
        s = anydev.Stream(d)
        assert (s.device, s.device_index) == (acc_dev(1), 1)
    s = anydev.Stream(device=acc_dev(1), priority=-1)
    assert s.device_index == 1
    greatest = anydev.Stream(device=acc_dev(1), priority=-100).priority
    assert s.priority == max(-1, greatest)


def test_stream_without_index_is_on_current_device(multi_device):
    multi_device.set_device_index(1)
    s = anydev.Stream(anydev.accelerator.current_accelerator())
    assert s.device_index == 1


def test_stream_follows_current_device(multi_device):
    with multi_device.device_index(1):
        assert anydev.Stream().device_index == 1
    assert anydev.Stream().device_index == multi_device.current_device_index()


def test_stream_attributes(acc):
    s = anydev.Stream()
    assert isinstance(s.stream_id, int)
    assert isinstance(s.device_index, int)
    assert isinstance(s.device_type, int)
    assert s.device_index == s.device.index
    for name in ("stream_id", "device_index", "device_type", "device", "priority"):
        with pytest.raises(AttributeError):
            setattr(s, name, 0)


def test_stream_device_type_numbers():
    # The c10::DeviceType numbers: CPU 0, CUDA 1, HIP 6, XPU 12, PrivateUse1 20 (sim).
    assert anydev.Stream("cpu").device_type == 0
    if anydev.accelerator.current_accelerator() is not None:
        expected = {"cuda": 1, "hip": 6, "xpu": 12, "sim": 20}
        assert anydev.Stream().device_type == expected[anydev.Stream().device.type]


def test_stream_repr(acc):
    s = anydev.Stream()
    assert repr(s) == (f"anydev.Stream device_type={s.device.type}, "
                       f"device_index={s.device_index}, stream_id={s.stream_id}")


def test_stream_unpack_equals_original(acc):
    for s in (anydev.Stream(), acc.current_stream(), anydev.Stream(priority=-1)):
        back = anydev.Stream(stream_id=s.stream_id, device_index=s.device_index,
                             device_type=s.device_type)
        assert back == s
        assert hash(back) == hash(s)
        assert back.priority == s.priority
        # positional form, as torch.Stream(stream_id, device_index, device_type)
        assert anydev.Stream(s.stream_id, s.device_index, s.device_type) == s


def test_stream_unpack_bad_device_type(acc):
    s = anydev.Stream()
    with pytest.raises(RuntimeError, match="99"):
        anydev.Stream(stream_id=s.stream_id, device_index=0, device_type=99)
    with pytest.raises(TypeError):
        anydev.Stream(stream_id=s.stream_id, device_index=0, device_type="sim")
    with pytest.raises(TypeError):
        anydev.Stream(stream_id="x", device_index=0, device_type=s.device_type)


def test_stream_unpack_bad_stream_id(acc):
    s = anydev.Stream()
    with pytest.raises(RuntimeError, match="999999999"):
        anydev.Stream(stream_id=999999999, device_index=s.device_index, device_type=s.device_type)


def test_stream_unpack_bad_device_index(acc):
    s = anydev.Stream()
    n = acc.device_count()
    with pytest.raises(RuntimeError, match=str(n + 5)):
        anydev.Stream(stream_id=s.stream_id, device_index=n + 5, device_type=s.device_type)


def test_stream_bad_device(acc):
    n = acc.device_count()
    with pytest.raises(RuntimeError, match=str(n + 3)):
        anydev.Stream(acc_dev(n + 3))
    with pytest.raises(RuntimeError, match=re.escape("Invalid device string: 'sim:x'")):
        anydev.Stream("sim:x")
    with pytest.raises(TypeError, match="1.5"):
        anydev.Stream(1.5)
    with pytest.raises(RuntimeError, match="must not be negative"):
        anydev.Stream(-2)


@pytest.mark.parametrize("name", ["cuda", "hip", "xpu"])
def test_stream_of_unbuilt_backend(name):
    if built(name):
        pytest.skip(f"{name} is built here")
    with pytest.raises(RuntimeError, match="not enabled in this build"):
        anydev.Stream(name)
    with pytest.raises(RuntimeError, match="not enabled in this build"):
        anydev.Event(name)


def test_stream_hash_and_eq(acc):
    s1, s2 = anydev.Stream(), anydev.Stream()
    assert s1 == s1 and s1 != s2
    assert len({s1, s2, s1}) == 2
    assert {s1: 1}[anydev.Stream(stream_id=s1.stream_id, device_index=s1.device_index,
                                  device_type=s1.device_type)] == 1
    assert acc.current_stream() == acc.current_stream()


@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
def test_stream_ordering_raises(acc, op):
    s1, s2 = anydev.Stream(), anydev.Stream()
    with pytest.raises(TypeError):
        eval(f"s1 {op} s2")
    with pytest.raises(TypeError):
        eval(f"s1 {op} 42")


def test_priority_clamping(acc):
    greatest = anydev.Stream(priority=-100).priority
    assert anydev.Stream(priority=-1000).priority == greatest
    assert greatest <= anydev.Stream(priority=-1).priority <= 0
    assert greatest < 0  # the backend has at least one priority above the default
    assert anydev.Stream(priority=greatest).priority == greatest
    assert anydev.Stream(priority=100).priority == 0  # the lowest is the default
    assert anydev.Stream(priority=0).priority == 0
    assert acc.current_stream().priority == 0


def test_priority_is_keyword_only(acc):
    with pytest.raises(TypeError):
        anydev.Stream(acc_dev(0), -1)


@pytest.mark.parametrize("bad", [42, "s", None, 1.5])
def test_wait_stream_non_stream(acc, bad):
    with pytest.raises(TypeError, match=re.escape(repr(bad))):
        anydev.Stream().wait_stream(bad)


@pytest.mark.parametrize("bad", [42, "s", anydev.Stream])
def test_wait_event_and_record_event_non_event(acc, bad):
    s = anydev.Stream()
    with pytest.raises(TypeError, match=re.escape(repr(bad))):
        s.wait_event(bad)
    with pytest.raises(TypeError, match=re.escape(repr(bad))):
        s.record_event(bad)


def test_stream_passed_as_event(acc):
    s = anydev.Stream()
    with pytest.raises(TypeError, match="anydev.Event"):
        s.wait_event(s)
    with pytest.raises(TypeError, match="anydev.Event"):
        s.record_event(s)


def test_record_event_default_has_no_timing(acc):
    e = anydev.Stream().record_event()
    assert isinstance(e, anydev.Event)
    e.synchronize()
    with pytest.raises(ValueError, match=re.escape(
            "Both events must be created with argument 'enable_timing=True'.")):
        e.elapsed_time(e)


# --- Event ----------------------------------------------------------------------


def test_event_constructor(acc):
    e = anydev.Event()
    assert e.device == acc.current_accelerator()  # no index until recorded, as torch.Event
    assert e.event_id == 0
    assert anydev.Event(acc_dev(0)).device == acc_dev(0)
    assert anydev.Event(str(acc_dev(0))).device == acc_dev(0)
    # blocking and interprocess are accepted and have no effect, as in torch.Event
    e = anydev.Event(enable_timing=True, blocking=True, interprocess=True)
    e.record()
    e.synchronize()
    assert e.query()
    with pytest.raises(TypeError):
        anydev.Event(acc_dev(0), True)  # enable_timing is keyword-only


def test_event_bad_device(acc):
    n = acc.device_count()
    with pytest.raises(RuntimeError, match=str(n + 2)):
        anydev.Event(acc_dev(n + 2))
    with pytest.raises(RuntimeError, match=re.escape("'sim:01'")):
        anydev.Event("sim:01")
    with pytest.raises(TypeError, match="1.5"):
        anydev.Event(1.5)


def test_event_repr(acc):
    e = anydev.Event(acc_dev(0), enable_timing=True)
    r = repr(e)
    assert r.startswith("anydev.Event ")
    assert f"device_type={acc.current_accelerator().type}" in r
    assert "device_index=0" in r and "enable_timing=True" in r


def test_event_id_after_record(acc):
    e = anydev.Event()
    e.record()
    assert e.event_id != 0
    assert e.device == acc_dev(acc.current_device_index())
    e.synchronize()


def test_event_record_bad_arguments(acc):
    e = anydev.Event()
    with pytest.raises(TypeError, match="42"):
        e.record(42)
    with pytest.raises(TypeError, match="42"):
        e.wait(42)
    with pytest.raises(TypeError, match="'x'"):
        e.elapsed_time("x")
    with pytest.raises(TypeError):
        e.record(e)


def test_elapsed_time_messages(acc):
    with pytest.raises(ValueError, match="^" + re.escape(
            "Both events must be created with argument 'enable_timing=True'.") + "$"):
        anydev.Event().elapsed_time(anydev.Event())
    with pytest.raises(ValueError, match="^" + re.escape(
            "Both events must be recorded before calculating elapsed time.") + "$"):
        anydev.Event(enable_timing=True).elapsed_time(anydev.Event(enable_timing=True))
    # one timed, one not: the timing error comes first
    timed = anydev.Event(enable_timing=True)
    timed.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        timed.elapsed_time(anydev.Event())
    with pytest.raises(ValueError, match="enable_timing=True"):
        anydev.Event().elapsed_time(timed)


def test_elapsed_time_same_event(acc):
    e = anydev.Event(enable_timing=True)
    e.record()
    e.synchronize()
    assert e.elapsed_time(e) == 0.0


def test_event_of_fixed_device_on_stream_of_other_device(multi_device):
    e = anydev.Event(acc_dev(0))
    with pytest.raises(RuntimeError, match="Event device index 0 does not match recording "
                                           "stream's device index 1"):
        e.record(anydev.Stream(acc_dev(1)))
    with pytest.raises(RuntimeError, match="device index"):
        anydev.Stream(acc_dev(1)).record_event(e)


def test_event_of_other_type(acc):
    with pytest.raises(RuntimeError, match="Event device type cpu does not match recording "
                                           "stream's device type"):
        anydev.Event("cpu").record(anydev.Stream())
    with pytest.raises(RuntimeError, match="device type"):
        anydev.Event().record(anydev.Stream("cpu"))


def test_ipc_not_supported(acc):
    e = anydev.Event()
    with pytest.raises(NotImplementedError, match=re.escape(IPC_MSG)):
        e.ipc_handle()
    with pytest.raises(NotImplementedError, match=re.escape(IPC_MSG)):
        anydev.Event.from_ipc_handle(acc_dev(0), b"")


# --- the GIL ---------------------------------------------------------------------


def _blocking_calls():
    return {
        "Stream.synchronize": lambda s, e: s.synchronize(),
        "Event.synchronize": lambda s, e: e.synchronize(),
        "accelerator.synchronize": lambda s, e: anydev.accelerator.synchronize(),
        "anydev.synchronize": lambda s, e: anydev.synchronize(s.device),
    }


@pytest.mark.parametrize("name", list(_blocking_calls()))
def test_blocking_calls_release_the_gil(acc, name):
    call = _blocking_calls()[name]
    stamps: list[float] = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.002)  # needs the GIL back to run the next iteration

    s = anydev.Stream()
    t = threading.Thread(target=ticker)
    t.start()
    try:
        time.sleep(0.02)
        sleep_or_skip(0.3, s)
        e = s.record_event()
        t0 = time.perf_counter()
        call(s, e)
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert s.query()
    assert t1 - t0 >= 0.2, "the call did not wait for the queued work"
    inside = [x for x in stamps if t0 + 0.05 < x < t1 - 0.05]
    assert len(inside) >= 5, f"{name} held the GIL while blocked ({len(inside)} ticks inside)"


def test_sleep_returns_at_once(acc):
    s = anydev.Stream()
    t0 = time.perf_counter()
    sleep_or_skip(0.3, s)
    assert time.perf_counter() - t0 < 0.15
    assert not s.query()
    s.synchronize()


def test_sleep_bad_arguments(acc):
    with pytest.raises(ValueError, match="-1"):
        anydev.testing.sleep(-1, anydev.Stream())
    with pytest.raises(TypeError, match="42"):
        anydev.testing.sleep(0.01, 42)


# --- CPU streams and events ---------------------------------------------------------


def test_cpu_stream():
    s = anydev.Stream("cpu")
    assert s.device.type == "cpu"
    assert s.device_type == 0
    assert s.query()
    s.synchronize()
    assert s == anydev.Stream("cpu")  # the CPU has a single stream
    anydev.synchronize("cpu")


def test_cpu_has_no_events_as_torch():
    # torch: "cpu backend doesn't support events." (RuntimeError) for every
    # record or wait; an event never recorded queries as done.
    torch = pytest.importorskip("torch")
    s = anydev.Stream("cpu")
    ts = torch.Stream("cpu")
    for ours, theirs in ((s.record_event, ts.record_event),
                         (lambda: anydev.Event("cpu").record(s),
                          lambda: torch.Event("cpu").record(ts)),
                         (lambda: s.wait_stream(s), lambda: ts.wait_stream(ts))):
        with pytest.raises(RuntimeError) as theirs_info:
            theirs()
        with pytest.raises(RuntimeError) as ours_info:
            ours()
        assert str(ours_info.value) == str(theirs_info.value)
    e, te = anydev.Event("cpu"), torch.Event("cpu")
    assert e.query() is te.query() is True
    e.synchronize()
    te.synchronize()


def test_cpu_stream_context_is_noop(acc):
    # As torch.Stream.__enter__: a no-op for a type that is not the accelerator.
    before = acc.current_stream()
    with anydev.Stream("cpu") as s:
        assert s.device.type == "cpu"
        assert acc.current_stream() == before
    assert acc.current_stream() == before


def test_device_module_streams_and_events(acc):
    mod = anydev.get_device_module()
    s = mod.Stream()
    assert isinstance(s, anydev.Stream)
    assert s.device == acc_dev(acc.current_device_index())
    e = mod.Event(enable_timing=True)
    assert isinstance(e, anydev.Event)
    e.record(s)
    e.synchronize()
    assert e.query()


# --- misuse does not crash ----------------------------------------------------------


def test_stream_exit_without_enter(acc):
    before = acc.current_stream()
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        anydev.Stream().__exit__(None, None, None)
    assert acc.current_stream() == before


def test_events_dropped_while_in_flight(acc):
    import gc

    s1, s2 = anydev.Stream(), anydev.Stream()
    start = anydev.Event(enable_timing=True)
    start.record(s1)
    sleep_or_skip(0.1, s1)
    e = s1.record_event()
    s2.wait_event(e)
    del e
    gc.collect()
    after = anydev.Event(enable_timing=True)
    after.record(s2)
    after.synchronize()
    assert s1.query()
    # The wait outlived the Python object: s2 reached `after` only once s1's
    # 100 ms of work were done (timed on the streams, so load cannot blur it).
    assert start.elapsed_time(after) >= 95


def test_thread_ending_inside_stream_context(acc):
    before = acc.current_stream()

    def body():
        s = anydev.Stream()
        s.__enter__()
        sleep_or_skip(0.05, s)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert acc.current_stream() == before
    acc.synchronize()


def test_exit_with_work_in_flight(run_python):
    rc, out, err = run_python("""
        import anydev
        s = anydev.Stream()
        anydev.testing.sleep(0.2, s)
        e = s.record_event()
        print("bye")
    """, env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    assert out.strip() == "bye"
