"""The caching allocator on small and full sim devices (issue 30): a request
that fits the device gets memory however small the device, and an
out-of-memory error that no cache release can avoid comes at once, not after
the work running on other streams."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("memory", ["1MiB", "4KiB", "1536KiB"])
def test_a_device_smaller_than_a_segment_serves_what_fits(run_python, memory):
    rc, out, err = run_python("""
import anydev
acc = anydev.accelerator
total = acc.get_memory_info()[1]
a = anydev.Buffer(512)
b = anydev.Buffer(total - 512)          # the rest of the device, exactly
a.fill_(1); b.fill_(2)
try:
    anydev.Buffer(512)
except anydev.OutOfMemoryError:
    full = True
else:
    full = False
print(acc.memory_reserved() == total, full, set(bytes(a.copy_to_host())))
""", env={"ANYDEV_SIM_DEVICES": "1", "ANYDEV_SIM_MEMORY": memory})
    assert rc == 0, err
    assert out.strip() == "True True {1}"


def test_out_of_memory_does_not_wait_for_other_streams(run_python):
    rc, out, err = run_python("""
import time
import anydev
acc = anydev.accelerator
keep = anydev.Buffer(60 << 20)
busy = anydev.Stream()
anydev.testing.sleep(3, stream=busy)
t = time.monotonic()
try:
    anydev.Buffer(100 << 20)
except anydev.OutOfMemoryError:
    pass
took = time.monotonic() - t
stats = acc.memory_stats()
print(took < 1.5, busy.query(), stats["num_sync_all_streams"], stats["num_ooms"])
""", env={"ANYDEV_SIM_DEVICES": "1", "ANYDEV_SIM_MEMORY": "128MiB"})
    assert rc == 0, err
    assert out.strip() == "True False 0 1"


def test_out_of_memory_still_releases_a_cache_that_can_make_room(run_python):
    rc, out, err = run_python("""
import anydev
acc = anydev.accelerator
b = anydev.Buffer(40 << 20)
del b                                   # 40 MiB cached
c = anydev.Buffer(100 << 20)            # fits only once the cache is released
stats = acc.memory_stats()
print(stats["num_alloc_retries"], stats["num_sync_all_streams"], acc.memory_reserved() >> 20)
""", env={"ANYDEV_SIM_DEVICES": "1", "ANYDEV_SIM_MEMORY": "128MiB"})
    assert rc == 0, err
    assert out.strip() == "1 1 100"
