"""The type stubs users' type checkers and IDEs see: checked against the
installed package by mypy's stubtest, and by mypy and pyright on a sample
file that uses the public API (types revealed, a misuse reported, the legacy
calls reported as deprecated with the settings docs/typing.md gives)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import anydev

pytest.importorskip("mypy", reason="mypy is not installed (tools/requirements-dev.txt has it)")

PACKAGE = os.path.dirname(anydev.__file__)
# The modules with a stub (.pyi) beside them in the installed package.
STUBBED = ["anydev", "anydev._C", "anydev.accelerator", "anydev.cpu", "anydev.hip", "anydev.sim",
           "anydev.cuda", "anydev.cuda.amp", "anydev.xpu"]
SHIMS = ("anydev.cuda", "anydev.cuda.amp", "anydev.xpu")


def test_every_stubbed_module_has_its_stub_installed():
    for module in STUBBED:
        rel = module.split(".")[1:]
        base = os.path.join(PACKAGE, *rel)
        assert os.path.isfile(base + ".pyi") or os.path.isfile(os.path.join(base, "__init__.pyi")), \
            f"{module} has no stub in {PACKAGE}"
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))


def _stubtest_errors(tmp_path) -> list[tuple[str, str]]:
    """Runs stubtest over the installed package (stubtest takes the package
    with all its submodules); returns (name, message) of each error in a
    stubbed module."""
    cfg = tmp_path / "mypy.ini"
    # The package's own .py modules are not what is checked here (they are
    # the implementation); torch is not followed (it is large and optional).
    cfg.write_text(textwrap.dedent(f"""\
        [mypy]
        [mypy-anydev.*]
        ignore_errors = True
        [mypy-{",".join(STUBBED)}]
        ignore_errors = False
        [mypy-torch.*]
        follow_imports = skip
        """))
    env = dict(os.environ, ANYDEV_SIM_DEVICES="1")
    env.pop("MYPYPATH", None)
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", str(cfg),
                        "--concise", "anydev"], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=900)
    assert "not checking stubs" not in r.stdout + r.stderr, r.stdout + r.stderr
    errors = []
    for line in r.stdout.splitlines():
        m = re.match(r"(anydev[\w.]*) (.*)", line)
        # A name belongs to the innermost module it is in.
        owner = m and max((s for s in ["anydev", *STUBBED] if m.group(1) == s
                           or m.group(1).startswith(s + ".")), key=len, default=None)
        if m and owner in STUBBED and not _unstubbed_submodule(m.group(1)):
            errors.append((m.group(1), m.group(2)))
    assert errors or r.returncode == 0 or "anydev." in r.stdout, r.stdout + r.stderr
    return errors


def _unstubbed_submodule(name: str) -> bool:
    """True for a name in one of the package's modules without a stub
    (anydev.scan, anydev.__main__, ...): stubtest checks those too, against
    themselves, which is not what this test is about."""
    parts = name.split(".")
    return len(parts) > 1 and parts[1] not in {m.split(".")[1] for m in STUBBED if "." in m}


def _expected(name: str, message: str) -> bool:
    """The differences between stub and runtime that are by design:
    pybind11's classes have their own metaclass; the legacy entry points are
    forwarder objects (counted, warned once per call site) with the
    replacement's signature, while their stubs give the legacy signature that
    legacy code calls them with, marked @deprecated."""
    if message == "is inconsistent, metaclass differs":
        return True
    if name.startswith(SHIMS) or name in ("anydev.accelerator.current_device_idx",
                                          "anydev.accelerator.set_device_idx"):
        return (message in ("is not a function", "is not a type")
                or "should be positional-only" in message
                or name.endswith(".__deprecated__"))
    # Made only by the bindings: pybind11 gives it an __init__ that raises.
    return name == "anydev._C._DeviceProperties.__init__"


def test_stubtest_finds_the_stubs_true_to_the_runtime(tmp_path):
    errors = _stubtest_errors(tmp_path)
    unexpected = [f"{n} {m}" for n, m in errors if not _expected(n, m)]
    assert unexpected == [], "\n".join(unexpected)


SAMPLE = textwrap.dedent("""\
    import anydev
    import anydev.cuda

    acc = anydev.accelerator
    reveal_type(acc.current_device_index())
    reveal_type(acc.current_accelerator())
    s = anydev.Stream()
    reveal_type(s.query())
    reveal_type(s.record_event())
    reveal_type(anydev.Event(enable_timing=True).elapsed_time(anydev.Event()))
    reveal_type(anydev.Buffer(16).fill_(1).copy_to_host())
    reveal_type(anydev.memory_stats())
    reveal_type(anydev.backends()[0].reason)
    reveal_type(anydev.sim.get_device_properties().total_memory)
    reveal_type(anydev.cuda.memory_allocated(0))
    n: int = anydev.cuda.current_device()
    anydev.device_count(1.5)
    """)


def _sample(tmp_path) -> str:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    return str(path)


def test_mypy_types_the_sample_and_flags_legacy_calls(tmp_path):
    sample = _sample(tmp_path)
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--python-version",
                        f"{sys.version_info.major}.{sys.version_info.minor}",
                        "--enable-error-code", "deprecated", sample],
                       capture_output=True, text=True, cwd=str(tmp_path), timeout=600)
    out = r.stdout
    revealed = re.findall(r"sample\.py:(\d+): note: Revealed type is \"(.*)\"", out)
    # mypy before 2.0 writes builtins.int, later int.
    assert [t.replace("builtins.", "") for _, t in revealed] == [
        "int",
        "anydev._C.device | None",
        "bool",
        "anydev._C.Event",
        "float",
        "bytearray",
        "collections.OrderedDict[str, int]",
        "str",
        "int",
        "int",
    ], out
    assert re.search(r"sample\.py:15: error: function anydev\.cuda\.memory_allocated is "
                     r"deprecated: .*AD\d+.*\[deprecated\]", out), out
    assert re.search(r"sample\.py:16: error: function anydev\.cuda\.current_device is "
                     r"deprecated: .*\[deprecated\]", out), out
    assert re.search(r'sample\.py:17: error: Argument 1 to "device_count" has incompatible '
                     r'type "float"', out), out


def _pyright() -> list[str]:
    exe = shutil.which("pyright", path=os.path.dirname(sys.executable)) or shutil.which("pyright")
    if exe is None:
        pytest.skip("pyright is not installed (tools/requirements-dev.txt has pyright[nodejs])")
    return [exe]


def test_pyright_types_the_sample_and_flags_legacy_calls(tmp_path):
    sample = _sample(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
        "venvPath": os.path.dirname(sys.prefix), "venv": os.path.basename(sys.prefix),
        "reportDeprecated": "warning",
    }))
    env = dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    r = subprocess.run([*_pyright(), "--outputjson", "-p", str(tmp_path), sample],
                       capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=600)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright printed no JSON report: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    diags = [(d["range"]["start"]["line"] + 1, d["severity"], d.get("rule", ""), d["message"])
             for d in report["generalDiagnostics"]]
    revealed = [m.rsplit('"', 2)[1] for _, sev, _, m in diags
                if sev == "information" and m.startswith("Type of")]
    assert revealed == ["int", "device | None", "bool", "Event", "float", "bytearray",
                        "OrderedDict[str, int]", "str", "int", "int"], diags
    deprecated = {line for line, sev, rule, _ in diags if rule == "reportDeprecated"}
    assert {15, 16} <= deprecated, diags
    assert any(line == 17 and sev == "error" for line, sev, _, _ in diags), diags
