#!/usr/bin/env python3
"""Validates the compat table (compat_map/*.toml) and writes what it drives.

    python3 compat_map/generate.py            # validate, then write what changed
    python3 compat_map/generate.py --check    # validate; fail if a generated file is stale

Outputs (each opens with an @generated line naming its source):

    python/anydev/_compat/table.py        the rows, for the runtime and the report
    python/anydev/_migrate/scan_table.py  the fields of the rows `anydev scan` reads
    python/anydev/cuda/__init__.py(i)     shims for torch.cuda, and their stubs
    python/anydev/cuda/amp/__init__.py(i) shims for torch.cuda.amp
    python/anydev/xpu/__init__.py(i)      shims for torch.xpu
    python/anydev/{cuda,xpu}/{memory,random,graphs,streams}.py(i)  their submodules (SUBMODULES)
    python/anydev/_compat/legacy_accelerator.py  torch.accelerator.*_idx aliases
    shims/include/anydev/compat/cuda.h    C++ [[deprecated]] forwarders in anydev::cuda
    shims/include/anydev/compat/xpu.h     C++ forwarders in anydev::xpu
    docs/migration-guide.md               the migration guide, with coverage in numbers

Validation is strict (the schema is compat_map/SCHEMA.md): unknown or
duplicate keys, a bad kind, status or fix, a malformed code, a duplicate code
or legacy name, a replacement or anydev target that targets.toml does not
list, a template placeholder the signature does not bind: each stops with
``file:line: reason``. Exit codes: 0 ok, 1 invalid table or stale output.
"""

from __future__ import annotations

import argparse
import functools
import ast
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE_DIR = os.path.join(ROOT, "compat_map")
ROW_FILES = ("python.toml", "xpu.toml", "cpp.toml", "literals.toml")

KEYS = ["code", "legacy", "also", "kind", "status", "replacement", "anydev", "fix", "signature",
        "template", "rename", "deprecated_in", "since", "note", "shim", "redeclare",
        "not_redeclared", "language", "detect", "covers", "opt_in", "example",
        "pytorch_deprecated"]
# The native detectors of literal rows (core/scan/src/literal_rules.cc), by language.
DETECTORS = {
    "python": ("py.device_call", "py.device_keyword", "py.to_call", "py.amp_device",
               "py.availability", "py.availability_statement", "py.cuda_method", "py.is_cuda",
               "py.device_type_compare", "py.nccl_backend"),
    "cpp": ("cpp.device_type", "cpp.cuda_method", "cpp.is_cuda"),
}
# The newest PyTorch release the table's `since` claims were checked against
# (tests/python/compat/test_compat_versions.py); `since = "main"` means no release up
# to this one has the replacement.
NEWEST_TORCH = "2.13"
KINDS = ("call", "context_manager", "class", "attribute", "module", "decorator", "literal", "idiom")
STATUSES = ("deprecated", "kept", "literal")
FIXES = ("safe", "unsafe", "none")
AREAS = {  # code range -> (files it may appear in, legacy prefix)
    1: ("python.toml", "torch.cuda."), 2: ("python.toml", "torch.cuda."),
    3: ("python.toml", "torch.cuda"), 4: ("xpu.toml", "torch.xpu"),
    5: ("python.toml", "torch."), 6: ("cpp.toml", ""), 7: ("cpp.toml", ""), 8: ("cpp.toml", ""),
    9: ("literals.toml", ""),
}
GENERATED = "@generated from compat_map/{src} by compat_map/generate.py -- do not edit"


class TableError(Exception):
    pass


@dataclass
class Row:
    file: str               # "python.toml"
    line: int               # line of its [[row]] header
    text_lines: list[str]   # the row's source lines, for key positions
    data: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        if name in KEYS:
            return self.data.get(name)
        raise AttributeError(name)

    @property
    def source(self) -> str:
        return f"compat_map/{self.file}:{self.line}"

    def key_line(self, key: str) -> int:
        pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for i, text in enumerate(self.text_lines):
            if pat.match(text):
                return self.line + i
        return self.line

    @property
    def is_cpp(self) -> bool:
        return self.file == "cpp.toml" or self.data.get("language") == "cpp"


@dataclass
class Table:
    rows: list[Row] = field(default_factory=list)
    targets: dict[str, set[str]] = field(default_factory=dict)
    target_lines: dict[str, int] = field(default_factory=dict)


# --- loading -------------------------------------------------------------------


