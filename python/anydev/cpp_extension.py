"""Compile-time deprecation warnings for C++ extensions built against PyTorch.

``<anydev/torch_deprecations.h>``, generated from the compat table, redeclares
every legacy ``c10::cuda`` / ``at::cuda`` / ``c10::xpu`` function with
``[[deprecated("use <replacement> [ADxxx]")]]``; forced into each source of a
build, it makes g++, clang++ and nvcc list each legacy call, at its line, with
its replacement and rule (docs/compat.md, "C++ extensions on PyTorch"). This
module gives the flags; importing it changes nothing (unlike ``anydev.torch``,
which installs the Python forwarders).

    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
    from anydev.cpp_extension import extra_compile_args

    CUDAExtension("my_ext", ["ext.cpp", "kernel.cu"],
                  extra_compile_args=extra_compile_args({"cxx": ["-O3"], "nvcc": ["-O3"]}))

Then ``anydev report show build.log`` reads the warnings back into a report.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Union

__all__ = ["cmake_dir", "extra_compile_args", "header", "include_flags"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def header() -> str:
    """Returns the absolute path of ``anydev/torch_deprecations.h``: in the
    installed package (``anydev/include``), else in a source checkout."""
    for base in (os.path.join(_HERE, "include"),
                 os.path.join(os.path.dirname(os.path.dirname(_HERE)), "shims", "include")):
        path = os.path.join(base, "anydev", "torch_deprecations.h")
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("anydev/torch_deprecations.h is not installed with anydev "
                            f"(looked in {_HERE}/include); reinstall anydev")


def cmake_dir() -> str:
    """Returns the folder of anydev's CMake package (for ``-Danydev_DIR=``)."""
    return os.path.join(_HERE, "lib", "cmake", "anydev")


def _torch_includes() -> list[str]:
    try:
        from torch.utils import cpp_extension
    except ImportError:
        return []
    return list(cpp_extension.include_paths())


def include_flags(torch_includes: Optional[Sequence[str]] = None) -> list[str]:
    """The compiler flags, the same for g++, clang++ and nvcc: ``-include``
    the header, and ``-isystem`` for PyTorch's include folders, which makes
    them system headers (a folder that is also given with ``-I``, as
    setuptools does, is then searched as a system folder), so the legacy calls
    inside PyTorch's own headers do not warn. ``torch_includes``: those
    folders (default: ``torch.utils.cpp_extension.include_paths()``, none
    when PyTorch is not importable)."""
    folders = _torch_includes() if torch_includes is None else list(torch_includes)
    flags = ["-include", header()]
    for folder in folders:
        flags += ["-isystem", folder]
    return flags


Args = Union[Sequence[str], Mapping[str, Sequence[str]], None]


def extra_compile_args(base: Args = None, *,
                       torch_includes: Optional[Sequence[str]] = None) -> dict[str, list[str]]:
    """Returns ``extra_compile_args`` for ``torch.utils.cpp_extension``'s
    ``CppExtension`` / ``CUDAExtension`` (and ``load(extra_cflags=...,
    extra_cuda_cflags=...)``): ``base`` (a list, for the C++ compiler, or a
    dict with ``cxx`` / ``nvcc`` lists) with :func:`include_flags` added to
    both, and ``-Wdeprecated-declarations`` for the C++ compiler (and nvcc's
    host compiler) in case the build turned it off."""
    if base is None:
        cxx, nvcc, rest = [], [], {}
    elif isinstance(base, Mapping):
        unknown = sorted(set(base) - {"cxx", "nvcc", "nvcc_dlink"})
        if unknown:
            raise ValueError(f"extra_compile_args: unknown key(s) {', '.join(unknown)} "
                             f"(torch.utils.cpp_extension reads cxx, nvcc, nvcc_dlink)")
        cxx, nvcc = list(base.get("cxx", [])), list(base.get("nvcc", []))
        rest = {k: list(v) for k, v in base.items() if k not in ("cxx", "nvcc")}
    elif isinstance(base, str):
        raise TypeError("extra_compile_args: base must be a list of flags or a dict, not a str")
    else:
        cxx, nvcc, rest = list(base), [], {}
    flags = include_flags(torch_includes)
    out = {"cxx": cxx + flags + ["-Wdeprecated-declarations"],
           "nvcc": nvcc + flags + ["-Xcompiler", "-Wdeprecated-declarations"]}
    out.update(rest)
    return out
