"""The legacy shims anydev.cuda, anydev.cuda.amp, anydev.xpu and the
anydev.accelerator *_idx aliases: what they expose, that they act on the
current accelerator, the once-per-call-site LegacyAPIWarning, counting, and
the policy (code, ANYDEV_LEGACY, pyproject.toml).

Warnings are once per call site for the whole process, so every assertion's
legacy call is on a line of its own, and a fresh process is used where the
state of this one would get in the way.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import pytest

import anydev
import anydev.cuda
import anydev.cuda.amp
import anydev.report
import anydev.xpu
from anydev import compat
from anydev._compat.shims import Unsupported
from anydev._compat.table import ROWS, ROWS_BY_CODE

from conftest import clean_env, run_python

Forwarder = anydev._C._compat.Forwarder
SIM = {"ANYDEV_SIM_DEVICES": "2"}
WARNING = "anydev.compat.LegacyAPIWarning"


def here() -> int:
    """The line number of the caller (put it on the line of the legacy call)."""
    return inspect.currentframe().f_back.f_lineno  # type: ignore[union-attr]


def counts(line: int, file: str = __file__) -> dict[str, int]:
    """{legacy name: count} of the report entries at ``file:line``."""
    return {c["legacy"]: c["count"] for c in anydev.report.snapshot()["calls"]
            if c["file"] == file and c["line"] == line}


class Recorder:
    """Records LegacyAPIWarnings (all filters 'always' inside, so that only the
    engine's once-per-site logic decides what is shown)."""

    def __enter__(self) -> list[warnings.WarningMessage]:
        self._cm = warnings.catch_warnings(record=True)
        self.log = self._cm.__enter__()
        warnings.simplefilter("always")
        return self.log

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)


