"""The ANYDEV_* variables. The accelerator is chosen once per process, so each
configuration runs in a fresh interpreter (conftest.run_python), whose
environment holds only the ANYDEV_* variables given here."""

from __future__ import annotations

import json

import pytest

# Prints one JSON object: for each probe, the result or the exception.
PROBE = r"""
import json, warnings
import anydev
acc = anydev.accelerator

def probe(fn):
    try:
        v = fn()
    except BaseException as e:
        return {"error": type(e).__name__, "message": str(e)}
    if isinstance(v, anydev.device):
        v = str(v)
    elif isinstance(v, anydev.Stream):
        v = str(v.device)
    elif isinstance(v, list):
        v = [list(x) for x in v]
    return {"value": v}

probes = {
    "current_accelerator": lambda: acc.current_accelerator(),
    "current_accelerator_checked": lambda: acc.current_accelerator(check_available=True),
    "device_count": lambda: acc.device_count(),
    "is_available": lambda: acc.is_available(),
    "current_device_index": lambda: acc.current_device_index(),
    "set_device_index": lambda: acc.set_device_index(0),
    "current_stream": lambda: acc.current_stream(),
    "synchronize": lambda: acc.synchronize(),
    "device_index": lambda: acc.device_index(0).__enter__(),
    "device_int": lambda: anydev.device(0),
    "generic_device_count": lambda: anydev.device_count(),
    "generic_synchronize": lambda: anydev.synchronize(),
    "cpu_device_count": lambda: anydev.device_count("cpu"),
    "cpu_synchronize": lambda: anydev.synchronize("cpu"),
    "stream": lambda: anydev.Stream(),
    "cpu_stream_query": lambda: anydev.Stream("cpu").query(),
    "event": lambda: anydev.Event().device,
    "memory": lambda: anydev.get_device_properties().total_memory,
    "device_module": lambda: anydev.get_device_module().__name__,
    "backends": lambda: anydev.backends(),
}
print(json.dumps({k: probe(f) for k, f in probes.items()}))
"""


def run_probe(run_python, **env):
    rc, out, err = run_python(PROBE, env=env)
    assert rc == 0, f"the interpreter failed (rc={rc}):\n{err}"
    return json.loads(out)


def backend(result, name):
    rows = result["backends"]["value"]
    row = next(r for r in rows if r[0] == name)
    return dict(zip(("name", "built", "available", "device_count", "reason"), row))


def test_no_variables_no_accelerator(run_python):
    r = run_probe(run_python)
    assert r["current_accelerator"] == {"value": None}
    assert r["current_accelerator_checked"] == {"value": None}
    assert r["device_count"] == {"value": 0}
    assert r["is_available"] == {"value": False}
    none_msg = "Cannot access accelerator device when none is available."
    for name in ("current_device_index", "set_device_index", "current_stream", "synchronize",
                 "device_index", "device_int"):
        assert r[name] == {"error": "RuntimeError", "message": none_msg}, name
    # Device-generic calls fall back to the CPU.
    assert r["generic_device_count"] == {"value": 1}
    assert r["generic_synchronize"] == {"value": None}
    assert r["stream"] == {"value": "cpu"}  # torch.Stream().device without an accelerator
    assert r["event"] == {"value": "cpu"}
    assert r["device_module"] == {"value": "anydev.cpu"}
    sim = backend(r, "sim")
    assert (sim["built"], sim["available"], sim["device_count"]) == (True, False, 0)
    assert "ANYDEV_SIM_DEVICES" in sim["reason"]


@pytest.mark.parametrize("value", ["abc", "0", "65", "-1", "2.5", "1e3", "4x"])
def test_malformed_sim_devices(run_python, value):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES=value)
    for name in ("current_accelerator", "current_device_index", "set_device_index",
                 "current_stream", "synchronize", "stream", "event", "device_int",
                 "generic_synchronize", "memory"):
        res = r[name]
        assert res.get("error") == "RuntimeError", (name, res)
        assert "ANYDEV_SIM_DEVICES" in res["message"], (name, res)
        assert repr(value) in res["message"] or value in res["message"], (name, res)
    # Counting never raises; a broken configuration has no devices.
    assert r["device_count"] == {"value": 0}
    assert r["is_available"] == {"value": False}
    # The CPU still works, and backends() reports the problem.
    assert r["cpu_device_count"] == {"value": 1}
    assert r["cpu_synchronize"] == {"value": None}
    assert r["cpu_stream_query"] == {"value": True}
    sim = backend(r, "sim")
    assert (sim["available"], sim["device_count"]) == (False, 0)
    assert "ANYDEV_SIM_DEVICES" in sim["reason"] and value in sim["reason"]


@pytest.mark.parametrize("value, count", [("1", 1), ("64", 64), ("3", 3)])
def test_sim_devices_range(run_python, value, count):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES=value)
    assert r["current_accelerator"] == {"value": "sim"}
    assert r["device_count"] == {"value": count}
    assert r["current_device_index"] == {"value": 0}
    assert r["stream"] == {"value": "sim:0"}
    assert r["memory"] == {"value": 2**30}  # the default, 1 GiB


@pytest.mark.parametrize("value, size", [("512MiB", 512 * 2**20), ("2GiB", 2 * 2**30),
                                         ("1.5GB", 1_500_000_000), ("1073741824", 2**30)])
