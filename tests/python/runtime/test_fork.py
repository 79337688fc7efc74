"""A forked child of a process that used the sim device (multiprocessing's
fork context, DataLoader workers, os.fork()) gets PyTorch's error, never a
hang (issue 30): its parent's stream worker threads do not exist in it.
Each case runs in a fresh interpreter with a timeout, since the bug hangs."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork")

SIM = {"ANYDEV_SIM_DEVICES": "2", "ANYDEV_SIM_MEMORY": "64MiB"}

PARENT = """
import os, sys
import anydev
acc = anydev.accelerator
s = anydev.Stream()
buf = anydev.Buffer(4096, stream=s)
buf.fill_(1, stream=s)       # starts the stream's worker thread
s.synchronize()
"""


def test_a_forked_child_gets_torchs_error(run_python):
    rc, out, err = run_python(PARENT + """
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    import signal
    signal.alarm(30)  # a regression hangs here: end the child, not only the test
    os.close(r)
    lines = []
    for name, call in [("Stream.synchronize", s.synchronize),
                       ("Buffer.fill_", lambda: buf.fill_(3, stream=s)),
                       ("Buffer()", lambda: anydev.Buffer(64)),
                       ("synchronize", acc.synchronize),
                       ("Event.record", lambda: anydev.Event().record(s))]:
        try:
            call()
            lines.append(f"{name}: no error")
        except RuntimeError as e:
            lines.append(f"{name}: {e}")
    lines.append(f"device_count: {acc.device_count()}")
    lines.append(f"cpu: {anydev.Buffer(64, 'cpu').nbytes}")
    os.write(w, "\\n".join(lines).encode())
    os._exit(0)
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
_, status = os.waitpid(pid, 0)
print(data.decode())
print("status", status)
buf.fill_(2, stream=s)          # the parent goes on
s.synchronize()
print("parent", set(bytes(buf.copy_to_host())))
""", env=SIM, timeout=60)
    assert rc == 0, err
    lines = out.strip().splitlines()
    expected = ("Cannot re-initialize sim in forked subprocess. To use sim with multiprocessing, "
                "you must use the 'spawn' start method")
    for name in ("Stream.synchronize", "Buffer.fill_", "Buffer()", "synchronize",
                 "Event.record"):
        line = next(x for x in lines if x.startswith(name + ":"))
        assert expected in line, line
    assert "device_count: 2" in lines
    assert "cpu: 64" in lines
    assert "status 0" in lines
    assert lines[-1] == "parent {2}"


def test_a_multiprocessing_fork_worker_raises_instead_of_hanging(run_python):
    rc, out, err = run_python(PARENT + """
import multiprocessing as mp

def work(_):
    try:
        s.synchronize()
        return "no error"
    except RuntimeError as e:
        return type(e).__name__ + ": " + str(e).split(".")[0]

with mp.get_context("fork").Pool(2) as pool:
    print(sorted(set(pool.map(work, range(4)))))
""", env=SIM, timeout=60)
    assert rc == 0, err
    assert out.strip() == "['RuntimeError: Cannot re-initialize sim in forked subprocess']"


def test_a_child_forked_before_any_stream_ran_can_use_sim(run_python):
    # Nothing but host memory and bookkeeping existed at the fork: the child
    # has a copy of it all, so sim works there (as torch, where a fork before
    # CUDA is initialised is fine).
    rc, out, err = run_python("""
import os
import anydev
n = anydev.accelerator.device_count()
pid = os.fork()
if pid == 0:
    s = anydev.Stream()
    b = anydev.Buffer(4096, stream=s)
    b.fill_(5, stream=s)
    s.synchronize()
    os._exit(0 if set(bytes(b.copy_to_host())) == {5} else 3)
_, status = os.waitpid(pid, 0)
print(n, os.waitstatus_to_exitcode(status))
""", env=SIM, timeout=60)
    assert rc == 0, err
    assert out.strip() == "2 0"


def test_a_graph_captured_in_the_parent_does_not_replay_in_the_child(run_python):
    rc, out, err = run_python(PARENT + """
g = acc.Graph()
with s, g:
    buf.fill_(4, stream=s)
pid = os.fork()
if pid == 0:
    import signal
    signal.alarm(30)
    try:
        with s:
            g.replay()
        os._exit(1)
    except RuntimeError as e:
        os._exit(0 if "Cannot re-initialize" in str(e) else 2)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
""", env=SIM, timeout=60)
    assert rc == 0, err
    assert out.strip() == "0"