def legacy(log: list[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    return [w for w in log if issubclass(w.category, compat.LegacyAPIWarning)]


@pytest.fixture
def quiet():
    """Silences LegacyAPIWarning for tests about behaviour, not warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", compat.LegacyAPIWarning)
        yield


@pytest.fixture(autouse=True)
def no_leftover_policy():
    yield
    compat.reset_policy()


# --- what the shims expose ----------------------------------------------------------

MODULES = {"torch.cuda.amp.": anydev.cuda.amp, "torch.cuda.": anydev.cuda,
           "torch.xpu.": anydev.xpu, "torch.accelerator.": anydev.accelerator}


def _shim(row):
    for prefix, module in MODULES.items():
        if row.legacy.startswith(prefix):
            rest = row.legacy[len(prefix):]
            return None if "." in rest else (module, rest)
    return None


PY_ROWS = [r for r in ROWS if r.language == "python" and _shim(r) is not None]


def test_every_legacy_entry_point_is_exposed(quiet):
    assert len(PY_ROWS) >= 190
    for row in PY_ROWS:
        module, name = _shim(row)
        assert hasattr(module, name), row.legacy
        if module is not anydev.accelerator:
            assert name in module.__all__, row.legacy
        obj = getattr(module, name)
        if row.status == "deprecated" and row.kind in ("call", "context_manager", "decorator"):
            assert isinstance(obj, Forwarder), row.legacy
        elif row.status == "deprecated" and row.kind == "class":
            assert isinstance(obj, (type, Forwarder)), row.legacy


def test_kept_entry_points_without_an_implementation_are_placeholders():
    kept = [r for r in PY_ROWS if r.status == "kept"]
    placeholders = 0
    for row in kept:
        module, name = _shim(row)
        obj = getattr(module, name)
        if isinstance(obj, Unsupported):
            placeholders += 1
            with pytest.raises(NotImplementedError, match=rf"{row.legacy}.*\[{row.code}\]"):
                obj()
            with pytest.raises(NotImplementedError, match=row.code):
                obj.some_member  # noqa: B018 - nvtx.range_push, jiterator._create_jit_fn...
            assert row.code in repr(obj)
        elif row.kind == "module":  # torch.cuda.memory: anydev.cuda.memory, a module too
            assert inspect.ismodule(obj) and obj.__name__ == f"{module.__name__}.{name}", row.legacy
        else:
            assert callable(obj), row.legacy
    assert placeholders >= 20  # most of rule 4 (nvtx, jiterator, graphs, IPC...)
    # Those anydev can answer are real functions.
    for name in ("get_device_name", "get_device_properties", "get_device_capability",
                 "default_stream", "is_initialized", "init"):
        assert not isinstance(getattr(anydev.cuda, name), Unsupported), name
        if name != "default_stream":  # torch.xpu has none
            assert not isinstance(getattr(anydev.xpu, name), Unsupported), name


def test_forwarders_and_class_shims_carry_deprecated():
    assert "[AD103]" in anydev.cuda.current_device.__deprecated__
    assert "torch.accelerator.current_device_index" in anydev.cuda.current_device.__deprecated__
    assert "[AD113]" in anydev.cuda.Stream.__deprecated__
    assert "[AD116]" in anydev.cuda.Event.__deprecated__
    assert "[AD412]" in anydev.xpu.Stream.__deprecated__
    assert "[AD313]" in anydev.cuda.amp.autocast.__deprecated__
    assert "[AD501]" in anydev.accelerator.current_device_idx.__deprecated__
    assert "[AD502]" in anydev.accelerator.set_device_idx.__deprecated__
    for row in PY_ROWS:
        module, name = _shim(row)
        obj = getattr(module, name) if row.kind not in ("attribute", "module") else None
        if isinstance(obj, Forwarder) or (isinstance(obj, type) and row.status == "deprecated"):
            assert f"[{row.code}]" in obj.__deprecated__, row.legacy
    # Kept entry points are not deprecated.
    assert not hasattr(anydev.cuda.get_device_name, "__deprecated__")
    assert not hasattr(anydev.cuda.default_stream, "__deprecated__")


def test_forwarder_metadata():
    f = anydev.cuda.current_device
    assert f.__name__ == "current_device" and f.__module__ == "anydev.cuda"
    assert f.__wrapped__ is anydev.accelerator.current_device_index
    assert "AD103" in f.__doc__ and "torch.cuda.current_device" in repr(f)


def test_accelerator_aliases_are_forwarders(quiet):
    assert isinstance(anydev.accelerator.current_device_idx, Forwarder)
    assert isinstance(anydev.accelerator.set_device_idx, Forwarder)
    assert anydev.accelerator.current_device_idx.__wrapped__ is anydev.accelerator.current_device_index
    anydev.accelerator.set_device_idx(1)
    assert anydev.accelerator.current_device_index() == 1
    assert anydev.accelerator.current_device_idx() == 1
    with pytest.raises(AttributeError):
        anydev.accelerator.current_device_idz  # noqa: B018


# --- forwarders act on the current accelerator ---------------------------------------


def test_current_device_and_set_device(multi_device, quiet):
    acc = anydev.accelerator
    assert anydev.cuda.current_device() == acc.current_device_index() == 0
    anydev.cuda.set_device(1)
    assert acc.current_device_index() == 1
    assert anydev.cuda.current_device() == 1
    assert anydev.xpu.current_device() == 1
    anydev.cuda.set_device("cuda:0")  # a device of the legacy type: re-typed
    assert acc.current_device_index() == 0
    anydev.xpu.set_device("xpu:1")
    assert acc.current_device_index() == 1
    assert anydev.cuda.device_count() == acc.device_count()
    assert anydev.cuda.is_available() is True


def test_device_context_manager(multi_device, quiet):
    acc = anydev.accelerator
    with anydev.cuda.device(1):
        assert acc.current_device_index() == 1
        with anydev.cuda.device("cuda:0"):
            assert acc.current_device_index() == 0
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    with anydev.xpu.device(anydev.device("xpu", 1)):
        assert acc.current_device_index() == 1
    with anydev.cuda.device(None):
        assert acc.current_device_index() == 0


def test_device_of_switches_to_the_objects_device(multi_device, quiet):
    acc = anydev.accelerator
    s = anydev.Stream(device=acc.current_accelerator().type + ":1")
    with anydev.cuda.device_of(s):
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0


def test_stream_class_shim(multi_device, quiet):
    acc_type = anydev.accelerator.current_accelerator().type
    s = anydev.cuda.Stream("cuda:1")
    assert isinstance(s, anydev.Stream) and isinstance(s, anydev.cuda.Stream)
    assert s.device == anydev.device(acc_type, 1)
    s = anydev.cuda.Stream(device="cuda:0", priority=-1)
    assert s.device == anydev.device(acc_type, 0) and s.priority == -1
    x = anydev.xpu.Stream("xpu:1")
    assert isinstance(x, anydev.Stream) and x.device.index == 1
    e = anydev.cuda.Event(enable_timing=True)
    assert isinstance(e, anydev.Event)
    e.record(s)
    e.synchronize()


def test_class_shims_warn_once_per_site_and_count_every_construction(multi_device):
    with Recorder() as log:
        for _ in range(3):
            line = here(); anydev.cuda.Stream()  # noqa: E702
        other = here(); anydev.cuda.Event()  # noqa: E702
    ws = legacy(log)
    assert [(w.lineno, w.filename) for w in ws] == [(line, __file__), (other, __file__)]
    assert "anydev.cuda.Stream" in str(ws[0].message) and "[AD113]" in str(ws[0].message)
    assert counts(line) == {"torch.cuda.Stream": 3}


class _MyStream(anydev.cuda.Stream):
    def __init__(self, priority: int = 0) -> None:
        super().__init__("cuda:1", priority)  # the legacy positional priority


def test_class_shim_subclass_warns_at_its_own_init(multi_device):
    with Recorder() as log:
        s = _MyStream(priority=-1)
    ws = legacy(log)
    assert len(ws) == 1 and ws[0].lineno == _MyStream.__init__.__code__.co_firstlineno + 1
    assert s.device.index == 1 and s.priority == -1 and isinstance(s, anydev.cuda.Stream)


def test_class_shim_arguments_as_the_legacy_class_takes_them(multi_device, quiet):
    acc_type = anydev.accelerator.current_accelerator().type
    assert anydev.cuda.Stream(1).device == anydev.device(acc_type, 1)  # the fast path
    assert anydev.cuda.Stream(anydev.device("cuda", 1)).device == anydev.device(acc_type, 1)
    s = anydev.cuda.Stream(None, -1)  # priority positionally: through the adapter
    assert s.priority == -1
    with pytest.raises(NotImplementedError, match="external"):
        anydev.cuda.Event(external=True)
    assert anydev.cuda.Event(True).elapsed_time  # enable_timing positionally
    with pytest.raises(TypeError):
        anydev.cuda.Stream(0, 0, 0)
    init = anydev.cuda.Stream.__init__
    assert init.__name__ == "__init__" and init.__qualname__ == "Stream.__init__"
    assert str(inspect.signature(anydev.cuda.Stream)) == "(*args, **kwargs)"


def test_stream_functions(multi_device, quiet):
    acc = anydev.accelerator
    acc_type = acc.current_accelerator().type
    cur = anydev.cuda.current_stream("cuda:0")
    assert type(cur) is anydev.Stream and cur.device == anydev.device(acc_type, 0)
    assert anydev.cuda.current_stream() == acc.current_stream()
    assert anydev.cuda.current_stream(1) == acc.current_stream(1)
    s = anydev.Stream(device=f"{acc_type}:1")
    with anydev.cuda.stream(s):
        assert acc.current_stream(1) == s and acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    with anydev.cuda.stream(None):
        assert acc.current_device_index() == 0
    with anydev.cuda.StreamContext(s):
        assert acc.current_stream(1) == s
    anydev.cuda.set_stream(s)
    assert acc.current_stream() == s and acc.current_device_index() == 1
    anydev.cuda.synchronize()
    anydev.cuda.synchronize("cuda:1")
    anydev.xpu.synchronize(0)


def test_legacy_keyword_arguments_are_accepted(multi_device, quiet):
    # torch.cuda's signatures take `device` by keyword; the generic ones are
    # positional-only, so the forwarder must bind the legacy name.
    acc = anydev.accelerator
    assert anydev.cuda.current_stream(device="cuda:1") == acc.current_stream(1)
    anydev.cuda.synchronize(device=1)
    anydev.cuda.set_device(device=1)
    assert acc.current_device_index() == 1
    assert anydev.xpu.current_stream(device="xpu:0") == acc.current_stream(0)
    with anydev.cuda.device(device=0):
        assert acc.current_device_index() == 0
    # A name the legacy signature does not have still fails, as it should.
    with pytest.raises(TypeError):
        anydev.cuda.synchronize(devic=1)
    with pytest.raises(TypeError):
        anydev.cuda.synchronize(1, device=1)


def test_kept_functions_work_without_warning_or_count(multi_device):
    acc_type = anydev.accelerator.current_accelerator().type
    with Recorder() as log:
        line = here(); name = anydev.cuda.get_device_name()  # noqa: E702
        props = anydev.cuda.get_device_properties(1)
        cap = anydev.cuda.get_device_capability("cuda:1")
        ds = anydev.cuda.default_stream(1)
        xname = anydev.xpu.get_device_name(0)
        assert anydev.cuda.is_initialized() is True
        anydev.cuda.init()
    assert legacy(log) == []
    assert isinstance(name, str) and name == xname == anydev.get_device_properties(0).name
    assert repr(props) == repr(anydev.get_device_properties(anydev.device(acc_type, 1)))
    assert isinstance(cap, tuple) and len(cap) == 2
    assert isinstance(ds, anydev.Stream) and ds.stream_id == 0 and ds.device.index == 1
    snap = anydev.report.snapshot()["calls"]
    assert not [c for c in snap if c["file"] == __file__ and line <= c["line"] <= line + 6]


def test_no_equivalent_raises_naming_pytorchs_replacement():
    with Recorder() as log:
        with pytest.raises(compat.NoEquivalentError, match=r"torch\.amp\.autocast.*\[AD313\]"):
            anydev.cuda.amp.autocast()
        with pytest.raises(compat.NoEquivalentError,
                           match=r"torch\.accelerator\.random\.manual_seed.*\[AD301\]"):
            anydev.cuda.manual_seed(0)
        with pytest.raises(compat.NoEquivalentError, match=r"torch\.amp\.GradScaler.*\[AD314\]"):
            anydev.cuda.amp.GradScaler()
        with pytest.raises(compat.NoEquivalentError, match=r"AD315"):
            anydev.cuda.amp.custom_fwd(lambda: None)
        with pytest.raises(compat.NoEquivalentError, match=r"torch\.tensor.*\[AD336\]"):
            anydev.cuda.FloatTensor([1.0])
        with pytest.raises(compat.NoEquivalentError, match=r"AD447"):
            anydev.xpu.get_rng_state()
    assert issubclass(compat.NoEquivalentError, NotImplementedError)
    # They warn (and count) before raising.
    codes = {w.message.args[0].rsplit("[", 1)[1].rstrip("]") for w in legacy(log)}
    assert {"AD313", "AD301", "AD314", "AD315", "AD336", "AD447"} <= codes


def test_deprecated_attribute_without_equivalent(quiet):
    err = anydev.cuda.AcceleratorError  # torch.cuda.AcceleratorError: anydev has none
    with pytest.raises(compat.NoEquivalentError, match=r"torch\.AcceleratorError.*\[AD138\]"):
        err()
    assert anydev.cuda.OutOfMemoryError is anydev.OutOfMemoryError


def test_every_deprecated_row_without_a_target_raises_no_equivalent(quiet):
    for row in PY_ROWS:
        if row.status != "deprecated" or row.anydev or row.kind in ("attribute", "module"):
            continue
        module, name = _shim(row)
        with pytest.raises(compat.NoEquivalentError) as ei:
            getattr(module, name)()
        msg = str(ei.value)
        assert f"[{row.code}]" in msg and row.legacy in msg, msg
        if row.replacement:
            assert row.replacement in msg or (row.template or "@@") in msg, msg
        else:
            assert "no device-generic replacement" in msg, msg


# --- warnings: once per call site -------------------------------------------------------


def test_warning_category():
    assert issubclass(compat.LegacyAPIWarning, FutureWarning)
    assert not issubclass(compat.LegacyAPIWarning, DeprecationWarning)
    assert issubclass(compat.LegacyAPIError, RuntimeError)
    assert issubclass(compat.PolicyError, ValueError)


def test_message_names_entry_point_replacement_and_rule():
    with Recorder() as log:
        line = here(); anydev.cuda.current_device()  # noqa: E702
    (w,) = legacy(log)
    assert w.category is compat.LegacyAPIWarning
    assert (w.filename, w.lineno) == (__file__, line)
    msg = str(w.message)
    for part in ("anydev.cuda.current_device", "torch.cuda.current_device",
                 "anydev.accelerator.current_device_index",
                 "torch.accelerator.current_device_index", "[AD103]"):
        assert part in msg, msg


def test_alias_warning_names_the_public_spelling():
    with Recorder() as log:
        anydev.accelerator.current_device_idx()
    (w,) = legacy(log)
    assert "anydev.accelerator.current_device_idx" in str(w.message)
    assert "torch.accelerator.current_device_idx" in str(w.message)
    assert "[AD501]" in str(w.message)


def test_loop_warns_once_and_counts_every_call():
    with Recorder() as log:
        for _ in range(5):
            line = here(); anydev.cuda.device_count()  # noqa: E702
    assert len(legacy(log)) == 1
    assert counts(line) == {"torch.cuda.device_count": 5}


def test_two_lines_warn_twice():
    with Recorder() as log:
        first = here(); anydev.cuda.is_available()  # noqa: E702
        second = here(); anydev.cuda.is_available()  # noqa: E702
    assert [w.lineno for w in legacy(log)] == [first, second]


def _helper():
    return anydev.cuda.current_device()  # the one site of both callers below


def test_helper_called_from_two_places_warns_once():
    with Recorder() as log:
        _helper()
        _helper()
    ws = legacy(log)
    assert len(ws) == 1
    assert ws[0].lineno == _helper.__code__.co_firstlineno + 1
    assert counts(ws[0].lineno)["torch.cuda.current_device"] >= 2


def _in_thread(barrier: threading.Barrier, out: list) -> None:
    barrier.wait()
    for _ in range(50):
        out.append(anydev.xpu.device_count())


def test_threads_warn_once_in_total():
    barrier = threading.Barrier(8)
    out: list[int] = []
    with Recorder() as log:
        threads = [threading.Thread(target=_in_thread, args=(barrier, out)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(out) == 400
    ws = legacy(log)
    assert len(ws) == 1, [str(w.message) for w in ws]
    line = _in_thread.__code__.co_firstlineno + 3
    assert ws[0].lineno == line
    assert counts(line) == {"torch.xpu.device_count": 400}


def test_reload_does_not_warn_again(tmp_path: Path, monkeypatch):
    mod = tmp_path / "legacy_reload_mod.py"
    mod.write_text("import anydev.cuda\n\ndef f():\n    return anydev.cuda.synchronize()\n\nf()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with Recorder() as log:
        m = importlib.import_module("legacy_reload_mod")
        m.f()
        importlib.reload(m)
        m.f()
    sys.modules.pop("legacy_reload_mod", None)
    ws = legacy(log)
    assert len(ws) == 1 and ws[0].filename == str(mod) and ws[0].lineno == 4
    assert counts(4, str(mod)) == {"torch.cuda.synchronize": 4}


def test_filterwarnings_error_raises_on_every_call():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=compat.LegacyAPIWarning)
        for _ in range(2):
            with pytest.raises(compat.LegacyAPIWarning, match="AD405"):
                line = here(); anydev.xpu.device(0)  # noqa: E702
    # Counted although it raised; with the filter gone, it warns (once) and works.
    assert counts(line) == {"torch.xpu.device": 2}
    with Recorder() as log:
        for _ in range(2):
            again = here(); anydev.xpu.device(0)  # noqa: E702
    assert len(legacy(log)) == 1 and legacy(log)[0].lineno == again


def test_filterwarnings_ignore():
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=compat.LegacyAPIWarning)
        anydev.cuda.current_stream()
    assert legacy(log) == []


@pytest.mark.filterwarnings("error::anydev.compat.LegacyAPIWarning")
def test_pytest_filterwarnings_marker_turns_it_into_an_error():
    with pytest.raises(compat.LegacyAPIWarning, match=r"\[AD402\]"):
        anydev.xpu.device_count()


def test_default_filters_and_dash_w_in_a_fresh_process():
    code = "import anydev.cuda\nanydev.cuda.current_device()\nprint('done')\n"
    rc, out, err = run_python(code, env=SIM)
    assert rc == 0 and out == "done\n", err
    assert "<string>:2: LegacyAPIWarning: anydev.cuda.current_device is a legacy" in err
    assert "[AD103]" in err and err.count("LegacyAPIWarning") == 1

    # (Python checks -W categories before site-packages is importable and says
    # "Invalid -W option ignored"; anydev applies the option when it loads.)
    rc, out, err = run_python(code, env=SIM, args=["-W", f"ignore::{WARNING}"])
    assert rc == 0 and out == "done\n" and "LegacyAPIWarning:" not in err, err

    rc, out, err = run_python(code, env=SIM, args=["-W", f"error::{WARNING}"])
    assert rc == 1 and out == ""
    assert "anydev.compat.LegacyAPIWarning: anydev.cuda.current_device" in err

    # The last option wins, as for Python's own categories.
    rc, out, err = run_python(code, env=SIM, args=["-W", f"error::{WARNING}",
                                                   "-W", f"ignore::{WARNING}"])
    assert rc == 0 and "LegacyAPIWarning:" not in err, err
    rc, out, err = run_python(code, env={**SIM, "PYTHONWARNINGS": f"error::{WARNING}"})
    assert rc == 1 and "anydev.compat.LegacyAPIWarning: anydev.cuda" in err, err
    # A FutureWarning filter covers it too, without that detour.
    rc, out, err = run_python(code, env=SIM, args=["-W", "error::FutureWarning"])
    assert rc == 1 and "LegacyAPIWarning" in err


def test_submodule_access_is_a_legacy_use_too():
    # `anydev.cuda.amp` (torch.cuda.amp) is itself deprecated: an access warns (AD312).
    code = "import anydev.cuda\nm = anydev.cuda.amp\nprint(m.__name__)\n"
    rc, out, err = run_python(code, env=SIM)
    assert rc == 0 and out == "anydev.cuda.amp\n", err
    assert "<string>:2: LegacyAPIWarning" in err and "[AD312]" in err


# --- counting and policy from code ------------------------------------------------------


def test_every_call_is_counted_under_every_policy():
    with Recorder() as log:
        with compat.policy("ignore"):
            for _ in range(3):
                ignored = here(); anydev.cuda.current_device()  # noqa: E702
        with compat.policy("error"):
            for _ in range(4):
                with pytest.raises(compat.LegacyAPIError, match=r"\[AD103\]"):
                    refused = here(); anydev.cuda.current_device()  # noqa: E702
    assert legacy(log) == []
    assert counts(ignored) == {"torch.cuda.current_device": 3}
    assert counts(refused) == {"torch.cuda.current_device": 4}


def test_error_policy_raises_instead_of_forwarding(multi_device):
    compat.set_policy("error")
    with pytest.raises(compat.LegacyAPIError, match="anydev.cuda.set_device"):
        anydev.cuda.set_device(1)
    assert anydev.accelerator.current_device_index() == 0  # not forwarded
    with pytest.raises(compat.LegacyAPIError, match="AD113"):
        anydev.cuda.Stream()
    compat.reset_policy()
    with Recorder() as log:
        site = here(); anydev.cuda.set_device(1)  # noqa: E702
    assert anydev.accelerator.current_device_index() == 1
    assert [w.lineno for w in legacy(log)] == [site]


def test_policy_change_applies_to_sites_already_seen():
    def call():
        return anydev.cuda.is_available()

    with Recorder() as log:
        call()                        # warns (default)
        with compat.policy("error"):
            with pytest.raises(compat.LegacyAPIError):
                call()
        call()                        # back to warn: already warned, silent
        compat.set_policy("ignore")
        call()
    assert len(legacy(log)) == 1


def test_policy_context_manager_restores_and_nests():
    assert compat.get_policy() == "warn"
    with compat.policy("error"):
        assert compat.get_policy() == "error"
        with compat.policy("ignore"):
            assert compat.get_policy() == "ignore"
        assert compat.get_policy() == "error"
    assert compat.get_policy() == "warn"
    compat.set_policy("ignore")
    assert compat.get_policy() == "ignore"
    compat.reset_policy()
    assert compat.get_policy() == "warn"


def test_policy_by_module_glob(tmp_path: Path, monkeypatch):
    (tmp_path / "legacy_glob_a.py").write_text(
        "import anydev.cuda\ndef f():\n    return anydev.cuda.current_device()\n")
    (tmp_path / "legacy_glob_b.py").write_text(
        "import anydev.cuda\ndef f():\n    return anydev.cuda.current_device()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    a = importlib.import_module("legacy_glob_a")
    b = importlib.import_module("legacy_glob_b")
    try:
        compat.set_policy("error", module="legacy_glob_a")
        compat.set_policy("ignore", module="legacy_glob_b*")
        assert compat.get_policy("legacy_glob_a") == "error"
        assert compat.get_policy("other") == "warn"
        with Recorder() as log:
            with pytest.raises(compat.LegacyAPIError):
                a.f()
            assert b.f() == anydev.accelerator.current_device_index()
        assert legacy(log) == []
    finally:
        sys.modules.pop("legacy_glob_a", None)
        sys.modules.pop("legacy_glob_b", None)


def test_policy_by_path_glob(tmp_path: Path, monkeypatch):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "legacy_path_v.py").write_text(
        "import anydev.cuda\ndef f():\n    return anydev.cuda.device_count()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "vendor"))
    v = importlib.import_module("legacy_path_v")
    try:
        compat.set_policy("error", path=str(tmp_path / "vendor" / "*"))
        with pytest.raises(compat.LegacyAPIError):
            v.f()
        compat.set_policy("ignore", path=str(tmp_path / "*" / "legacy_path_v.py"))  # last wins
        with Recorder() as log:
            assert v.f() == anydev.accelerator.device_count()
        assert legacy(log) == []
    finally:
        sys.modules.pop("legacy_path_v", None)


def test_invalid_policy_from_code():
    with pytest.raises(compat.PolicyError, match=r"set_policy\(\): 'maybe' is not a policy; "
                                                 r"expected one of ignore, warn, error"):
        compat.set_policy("maybe")
    with pytest.raises(compat.PolicyError, match=r"not both"):
        compat.set_policy("warn", module="a", path="b/*")
    with pytest.raises(compat.PolicyError):
        with compat.policy("sometimes"):
            pass  # pragma: no cover
    assert compat.get_policy() == "warn"


# --- policy from the environment and pyproject.toml (fresh processes) --------------------

CALL = """
import anydev.cuda
try:
    anydev.cuda.current_device()
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
else:
    print("ok")
"""


def _run(code: str, env=None, cwd=None) -> tuple[int, str, str]:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                       env=clean_env({**SIM, **(env or {})}), cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("value, out, warned", [
    ("ignore", "ok\n", False),
    ("warn", "ok\n", True),
    ("error", "LegacyAPIError", False),
    ("warn,error:__main__", "LegacyAPIError", False),
    ("error, ignore:__ma*", "ok\n", False),
    ("error,ignore:*/never/*", "LegacyAPIError", False),
])
def test_policy_from_environment(value: str, out: str, warned: bool):
    rc, stdout, stderr = _run(CALL, {"ANYDEV_LEGACY": value})
    assert rc == 0, stderr
    assert stdout.startswith(out), stdout
    assert ("LegacyAPIWarning" in stderr) == warned, stderr


def test_invalid_policy_from_environment():
    rc, out, err = _run(CALL, {"ANYDEV_LEGACY": "maybe"})
    assert out.startswith("PolicyError: ANYDEV_LEGACY="), out
    assert "'maybe' is not a policy" in out
    rc, out, err = _run(CALL, {"ANYDEV_LEGACY": "warn,often:foo.*"})
    assert out.startswith("PolicyError: ANYDEV_LEGACY=") and "'often'" in out, out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with modules calling anydev.cuda (loud, quiet_mod, sub/inner)."""
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    body = "import anydev.cuda\n\ndef f():\n    return anydev.cuda.current_device()\n"
    for rel in ("loud.py", "quiet_mod.py", "sub/inner.py"):
        (proj / rel).write_text(body)
    (tmp_path / "elsewhere").mkdir()
    return proj


def _call_modules(proj: Path, env=None, prelude: str = "") -> str:
    code = f"""
    import sys
    sys.path[:0] = [{str(proj)!r}, {str(proj / 'sub')!r}]
    {prelude}
    for name in ("loud", "quiet_mod", "inner"):
        try:
            mod = __import__(name)
            mod.f()
        except Exception as e:
            print(name, type(e).__name__, str(e))
        else:
            print(name, "ok")
    """
    rc, out, err = _run(code, env, cwd=proj.parent / "elsewhere")
    assert rc == 0, err
    warned = sorted(Path(line.split(":")[0]).stem for line in err.splitlines()
                    if "LegacyAPIWarning" in line)
    return out + "warned: " + " ".join(warned) + "\n"


PYPROJECT = """
[project]
name = "legacy-user"

[tool.anydev]
legacy = "error"

[[tool.anydev.legacy-override]]
module = "quiet_*"
policy = "ignore"

[[tool.anydev.legacy-override]]
path = "sub/*"
policy = "warn"
"""


def test_policy_from_pyproject(project: Path):
    (project / "pyproject.toml").write_text(PYPROJECT)
    out = _call_modules(project)
    assert out.splitlines()[0].startswith("loud LegacyAPIError")
    assert out.splitlines()[1:] == ["quiet_mod ok", "inner ok", "warned: inner"]


def test_default_without_pyproject_section(project: Path):
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert _call_modules(project).splitlines() == [
        "loud ok", "quiet_mod ok", "inner ok", "warned: inner loud quiet_mod"]


def test_precedence_code_over_env_over_pyproject(project: Path):
    (project / "pyproject.toml").write_text(PYPROJECT)
    # env beats pyproject
    out = _call_modules(project, {"ANYDEV_LEGACY": "ignore"})
    assert out.splitlines() == ["loud ok", "quiet_mod ok", "inner ok", "warned: "]
    # code beats env
    out = _call_modules(project, {"ANYDEV_LEGACY": "ignore"},
                        prelude="import anydev.compat; anydev.compat.set_policy('warn')")
    assert out.splitlines() == ["loud ok", "quiet_mod ok", "inner ok",
                                "warned: inner loud quiet_mod"]
    # env module rule beats pyproject's module override
    out = _call_modules(project, {"ANYDEV_LEGACY": "error:quiet_*"})
    assert out.splitlines()[1].startswith("quiet_mod LegacyAPIError")
    assert out.splitlines()[0].startswith("loud LegacyAPIError")  # env silent: pyproject


@pytest.mark.parametrize("toml, problem", [
    ("[tool.anydev]\nlegacy = 3\n", r"\[tool.anydev\] legacy: 3 is not a policy"),
    ("[tool.anydev]\nlegacy = \"loud\"\n", r"'loud' is not a policy"),
    ("[tool.anydev]\n[[tool.anydev.legacy-override]]\nmodule = \"x\"\n",
     r"legacy-override\]\] #1: `policy` is missing"),
    ("[tool.anydev]\n[[tool.anydev.legacy-override]]\nmodule = \"x\"\npath = \"y\"\n"
     "policy = \"warn\"\n", r"give exactly one of `module` or `path`"),
    ("[tool.anydev]\n[[tool.anydev.legacy-override]]\nmodul = \"x\"\npolicy = \"warn\"\n",
     r"unknown key\(s\) modul"),
    ("[tool.anydev]\nlegacy-override = \"error\"\n", r"must be an array of tables"),
    ("[tool.anydev\n", r"cannot read \[tool.anydev\]"),
])
def test_invalid_pyproject(project: Path, toml: str, problem: str):
    import re

    (project / "pyproject.toml").write_text(toml)
    first = _call_modules(project).splitlines()[0]
    assert first.startswith(f"loud PolicyError {project / 'pyproject.toml'}: "), first
    assert re.search(problem, first), first


# --- static tools --------------------------------------------------------------------------


def test_mypy_reports_the_deprecation(tmp_path: Path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed in this environment")
    src = tmp_path / "uses_legacy.py"
    src.write_text("import anydev.cuda\n\nidx = anydev.cuda.current_device()\n"
                   "name = anydev.cuda.get_device_name()\n")
    p = subprocess.run([sys.executable, "-m", "mypy", "--enable-error-code", "deprecated",
                        "--no-incremental", "--cache-dir", os.devnull, str(src)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert f"{src.name}:3: error: function anydev.cuda.current_device is deprecated" in p.stdout, \
        p.stdout + p.stderr
    assert "[AD103]" in p.stdout
    assert ":4:" not in p.stdout  # kept: not deprecated