def test_sim_memory(run_python, value, size):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="2", ANYDEV_SIM_MEMORY=value)
    assert r["memory"] == {"value": size}


@pytest.mark.parametrize("value", ["junk", "12XB", "-5MiB", "MiB"])
def test_malformed_sim_memory(run_python, value):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="2", ANYDEV_SIM_MEMORY=value)
    for name in ("current_accelerator", "current_device_index", "stream", "memory"):
        res = r[name]
        assert res.get("error") == "RuntimeError", (name, res)
        assert "ANYDEV_SIM_MEMORY" in res["message"] and value in res["message"], (name, res)
    sim = backend(r, "sim")
    assert not sim["available"]
    assert "ANYDEV_SIM_MEMORY" in sim["reason"] and value in sim["reason"]
    assert r["cpu_device_count"] == {"value": 1}


@pytest.mark.parametrize("value, needle", [
    ("cpu", "the CPU is never an accelerator"),
    ("foo", "not a device type"),
    ("cuda", "not available"),
    ("SIM", "not a device type"),
])
def test_malformed_accelerator(run_python, value, needle):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="2", ANYDEV_ACCELERATOR=value)
    names = ["current_accelerator", "current_device_index", "current_stream", "stream",
             "device_module", "device_int"]
    if value == "cuda" and backend(r, "cuda")["built"]:
        # A built backend without a device is named, as torch's compile-time
        # answer; the calls that need the device say why it cannot be used.
        assert r["current_accelerator"] == {"value": "cuda"}
        names.remove("current_accelerator")
    for name in names:
        res = r[name]
        assert res.get("error") == "RuntimeError", (name, res)
        assert "ANYDEV_ACCELERATOR" in res["message"], (name, res)
        assert value in res["message"] and needle in res["message"], (name, res)
    # sim itself is fine; only the choice is wrong.
    assert backend(r, "sim")["available"] is True
    assert r["cpu_synchronize"] == {"value": None}


def test_accelerator_sim_forced(run_python):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="2", ANYDEV_ACCELERATOR="sim")
    assert r["current_accelerator"] == {"value": "sim"}
    assert r["device_count"] == {"value": 2}
    assert r["current_stream"] == {"value": "sim:0"}


def test_accelerator_sim_forced_but_not_enabled(run_python):
    r = run_probe(run_python, ANYDEV_ACCELERATOR="sim")
    res = r["current_accelerator"]
    assert res["error"] == "RuntimeError"
    assert "ANYDEV_ACCELERATOR" in res["message"] and "ANYDEV_SIM_DEVICES" in res["message"]


def test_forced_accelerator_with_malformed_config(run_python):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="abc", ANYDEV_ACCELERATOR="sim")
    res = r["current_accelerator"]
    assert res["error"] == "RuntimeError"
    assert "ANYDEV_SIM_DEVICES" in res["message"] and "abc" in res["message"]


def test_empty_variables_are_unset(run_python):
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="2", ANYDEV_ACCELERATOR="")
    assert r["current_accelerator"] == {"value": "sim"}
    r = run_probe(run_python, ANYDEV_SIM_DEVICES="")
    assert r["current_accelerator"] == {"value": None}


def test_configuration_is_read_once(run_python):
    rc, out, err = run_python("""
        import os, anydev
        acc = anydev.accelerator
        print(acc.device_count())
        os.environ["ANYDEV_SIM_DEVICES"] = "5"
        print(acc.device_count(), anydev.device_count("sim"))
    """, env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    assert out.split() == ["2", "2", "2"]


def test_legacy_aliases_warn_once_per_call(run_python):
    rc, out, err = run_python("""
        import warnings, anydev
        acc = anydev.accelerator
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            i = acc.current_device_idx()
            acc.set_device_idx(1)
            j = acc.current_device_index()
        print(i, j)
        for x in w:
            print(x.category.__name__, "|", issubclass(x.category, FutureWarning), "|",
                  str(x.message).split(";")[1].strip(), "|", x.filename.endswith("<string>"))
    """, env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "0 1"
    # stacklevel points at the caller, not at anydev's own file.
    assert lines[1:] == [
        "LegacyAPIWarning | True | use anydev.accelerator.current_device_index "
        "(in PyTorch: torch.accelerator.current_device_index) [AD501] | True",
        "LegacyAPIWarning | True | use anydev.accelerator.set_device_index "
        "(in PyTorch: torch.accelerator.set_device_index) [AD502] | True",
    ]


def test_errors_do_not_crash_the_interpreter(run_python):
    # A bad configuration and every bad call: each raises, and the process exits 0.
    rc, out, err = run_python("""
        import anydev
        acc = anydev.accelerator
        calls = [
            lambda: acc.current_device_index(), lambda: acc.set_device_index(3),
            lambda: acc.current_stream(), lambda: acc.set_stream(42),
            lambda: acc.synchronize(), lambda: anydev.Stream(),
            lambda: anydev.Event().record(), lambda: acc.device_index(0).__enter__(),
            lambda: anydev.device("sim:x"), lambda: anydev.get_device_properties(),
            lambda: anydev.testing.sleep(0.1),
        ]
        for c in calls:
            try:
                c()
            except (RuntimeError, ValueError, TypeError) as e:
                pass
            else:
                raise SystemExit("no error")
        print("survived")
    """, env={"ANYDEV_SIM_DEVICES": "0"})
    assert rc == 0, err
    assert out.strip() == "survived"
