"""The compat table (compat_map/): validation by compat_map/generate.py, the
--check mode for stale generated files, coverage of PyTorch's legacy
surfaces, and what is generated from it (runtime targets, migration guide,
type stubs)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional

import pytest

from anydev._compat import shims as _compat_runtime
from anydev._compat.table import ROWS, ROWS_BY_LEGACY

REPO = Path(__file__).resolve().parents[3]
GENERATE = REPO / "compat_map" / "generate.py"
PACKAGE = REPO / "python" / "anydev"


def run_generate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GENERATE), *args],
                          capture_output=True, text=True, timeout=60)


# --- validation ------------------------------------------------------------------


def test_check_passes_on_the_repository():
    p = run_generate("--check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == ""


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A copy of compat_map/ under tmp_path; returns tmp_path (the --root)."""
    shutil.copytree(REPO / "compat_map", tmp_path / "compat_map")
    return tmp_path


def _line_of(path: Path, text: str, start: int = 1) -> int:
    """1-based number of the first line at or after ``start`` containing ``text``."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if i >= start and text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _row_line(path: Path, code: str, key: str) -> int:
    """Line of ``key = ...`` in the row whose code is ``code``."""
    return _line_of(path, f"{key} = ", _line_of(path, f'code = "{code}"'))


AD103 = 'code = "AD103"\nlegacy = "torch.cuda.current_device"\nkind = "call"\n'


def _dup_key(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, AD103, AD103 + 'kind = "call"\n')
    return "python.toml", _row_line(p, "AD103", "kind") + 1


def _unknown_key(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, AD103, AD103 + 'colour = "red"\n')
    return "python.toml", _row_line(p, "AD103", "colour")


def _bad_kind(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, AD103, AD103.replace('kind = "call"', 'kind = "function"'))
    return "python.toml", _row_line(p, "AD103", "kind")


def _bad_status(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "xpu.toml"
    line = _row_line(p, "AD403", "status")
    lines = p.read_text().splitlines(keepends=True)
    lines[line - 1] = 'status = "obsolete"\n'
    p.write_text("".join(lines))
    return "xpu.toml", line


def _dup_code(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    line = _line_of(p, 'code = "AD104"')
    _edit(p, 'code = "AD104"', 'code = "AD103"')
    return "python.toml", line


def _bad_code(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    line = _line_of(p, 'code = "AD104"')
    _edit(p, 'code = "AD104"', 'code = "AD10x"')
    return "python.toml", line


def _replacement_names_nothing(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, AD103 + 'status = "deprecated"\nreplacement = "torch.accelerator.current_device_index"',
          AD103 + 'status = "deprecated"\nreplacement = "torch.accelerator.current_device_number"')
    return "python.toml", _row_line(p, "AD103", "replacement")


def _anydev_names_nothing(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "xpu.toml"
    line = _row_line(p, "AD403", "anydev")
    lines = p.read_text().splitlines(keepends=True)
    assert lines[line - 1].startswith("anydev = ")
    lines[line - 1] = 'anydev = "anydev.accelerator.current_device_number"\n'
    p.write_text("".join(lines))
    return "xpu.toml", line


def _placeholder_not_in_signature(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, 'template = "torch.accelerator.set_device_index({device})"',
          'template = "torch.accelerator.set_device_index({dev})"')
    return "python.toml", _row_line(p, "AD104", "template")


def _bad_signature(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, 'signature = "(device)"\ntemplate = "torch.accelerator.set_device_index({device})"',
          'signature = "(device=)"\ntemplate = "torch.accelerator.set_device_index({device})"')
    return "python.toml", _row_line(p, "AD104", "signature")


def _unused_target(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "targets.toml"
    _edit(p, '  "torch.tensor",\n', '  "torch.tensor",\n  "torch.accelerator.unused_thing",\n')
    return "targets.toml", _line_of(p, "torch.accelerator.unused_thing")


def _unknown_detector(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "literals.toml"
    _edit(p, 'detect = "py.to_call"', 'detect = "py.to_kall"')
    return "literals.toml", _row_line(p, "AD903", "detect")


def _covers_a_deprecated_row(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "literals.toml"
    _edit(p, 'covers = ["torch.cuda.get_device_name", ', 'covers = ["torch.cuda.synchronize", ')
    return "literals.toml", _row_line(p, "AD911", "covers")


def _literal_without_example(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "literals.toml"
    line = _line_of(p, 'code = "AD904"') - 1
    text = p.read_text().splitlines(keepends=True)
    start = _row_line(p, "AD904", "example") - 1
    del text[start]
    p.write_text("".join(text))
    return "literals.toml", line


def _literal_key_in_api_row(root: Path) -> tuple[str, int]:
    p = root / "compat_map" / "python.toml"
    _edit(p, AD103, AD103 + 'detect = "py.device_call"\n')
    return "python.toml", _row_line(p, "AD103", "detect")


INJECTIONS: dict[str, tuple[Callable[[Path], tuple[str, int]], str]] = {
    "unknown detector": (_unknown_detector, r"detect 'py\.to_kall' is not a python detector"),
    "covers a row that is not kept": (_covers_a_deprecated_row,
                                      r"covers 'torch\.cuda\.synchronize', which is not the "
                                      r"legacy name of a kept row"),
    "literal row without example": (_literal_without_example, r"a literal row needs `example"),
    "literal key in an API row": (_literal_key_in_api_row,
                                  r"`detect` is for the rows of compat_map/literals\.toml"),
    # name: (edit, a regex the message after "file:line:" must match)
    "duplicate key": (_dup_key, r"Cannot overwrite a value"),
    "unknown key": (_unknown_key, r"unknown key `colour`"),
    "bad kind": (_bad_kind, r"kind 'function' is not one of call, context_manager"),
    "bad status": (_bad_status, r"status 'obsolete' is not one of deprecated, kept"),
    "duplicate code": (_dup_code, r"duplicate code AD103 \(also compat_map/python\.toml:\d+\)"),
    "bad code format": (_bad_code, r"code 'AD10x' is not AD followed by three digits"),
    "replacement names nothing": (_replacement_names_nothing,
                                  r"replacement 'torch\.accelerator\.current_device_number' names "
                                  r"nothing: it is not in \[python\] of compat_map/targets\.toml"),
    "anydev target names nothing": (_anydev_names_nothing,
                                    r"anydev target 'anydev\.accelerator\.current_device_number' "
                                    r"names nothing"),
    "template placeholder not in signature": (_placeholder_not_in_signature,
                                              r"template placeholder \{dev\} is not a parameter "
                                              r"of the signature '\(device\)'"),
    "signature not a parameter list": (_bad_signature,
                                       r"signature '\(device=\)' is not a Python parameter list"),
    "target used by no row": (_unused_target,
                              r"`torch\.accelerator\.unused_thing` in \[python\] is used by no row"),
}


@pytest.mark.parametrize("name", list(INJECTIONS))
@pytest.mark.parametrize("check", [True, False], ids=["check", "write"])
def test_invalid_table_stops_with_file_line_and_reason(table: Path, name: str, check: bool):
    inject, reason = INJECTIONS[name]
    fname, line = inject(table)
    p = run_generate("--root", str(table), *(["--check"] if check else []))
    assert p.returncode == 1, p.stdout + p.stderr
    pattern = rf"^compat_map/{re.escape(fname)}:{line}:(\d+:)? .*{reason}"
    assert re.search(pattern, p.stderr, re.M), (pattern, p.stderr)
    assert "the table is invalid" in p.stderr
    # An invalid table writes nothing, even without --check.
    assert sorted(os.listdir(table)) == ["compat_map"]


def test_several_problems_are_all_reported(table: Path):
    _bad_kind(table)
    _unused_target(table)
    p = run_generate("--root", str(table), "--check")
    assert p.returncode == 1
    assert "kind 'function'" in p.stderr and "unused_thing" in p.stderr
    assert "(2 problem(s))" in p.stderr


def test_stale_generated_file_fails_check(table: Path):
    p = run_generate("--root", str(table))  # writes every output under the copy
    assert p.returncode == 0, p.stderr
    assert "compat_map: wrote docs/migration-guide.md" in p.stdout
    p = run_generate("--root", str(table), "--check")
    assert p.returncode == 0, p.stderr
    # The outputs of the copy are those of the repository.
    for rel in ("python/anydev/cuda/__init__.py", "python/anydev/_compat/table.py",
                "docs/migration-guide.md"):
        assert (table / rel).read_text() == (REPO / rel).read_text(), rel

    guide = table / "docs" / "migration-guide.md"
    guide.write_text(guide.read_text() + "\nhand edit\n")
    (table / "python" / "anydev" / "xpu" / "__init__.pyi").unlink()
    before = guide.read_text()
    p = run_generate("--root", str(table), "--check")
    assert p.returncode == 1
    assert "compat_map: docs/migration-guide.md is stale" in p.stderr
    assert "compat_map: python/anydev/xpu/__init__.pyi is stale" in p.stderr
    assert "cuda/__init__.py is stale" not in p.stderr
    assert guide.read_text() == before  # --check writes nothing
    # A row edit makes every output that shows it stale.
    p = run_generate("--root", str(table))
    assert p.returncode == 0
    _edit(table / "compat_map" / "python.toml", "Returns the same index of the calling thread",
          "Returns the very same index of the calling thread")
    p = run_generate("--root", str(table), "--check")
    assert p.returncode == 1
    assert "python/anydev/_compat/table.py is stale" in p.stderr
    assert "docs/migration-guide.md is stale" in p.stderr


# --- coverage ---------------------------------------------------------------------

# /work/shared/reference/pytorch_api.md section 3.1: torch.cuda.__all__, plus the names
# the same file defines outside __all__.
TORCH_CUDA_ALL = """
BFloat16Storage BFloat16Tensor BoolStorage BoolTensor ByteStorage ByteTensor CharStorage CharTensor
ComplexDoubleStorage ComplexFloatStorage DoubleStorage DoubleTensor FloatStorage FloatTensor HalfStorage
HalfTensor IntStorage IntTensor LongStorage LongTensor ShortStorage ShortTensor CUDAGraph CudaError
DeferredCudaCallError Event ExternalStream Stream StreamContext GreenContext amp caching_allocator_alloc
caching_allocator_delete caching_allocator_enable can_device_access_peer check_error cudaStatus cudart
current_blas_handle current_device current_stream default_generators default_stream device device_count
device_memory_used device_of empty_cache get_allocator_backend CUDAPluggableAllocator change_current_allocator
get_arch_list get_device_capability get_device_name get_device_properties get_gencode_flags
get_per_process_memory_fraction get_rng_state get_rng_state_all get_stream_from_external get_sync_debug_mode
graph graph_pool_handle graphs has_half has_magma host_memory_stats host_memory_stats_as_nested_dict init
initial_seed ipc_collect is_available is_bf16_supported is_current_stream_capturing is_initialized
is_tf32_supported jiterator list_gpu_processes make_graphed_callables manual_seed manual_seed_all
max_memory_allocated max_memory_cached max_memory_reserved mem_get_info memory memory_allocated memory_cached
memory_reserved memory_snapshot memory_stats memory_stats_as_nested_dict memory_summary memory_usage MemPool
use_mem_pool temperature power_draw clock_rate nccl nvtx profiler random reset_accumulated_host_memory_stats
reset_accumulated_memory_stats reset_max_memory_allocated reset_max_memory_cached reset_peak_host_memory_stats
reset_peak_memory_stats seed seed_all set_device set_per_process_memory_fraction set_rng_state
set_rng_state_all set_stream set_sync_debug_mode sparse stream streams synchronize tunable utilization
AcceleratorError OutOfMemoryError compile_kernel gds
""".split()

# Section 3.6: torch.xpu.__all__.
TORCH_XPU_ALL = """
Event Stream StreamContext XPUPluggableAllocator XPUGraph can_device_access_peer change_current_allocator
current_device current_stream default_generators device device_of device_count empty_cache get_arch_list
get_device_capability get_device_name get_device_properties get_gencode_flags get_per_process_memory_fraction
get_rng_state get_rng_state_all get_stream_from_external graph graph_pool_handle init initial_seed
is_available is_bf16_supported is_current_stream_capturing is_initialized is_tf32_supported
make_graphed_callables manual_seed manual_seed_all max_memory_allocated max_memory_reserved mem_get_info
memory_allocated memory_reserved memory_snapshot memory_stats memory_stats_as_nested_dict MemPool
use_mem_pool reset_accumulated_memory_stats reset_peak_memory_stats seed seed_all set_device
set_per_process_memory_fraction set_rng_state set_rng_state_all set_stream stream streams synchronize
""".split()

# Section 3.5 and 1.2.
TORCH_CUDA_AMP = ["autocast", "custom_fwd", "custom_bwd", "GradScaler"]
ACCELERATOR_ALIASES = ["current_device_idx", "set_device_idx"]


def test_reference_lists_have_the_expected_sizes():
    # Guards the hard-coded lists against an accidental edit.
    assert len(set(TORCH_CUDA_ALL)) == len(TORCH_CUDA_ALL) == 127
    assert len(set(TORCH_XPU_ALL)) == len(TORCH_XPU_ALL) == 57


@pytest.mark.parametrize("prefix, names", [
    ("torch.cuda.", TORCH_CUDA_ALL),
    ("torch.xpu.", TORCH_XPU_ALL),
    ("torch.cuda.amp.", TORCH_CUDA_AMP),
    ("torch.accelerator.", ACCELERATOR_ALIASES),
], ids=["torch.cuda", "torch.xpu", "torch.cuda.amp", "torch.accelerator aliases"])
def test_every_legacy_name_has_a_row(prefix: str, names: list[str]):
    missing = [prefix + n for n in names if prefix + n not in ROWS_BY_LEGACY]
    assert missing == []
    for n in names:
        assert ROWS_BY_LEGACY[prefix + n].language == "python"


def test_accelerator_aliases_are_deprecated_forwarders_to_the_index_functions():
    cur = ROWS_BY_LEGACY["torch.accelerator.current_device_idx"]
    assert (cur.status, cur.anydev) == ("deprecated", "anydev.accelerator.current_device_index")
    assert cur.replacement == "torch.accelerator.current_device_index"
    st = ROWS_BY_LEGACY["torch.accelerator.set_device_idx"]
    assert (st.status, st.anydev) == ("deprecated", "anydev.accelerator.set_device_index")


def test_rows_are_well_formed():
    codes = [r.code for r in ROWS]
    assert len(codes) == len(set(codes))
    for r in ROWS:
        assert re.fullmatch(r"AD[1-9]\d\d", r.code), r
        assert r.status in ("deprecated", "kept", "literal"), r
        assert (r.status == "literal") == r.code.startswith("AD9") == \
            r.source.startswith("compat_map/literals.toml"), r
        assert r.note, r
        assert re.fullmatch(r"compat_map/(python|xpu|cpp|literals)\.toml:\d+", r.source), r
        if r.status == "literal":
            assert bool(r.detect) != bool(r.covers) and len(r.example) == 2, r
            assert r.template and r.since and r.fix == "unsafe", r
        if r.status == "kept":
            assert r.fix == "none" and r.template is None, r
        if r.fix == "none":
            assert r.template is None, r
        if r.replacement == "":
            assert r.fix == "none", r


def test_row_sources_point_at_their_rows():
    texts = {f: (REPO / "compat_map" / f).read_text().splitlines()
             for f in ("python.toml", "xpu.toml", "cpp.toml", "literals.toml")}
    for r in ROWS:
        fname, line = r.source.split("/")[1].split(":")
        lines = texts[fname]
        assert lines[int(line) - 1] == "[[row]]", r.source
        assert lines[int(line)] == f'code = "{r.code}"', r.source


MEMORY_TARGETS = {
    "anydev.accelerator." + n for n in (
        "empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated",
        "memory_reserved", "max_memory_reserved", "reset_accumulated_memory_stats",
        "reset_peak_memory_stats", "get_memory_info")
}
PY_DEPRECATED_WITH_TARGET = [r for r in ROWS
                             if r.language == "python" and r.status == "deprecated" and r.anydev]


@pytest.mark.parametrize("row", PY_DEPRECATED_WITH_TARGET, ids=lambda r: f"{r.code}-{r.legacy}")
def test_anydev_target_resolves_at_runtime(row):
    target = _compat_runtime._resolve(row.anydev)
    if target is None and row.anydev in MEMORY_TARGETS:
        pytest.skip(f"{row.anydev} is not implemented yet (the accelerator memory API is "
                    f"being added separately)")
    assert target is not None, f"{row.legacy}: {row.anydev} does not exist in anydev"
    if row.kind == "class":
        assert isinstance(target, type), row.anydev
    else:
        assert callable(target) or isinstance(target, type), row.anydev


# --- the migration guide --------------------------------------------------------------


def _counts(rows) -> tuple[int, int, int, int, int]:
    dep = [r for r in rows if r.status in ("deprecated", "literal")]
    return (len(rows), len(dep), len(rows) - len(dep),
            sum(1 for r in dep if r.fix in ("safe", "unsafe")),
            sum(1 for r in dep if r.anydev))


def _area(r) -> str:
    n = r.legacy
    if r.status == "literal":
        return "device literals and idioms"
    if n.startswith("torch.cuda.amp."):
        return "torch.cuda.amp"
    if n.startswith("torch.cuda."):
        return "torch.cuda"
    if n.startswith("torch.xpu."):
        return "torch.xpu"
    if n.startswith("torch.accelerator."):
        return "torch.accelerator aliases"
    if "CUDACachingAllocator" in n:
        return "CUDACachingAllocator"
    if n.startswith(("c10::cuda::", "at::cuda::")):
        return "c10::cuda / at::cuda"
    if n.startswith("c10::xpu::"):
        return "c10::xpu"
    raise AssertionError(f"row {r.code} {n} is in no area of the guide")


def test_migration_guide_states_coverage_matching_the_table():
    text = (REPO / "docs" / "migration-guide.md").read_text()
    m = re.search(r"The table has \*\*(\d+) rows\*\* \((\d+) spellings", text)
    assert m, "the guide states no row count"
    assert int(m.group(1)) == len(ROWS)
    assert int(m.group(2)) == sum(1 + len(r.also) for r in ROWS)

    stated: dict[str, tuple[int, ...]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and all(re.fullmatch(r"\**\d+\**", c) for c in cells[1:]):
            name = cells[0].strip("*`")
            stated[name] = tuple(int(c.strip("*")) for c in cells[1:])
    areas: dict[str, list] = {}
    for r in ROWS:
        areas.setdefault(_area(r), []).append(r)
    expected = {name: _counts(rows) for name, rows in areas.items()}
    expected["all"] = _counts(list(ROWS))
    assert stated == expected
    # Every Python legacy name is listed with its rule code, at the anchor its
    # link points to (anydev._migrate.rules.rule_url: an editor's, SARIF's).
    from anydev._migrate.rules import rule_url

    for r in ROWS:
        anchor = rule_url(r.code).rpartition("#")[2]
        assert rule_url(r.code).split("/blob/main/")[1].startswith("docs/migration-guide.md#")
        assert f"`{r.legacy}`" in text and f'| <a id="{anchor}"></a>{r.code} |' in text, r.code


# --- type stubs ---------------------------------------------------------------------------

STUBS = {
    "anydev.cuda": ("cuda/__init__.pyi", "torch.cuda."),
    "anydev.cuda.amp": ("cuda/amp/__init__.pyi", "torch.cuda.amp."),
    "anydev.xpu": ("xpu/__init__.pyi", "torch.xpu."),
}


def _stub_rows(prefix: str) -> dict[str, object]:
    out = {}
    for r in ROWS:
        if r.language != "python" or not r.legacy.startswith(prefix):
            continue
        rest = r.legacy[len(prefix):]
        if "." not in rest:
            out[rest] = r
    return out


def _deprecated_message(node: ast.AST) -> Optional[str]:
    for d in getattr(node, "decorator_list", []):
        if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "deprecated":
            assert len(d.args) == 1 and isinstance(d.args[0], ast.Constant)
            return d.args[0].value
        if getattr(d, "id", None) == "deprecated":
            return ""
    return None


@pytest.mark.parametrize("module", list(STUBS))
def test_stubs_mark_every_deprecated_callable(module: str):
    rel, prefix = STUBS[module]
    tree = ast.parse((PACKAGE / rel).read_text())
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "typing_extensions"]
    assert any(a.name == "deprecated" for n in imports for a in n.names)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    annotated = {n.target.id for n in tree.body
                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    rows = _stub_rows(prefix)
    if module == "anydev.cuda":
        rows.pop("amp")  # a submodule: `from . import amp as amp`
    submodules = {a.asname for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1
                  for a in n.names}  # `from . import memory as memory`
    checked = 0
    for name, row in rows.items():
        if row.kind == "module" and name in submodules:
            continue
        if row.kind in ("attribute", "module"):
            assert name in annotated, f"{module}.{name} has no stub"
            continue
        assert name in defs, f"{module}.{name} has no stub"
        msg = _deprecated_message(defs[name])
        if row.status == "deprecated":
            assert msg, f"{module}.{name} is deprecated but its stub lacks @deprecated"
            assert row.legacy in msg and f"[{row.code}]" in msg, msg
            if row.replacement:
                assert row.replacement in msg, msg
            checked += 1
        else:
            assert msg is None, f"{module}.{name} is kept but its stub is @deprecated"
    assert checked > 0
    # Nothing in the stub that the table does not have.
    assert set(defs) | annotated <= set(rows)


def test_stubs_match_the_runtime_module_names():
    import anydev.cuda
    import anydev.cuda.amp
    import anydev.xpu

    for module, (rel, _) in STUBS.items():
        tree = ast.parse((PACKAGE / rel).read_text())
        names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        names |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
        # the submodules: `from . import amp as amp`, `from . import memory as memory`
        names |= {a.asname for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1
                  for a in n.names}
        assert names == set(sys.modules[module].__all__), module


def test_installed_package_ships_the_stubs():
    import anydev

    root = Path(anydev.__file__).parent
    for rel, _ in STUBS.values():
        assert (root / rel).is_file(), rel


def test_scan_table_is_the_table_s_rows():
    # anydev._migrate.scan_table (what `anydev scan` loads instead of the whole table:
    # Note [Scan table] in anydev/scan.py) holds the native rules
    # anydev.scan._native_rule makes of the rows, the opt-in codes, and each
    # row's scanner fields.
    from anydev._migrate import scan_table as _scan_table
    from anydev import scan

    covered = {n for r in ROWS for n in r.covers}
    assert _scan_table.NATIVE == tuple(
        tuple(tuple(v) if isinstance(v, list) else v for v in scan._native_rule(r, covered))
        for r in ROWS)
    assert _scan_table.OPT_IN == tuple(r.code for r in ROWS if r.opt_in)
    rows = scan._scan_rows()
    assert len(rows) == len(ROWS) == len(_scan_table.ROWS_TEXT)
    for mine, row in zip(rows, ROWS):
        assert tuple(mine) == tuple(getattr(row, f) for f in _scan_table.SCAN_FIELDS)
        for f in _scan_table.SCAN_FIELDS:
            assert getattr(mine, f) == getattr(row, f), (row.code, f)
        assert scan.message_for(row.legacy, mine) == scan.message_for(row.legacy, row)
    assert rows[-1] is rows[len(rows) - 1]