def _load_toml(path: str) -> tuple[dict[str, Any], list[str]]:
    rel = os.path.relpath(path, ROOT)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TableError(f"{rel}: cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TableError(f"{rel}: not UTF-8 (byte {e.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        if m:
            msg = msg[: m.start()].strip()
            if "overwrite" in msg.lower():
                msg += " (a key given twice?)"
            raise TableError(f"{rel}:{m.group(1)}:{m.group(2)}: {msg}") from None
        raise TableError(f"{rel}: {msg}") from None
    return data, text.splitlines()


def load_table() -> Table:
    table = Table()
    errors: list[str] = []
    tpath = os.path.join(TABLE_DIR, "targets.toml")
    tdata, tlines = _load_toml(tpath)
    for key in tdata:
        if key not in ("schema", "python", "anydev_python", "cpp", "anydev_cpp"):
            errors.append(f"compat_map/targets.toml: unknown key `{key}`")
    for group in ("python", "anydev_python", "cpp", "anydev_cpp"):
        section = tdata.get(group, {})
        names = section.get("names", []) if isinstance(section, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            errors.append(f"compat_map/targets.toml: [{group}] names must be a list of strings")
            continue
        seen: set[str] = set()
        for n in names:
            line = next((i + 1 for i, t in enumerate(tlines) if f'"{n}"' in t), 1)
            if n in seen:
                errors.append(f"compat_map/targets.toml:{line}: `{n}` is listed twice")
            seen.add(n)
            table.target_lines[n] = line
        table.targets[group] = seen
    for fname in ROW_FILES:
        path = os.path.join(TABLE_DIR, fname)
        data, lines = _load_toml(path)
        if data.get("schema") != 1:
            errors.append(f"compat_map/{fname}:1: `schema = 1` is missing or not 1")
        for key in data:
            if key not in ("schema", "row"):
                line = next((i + 1 for i, t in enumerate(lines)
                             if re.match(rf"^\s*\[?{re.escape(key)}\b", t)), 1)
                errors.append(f"compat_map/{fname}:{line}: unknown top-level key `{key}`")
        rows = data.get("row", [])
        headers = [i + 1 for i, t in enumerate(lines) if t.strip() == "[[row]]"]
        if not isinstance(rows, list) or len(headers) != len(rows):
            errors.append(f"compat_map/{fname}: every row must be a `[[row]]` table on a line "
                          f"of its own ({len(headers)} headers for {len(rows)} rows)")
            continue
        for i, (d, line) in enumerate(zip(rows, headers)):
            end = headers[i + 1] - 1 if i + 1 < len(headers) else len(lines)
            table.rows.append(Row(fname, line, lines[line - 1:end], d))
    if errors:
        raise TableError("\n".join(errors))
    return table


# --- validation ----------------------------------------------------------------


def _signature_params(sig: str) -> list[str]:
    return _runtime_module("signature").params(sig).names


def _cpp_params(sig: str) -> list[str]:
    names = []
    depth = 0
    cur = ""
    for ch in sig.strip().strip("()"):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        names.append(cur)
    out = []
    for p in names:
        p = p.split("=")[0].strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        if m:
            out.append(m.group(1))
    return out


PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def validate(table: Table) -> None:
    errors: list[str] = []
    codes: dict[str, Row] = {}
    names: dict[str, Row] = {}

    def err(row: Row, key: Optional[str], msg: str) -> None:
        line = row.key_line(key) if key else row.line
        errors.append(f"compat_map/{row.file}:{line}: {row.data.get('legacy', '?')}: {msg}")

    for row in table.rows:
        d = row.data
        for key in d:
            if key not in KEYS:
                err(row, key, f"unknown key `{key}` (known: {', '.join(KEYS)})")
        for key in ("code", "legacy", "kind", "status", "deprecated_in", "note"):
            if key not in d:
                err(row, None, f"`{key}` is missing")
        for key in ("code", "legacy", "kind", "status", "replacement", "anydev", "fix",
                    "signature", "template", "deprecated_in", "note"):
            if key in d and not isinstance(d[key], str):
                err(row, key, f"`{key}` must be a string")
        code = d.get("code", "")
        if isinstance(code, str):
            m = re.fullmatch(r"AD([1-9])\d\d", code)
            if not m:
                err(row, "code", f"code {code!r} is not AD followed by three digits")
            else:
                files, prefix = AREAS[int(m.group(1))]
                if row.file != files:
                    err(row, "code", f"code {code} belongs in compat_map/{files} (see SCHEMA.md)")
                if prefix and not str(d.get("legacy", "")).startswith(prefix):
                    err(row, "code", f"code {code} is for {prefix}* rows")
            if code in codes:
                err(row, "code", f"duplicate code {code} (also {codes[code].source})")
            codes[code] = row
        spellings = [d.get("legacy")] + list(d.get("also", []) if isinstance(d.get("also"), list) else [])
        if "also" in d and (not isinstance(d["also"], list) or not all(isinstance(x, str) for x in d["also"])):
            err(row, "also", "`also` must be a list of strings")
        for s in spellings:
            if isinstance(s, str):
                if s in names:
                    err(row, "legacy", f"{s} already has a row ({names[s].source})")
                names[s] = row
        kind, status, fix = d.get("kind"), d.get("status"), d.get("fix")
        if kind is not None and kind not in KINDS:
            err(row, "kind", f"kind {kind!r} is not one of {', '.join(KINDS)}")
        if status is not None and status not in STATUSES:
            err(row, "status", f"status {status!r} is not one of {', '.join(STATUSES)}")
        if fix is not None and fix not in FIXES:
            err(row, "fix", f"fix {fix!r} is not one of {', '.join(FIXES)}")
        if "rename" in d and not isinstance(d["rename"], bool):
            err(row, "rename", "`rename` must be true or false")
        since = d.get("since")
        if "since" in d and (not isinstance(since, str) or not (
                since == "main" or re.fullmatch(r"\d+\.\d+", since))):
            err(row, "since", f"since {since!r} is not a version like \"2.6\" or \"main\"")
        if status == "deprecated" and d.get("replacement") and "since" not in d:
            err(row, None, "a deprecated row with a replacement needs `since` (the first PyTorch "
                           "release that has it)")
        if "since" in d and not (status in ("deprecated", "literal") and d.get("replacement")):
            err(row, "since", "`since` is for deprecated and literal rows with a replacement")
        if isinstance(since, str) and since != "main" and re.fullmatch(r"\d+\.\d+", since) and \
                tuple(map(int, since.split("."))) > tuple(map(int, NEWEST_TORCH.split("."))):
            err(row, "since", f"since {since} is newer than the newest release the table knows "
                              f"({NEWEST_TORCH}); write \"main\"")
        if isinstance(d.get("deprecated_in"), str) and not re.fullmatch(r"\d+\.\d+", d["deprecated_in"]):
            err(row, "deprecated_in", f"deprecated_in {d['deprecated_in']!r} is not a version like \"2.6\"")
        group = "cpp" if row.is_cpp else "python"
        if status == "deprecated":
            for key in ("replacement", "fix"):
                if key not in d:
                    err(row, None, f"a deprecated row needs `{key}`")
            rep = d.get("replacement")
            if isinstance(rep, str):
                if rep == "" and fix not in (None, "none"):
                    err(row, "fix", "a row without a replacement can only have fix = \"none\"")
                if rep and rep not in table.targets.get(group, set()):
                    err(row, "replacement", f"replacement {rep!r} names nothing: it is not in "
                                            f"[{group}] of compat_map/targets.toml")
            if fix != "none" and not d.get("replacement"):
                pass
        elif status == "kept":
            for key in ("fix", "template", "shim"):
                if key in d:
                    err(row, key, f"a kept row has no `{key}` (it is never rewritten)")
        _validate_literal(row, err)
        anydev = d.get("anydev")
        if isinstance(anydev, str):
            agroup = "anydev_cpp" if row.is_cpp else "anydev_python"
            if anydev not in table.targets.get(agroup, set()):
                err(row, "anydev", f"anydev target {anydev!r} names nothing: it is not in "
                                   f"[{agroup}] of compat_map/targets.toml")
        sig = d.get("signature")
        params: Optional[list[str]] = None
        if isinstance(sig, str):
            if row.is_cpp:
                params = _cpp_params(sig)
            else:
                try:
                    params = _signature_params(sig)
                except ValueError as e:
                    err(row, "signature", str(e))
        elif kind in ("call", "context_manager", "class", "decorator") and status == "deprecated" \
                and not row.is_cpp:
            err(row, None, f"a deprecated {kind} row needs `signature`")
        tpl = d.get("template")
        if isinstance(tpl, str):
            if fix == "none":
                err(row, "template", "a row with fix = \"none\" has no template")
            for ph in PLACEHOLDER.findall(tpl):
                if ph == "*" or (ph == "attr" and "covers" in d):
                    continue
                if params is None or ph not in params:
                    err(row, "template", f"template placeholder {{{ph}}} is not a parameter of "
                                         f"the signature {sig!r}")
        shim = d.get("shim")
        if shim is not None:
            if not row.is_cpp:
                err(row, "shim", "`shim` is for C++ rows")
            elif not isinstance(shim, dict):
                err(row, "shim", "`shim` must be a table")
            else:
                allowed = {"name", "returns", "params", "body", "alias"}
                for k in shim:
                    if k not in allowed:
                        err(row, "shim", f"unknown shim key `{k}` (known: {', '.join(sorted(allowed))})")
                if "name" not in shim:
                    err(row, "shim", "shim needs `name`")
                if "alias" in shim and ("body" in shim or "returns" in shim):
                    err(row, "shim", "a shim is either an alias or a function (returns/params/body)")
                if "alias" not in shim and not {"returns", "body"} <= set(shim):
                    err(row, "shim", "a function shim needs `returns` and `body`")
                if not isinstance(anydev, str):
                    err(row, "shim", "a shim forwards to its row's `anydev` target, which is missing")
    kept_names = {r.legacy: r for r in table.rows if r.status == "kept"}
    covered: dict[str, Row] = {}
    for row in table.rows:
        covers = row.data.get("covers")
        if not isinstance(covers, list):
            continue
        for name in covers:
            target = kept_names.get(name)
            if target is None:
                err(row, "covers", f"covers {name!r}, which is not the legacy name of a kept row")
            elif target.is_cpp != row.is_cpp:
                err(row, "covers", f"covers {name!r}, a row of the other language")
            elif name in covered:
                err(row, "covers", f"{name!r} is already covered by {covered[name].source}")
            covered[name] = row
    used = {g: set() for g in table.targets}
    for row in table.rows:
        group = "cpp" if row.is_cpp else "python"
        if row.replacement:
            used[group].add(row.replacement)
        if row.anydev:
            used["anydev_" + group].add(row.anydev)
    for g, listed in table.targets.items():
        for n in sorted(listed - used.get(g, set())):
            errors.append(f"compat_map/targets.toml:{table.target_lines.get(n, 1)}: `{n}` in "
                          f"[{g}] is used by no row")
    for row in table.rows:
        _validate_redeclare(row, err)
        pd = row.data.get("pytorch_deprecated")
        if pd is not None and (not isinstance(pd, bool) or row.data.get("status") != "deprecated"):
            err(row, "pytorch_deprecated", "`pytorch_deprecated` is true or false, on a "
                "deprecated row")
    if errors:
        raise TableError("\n".join(errors))


def _validate_literal(row: Row, err) -> None:
    """The keys of literal rows (literals.toml; SCHEMA.md, "Literal rows")."""
    d = row.data
    literal = row.file == "literals.toml"
    if not literal:
        for key in ("language", "detect", "covers", "opt_in", "example"):
            if key in d:
                err(row, key, f"`{key}` is for the rows of compat_map/literals.toml")
        if d.get("status") == "literal":
            err(row, "status", "status = \"literal\" is for the rows of compat_map/literals.toml")
        return
    if d.get("status") != "literal":
        err(row, "status", "a row of compat_map/literals.toml has status = \"literal\"")
    language = d.get("language")
    if language not in DETECTORS:
        err(row, "language" if "language" in d else None,
            f"`language` must be one of {', '.join(DETECTORS)}")
    for key in ("replacement", "fix"):
        if key not in d:
            err(row, None, f"a literal row needs `{key}`")
    if d.get("replacement") and "since" not in d:
        err(row, None, "a literal row with a replacement needs `since` (the first PyTorch "
                       "release that has what its template uses)")
    if d.get("fix") == "none" and "template" in d:
        err(row, "template", "a row with fix = \"none\" has no template")
    if d.get("fix") in ("safe", "unsafe") and "template" not in d:
        err(row, "fix", "a literal row with a fix needs a `template`")
    if "opt_in" in d and not isinstance(d["opt_in"], bool):
        err(row, "opt_in", "`opt_in` must be true or false")
    detect, covers = d.get("detect"), d.get("covers")
    if (detect is None) == (covers is None):
        err(row, None, "a literal row has exactly one of `detect` (a native detector) and "
                       "`covers` (the kept rows it hints at)")
    if detect is not None and (not isinstance(detect, str) or
                               detect not in DETECTORS.get(language, ())):
        err(row, "detect", f"detect {detect!r} is not a {language} detector (known: "
                           f"{', '.join(DETECTORS.get(language, ()))})")
    if covers is not None and (not isinstance(covers, list) or not covers or
                               not all(isinstance(c, str) for c in covers)):
        err(row, "covers", "`covers` must be a non-empty list of strings")
    if "also" in d:
        err(row, "also", "a literal row has no `also` (its detector or `covers` finds it)")
    ex = d.get("example")
    if not (isinstance(ex, dict) and set(ex) == {"before", "after"} and
            all(isinstance(v, str) and v for v in ex.values())):
        err(row, "example" if "example" in d else None,
            "a literal row needs `example = { before = \"...\", after = \"...\" }` (for "
            "`anydev rule`)")


# --- outputs ---------------------------------------------------------------------


def py_str(s: str) -> str:
    return repr(s)


@functools.lru_cache(maxsize=None)
def _runtime_module(name: str) -> Any:
    """A standard-library-only module of the compat layer (python/anydev/_compat/<name>.py:
    the deprecation wording, the signature reader), loaded by path: anydev
    itself cannot be imported before it is built."""
    import importlib.util

    # From the tree this script is in (not --root, which points at a table).
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(here, "python", "anydev", "_compat", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_anydev_generate{name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def message(row: Row, shim_name: str) -> str:
    """The warning text: the legacy entry point, the replacement, the rule code
    (a replacement no release has yet named as such: Note [Replacements no
    release has yet] in python/anydev/_compat/messages.py)."""
    return _runtime_module("messages").legacy_message(row, shim_name, NEWEST_TORCH)


def shim_module_of(row: Row) -> Optional[tuple[str, str]]:
    """(anydev module, attribute) of a Python row's shim, or None."""
    if row.status == "literal":
        return None  # source code, not an entry point: nothing to forward
    legacy = row.legacy
    for prefix, module in (("torch.cuda.amp.", "anydev.cuda.amp"), ("torch.cuda.", "anydev.cuda"),
                           ("torch.xpu.", "anydev.xpu"),
                           ("torch.accelerator.", "anydev._compat.legacy_accelerator")):
        if legacy.startswith(prefix):
            rest = legacy[len(prefix):]
            if "." in rest:
                return None  # a member of a class or submodule: covered by its parent
            return module, rest
    return None


# The fields of the generated Row: (name, type, default and its comment).
ROW_FIELDS = (
    ("code", "str", ""), ("legacy", "str", ""), ("also", "tuple[str, ...]", ""),
    ("kind", "str", ""), ("status", "str", ""), ("replacement", "str", ""),
    ("anydev", "Optional[str]", ""), ("fix", "str", ""), ("signature", "Optional[str]", ""),
    ("template", "Optional[str]", ""), ("rename", "bool", ""), ("deprecated_in", "str", ""),
    ("since", "Optional[str]", ""), ("note", "str", ""), ("source", "str", ""),
    ("language", "str", ""),
    ("detect", "Optional[str]", "None  # literal rows: the native detector"),
    ("covers", "tuple[str, ...]", "()  # literal rows: the kept rows it hints at"),
    ("opt_in", "bool", "False  # off unless selected (`--select CODE`)"),
    ("example", "tuple[str, ...]", "()  # literal rows: (before, after) for `anydev rule`"),
)


def gen_table_module(table: Table) -> str:
    out = [f"# {GENERATED.format(src='*.toml')}",
           '"""The compat table as Python data: one Row per legacy symbol (see compat_map/SCHEMA.md)."""',
           "",
           "from __future__ import annotations",
           "",
           "from collections import namedtuple",
           "",
           "TYPE_CHECKING = False",
           "if TYPE_CHECKING:",
           "    from typing import NamedTuple, Optional",
           "",
           "    class Row(NamedTuple):",
           *[f"        {name}: {typ}" + (f" = {default}" if default else "")
             for name, typ, default in ROW_FIELDS],
           "else:",
           "    # At run time the same tuple class, made without `typing`: the",
           "    # scanner's start-up (benchmarks/python/bench_startup.py).",
           "    Row = namedtuple(\"Row\", " + repr([n for n, _, _ in ROW_FIELDS]) + ",",
           "                     defaults=(" + ", ".join(d.split("  #")[0] for _, _, d in ROW_FIELDS if d)
           + "), module=__name__)",
           "",
           "",
           "ROWS: tuple[Row, ...] = ("]
    for r in table.rows:
        fix = r.fix or "none"
        rename = r.data.get("rename", fix != "none" and r.status != "literal")
        out.append(
            f"    Row({py_str(r.code)}, {py_str(r.legacy)}, {tuple(r.also or ())!r}, "
            f"{py_str(r.kind)}, {py_str(r.status)}, {py_str(r.replacement or '')}, "
            f"{r.anydev!r}, {py_str(fix)}, {r.signature!r}, {r.template!r}, {rename!r}, "
            f"{py_str(r.deprecated_in)}, {r.since!r}, {py_str(r.note)}, {py_str(r.source)}, "
            f"{py_str('cpp' if r.is_cpp else 'python')}"
            + (f", {r.detect!r}, {tuple(r.covers or ())!r}, {bool(r.opt_in)!r}, "
               f"{(r.example['before'], r.example['after']) if isinstance(r.example, dict) else ()!r}"
               if r.file == "literals.toml" else "") + "),")
    out += [")",
            "",
            "ROWS_BY_CODE: dict[str, Row] = {r.code: r for r in ROWS}",
            f"NEWEST_TORCH = {NEWEST_TORCH!r}",
            "# The rows whose legacy name PyTorch itself deprecates (a warning of its own);",
            "# the others are device-specific with a generic replacement (SCHEMA.md).",
            "PYTORCH_DEPRECATED: frozenset[str] = frozenset("
            + repr(tuple(r.code for r in table.rows if r.data.get("pytorch_deprecated"))) + ")",
            "ROWS_BY_LEGACY: dict[str, Row] = {n: r for r in ROWS for n in (r.legacy, *r.also)}",
            ""]
    out += gen_proofs(os.path.join(TABLE_DIR, "proofs.json"))
    return "\n".join(out)


# The fields of a Row the scanner reads, in the order of _scan_table.RULES.
SCAN_FIELDS = ("code", "language", "status", "legacy", "also", "covers", "detect", "opt_in",
               "replacement", "fix", "since")


def gen_scan_table(table: Table) -> str:
    """python/anydev/_migrate/scan_table.py: what `anydev scan` reads of the table,
    in a form that loads in a small part of the time of the whole
    _compat_table (the start-up of `anydev scan`, benchmarks/python/bench_startup.py):
    NATIVE, the rows as the native RuleSet takes them; ROWS_TEXT, each row's
    SCAN_FIELDS in one line (parsed only for the rows with findings); OPT_IN.
    The values are those of gen_table_module's Rows (tests/python/compat/test_compat_table.py
    checks)."""
    lines, opt_in = [], []
    for r in table.rows:
        literal = r.file == "literals.toml"
        values = (r.code, "cpp" if r.is_cpp else "python", r.status, r.legacy, tuple(r.also or ()),
                  tuple(r.covers or ()) if literal else (), r.detect if literal else None,
                  bool(r.opt_in) if literal else False, r.replacement or "", r.fix or "none",
                  r.since)
        if values[6] == "":
            raise SystemExit(f"compat_map: {r.code}: an empty detector")
        fields = []
        for v in values:
            if isinstance(v, tuple):
                if any(not x or any(c.isspace() for c in x) for x in v):
                    raise SystemExit(f"compat_map: {r.code}: a spelling with a space")
                fields.append(" ".join(v))
            elif isinstance(v, bool):
                fields.append("1" if v else "0")
            elif v is None:
                fields.append("")
            else:
                if "\t" in v or "\n" in v:
                    raise SystemExit(f"compat_map: {r.code}: a tab or newline in {v!r}")
                fields.append(v)
        lines.append("\t".join(fields))
        if values[7]:
            opt_in.append(r.code)
    out = [f"# {GENERATED.format(src='*.toml')}",
           '"""The compat table as `anydev scan` reads it (Note [Scan table] in anydev/scan.py)."""',
           "",
           "# Per row (in the order of anydev._compat.table.ROWS), the native RuleSet's",
           "# (code, language, kept, spellings, detector), as anydev.scan._native_rule makes them.",
           "NATIVE = ("]
    # As anydev.scan._native_rule makes them (each literal row's detector on).
    covered = {n for r in table.rows if r.file == "literals.toml" for n in (r.covers or ())}
    for r in table.rows:
        lang = "cpp" if r.is_cpp else "python"
        if r.status == "literal":
            native = (r.code, lang, False, tuple(r.covers or ()), r.detect or "")
        else:
            native = (r.code, lang, r.status == "kept",
                      tuple(s for s in (r.legacy, *(r.also or ())) if s not in covered), "")
        out.append(f"    {native!r},")
    out += [")",
            "# The rules that are off unless selected.",
            f"OPT_IN = {tuple(opt_in)!r}",
            "# The rows whose legacy name PyTorch itself deprecates (their findings say",
            "# \"deprecated\"; the others' say \"device-specific\": anydev.scan.message_for).",
            "PYTORCH_DEPRECATED = frozenset("
            + repr(tuple(r.code for r in table.rows if r.data.get("pytorch_deprecated"))) + ")",
            "# The newest release the table knows (the target reader's, without the table).",
            f"NEWEST_TORCH = {NEWEST_TORCH!r}",
            "# The fields of a row that the scanner reads, in the order of ROWS_TEXT's.",
            f"SCAN_FIELDS = {SCAN_FIELDS!r}",
            "# Per row, those fields separated by tabs (a tuple's items by spaces, None as",
            "# nothing, a boolean as 0 or 1): anydev.scan._Rows parses the rows it is asked for.",
            "ROWS_TEXT = ("]
    out += [f"    {line!r}," for line in lines]
    out += [")", ""]
    return "\n".join(out)


def gen_proofs(path: str) -> list[str]:
    """The PROOFS dict of the table module: rule code -> one line saying what
    the differential proof (tools/prove_fixes.py, recorded in proofs.json)
    showed, on which torch builds; empty without proofs.json."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        doc = {"torch": [], "rows": {}}
    except (OSError, ValueError) as e:
        raise SystemExit(f"compat_map: {os.path.relpath(path, ROOT)}: cannot read the proofs ({e}); "
                         "rewrite it with `tools/prove_fixes.py --write`") from None

    def build(v: str) -> str:
        return f"{v} (CPU build)" if v.endswith("+cpu") else v

    out = ["# What tools/prove_fixes.py showed for each Python row with a fix (compat_map/proofs.json).",
           "PROOFS: dict[str, str] = {"]
    for code, e in sorted(doc.get("rows", {}).items()):
        verdict, tried = e.get("verdict", "not run"), e.get("torch", [])
        if verdict == "same":
            run = [c for c in e.get("cases", []) if c.get("rewrite")]
            raised = sum(1 for c in run if all(o["legacy"].startswith("raises")
                                               and o["rewrite"].startswith("raises")
                                               for o in c.get("outcomes", {}).values()))
            changed = sorted({f"{o['legacy'][7:]} -> {o['rewrite'][7:]}"
                              for c in run for o in c.get("outcomes", {}).values()
                              if o["legacy"].startswith("raises") and o["legacy"] != o["rewrite"]})
            text = (f"same behaviour on torch {' and '.join(build(v) for v in tried)} for "
                    f"{len(run)} call form{'s' if len(run) != 1 else ''}"
                    + (f" ({'all' if raised == len(run) else raised} raising on both sides"
                       + (f", {', '.join(changed)}" if changed else "") + ")" if raised else ""))
        else:
            text = verdict
        # the non-CUDA accelerator's build is judged on its own (tools/prove_fixes.py,
        # Note [Correct on a non-CUDA accelerator])
        on_accelerator = doc.get("accelerator", {}).get("torch")
        skipped = [v for v in doc.get("torch", []) if v not in tried and v != on_accelerator]
        if tried and skipped:
            text += "; " + "; ".join(f"torch {v}: replacement absent (since {e.get('since')})"
                                     for v in skipped)
        if e.get("accelerator", {}).get("summary") and not text.startswith("wrong on"):
            text += "; " + e["accelerator"]["summary"]
        out.append(f"    {code!r}: {text!r},")
    return out + ["}", ""]


MODULE_DOCS = {
    "anydev.cuda": ("torch.cuda",
                    "Legacy ``torch.cuda`` entry points over anydev.\n\n"
                    "Every entry point with a device-generic replacement forwards to it and acts on\n"
                    "the current accelerator, whatever its type, so legacy CUDA code runs on any\n"
                    "accelerator; the first call from each call site warns with\n"
                    "anydev.compat.LegacyAPIWarning, and every call is counted (anydev.report).\n"
                    "Device-specific entry points that PyTorch keeps (rule 4) are here too, without\n"
                    "a warning; those anydev cannot answer raise NotImplementedError."),
    "anydev.cuda.amp": ("torch.cuda.amp",
                        "Legacy ``torch.cuda.amp`` entry points. anydev has no tensors and so no\n"
                        "autocast: each entry point counts, warns, and raises\n"
                        "anydev.compat.NoEquivalentError naming PyTorch's replacement."),
    "anydev.xpu": ("torch.xpu", "Legacy ``torch.xpu`` entry points over anydev (see anydev.cuda)."),
    "anydev._compat.legacy_accelerator": ("torch.accelerator",
                                   "The deprecated ``torch.accelerator`` aliases, as forwarders."),
}


# The submodules of torch.cuda and torch.xpu that legacy code imports (`import
# torch.cuda.memory`, `from torch.cuda.random import manual_seed`), with the
# names PyTorch 2.13 gives each (its __all__; torch.cuda.streams and
# torch.xpu.streams have none: their classes). anydev's submodule of the
# same name holds the same objects as its package for the names the package
# has (counted and warned as there); tests/python/compat/test_compat.py checks
# the lists against the PyTorch at hand.
SUBMODULES = {
    "anydev.cuda": {
        "memory": ("CUDAPluggableAllocator", "MemPool", "caching_allocator_alloc",
                   "caching_allocator_delete", "caching_allocator_disabled",
                   "caching_allocator_enable", "change_current_allocator", "empty_cache",
                   "get_allocator_backend", "get_per_process_memory_fraction",
                   "host_memory_stats", "host_memory_stats_as_nested_dict",
                   "list_gpu_processes", "max_memory_allocated", "max_memory_cached",
                   "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_cached",
                   "memory_reserved", "memory_snapshot", "memory_stats",
                   "memory_stats_as_nested_dict", "memory_summary",
                   "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
                   "reset_max_memory_allocated", "reset_max_memory_cached",
                   "reset_peak_host_memory_stats", "reset_peak_memory_stats",
                   "set_per_process_memory_fraction", "use_mem_pool"),
        "random": ("get_rng_state", "get_rng_state_all", "initial_seed", "manual_seed",
                   "manual_seed_all", "seed", "seed_all", "set_rng_state", "set_rng_state_all"),
        "graphs": ("CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
                   "make_graphed_callables"),
        "streams": ("Event", "ExternalStream", "Stream"),
    },
    "anydev.xpu": {
        "memory": ("MemPool", "XPUPluggableAllocator", "change_current_allocator", "empty_cache",
                   "get_per_process_memory_fraction", "max_memory_allocated",
                   "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
                   "memory_snapshot", "memory_stats", "memory_stats_as_nested_dict",
                   "reset_accumulated_memory_stats", "reset_peak_memory_stats",
                   "set_per_process_memory_fraction", "use_mem_pool"),
        "random": ("get_rng_state", "get_rng_state_all", "initial_seed", "manual_seed",
                   "manual_seed_all", "seed", "seed_all", "set_rng_state", "set_rng_state_all"),
        "graphs": ("XPUGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
                   "make_graphed_callables"),
        "streams": ("Event", "Stream"),
    },
}


def gen_submodule(table: Table, module: str, sub: str) -> tuple[str, str]:
    """anydev/<pkg>/<sub>.py(i): the names of torch's submodule that the
    package has, the package's own objects (lazy ones through __getattr__)."""
    rows = {shim_module_of(r)[1]: r for r in table.rows  # type: ignore[index]
            if not r.is_cpp and (shim_module_of(r) or ("", ""))[0] == module}
    legacy_mod = MODULE_DOCS[module][0]
    names = [n for n in SUBMODULES[module][sub] if n in rows]
    lazy = [n for n in names if rows[n].status == "deprecated" and rows[n].kind in
            ("attribute", "module")]
    direct = [n for n in names if n not in lazy]
    src = ", compat_map/".join(sorted({rows[n].file for n in names}))
    doc = (f'"""``{legacy_mod}.{sub}`` over anydev: the entry points of {module} that '
           f'{legacy_mod}.{sub} holds,\nthe same objects (counted and warned as there)."""')
    out = [f"# {GENERATED.format(src=src)}", doc, ""]
    if direct:
        out.append(f"from {module} import (")
        out += [f"    {n}," for n in direct]
        out.append(")")
    if lazy:
        out += ["", f"import {module} as _package", "",
                "",
                "def __getattr__(name):",
                f"    if name in {tuple(lazy)!r}:",
                "        return getattr(_package, name)",
                f"    raise AttributeError(f\"module {{__name__!r}} has no attribute {{name!r}}\")"]
    out += ["", f"__all__ = {sorted(names)!r}", ""]
    stub = [f"# {GENERATED.format(src=src)}"]
    if names:
        stub.append(f"from {module} import (")
        stub += [f"    {n} as {n}," for n in names]
        stub.append(")")
    stub += ["", f"__all__ = {sorted(names)!r}", ""]
    return "\n".join(out), "\n".join(stub)


def _pyi_signature(row: Row) -> str:
    sig = row.signature or "(*args, **kwargs)"
    sig = re.sub(r"torch\.\w+", "...", sig)
    return sig


def gen_shim_module(table: Table, module: str) -> tuple[str, str]:
    rows = [r for r in table.rows if not r.is_cpp and (shim_module_of(r) or ("", ""))[0] == module]
    srcs = sorted({r.file for r in rows})
    legacy_mod, doc = MODULE_DOCS[module]
    retype = {"anydev.cuda": "cuda", "anydev.cuda.amp": "cuda", "anydev.xpu": "xpu"}.get(module, "")
    out = [f"# {GENERATED.format(src=', compat_map/'.join(srcs))}",
           f'"""{doc}\n"""',
           "",
           "from anydev._compat import shims as _rt",
           "",
           f"_M = _rt.ShimModule(__name__, {legacy_mod!r}, {retype!r})",
           ""]
    lazy: list[tuple[str, str]] = []
    names: list[str] = []
    subs = SUBMODULES.get(module, {})
    for r in sorted(rows, key=lambda r: shim_module_of(r)[1]):  # type: ignore[index]
        attr = shim_module_of(r)[1]  # type: ignore[index]
        if attr == "amp" and module == "anydev.cuda":
            lazy.append((attr, r.code))
            names.append(attr)
            continue
        names.append(attr)
        if attr in subs:
            continue  # a submodule of its own, imported on first use (below)
        if r.status == "deprecated" and r.kind in ("attribute", "module"):
            lazy.append((attr, r.code))
            continue
        maker = {
            ("deprecated", "class"): "klass",
            ("kept", "class"): "kept",
        }.get((r.status, r.kind), "forwarder" if r.status == "deprecated" else "kept")
        out.append(f"{attr} = _M.{maker}({r.code!r})  # {r.source}")
    names += [n for n in subs if n not in names]
    out += ["",
            "__getattr__ = _M.lazy_getattr(globals(), {"
            + ", ".join(f"{a!r}: {c!r}" for a, c in lazy) + "}"
            + (f", submodules={tuple(sorted(subs))!r}" if subs else "") + ")",
            f"__all__ = {sorted(names)!r}",
            ""]
    # Stub: every legacy entry point marked @deprecated (PEP 702) for static tools.
    stub = [f"# {GENERATED.format(src=', compat_map/'.join(srcs))}",
            "from typing import Any, Union",
            "",
            "from typing_extensions import deprecated",
            "",
            "import anydev",
            "import anydev.compat",
            ""]
    heads = (["from . import amp as amp"] if module == "anydev.cuda" else []) + \
        [f"from . import {n} as {n}" for n in sorted(subs)]
    if heads:
        stub += heads + [""]
    for r in sorted(rows, key=lambda r: shim_module_of(r)[1]):  # type: ignore[index]
        attr = shim_module_of(r)[1]  # type: ignore[index]
        if (attr == "amp" and module == "anydev.cuda") or attr in subs:
            continue
        msg = message(r, f"{module}.{attr}")
        dec = f"@deprecated({msg!r})\n" if r.status == "deprecated" else ""
        if r.kind in ("attribute", "module"):
            stub.append(f"{attr}: Any" + (f"  # deprecated: {msg}" if dec else ""))
        elif r.kind == "class" and r.status == "deprecated" and r.anydev:
            stub.append(f"{dec}class {attr}({r.anydev}): ...")
        elif r.kind == "class":
            stub.append(f"{dec}class {attr}:\n    def __init__(self, *args: Any, **kwargs: Any) -> None: ...")
        else:
            stub.append(f"{dec}def {attr}{_pyi_sig_for_stub(r)}: ...")
    stub += ["", f"__all__ = {sorted(names)!r}", ""]
    return "\n".join(out), "\n".join(stub)


# Parameter types by the legacy parameter's name, where the target's stub has
# no parameter of that name: torch.cuda's calls take a device as `device`.
_STUB_DEVICE = "Union[anydev.device, str, int, None]"
_STUB_PARAM_TYPES = {"device": _STUB_DEVICE, "device_index": _STUB_DEVICE,
                     "stream": "Union[anydev.Stream, None]",
                     "event": "anydev.Event", "enable_timing": "bool", "priority": "int"}


@functools.lru_cache(maxsize=None)
def _stub_targets() -> dict[str, ast.FunctionDef]:
    """Returns the typed stubs of the forwarders' targets (anydev.accelerator's
    functions, from python/anydev/accelerator.pyi) by their full name."""
    # The generator's own tree (not --root's): the stub is hand-written.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(here, "python", "anydev", "accelerator.pyi")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return {f"anydev.accelerator.{n.name}": n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _stub_annotation(node: Optional[ast.expr]) -> str:
    """The annotation of a target stub's parameter or return, in the terms of
    the shim's stub (the accelerator stub's names qualified)."""
    if node is None:
        return "Any"
    text = ast.unparse(node)
    text = re.sub(r"\bOptional\[(\w+)\]", r"Union[\1, None]", text)
    text = re.sub(r"\b(Stream|Event|device)\b", r"anydev.\1", text)
    text = re.sub(r"\b_Device\b", _STUB_DEVICE, text)
    return text.replace("OrderedDict[", "dict[")


def _pyi_sig_for_stub(row: Row) -> str:
    """Returns the stub's parameters and return type: the legacy signature of
    the row, typed from the target's stub where the row forwards to an
    anydev call, else by the parameter's name; Any where nothing is known."""
    target = _stub_targets().get(row.anydev or "")
    returns = "Any"
    by_name: dict[str, str] = {}
    if target is not None:
        returns = _stub_annotation(target.returns)
        t = target.args
        for arg in t.posonlyargs + t.args + t.kwonlyargs:
            by_name[arg.arg] = _stub_annotation(arg.annotation)
    elif row.anydev == "anydev.compat.stream_context":
        returns = "anydev.compat.stream_context"
    if not row.signature:
        return f"(*args: Any, **kwargs: Any) -> {returns}"
    try:
        a = _runtime_module("signature").parse(row.signature).args
    except ValueError:
        return f"(*args: Any, **kwargs: Any) -> {returns}"
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        ann = by_name.get(arg.arg) or _STUB_PARAM_TYPES.get(arg.arg, "Any")
        arg.annotation = ast.parse(ann, mode="eval").body
    if a.vararg:
        a.vararg.annotation = ast.Name("Any")
    if a.kwarg:
        a.kwarg.annotation = ast.Name("Any")
    a.defaults = [ast.Constant(...) for _ in a.defaults]
    a.kw_defaults = [None if d is None else ast.Constant(...) for d in a.kw_defaults]
    return "(" + ast.unparse(a) + f") -> {returns}"


def gen_cpp_header(table: Table, ns: str) -> str:
    legacy_ns = {"cuda": ("c10::cuda::", "at::cuda::"), "xpu": ("c10::xpu::",)}[ns]
    rows = [r for r in table.rows if r.is_cpp and r.status == "deprecated" and r.shim
            and r.legacy.startswith(legacy_ns)]
    guard = f"ANYDEV_COMPAT_{ns.upper()}_H_"
    out = [f"// {GENERATED.format(src='cpp.toml')}",
           f"//",
           f"// <anydev/compat/{ns}.h>: the legacy {'/'.join(n.rstrip(':') for n in legacy_ns)} API",
           f"// as [[deprecated]] inline forwarders in anydev::{ns} onto anydev::acc. Each",
           f"// deprecation message names the replacement and the table row it came from.",
           f"// Legacy-style code compiles unchanged against anydev::{ns}::..., and the",
           f"// compiler lists every line to migrate. Errors throw anydev::compat::Error,",
           f"// as the legacy API throws c10::Error.",
           f"#ifndef {guard}",
           f"#define {guard}",
           "",
           "#include <anydev/compat/support.h>",
           "",
           f"namespace anydev::{ns} {{",
           ""]
    by_ns: dict[str, list[str]] = {}
    for r in rows:
        shim = r.shim
        qual = shim["name"].split("::")
        inner, name = "::".join(qual[:-1]), qual[-1]
        note = f"use {r.anydev} ({r.source})"
        dep = f'[[deprecated("{note}")]]'
        if "alias" in shim:
            text = f"using {name} {dep} = {shim['alias']};"
        else:
            text = (f"{dep} inline {shim['returns']} {name}({shim.get('params', '')}) {{\n"
                    f"  {shim['body']}\n}}")
        by_ns.setdefault(inner, []).append(f"// {r.legacy} -> {r.replacement} [{r.code}]\n{text}\n")
    for inner in sorted(by_ns):
        if inner:
            out.append(f"namespace {inner} {{\n")
        out.extend(by_ns[inner])
        if inner:
            out.append(f"}}  // namespace {inner}\n")
    out += [f"}}  // namespace anydev::{ns}", "", f"#endif  // {guard}", ""]
    return "\n".join(out)


# --- <anydev/torch_deprecations.h>: redeclarations for the real PyTorch headers ---

# The PyTorch headers a `redeclare` entry may name, each with the headers a
# build must be able to include for it (a CPU-only wheel ships c10/cuda/*.h
# but not the generated c10/cuda/impl/cuda_cmake_macros.h, and no CUDA): the
# generated header includes a PyTorch header, and redeclares what it declares,
# only where every one of them is on the include path.
_CUDA_NEEDS = ("cuda_runtime_api.h", "c10/cuda/impl/cuda_cmake_macros.h")
_XPU_NEEDS = ("sycl/sycl.hpp", "c10/xpu/impl/xpu_cmake_macros.h")
TORCH_HEADERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # header: (legacy namespaces it declares, headers it needs)
    "c10/cuda/CUDAFunctions.h": (("c10::cuda",), _CUDA_NEEDS),
    "c10/cuda/CUDAStream.h": (("c10::cuda",), _CUDA_NEEDS),
    "c10/cuda/CUDACachingAllocator.h": (("c10::cuda::CUDACachingAllocator",), _CUDA_NEEDS),
    "ATen/cuda/CUDAContextLight.h": (("at::cuda",), _CUDA_NEEDS + (
        "cusparse.h", "cublas_v2.h", "cublasLt.h", "cusolverDn.h")),
    "c10/xpu/XPUFunctions.h": (("c10::xpu",), _XPU_NEEDS),
    "c10/xpu/XPUStream.h": (("c10::xpu",), _XPU_NEEDS),
    "c10/xpu/XPUCachingAllocator.h": (("c10::xpu::XPUCachingAllocator",), _XPU_NEEDS),
}
# Note [Clang and inline definitions]: Clang drops an attribute that a
# redeclaration adds after the function's definition ("attribute declaration
# must precede definition", -Wignored-attributes), so a function PyTorch
# defines inline in its header (`inline = true`) is declared [[deprecated]]
# before that header for Clang: after what the declaration's types need (the
# header's own includes, a forward declaration), and the header is then
# included with -Wdeprecated-declarations off, so its own inline bodies do not
# warn. GCC and nvcc keep the attribute of a later redeclaration.
INLINE_PRELUDES: dict[str, tuple[tuple[str, ...], str]] = {
    # header: (headers to include first, forward declarations)
    "c10/cuda/CUDACachingAllocator.h": (
        ("c10/core/CachingDeviceAllocator.h", "c10/cuda/CUDAStream.h"),
        "namespace c10::cuda::CUDACachingAllocator {\nclass CUDAAllocator;\n}"),
    "ATen/cuda/CUDAContextLight.h": (("cstdint",), ""),
    "c10/xpu/XPUCachingAllocator.h": (
        ("c10/core/CachingDeviceAllocator.h", "c10/xpu/XPUStream.h"), ""),
}
CLASS_NOT_COVERED = (
    "a class takes [[deprecated]] only on a declaration before its definition, and such a "
    "forward declaration would make PyTorch's own headers, which use the class throughout, warn "
    "at each use; `anydev scan` reports it")
_TORCH_RANGE = re.compile(r"(\d+)\.(\d+)(?:\.\.(\d+)\.(\d+))?")


# Note [Probes that do not taint]: GCC before 13 remembers a header that a
# failed `__has_include(<name>)` looked for, and a later `#include <name>` of
# the same missing header then passes without an error (GCC PR 80753): a
# source that includes <cuda_runtime_api.h> where there is none compiled with
# this header force-included and failed without it. The header must never
# change whether a program compiles, so every probe spells the header as
# `<./name>`: the same file in the same include folders, but another name to
# GCC's cache, so the source's own `#include <name>` fails as it would have.
def has_include(header: str) -> str:
    """The preprocessor test that `header` is on the include path."""
    return f"__has_include(<./{header}>)"


def torch_range(text: str) -> Optional[tuple[tuple[int, int], tuple[int, int]]]:
    """Parses a `torch` range, "2.13" or "2.9..2.13" (both ends included)."""
    m = _TORCH_RANGE.fullmatch(text)
    if not m:
        return None
    lo = (int(m.group(1)), int(m.group(2)))
    hi = (int(m.group(3)), int(m.group(4))) if m.group(3) else lo
    return lo, hi


def parse_decl(decl: str, name: str) -> Optional[tuple[str, str, str]]:
    """Splits a `redeclare` declaration into (return type, parameters,
    trailing noexcept or ""); None when it is not `RET NAME(PARAMS) [noexcept]`."""
    m = re.fullmatch(rf"\s*(?P<ret>[A-Za-z_:][\w:<>,*& ]*?[\w>*&])\s*(?<![\w:]){re.escape(name)}"
                     rf"\s*\((?P<params>[^(){{}};=\"]*)\)\s*(?P<nx>noexcept)?\s*", decl)
    if not m:
        return None
    return m.group("ret"), m.group("params").strip(), m.group("nx") or ""


def _validate_redeclare(row: Row, err: Any) -> None:
    d = row.data
    red, none = d.get("redeclare"), d.get("not_redeclared")
    if "not_redeclared" in d:
        if not (row.is_cpp and d.get("status") == "deprecated"):
            err(row, "not_redeclared", "`not_redeclared` is for deprecated C++ rows")
        elif not isinstance(none, str) or not none.strip():
            err(row, "not_redeclared", "`not_redeclared` must be a non-empty string (the reason)")
        elif "*/" in none or "\n" in none:
            err(row, "not_redeclared", "`not_redeclared` must be one line without `*/`")
        if "redeclare" in d:
            err(row, "redeclare", "a row has `redeclare` or `not_redeclared`, not both")
    if "redeclare" not in d:
        if (row.is_cpp and d.get("status") == "deprecated" and d.get("kind") == "call"
                and "not_redeclared" not in d):
            err(row, None, "a deprecated C++ call needs `redeclare` (its declarations in the "
                           "PyTorch headers) or `not_redeclared` (why it has none)")
        return
    if not (row.is_cpp and d.get("status") == "deprecated" and d.get("kind") == "call"):
        err(row, "redeclare", "`redeclare` is for deprecated C++ rows of kind \"call\" (a class "
                              "cannot take [[deprecated]] after its definition)")
        return
    legacy = str(d.get("legacy", ""))
    namespace, _, name = legacy.rpartition("::")
    if not isinstance(red, list) or not red:
        err(row, "redeclare", "`redeclare` must be a non-empty list of tables")
        return
    seen: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    for i, item in enumerate(red):
        where = f"redeclare[{i}]"
        if not isinstance(item, dict):
            err(row, "redeclare", f"{where} must be a table {{ torch, header, decl }}")
            continue
        for k in item:
            if k not in ("torch", "header", "decl", "inline"):
                err(row, "redeclare", f"{where}: unknown key `{k}` (known: decl, header, "
                                      f"inline, torch)")
        if "inline" in item and not isinstance(item["inline"], bool):
            err(row, "redeclare", f"{where}: `inline` must be true or false")
        elif item.get("inline") and item.get("header") not in INLINE_PRELUDES:
            err(row, "redeclare", f"{where}: generate.py has no prelude for a function defined "
                                  f"inline in {item.get('header')!r} (see INLINE_PRELUDES)")
        for k in ("torch", "header", "decl"):
            if not isinstance(item.get(k), str):
                err(row, "redeclare", f"{where}: `{k}` is missing or not a string")
        torch, header, decl = item.get("torch"), item.get("header"), item.get("decl")
        rng = torch_range(torch) if isinstance(torch, str) else None
        if isinstance(torch, str):
            newest = tuple(map(int, NEWEST_TORCH.split(".")))
            if rng is None:
                err(row, "redeclare", f"{where}: torch {torch!r} is not a release like \"2.13\" "
                                      f"or a range like \"2.9..2.13\"")
            elif rng[0] > rng[1]:
                err(row, "redeclare", f"{where}: torch range {torch!r} ends before it starts")
            elif rng[1] > newest:
                err(row, "redeclare", f"{where}: torch {torch!r} goes past the newest release the "
                                      f"table knows ({NEWEST_TORCH})")
        if isinstance(header, str):
            if header not in TORCH_HEADERS:
                err(row, "redeclare", f"{where}: header {header!r} is not one generate.py knows "
                                      f"({', '.join(TORCH_HEADERS)})")
            elif namespace not in TORCH_HEADERS[header][0]:
                err(row, "redeclare", f"{where}: {header} does not declare namespace {namespace} "
                                      f"(it declares {', '.join(TORCH_HEADERS[header][0])})")
        if isinstance(decl, str):
            if parse_decl(decl, name) is None:
                err(row, "redeclare", f"{where}: decl {decl!r} is not `RETURN {name}(PARAMETERS)"
                                      f" [noexcept]` (no default arguments, no body, no `;`)")
            elif rng is not None:
                key = re.sub(r"\s+", " ", decl.strip())
                for other in seen.get(key, []):
                    if rng[0] <= other[1] and other[0] <= rng[1]:
                        err(row, "redeclare", f"{where}: decl {decl!r} is given twice for "
                                              f"overlapping torch ranges")
                seen.setdefault(key, []).append(rng)
    if isinstance(d.get("replacement"), str) and re.search(r'["\\]', d["replacement"]):
        err(row, "replacement", "a replacement named in a C++ message has no `\"` or `\\`")


def redeclared_rows(table: Table) -> tuple[list[Row], list[tuple[Row, str]]]:
    """The deprecated c10::cuda / at::cuda / c10::xpu rows the header covers,
    and those it does not with the reason."""
    covered, not_covered = [], []
    for r in table.rows:
        if not (r.is_cpp and r.status == "deprecated"):
            continue
        if r.redeclare:
            covered.append(r)
        else:
            not_covered.append((r, r.not_redeclared or (CLASS_NOT_COVERED if r.kind == "class"
                                                        else "no declaration recorded")))
    return covered, not_covered


def deprecation_text(row: Row) -> str:
    """The [[deprecated]] message of a redeclared row: what to use and the
    rule tag that `anydev report` reads back from the compiler's warning."""
    return f"use {row.replacement} [{row.code}]" if row.replacement else \
        f"no drop-in replacement, see `anydev rule {row.code}` [{row.code}]"


def gen_torch_deprecations(table: Table) -> str:
    covered, not_covered = redeclared_rows(table)
    ndecl = sum(len(r.redeclare) for r in covered)
    out = [f"// {GENERATED.format(src='cpp.toml')}",
           "//",
           "// <anydev/torch_deprecations.h>: compiler warnings at every legacy device-specific",
           "// call (c10::cuda, at::cuda, c10::xpu) of C++ code built against the real PyTorch",
           "// headers, such as an extension's kernels. Force-include it before each source:",
           "//",
           "//   g++ / clang++ / nvcc:     -include /path/to/anydev/torch_deprecations.h",
           "//   torch.utils.cpp_extension: extra_compile_args=anydev.cpp_extension.extra_compile_args()",
           "//   CMake:                    anydev_deprecate_legacy_torch(my_target)",
           "//",
           "// It includes the PyTorch headers that declare the legacy functions, where the",
           "// build can (the CUDA or SYCL headers and PyTorch's generated ones are on the include",
           "// path), and redeclares each function with [[deprecated(\"use <replacement> [ADxxx]\")]],",
           "// which C++ allows on a redeclaration. Each redeclaration is guarded by the PyTorch",
           "// releases whose headers declare the function with that signature",
           "// (TORCH_VERSION_MAJOR/MINOR), so against any other PyTorch it is left out and the",
           "// header still compiles. PyTorch's own headers should be system headers (-isystem,",
           "// as CMake's imported targets and anydev.cpp_extension make them), or the legacy",
           "// calls inside them warn too. `anydev report show build.log` turns the warnings into",
           "// the report `anydev run` writes. Define ANYDEV_NO_TORCH_DEPRECATIONS to turn it off.",
           "//",
           f"// Covered: {len(covered)} functions ({ndecl} declarations): "
           + ", ".join(r.code for r in covered) + ".",
           f"// Not covered: {len(not_covered)}:"]
    classes = [r for r, why in not_covered if why == CLASS_NOT_COVERED]
    if classes:
        out.append("//   classes " + ", ".join(f"{r.legacy} ({r.code})" for r in classes) + ":")
        out.append(f"//     {CLASS_NOT_COVERED}.")
    for r, why in not_covered:
        if why != CLASS_NOT_COVERED:
            out.append(f"//   {r.legacy} ({r.code}): {why}")
    out += ["#ifndef ANYDEV_TORCH_DEPRECATIONS_H_",
            "#define ANYDEV_TORCH_DEPRECATIONS_H_",
            "",
            "#if defined(__cplusplus) && defined(__has_include) && \\",
            "    !defined(ANYDEV_NO_TORCH_DEPRECATIONS) && !defined(TORCH_STABLE_ONLY) && \\",
            "    !defined(TORCH_TARGET_VERSION)",
            "// Probes spell a header <./name> (Note [Probes that do not taint] in",
            "// compat_map/generate.py): GCC 12 lets a later #include of a header that a",
            "// failed __has_include(<name>) looked for pass without an error.",
            f"#if {has_include('torch/headeronly/version.h')}",
            "#include <torch/headeronly/version.h>",
            f"#elif {has_include('torch/version.h')}",
            "#include <torch/version.h>",
            "#endif",
            "#if defined(TORCH_VERSION_MAJOR) && defined(TORCH_VERSION_MINOR)",
            "#define ANYDEV_TORCH_RELEASE_ (TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)",
            ""]
    def block(items: list[tuple[Row, dict[str, Any]]]) -> list[str]:
        by_ns: dict[str, list[str]] = {}
        for r, item in items:
            namespace, _, _ = r.legacy.rpartition("::")
            lo, hi = torch_range(item["torch"])  # type: ignore[misc]
            decl = re.sub(r"\s+", " ", item["decl"].strip())
            by_ns.setdefault(namespace, []).append(
                f"// {r.legacy} -> {r.replacement or '(none)'} ({r.source})\n"
                f"#if ANYDEV_TORCH_RELEASE_ >= {lo[0] * 100 + lo[1]} && "
                f"ANYDEV_TORCH_RELEASE_ <= {hi[0] * 100 + hi[1]}\n"
                f"[[deprecated(\"{deprecation_text(r)}\")]] {decl};\n#endif")
        lines: list[str] = []
        for namespace, decls in by_ns.items():
            lines.append(f"namespace {namespace} {{")
            lines.extend(decls)
            lines += [f"}}  // namespace {namespace}"]
        return lines

    # Note [Includes first]: every PyTorch header is included before any
    # redeclaration, so no inline body of PyTorch's sees a deprecated
    # declaration (it would warn where PyTorch's folders are not -isystem).
    # Wrapping the includes in `#pragma GCC diagnostic ignored` instead does
    # not work: once GCC 12 has let a deprecated use pass under that pragma,
    # later uses of the function do not warn at all.
    guarded: list[tuple[str, list[str], list, list]] = []
    for header, (_, needs) in TORCH_HEADERS.items():
        entries = [(r, item) for r in covered for item in r.redeclare if item["header"] == header]
        if not entries:
            continue
        ranges = sorted({torch_range(item["torch"]) for _, item in entries})  # type: ignore[misc]
        in_range = " || ".join(f"(ANYDEV_TORCH_RELEASE_ >= {lo[0] * 100 + lo[1]} && "
                               f"ANYDEV_TORCH_RELEASE_ <= {hi[0] * 100 + hi[1]})"
                               for lo, hi in ranges)
        has = " && ".join(has_include(n) for n in needs)
        cond = [f"#if {in_range}", f"#if {has}"]
        inline = [(r, item) for r, item in entries if item.get("inline")]
        later = [(r, item) for r, item in entries if not item.get("inline")]
        guarded.append((header, cond, inline, later))
    out.append("// PyTorch's headers (Note [Includes first] in compat_map/generate.py).")
    for header, cond, inline, _later in guarded:
        out += cond
        if inline:
            includes, forward = INLINE_PRELUDES[header]
            out += ["#if defined(__clang__)  // Note [Clang and inline definitions]"]
            out += [f"#include <{h}>" for h in includes]
            out += ([forward] if forward else []) + block(inline)
            out += ["#pragma clang diagnostic push",
                    '#pragma clang diagnostic ignored "-Wdeprecated-declarations"',
                    f"#include <{header}>",
                    "#pragma clang diagnostic pop",
                    "#else",
                    f"#include <{header}>",
                    "#endif  // __clang__"]
        else:
            out.append(f"#include <{header}>")
        out += ["#endif", f"#endif  // {header}", ""]
    out.append("// The redeclarations.")
    for header, cond, inline, later in guarded:
        out += cond + block(later)
        if inline:
            out += ["#if !defined(__clang__)  // Clang's are above"] + block(inline) + ["#endif"]
        out += ["#endif", f"#endif  // {header}", ""]
    out += families_message(guarded)
    out += ["#undef ANYDEV_TORCH_RELEASE_",
            "#else  // no TORCH_VERSION_MAJOR",
            *say_once("no PyTorch headers (torch/version.h) on the include path: nothing is "
                      "marked"),
            "#endif  // TORCH_VERSION_MAJOR",
            "#endif  // __cplusplus && __has_include",
            "",
            "#endif  // ANYDEV_TORCH_DEPRECATIONS_H_",
            ""]
    return "\n".join(out)


# Note [Say once what is marked]: with a CPU wheel's headers (no CUDA, no
# SYCL) the header marks nothing, so a build that force-includes it was as
# silent as one whose legacy calls were all gone. It says once per
# translation unit, at compile time, which legacy families it marks and why
# the others are not, with `#pragma message`: a note for GCC, which -Werror
# leaves alone. Clang reports the pragma as a warning (-W#pragma-messages),
# which -Werror would make an error, so for Clang the pragma's diagnostic is
# set to "warning" by a diagnostic pragma, which -Werror does not promote
# (GCC and Clang document a pragma-set severity as overriding -Werror). nvcc's
# front end is not given it (it has no such pragma to rely on); the .cpp
# files of the same build say it. ANYDEV_TORCH_DEPRECATIONS_QUIET turns it off.
def say_once(text: str, *parts: str) -> list[str]:
    """The lines of a compile-time note: `text` (a string literal's content),
    then `parts` (string literals or macros that expand to them)."""
    literal = '"anydev/torch_deprecations.h: ' + text.replace('"', "'") + '"'
    message = " ".join((literal,) + parts)
    return ["#if !defined(ANYDEV_TORCH_DEPRECATIONS_QUIET) && !defined(__NVCC__)",
            "#if defined(__clang__)",
            "#pragma clang diagnostic push",
            '#pragma clang diagnostic warning "-W#pragma-messages"',
            f"#pragma message({message})",
            "#pragma clang diagnostic pop",
            "#else",
            f"#pragma message({message})",
            "#endif",
            "#endif  // Note [Say once what is marked]"]


def families_message(guarded: list[tuple[str, list[str], list, list]]) -> list[str]:
    """The note naming the legacy families the header marks against the
    PyTorch it found, and why the others are not (Note [Say once what is
    marked])."""
    families: dict[str, tuple[list[str], list[str], tuple[str, ...]]] = {}
    for header, cond, _inline, _later in guarded:
        in_range, has = cond[0][len("#if "):], cond[1][len("#if "):]
        for namespace in TORCH_HEADERS[header][0]:
            ranges, probes, needs = families.setdefault(namespace, ([], [], ()))
            ranges.append(f"({in_range})")
            probes.append(f"(({in_range}) && ({has}))")
            families[namespace] = (ranges, probes, tuple(dict.fromkeys(
                needs + TORCH_HEADERS[header][1])))
    out = ["// Note [Say once what is marked] in compat_map/generate.py.",
           "#define ANYDEV_TD_STR2_(x) #x",
           "#define ANYDEV_TD_STR_(x) ANYDEV_TD_STR2_(x)"]
    marked, not_marked, any_marked = [], [], []
    for i, (namespace, (ranges, probes, needs)) in enumerate(families.items()):
        yes, no = f"ANYDEV_TD_YES{i}_", f"ANYDEV_TD_NO{i}_"
        marked.append(yes)
        not_marked.append(no)
        any_marked.append(" || ".join(probes))
        out += [f"#if {' || '.join(probes)}",
                f'#define {yes} " {namespace}"',
                f'#define {no} ""',
                f"#elif {' || '.join(ranges)}",
                f'#define {yes} ""',
                f'#define {no} "; not {namespace} (needs {", ".join(needs)} on the include path)"',
                "#else",
                f'#define {yes} ""',
                f'#define {no} "; not {namespace} (not recorded for this PyTorch release)"',
                "#endif"]
    version = ('ANYDEV_TD_STR_(TORCH_VERSION_MAJOR) "." ANYDEV_TD_STR_(TORCH_VERSION_MINOR)')
    out += [f"#if {' || '.join(f'({c})' for c in any_marked)}",
            *say_once("PyTorch ", version, '": marks the legacy calls of"', *marked,
                      *not_marked),
            "#else",
            *say_once("PyTorch ", version, '": marks nothing"', *not_marked,
                      '" (`anydev scan` still reports their calls)"'),
            "#endif"]
    for i in range(len(families)):
        out += [f"#undef ANYDEV_TD_YES{i}_", f"#undef ANYDEV_TD_NO{i}_"]
    out += ["#undef ANYDEV_TD_STR_", "#undef ANYDEV_TD_STR2_", ""]
    return out


def gen_guide(table: Table) -> str:
    py = [r for r in table.rows if not r.is_cpp and r.status != "literal"]
    cpp = [r for r in table.rows if r.is_cpp and r.status != "literal"]

    def counts(rows: list[Row]) -> tuple[int, int, int, int, int]:
        dep = [r for r in rows if r.status in ("deprecated", "literal")]
        return (len(rows), len(dep), len(rows) - len(dep),
                sum(1 for r in dep if r.fix in ("safe", "unsafe")),
                sum(1 for r in dep if r.anydev))

    groups = [("torch.cuda", [r for r in py if r.legacy.startswith("torch.cuda.") and not r.legacy.startswith("torch.cuda.amp.")]),
              ("torch.cuda.amp", [r for r in py if r.legacy.startswith("torch.cuda.amp.")]),
              ("torch.xpu", [r for r in py if r.legacy.startswith("torch.xpu.")]),
              ("torch.accelerator aliases", [r for r in py if r.legacy.startswith("torch.accelerator.")]),
              ("c10::cuda / at::cuda", [r for r in cpp if r.legacy.startswith(("c10::cuda::", "at::cuda::")) and "CachingAllocator" not in r.legacy]),
              ("CUDACachingAllocator", [r for r in cpp if "CUDACachingAllocator" in r.legacy]),
              ("c10::xpu", [r for r in cpp if r.legacy.startswith("c10::xpu::")]),
              ("device literals and idioms", [r for r in table.rows if r.status == "literal"])]
    spellings = sum(1 + len(r.also or ()) for r in table.rows)
    lines = [f"<!-- {GENERATED.format(src='*.toml')} -->",
             "# Migration guide: from torch.cuda / torch.xpu to the device-generic API",
             "",
             "Generated from the compat table (`compat_map/`). PyTorch's rules: device-generic",
             "calls live in `torch` with an optional device, calls for the current accelerator in",
             "`torch.accelerator`, and only what is truly device-specific stays in `torch.cuda` or",
             "`torch.xpu`. Every legacy entry point is listed below with its replacement, how",
             "safe the mechanical rewrite is (`safe`: exact; `unsafe`: changes behaviour, see the",
             "note; `none`: migrate by hand), and its rule code (`anydev rule ADxxx`).",
             "",
             "## Coverage",
             "",
             f"The table has **{len(table.rows)} rows** ({spellings} spellings, counting `at::cuda::` "
             "beside `c10::cuda::`):",
             "",
             "| area | rows | deprecated | kept (device-specific) | with a rewrite | with an anydev forwarder |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, rows in groups:
        n, d, k, f, a = counts(rows)
        lines.append(f"| `{name}` | {n} | {d} | {k} | {f} | {a} |")
    n, d, k, f, a = counts(table.rows)
    lines += [f"| **all** | **{n}** | **{d}** | **{k}** | **{f}** | **{a}** |", ""]
    lines += ["Kept rows are PyTorch's device-specific APIs (rule 4): anydev never warns about them",
              "or reports them as legacy.", ""]
    for name, rows in groups:
        lines += [f"## `{name}`", "",
                  "| legacy | replacement | fix | rule | since | note |",
                  "|---|---|---|---|---|---|"]
        for r in sorted(rows, key=lambda r: r.code):
            legacy = " / ".join(f"`{s}`" for s in [r.legacy, *(r.also or [])])
            if r.status == "kept":
                rep, fix = "*kept: device-specific*", "—"
            else:
                rep = f"`{r.template}`" if r.template else (f"`{r.replacement}`" if r.replacement else "*none*")
                fix = r.fix
            note = r.note.replace("|", "\\|").replace("\n", " ")
            # the anchor of the rule's link (anydev._migrate.rules.rule_url)
            code = f'<a id="{r.code.lower()}"></a>{r.code}'
            lines.append(f"| {legacy} | {rep} | {fix} | {code} | {r.deprecated_in} | {note} |")
        lines.append("")
    return "\n".join(lines)


def outputs(table: Table) -> dict[str, str]:
    files = {"python/anydev/_compat/table.py": gen_table_module(table),
             "python/anydev/_migrate/scan_table.py": gen_scan_table(table)}
    for module, path in (("anydev.cuda", "python/anydev/cuda/__init__"),
                         ("anydev.cuda.amp", "python/anydev/cuda/amp/__init__"),
                         ("anydev.xpu", "python/anydev/xpu/__init__"),
                         ("anydev._compat.legacy_accelerator", "python/anydev/_compat/legacy_accelerator")):
        code, stub = gen_shim_module(table, module)
        files[path + ".py"] = code
        if not module.startswith("anydev._"):
            files[path + ".pyi"] = stub
        for sub in SUBMODULES.get(module, {}):
            code, stub = gen_submodule(table, module, sub)
            base = path[:-len("__init__")] + sub
            files[base + ".py"] = code
            files[base + ".pyi"] = stub
    files["shims/include/anydev/compat/cuda.h"] = gen_cpp_header(table, "cuda")
    files["shims/include/anydev/compat/xpu.h"] = gen_cpp_header(table, "xpu")
    files["shims/include/anydev/torch_deprecations.h"] = gen_torch_deprecations(table)
    files["docs/migration-guide.md"] = gen_guide(table)
    return files


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="validate and fail if a generated file is missing or stale; write nothing")
    ap.add_argument("--stamp", help="touch this file after a successful run (for the build)")
    ap.add_argument("--root", help="the repository root (default: the one this script is in)")
    args = ap.parse_args(argv)
    if args.root:
        global ROOT, TABLE_DIR
        ROOT = os.path.abspath(args.root)
        TABLE_DIR = os.path.join(ROOT, "compat_map")
    try:
        table = load_table()
        validate(table)
    except TableError as e:
        print(str(e), file=sys.stderr)
        print(f"compat_map: the table is invalid ({len(str(e).splitlines())} problem(s))",
              file=sys.stderr)
        return 1
    stale = []
    for rel, content in outputs(table).items():
        path = os.path.join(ROOT, rel)
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current == content:
            continue
        if args.check:
            stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(content)
        os.replace(tmp, path)
        print(f"compat_map: wrote {rel}")
    if stale:
        for rel in stale:
            print(f"compat_map: {rel} is stale; run `python3 compat_map/generate.py`", file=sys.stderr)
        return 1
    if args.stamp:
        with open(args.stamp, "w"):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
