"""The fixer's C++ rewrites compile against the real PyTorch headers.

Each file of tests/fixtures/cpp_compile/ holds one family of forms (calls,
device guards, streams and graphs, and the rows whose legacy headers need more
than the CPU wheel ships). The test fixes it with unsafe fixes on, checks that
every finding of a row with a fix was applied, and compiles the fixed file with
``g++ -fsyntax-only`` against the torch wheel's include folder, CUDA's runtime
headers and tests/fixtures/cpp_compile/include (a header a CUDA build generates
and the wheel lacks). Where the legacy headers can be compiled, the original
follows the fixed code in the same translation unit, inside a namespace, so the
forms are shown to be valid legacy code too; ``fixed_only.cc`` includes no
legacy header, so the #includes the fixer adds must declare what it inserted.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from anydev import fix, scan
from anydev._compat.table import ROWS
from fix_default import newest_default_target  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "cpp_compile"
FAMILIES = ("calls.cc", "device_guards.cc", "streams.cc", "fixed_only.cc")
_LEGACY_INCLUDE = re.compile(r"(?m)^#include <(?:c10|ATen)/(?:cuda|xpu)/.*$")


def _compiler() -> str:
    for name in ("g++", "c++"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no C++ compiler (g++) on PATH")


def _torch_include() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    inc = Path(list(spec.submodule_search_locations)[0]) / "include"
    if not (inc / "c10" / "cuda" / "CUDAGuard.h").is_file():
        pytest.skip(f"{inc} has no c10/cuda headers")
    return inc


def _cuda_include() -> Path | None:
    for base in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if base and (Path(base) / "include" / "cuda_runtime_api.h").is_file():
            return Path(base) / "include"
    return None


def _fixed(name: str) -> tuple[str, str, list, list]:
    data = (FIXTURES / name).read_bytes()
    # The API rows: the device literals (at::kCUDA: AD951) are left by this fixer.
    findings, errors = scan.scan_source(data, name, ignore=["AD9"])
    assert not errors
    new, applied, skipped = fix.fix_source(data, name, findings, unsafe=True)
    return data.decode(), new.decode(), applied, skipped


@pytest.mark.parametrize("name", FAMILIES)
def test_fixture_rewrites_every_row_with_a_fix(name):
    _, new, applied, skipped = _fixed(name)
    assert applied
    left = [(f.line, f.rule, why) for f, why in skipped if f.fix != "none"]
    assert left == []
    includes = re.findall(r"(?m)^#include .*$", new)
    assert len(includes) == len(set(includes))


def test_fixtures_cover_every_cpp_row_with_a_fix():
    seen = set()
    for name in FAMILIES:
        seen.update(f.rule for f in _fixed(name)[2])
    rows = {r.code for r in ROWS if r.language == "cpp" and r.status == "deprecated"
            and r.fix != "none"}
    assert rows - seen == set()


@pytest.mark.parametrize("name", FAMILIES)
def test_fixed_file_compiles_against_torch_headers(name, tmp_path):
    cxx, torch_inc = _compiler(), _torch_include()
    cuda_inc = _cuda_include()
    original, new, _, _ = _fixed(name)
    legacy = name != "fixed_only.cc"
    if legacy and cuda_inc is None:
        pytest.skip("CUDA's runtime headers (cuda_runtime_api.h) are missing, which "
                    "c10/cuda's headers include; set CUDA_HOME")
    tu = new
    if legacy:
        includes = "\n".join(_LEGACY_INCLUDE.findall(original))
        body = _LEGACY_INCLUDE.sub("", original)
        tu += f"\n{includes}\nnamespace legacy_forms {{\n{body}\n}}  // namespace legacy_forms\n"
    src = tmp_path / name
    src.write_text(tu)
    cmd = [cxx, "-std=c++20", "-fsyntax-only", "-w", "-I", str(FIXTURES / "include"),
           "-I", str(torch_inc)]
    if cuda_inc is not None:
        cmd += ["-I", str(cuda_inc)]
    proc = subprocess.run(cmd + [str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{name} (fixed) does not compile:\n{tu}\n{proc.stderr[-6000:]}"


def _fix_one(src: str, name: str = "x.cc") -> tuple[str, list[tuple[int, str, str]]]:
    findings, _ = scan.scan_source(src, name)
    new, _, skipped = fix.fix_source(src.encode(), name, findings, unsafe=True)
    return new.decode(), [(f.line, f.rule, why) for f, why in skipped]


def test_guard_argument_of_unknown_type_is_refused_with_the_reason():
    src = ("#include <c10/cuda/CUDAGuard.h>\n"
           "void f(Options opts, auto x) {\n"
           "  at::cuda::CUDAGuard g(x);\n"
           "  at::cuda::CUDAGuard h(opts.dev + 1);\n"
           "}\n")
    new, skipped = _fix_one(src)
    assert new == src
    assert [s[:2] for s in skipped] == [(3, "AD627"), (4, "AD627")]
    assert "cannot tell the type of `x` (a c10::Device or a device index?)" in skipped[0][2]


def test_guard_forms_that_would_not_compile_are_refused():
    src = ("#include <c10/cuda/CUDAGuard.h>\n"
           "#include <ATen/cuda/CUDAGraph.h>\n"
           "void f(int i, c10::Device d, std::optional<c10::DeviceIndex> oi) {\n"
           "  { at::cuda::CUDAGuard g(i); g.set_device(d); }\n"
           "  { at::cuda::OptionalCUDAGuard g(oi); }\n"
           "  { at::cuda::OptionalCUDAGuard g; g.set_index(i); }\n"
           "  { at::cuda::CUDAStreamGuard g(s); auto o = g.original_stream(); }\n"
           "  { at::cuda::CUDAGraph graph; graph.capture_begin({0, 0}, cudaStreamCaptureModeGlobal); }\n"
           "  std::unique_ptr<at::cuda::CUDAGuard> p;\n"
           "  c10::cuda::CUDACachingAllocator::emptyCache(pool_id);\n"
           "}\n")
    new, skipped = _fix_one(src)
    assert new == src
    reasons = {line: why for line, _, why in skipped}
    assert "used with set_device, which c10::DeviceGuard does not have" in reasons[4]
    assert "takes no optional index argument (`oi`)" in reasons[5]
    assert "used with set_index" in reasons[6]
    assert "used with original_stream" in reasons[7]
    assert "GraphCaptureMode" in reasons[8]
    assert "are not visible here" in reasons[9]
    assert "no place for argument(s) mempool_id" in reasons[10]


def test_includes_are_added_once_after_the_last_include():
    src = ("// header comment\n"
           "#pragma once\n"
           "#include <c10/cuda/CUDAGuard.h>\n"
           "#ifdef USE_X\n"
           "#include <x.h>\n"
           "#endif\n"
           "#include <vector>\n"
           "\n"
           "void f(int i) {\n"
           "  at::cuda::CUDAGuard g(i);\n"
           "  c10::cuda::device_synchronize();\n"
           "  c10::cuda::CUDACachingAllocator::emptyCache();\n"
           "}\n")
    new, skipped = _fix_one(src, "x.h")
    assert skipped == []
    head = new.split("\nvoid f", 1)[0]
    assert head == ("// header comment\n#pragma once\n#include <c10/cuda/CUDAGuard.h>\n"
                    "#ifdef USE_X\n#include <x.h>\n#endif\n#include <vector>\n"
                    "#include <ATen/DeviceAccelerator.h>\n#include <c10/core/DeviceGuard.h>\n")
    # already included: nothing added; a second run changes nothing
    again, _ = _fix_one(new, "x.h")
    assert again == new
    src2 = "#include <ATen/DeviceAccelerator.h>\nint n() { return c10::cuda::device_count(); }\n"
    assert _fix_one(src2)[0] == ("#include <ATen/DeviceAccelerator.h>\n"
                                 "int n() { return at::accelerator::deviceCount(); }\n")
    # a file without any #include relies on the files included before it
    assert _fix_one("int n() { return c10::cuda::device_count(); }\n")[0] == (
        "int n() { return at::accelerator::deviceCount(); }\n")


def test_a_macro_parameter_has_no_type_to_tell():
    src = ("#include <c10/cuda/CUDAGuard.h>\n"
           "void f(int d) {}\n"
           "#define GUARD(d) at::cuda::CUDAGuard guard_(d)\n")
    new, skipped = _fix_one(src)
    assert new == src and "cannot tell the type of `d`" in skipped[0][2]
