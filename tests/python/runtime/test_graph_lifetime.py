"""A captured Graph keeps the memory its work uses (issue 30): a replay into
a Buffer freed after the capture neither crashes the process (the cache
emptied) nor writes into a new buffer (the memory reused). Each case runs in
a fresh interpreter, since the failure it guards against is a SIGSEGV."""

from __future__ import annotations

import pytest

SIM = {"ANYDEV_SIM_DEVICES": "1", "ANYDEV_SIM_MEMORY": "64MiB"}

CAPTURE = """
import anydev
acc = anydev.accelerator
s = anydev.Stream()
g = acc.Graph()
buf = anydev.Buffer(4 << 20, stream=s)
with s:
    g.capture_begin()
    buf.fill_(7, stream=s)
    g.capture_end()
ptr = buf.data_ptr
del buf
"""


def test_replay_after_the_buffer_is_freed_and_the_cache_emptied(run_python):
    rc, out, err = run_python(CAPTURE + """
acc.empty_cache()
with s:
    g.replay()
s.synchronize()
print("survived")
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "survived"


def test_replay_does_not_write_into_a_buffer_that_reuses_the_memory(run_python):
    rc, out, err = run_python(CAPTURE + """
b2 = anydev.Buffer(4 << 20, stream=s)
b2.fill_(1, stream=s)
s.synchronize()
with s:
    g.replay()
s.synchronize()
print(b2.data_ptr != ptr, set(bytes(b2.copy_to_host())))
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "True {1}"


def test_the_memory_is_given_back_when_the_graph_goes(run_python):
    rc, out, err = run_python(CAPTURE + """
acc.empty_cache()
held = acc.memory_reserved()
g.reset()
acc.empty_cache()
print(held >= 4 << 20, acc.memory_reserved(), acc.memory_allocated())
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "True 0 0"


def test_a_capture_allocates_from_the_graphs_pool(run_python):
    # torch.cuda.graph's private pool: memory a capture allocates is not
    # handed to allocations outside graphs once freed; a graph given the
    # pool (pool=) gets it.
    rc, out, err = run_python("""
import anydev
acc = anydev.accelerator
s = anydev.Stream()
g1 = acc.Graph()
with s, g1:
    tmp = anydev.Buffer(1 << 20, stream=s)
    tmp.fill_(3)
inside = tmp.data_ptr
del tmp
with s:
    plain = anydev.Buffer(1 << 20, stream=s)
g2 = acc.Graph(pool=g1.pool())
with s, g2:
    shared = anydev.Buffer(1 << 20, stream=s)
print(plain.data_ptr != inside, shared.data_ptr == inside)
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "True True"


def test_host_memory_of_a_captured_copy_lives_as_long_as_the_graph(run_python):
    # The bytes object a captured copy reads is dropped by the caller; the
    # graph keeps it, so every replay copies the same bytes.
    rc, out, err = run_python("""
import gc
import anydev
acc = anydev.accelerator
s = anydev.Stream()
buf = anydev.Buffer(1 << 16, stream=s)
g = acc.Graph()
with s, g:
    buf.copy_from_host(bytes([9]) * (1 << 16))   # no stream: captured, not run
gc.collect()
junk = [bytes([5]) * (1 << 16) for _ in range(64)]
buf.fill_(0, stream=s)
with s:
    g.replay()
s.synchronize()
print(set(bytes(buf.copy_to_host())))
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "{9}"


@pytest.mark.parametrize("call", ["buf.fill_(1)", "buf.copy_to_host()"])
def test_calls_without_a_stream_inside_a_capture_are_captured(run_python, call):
    # As torch's `with stream, graph: x += 1`: work on the capturing stream is
    # recorded; a call without stream= returns at once instead of failing to
    # synchronise a capturing stream.
    rc, out, err = run_python(f"""
import anydev
s = anydev.Stream()
buf = anydev.Buffer(4096, stream=s)
buf.fill_(2, stream=s)
s.synchronize()
g = anydev.accelerator.Graph()
with s, g:
    {call}
print(set(bytes(buf.copy_to_host())))
""", env=SIM)
    assert rc == 0, err
    assert out.strip() == "{2}"
