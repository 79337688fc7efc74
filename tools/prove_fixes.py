#!/usr/bin/env python3
"""The differential proof of the compat table's Python fixes.

For every Python row with a fix (``fix = "safe"``, and for information every
``"unsafe"`` one), builds small snippets that call the legacy entry point in
each argument form its signature allows, rewrites each with the real fixer
(``anydev.fix.fix_source`` with ``unsafe=True``) and runs the legacy snippet
and its rewrite on every real PyTorch build at hand (the running interpreter's,
and Debian's 1.13 under /usr/bin/python3 when the row's ``since`` is at most
1.13), one subprocess per build, with warnings silenced. A case is the same
when both return equal results (calls: the value; references: the same
object; classes and context managers: the type's relation and the instance's
primitive-valued attributes, and entering and leaving it) or both raise.

    tools/prove_fixes.py            # run it and print the verdicts
    tools/prove_fixes.py --write    # ... and write compat_map/proofs.json
    tools/prove_fixes.py --check    # fail (exit 1) when proofs.json is stale
    tools/prove_fixes.py --json OUT # write the document elsewhere (the GPU check)
    tools/prove_fixes.py --python PY  # an extra build to run on (repeatable)

Exit status: 0 done (and, with --check, proofs.json is current); 1 a row
marked safe differs on a build, or proofs.json is stale; 2 bad usage or no
build could run. The same module, run as ``--child MODE``, is the subprocess
on each build: it needs only the standard library and torch.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import subprocess
import sys
import time
from typing import Any, NamedTuple, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROOFS = os.path.join(ROOT, "compat_map", "proofs.json")
OLD_PYTHON = "/usr/bin/python3"
CHILD_TIMEOUT_S = 600

# --- call forms: shared with tests/python/compat/test_compat_versions.py --------------------

# Sample argument values by parameter name (source text); "{dev}" is the legacy
# module's device type (cuda, xpu).
SAMPLES: dict[str, list[str]] = {
    "device": ["0", '"{dev}"', '"{dev}:0"', 'torch.device("{dev}", 0)', "None"],
    "seed": ["1234"],
    "enabled": ["False"],
    "dtype": ["torch.bfloat16"],
    "cache_enabled": ["False"],
    "init_scale": ["1024.0"],
    "growth_factor": ["3.0"],
    "backoff_factor": ["0.25"],
    "growth_interval": ["10"],
    "cast_inputs": ["torch.float32"],
    "enable_timing": ["True"],
    "blocking": ["True"],
    "interprocess": ["False"],
    "external": ["False"],
    "priority": ["-1"],
    "stream": ["None"],
    "obj": ["torch.zeros(1)"],
    "new_state": ["torch.get_rng_state()"],
    "new_states": ["[torch.get_rng_state()]"],
    "keep_graph": ["False"],
    # a decorator's function (the harness decorates its own; this is for binding)
    "fwd": ["fn"],
    "bwd": ["fn"],
}
# The parameter of a decorator that is the decorated function.
FUNCTION_PARAMS = ("fwd", "bwd")


class Param(NamedTuple):
    name: str
    kind: str  # "posonly", "poskw", "kwonly"
    has_default: bool


def parameters(signature: str) -> tuple[list[Param], bool]:
    """The named parameters of a legacy signature (``"(device=None)"``), and
    whether it also has ``*args`` or ``**kwargs`` (which no form covers)."""
    fn = ast.parse(f"def f{signature}: pass").body[0]
    a = fn.args
    positional = [(x.arg, "posonly") for x in a.posonlyargs] + [(x.arg, "poskw") for x in a.args]
    first_default = len(positional) - len(a.defaults)
    out = [Param(n, k, i >= first_default) for i, (n, k) in enumerate(positional)]
    out += [Param(x.arg, "kwonly", d is not None) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out, bool(a.vararg or a.kwarg)


def forms(params: list[Param]) -> list[tuple[tuple[str, str], ...]]:
    """The argument forms a signature allows, each a tuple of (parameter,
    "pos" | "kw") in call order: the required parameters alone; each optional
    one added by keyword and (with every positional one before it) by
    position; a required one by keyword; all of them by position; all by
    keyword. Duplicates are dropped."""
    def form(present: set[str], by_keyword: set[str]) -> tuple[tuple[str, str], ...]:
        pos = [(p.name, "pos") for p in params
               if p.name in present and p.kind != "kwonly" and p.name not in by_keyword]
        kw = [(p.name, "kw") for p in params
              if p.name in present and (p.kind == "kwonly" or p.name in by_keyword)]
        return tuple(pos + kw)

    required = {p.name for p in params if not p.has_default}
    positional = [p for p in params if p.kind != "kwonly"]
    out = [form(required, set())]
    for i, p in enumerate(params):
        if p.kind != "posonly":
            out.append(form(required | {p.name}, {p.name}))
        if p.kind != "kwonly":
            before = {q.name for q in positional[:positional.index(p) + 1]}
            out.append(form(required | before, set()))
    every = {p.name for p in params}
    out.append(form(every, set()))
    out.append(form(every, {p.name for p in params if p.kind == "poskw"}))
    seen, unique = set(), []
    for f in out:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique


def device_type(legacy: str) -> str:
    part = legacy.split(".")[1] if legacy.count(".") >= 2 else "cuda"
    return part if part in ("cuda", "xpu") else "cuda"


class Case(NamedTuple):
    bound: dict[str, str]  # parameter -> argument text
    args: str  # the call's arguments, as written


def cases_of(signature: Optional[str], legacy: str,
             skip: tuple[str, ...] = ()) -> tuple[list[Case], Optional[str]]:
    """Every argument form of ``signature`` with every sample value, or
    ([], why) when a parameter has no sample value. ``skip``: parameters
    left out of the forms (a decorator's function)."""
    if signature is None:
        return [Case({}, "")], None
    params, _ = parameters(signature)
    params = [p for p in params if p.name not in skip]
    dev = device_type(legacy)
    missing = [p.name for p in params if p.name not in SAMPLES]
    if missing:
        return [], f"no sample value for parameter {', '.join(missing)}"
    out = []
    for f in forms(params):
        choices = [[v.replace("{dev}", dev) for v in SAMPLES[name]] for name, _ in f]
        for values in itertools.product(*choices):
            bound = {name: v for (name, _), v in zip(f, values)}
            args = ", ".join(v if how == "pos" else f"{name}={v}"
                             for (name, how), v in zip(f, values))
            out.append(Case(bound, args))
    return out, None


def split_version(v: str) -> tuple[int, ...]:
    """(major, minor) of "2.13", "2.13.0+cpu", "1.13.0a0"; "main" sorts last."""
    if v == "main":
        return (10**6,)
    head = v.split("+")[0].split(".")
    nums = []
    for part in head[:2]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        nums.append(int(digits or 0))
    return tuple(nums)


# --- the child: runs on one torch build (standard library and torch only) ------------

_PRIMITIVE = (bool, int, float, str, type(None))


def _project(value: Any, depth: int = 0) -> Any:
    """A JSON-able, comparable picture of a value."""
    import torch  # noqa: PLC0415
    if isinstance(value, _PRIMITIVE):
        return value if not isinstance(value, float) or value == value else "nan"
    if isinstance(value, (torch.dtype, torch.device)):
        return {"%s" % type(value).__name__: str(value)}
    if isinstance(value, torch.Tensor):
        return {"tensor": [str(value.dtype), list(value.shape),
                           value.detach().flatten()[:16].tolist() if value.numel() else []]}
    if depth > 3:
        return {"type": _qualname(type(value))}
    if isinstance(value, (list, tuple)):
        return [_project(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {"dict": [[str(k), _project(v, depth + 1)] for k, v in sorted(value.items(), key=str)]}
    if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
        return {"ref": _qualname(value)}
    attrs = getattr(value, "__dict__", None) or {}
    return {"object": _qualname(type(value)),
            "attrs": {k: _project(v, depth + 1) for k, v in sorted(attrs.items())
                      if isinstance(v, _PRIMITIVE + (torch.dtype, torch.device))}}


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _describe(outcome: dict) -> str:
    if "raises" in outcome:
        return f"raises {outcome['raises']}"
    v = outcome["value"]
    if isinstance(v, _PRIMITIVE):
        return f"returns {v!r}"
    if isinstance(v, dict) and len(v) == 1:
        (key, inner), = v.items()
        if key == "dict":
            return f"returns a dict of {len(inner)} item(s)"
        if key in ("ref", "object", "dtype", "device"):
            return f"returns {key} {inner}"
    if isinstance(v, dict) and "object" in v:
        return f"returns a {v['object']}"
    return f"returns {type(v).__name__}"


def _run_side(src: str, kind: str) -> tuple[dict, Any]:
    """Runs one snippet; its `result` is the outcome (a context manager is
    also entered and left)."""
    import torch  # noqa: PLC0415
    torch.manual_seed(0)
    ns: dict[str, Any] = {"__name__": "__case__"}
    try:
        exec(compile(src, "<case>", "exec"), ns)  # noqa: S102 - the harness's own snippets
        value = ns.get("_result")
        out: dict[str, Any] = {"value": _project(value)}
        if kind == "context_manager":
            entered = value.__enter__()
            out["enter"] = "self" if entered is value else _project(entered)
            out["exit"] = _project(value.__exit__(None, None, None))
        return out, value
    except BaseException as e:  # noqa: BLE001 - any exception is an outcome
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return {"raises": type(e).__name__}, None


def _relation(old: Any, new: Any) -> str:
    a, b = type(old), type(new)
    if a is b:
        return "same type"
    if issubclass(a, b):
        return "legacy type subclasses the replacement's"
    if issubclass(b, a):
        return "replacement type subclasses the legacy one"
    return "unrelated types"


def child_run(cases: list[dict]) -> dict:
    """Runs each case's legacy snippet and rewrite; what each did, and
    whether that is the same."""
    import warnings  # noqa: PLC0415
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _child_run(cases)


def _child_run(cases: list[dict]) -> dict:
    import torch  # noqa: PLC0415
    out = []
    for c in cases:
        old, old_value = _run_side(c["legacy"], c["kind"])
        new, new_value = _run_side(c["rewrite"], c["kind"])
        rec = {"id": c["id"], "legacy": _describe(old), "rewrite": _describe(new)}
        if "raises" in old and "raises" in new:
            same = True
        elif "raises" in old or "raises" in new:
            same = False
        elif c["kind"] == "attribute":
            same = old_value is new_value
            rec["identity"] = same
        elif c["kind"] in ("class", "context_manager"):
            rel = _relation(old_value, new_value)
            rec["relation"] = rel
            same = (rel in ("same type", "legacy type subclasses the replacement's")
                    and old["value"].get("attrs") == new["value"].get("attrs")
                    and old.get("enter") == new.get("enter") and old.get("exit") == new.get("exit"))
        else:
            same = old == new
        rec["same"] = same
        out.append(rec)
    return {"torch": torch.__version__, "cases": out}


def _resolve(path: str) -> Any:
    import torch  # noqa: PLC0415
    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def child_forms(checks: list[dict]) -> dict:
    """For each check {"id", "path", "calls": [rendered call text], "cm"}:
    whether the attribute path resolves after `import torch`, each call binds
    to the callee's signature (inspect, else a real call where TypeError
    means it does not), and, with "cm", the object is a context manager."""
    import warnings  # noqa: PLC0415
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _child_forms(checks)


def _child_forms(checks: list[dict]) -> dict:
    import inspect  # noqa: PLC0415
    import torch  # noqa: PLC0415
    out = []
    for c in checks:
        rec: dict[str, Any] = {"id": c["id"], "problems": []}
        try:
            obj = _resolve(c["path"])
        except AttributeError as e:
            rec["problems"].append(f"{c['path']} does not resolve ({e})")
            out.append(rec)
            continue
        if c.get("cm") and not (hasattr(obj, "__enter__") and hasattr(obj, "__exit__")):
            rec["problems"].append(f"{c['path']} is not a context manager")
        for call in c.get("calls", []):
            node = ast.parse(call, mode="eval").body
            if not isinstance(node, ast.Call):
                rec["problems"].append(f"{call!r} is not a call")
                continue
            callee = ast.unparse(node.func)
            try:
                fn = _resolve(callee)
            except AttributeError as e:
                rec["problems"].append(f"{callee} does not resolve ({e})")
                continue
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                sig = None
            if sig is not None:
                sentinel = object()
                try:
                    sig.bind(*[sentinel] * len(node.args),
                             **{k.arg: sentinel for k in node.keywords if k.arg})
                except TypeError as e:
                    rec["problems"].append(f"{call} does not bind to {callee}{sig} ({e})")
                continue
            try:
                eval(compile(call, "<call>", "eval"), {"torch": torch})  # noqa: S307
            except TypeError as e:
                rec["problems"].append(f"{call} does not bind ({e})")
            except Exception:  # noqa: BLE001 - the arguments were accepted
                pass
        out.append(rec)
    return {"torch": torch.__version__, "checks": out}


def run_child(python: str, mode: str, payload: list[dict], setup: str = "") -> dict:
    """Runs this file as a child on ``python``; its JSON answer, or
    {"error": why}."""
    try:
        env = _child_env()
        if setup:
            env["PROVE_FIXES_SETUP"] = setup
        proc = subprocess.run([python, os.path.abspath(__file__), "--child", mode],
                              input=json.dumps(payload), capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S, cwd=ROOT, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"{python} did not run ({type(e).__name__}: {e})"}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"{python} exited {proc.returncode}: {tail[0]}"}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"{python} printed no JSON answer"}


def _child_env() -> dict[str, str]:
    """The environment of a child: without PYTHONPATH or PYTHONHOME, which
    could bring another interpreter's torch (the .venv's 2.13 to Debian's
    1.13); the child needs only its own torch."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def torch_version_of(python: str) -> Optional[str]:
    """The torch version importable by ``python``, or None."""
    if not os.path.exists(python):
        return None
    try:
        proc = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env=_child_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


# --- building and rewriting the snippets (needs anydev) --------------------------------


def proof_rows() -> list:
    from anydev._compat import table as _compat_table  # noqa: PLC0415
    return [r for r in _compat_table.ROWS
            if r.language == "python" and r.status == "deprecated" and r.fix in ("safe", "unsafe")]


def snippets(row) -> tuple[list[tuple[str, str]], Optional[str]]:
    """(label, legacy source) of each case of ``row``, or ([], why not)."""
    head = "import torch\n"
    out: list[tuple[str, str]] = []
    if row.kind == "attribute":
        return [(row.legacy, head + f"_result = {row.legacy}\n")], None
    if row.kind == "decorator":
        params, _ = parameters(row.signature)
        fparam = next((p for p in params if p.name in FUNCTION_PARAMS), None)
        if fparam is None:
            return [], "a decorator without a fwd/bwd parameter"
        cases, why = cases_of(row.signature, row.legacy, skip=(fparam.name,))
        if why:
            return [], why
        ctx = ("types.SimpleNamespace(_fwd_used_autocast=False, _dtype=torch.float16)"
               if fparam.name == "bwd" else "types.SimpleNamespace()")
        body = ("def fn(ctx, x):\n    return x * 2\n")
        tail = (f"ctx = {ctx}\nout = fn(ctx, torch.ones(2))\n"
                "_result = (out, {k: v for k, v in sorted(vars(ctx).items())})\n")
        head = "import types\nimport torch\n"
        out.append((f"@{row.legacy}", head + f"@{row.legacy}\n" + body + tail))
        for c in cases:
            if fparam.has_default:
                out.append((f"@{row.legacy}({c.args})",
                            head + f"@{row.legacy}({c.args})\n" + body + tail))
            args = ", ".join(a for a in ("_fn", c.args) if a)
            out.append((f"{row.legacy}({args.replace('_fn', 'fn')})",
                        head + body.replace("def fn", "def _fn")
                        + f"fn = {row.legacy}({args})\n" + tail))
            if fparam.kind != "posonly":
                kw = ", ".join(a for a in (f"{fparam.name}=_fn", c.args) if a)
                out.append((f"{row.legacy}({kw.replace('_fn', 'fn')})",
                            head + body.replace("def fn", "def _fn")
                            + f"fn = {row.legacy}({kw})\n" + tail))
        return out, None
    cases, why = cases_of(row.signature, row.legacy)
    if why:
        return [], why
    guard = "Unsafe: where no accelerator is available" in row.note
    for c in cases:
        call = f"{row.legacy}({c.args})"
        if guard:
            # the fixer rewrites it only under a check (Note [Guarded calls]): the
            # proof runs what it writes
            dev = row.legacy.split(".")[1]
            out.append((f"{call} under torch.{dev}.is_available()",
                        head + f"_result = None\nif torch.{dev}.is_available():\n"
                               f"    _result = {call}\n"))
            continue
        out.append((call, head + f"_result = {call}\n"))
    if row.kind == "call" and row.rename:
        for c in cases:
            if "=" not in c.args:
                out.append((f"fn = {row.legacy}; fn({c.args})",
                            head + f"fn = {row.legacy}\n_result = fn({c.args})\n"))
    return out, None


def rewrite(src: str, code: str) -> tuple[Optional[str], Optional[str]]:
    """The real fixer's rewrite of ``src`` (all its findings, unsafe fixes
    included), or (None, why) when the finding of ``code`` is not applied."""
    from anydev import fix as _fix  # noqa: PLC0415
    from anydev import scan as _scan  # noqa: PLC0415
    from anydev._compat import table as _compat_table  # noqa: PLC0415
    findings, errors = _scan.scan_source(src, "case.py", select=["ALL"])
    if errors:
        return None, f"the scanner failed: {errors[0].message}"
    if not any(f.rule == code for f in findings):
        return None, f"the scanner reports no {code}"
    # an API row's proof rewrites the API call alone, not the "cuda" of its sample
    # arguments (a literal row, AD9xx, proven on its own)
    literal = code in LITERAL_CASES
    findings = [f for f in findings if (f.rule in LITERAL_CASES) == literal or
                f.kind == "call" and literal and f.rule != code and _is_guard(f.rule)]
    try:
        # one round: the proof is of this row's rewrite, not of what rewrites its output
        # the newest target: the proof is of the rewrite; which releases have it is
        # `since`'s claim, checked on its own
        new, applied, skipped = _fix.fix_source(src.encode(), "case.py", findings, unsafe=True,
                                                rules=lambda fs: [],
                                                target_torch=_compat_table.NEWEST_TORCH)
    except ValueError as e:
        return None, f"the fixer refused the file: {e}"
    if not any(f.rule == code for f in applied):
        why = next((w for f, w in skipped if f.rule == code), "not applied")
        return None, f"the fixer leaves it: {why}"
    return new.decode(), None


def _is_guard(code: str) -> bool:
    """An availability or count check: it moves with the literals of its unit."""
    from anydev._compat import table as _compat_table  # noqa: PLC0415
    row = _compat_table.ROWS_BY_CODE.get(code)
    return row is not None and row.replacement in ("torch.accelerator.is_available",
                                                   "torch.accelerator.device_count")


# --- the literal rows (compat_map/literals.toml) ---------------------------------------

# For each Python literal row: (legacy snippet, what its rewrite does on a machine
# without an accelerator, as the row's note says). The rewrite is unsafe by design
# (it behaves differently on an accelerator other than CUDA); the proof shows that
# it runs and gives the CPU-machine result the note claims, on the real torch.
LITERAL_CASES: dict[str, list[tuple[str, str]]] = {
    "AD901": [('_result = torch.device("cuda")', "returns device cuda"),
              ('_result = torch.device("cuda", 1)', "returns device cuda:1"),
              ('_result = torch.device("cuda:1")', "returns device cuda:1"),
              ('i = 1\n_result = torch.device(f"cuda:{i}")', "returns device cuda:1"),
              ('_result = torch.device(type="cuda")', "returns device cuda")],
    "AD902": [('_result = torch.zeros(2, device="cuda").device', "returns device cpu"),
              ('_result = torch.zeros(2, device="cuda:0").device', "raises AssertionError")],
    "AD903": [('_result = torch.zeros(2).to("cuda").device', "returns device cpu"),
              ('_result = torch.zeros(2).to(device="cuda:0").device', "raises AssertionError")],
    "AD904": [('_result = torch.autocast("cuda").device', "returns 'cuda'"),
              ('_result = torch.autocast(device_type="cuda").device', "returns 'cuda'"),
              ('_result = torch.amp.GradScaler("cuda").is_enabled()', "returns False")],
    "AD905": [('_result = "cuda" if torch.cuda.is_available() else "cpu"', "returns 'cpu'"),
              ('_result = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
               "returns device cpu"),
              ('_result = torch.device("cuda:0" if torch.cuda.device_count() > 0 else "cpu")',
               "returns device cpu"),
              ('_result = "cpu" if not torch.cuda.is_available() else "cuda"', "returns 'cpu'")],
    "AD906": [('if torch.cuda.is_available():\n    _result = "cuda"\nelse:\n    _result = "cpu"',
               "returns 'cpu'"),
              ('if torch.cuda.device_count() > 0:\n    _result = torch.device("cuda")\n'
               'else:\n    _result = torch.device("cpu")', "returns device cpu")],
    "AD907": [("_result = torch.zeros(2).cuda()", "raises AssertionError"),
              ("_result = torch.zeros(2).cuda(0, non_blocking=True)", "raises AssertionError"),
              ("_result = torch.nn.Linear(2, 2).cuda()", "raises AssertionError")],
    "AD908": [("_result = torch.zeros(2).is_cuda", "returns False")],
    "AD909": [('_result = torch.zeros(2).device.type == "cuda"', "returns False"),
              ('_result = torch.zeros(2).device.type != "cuda"', "returns True")],
    # init_process_group is replaced by one that returns the backend it was given
    "AD910": [("import torch.distributed\n"
               "torch.distributed.init_process_group = lambda backend=None, **kw: backend\n"
               '_result = torch.distributed.init_process_group("nccl")', "returns 'gloo'"),
              ("import torch.distributed\n"
               "torch.distributed.init_process_group = lambda backend=None, **kw: backend\n"
               '_result = torch.distributed.init_process_group(backend="nccl")',
               "returns 'gloo'")],
    "AD911": [("_result = torch.cuda.get_device_name(0)", "raises AttributeError"),
              ("_result = torch.cuda.is_initialized()", "returns True")],
}


def literal_rows() -> list:
    from anydev._compat import table as _compat_table  # noqa: PLC0415
    return [r for r in _compat_table.ROWS if r.language == "python" and r.status == "literal"]


def _prove_literals(builds: list, only: Optional[set[str]]) -> dict[str, dict]:
    """The proof entries of the literal rows: each case's legacy snippet and
    the real fixer's rewrite, run on the builds that have the replacement;
    the verdict says whether the rewrite does what the note claims."""
    rows = [r for r in literal_rows() if only is None or r.code in only]
    doc_rows: dict[str, dict] = {}
    per_build: dict[str, list[dict]] = {b.version: [] for b in builds}
    for row in rows:
        entry: dict[str, Any] = {"legacy": row.legacy, "replacement": row.replacement,
                                 "fix": row.fix, "since": row.since, "torch": [], "cases": [],
                                 "unsafe": _first_sentence(row.note)}
        doc_rows[row.code] = entry
        todo = []
        for body, claim in LITERAL_CASES.get(row.code, []):
            src = "import torch\n" + body + "\n"
            new, why = rewrite(src, row.code)
            lines = [ln for ln in body.splitlines() if not ln.startswith(("import ", "i = "))
                     and "lambda" not in ln]
            label = lines[0].removeprefix("_result = ") + (" ..." if len(lines) > 1 else "")
            case: dict[str, Any] = {"call": label,
                                    "claim": claim, "rewrite": None, "outcomes": {}}
            if new is None:
                case["not_rewritten"] = why
            else:
                case["rewrite"] = _rewritten_label(body, src, new)
                todo.append((len(entry["cases"]), src, new))
            entry["cases"].append(case)
        if not entry["cases"]:
            entry["verdict"] = "not run: no case for this row in tools/prove_fixes.py"
            continue
        for b in builds:
            if split_version(row.since or "0") <= split_version(b.version):
                entry["torch"].append(b.version)
                per_build[b.version] += [{"id": f"{row.code}/{i}", "kind": "call",
                                          "legacy": src, "rewrite": new} for i, src, new in todo]
    answers = {v: run_child(next(b.python for b in builds if b.version == v), "run", cases)
               for v, cases in per_build.items() if cases}
    for code, entry in doc_rows.items():
        if "verdict" in entry:
            continue
        missing = [c["call"] + ": " + c["not_rewritten"] for c in entry["cases"]
                   if c.get("rewrite") is None]
        off: list[str] = []
        errors: list[str] = []
        for version, case, rec in _answered(code, entry, answers, errors):
            case["outcomes"][version] = {k: rec[k] for k in ("legacy", "rewrite")}
            if rec["rewrite"] != case["claim"]:
                off.append(f"on torch {version} `{case['rewrite']}` {rec['rewrite']}, the "
                           f"note says it {case['claim'].split(' ', 1)[0]} "
                           f"{case['claim'].split(' ', 1)[1]}")
        if missing:
            entry["verdict"] = "not rewritten: " + missing[0]
        elif not entry["torch"]:
            entry["verdict"] = f"not run: no build at hand has the replacement (since {entry['since']})"
        elif errors:
            entry["verdict"] = "not run: " + "; ".join(errors)
        elif off:
            entry["verdict"] = f"differs from the note: {off[0]}"
        else:
            first = entry["cases"][0]
            o = first["outcomes"][entry["torch"][0]]
            n = len(entry["cases"])
            entry["verdict"] = (f"as the note says, on torch {', '.join(entry['torch'])} without "
                                f"an accelerator, {n} form(s): `{first['call']}` {o['legacy']}, "
                                f"its rewrite {o['rewrite']}")
    return doc_rows


def _answered(code: str, entry: dict, answers: dict, errors: list[str]):
    """(version, case, record) for each of the row's cases that a build ran;
    a build whose child failed adds its error to ``errors`` instead."""
    for version in entry["torch"]:
        ans = answers.get(version, {})
        if "error" in ans:
            errors.append(f"torch {version}: {ans['error']}")
            continue
        by_id = {c["id"]: c for c in ans.get("cases", [])}
        for i, case in enumerate(entry["cases"]):
            rec = by_id.get(f"{code}/{i}")
            if rec is not None:
                yield version, case, rec


def _first_sentence(note: str) -> str:
    return note.split(". ")[0].rstrip(".") + "."


def literal_failures(doc: dict) -> list[str]:
    """Literal rows whose rewrite does not do what the note says (or did not run)."""
    return [f"{code}: {e['verdict']}" for code, e in doc["rows"].items()
            if code in LITERAL_CASES and not e["verdict"].startswith("as the note says")]


class Build(NamedTuple):
    """One environment the cases run in: an interpreter with torch, and the
    code its child runs first (``setup``; the third environment's, which
    registers an accelerator that is not CUDA)."""
    python: str
    version: str
    setup: str = ""


#: The third environment (Note [Three machines]): an accelerator that is not
#: CUDA inside the real torch. Its setup runs in the child before the cases;
#: the environment is used where the probe succeeds on the interpreter.
ACCELERATOR_SETUP = "import anydev.torch as _adt; _adt.register_sim()"
ACCELERATOR_PROBE = "import anydev.torch as _adt; assert callable(_adt.register_sim)"


def builds_at_hand(extra: list[str]) -> list[Build]:
    """This interpreter's torch, Debian's 1.13 under /usr/bin/python3, any
    ``--python``, each once by version; and, where ``anydev.torch`` can
    register its accelerator in this interpreter's torch, the same torch with
    an accelerator that is not CUDA (version ``<v>+sim``)."""
    out: list[Build] = []
    for py in [sys.executable, OLD_PYTHON, *extra]:
        v = torch_version_of(py)
        if v and all(b.version != v for b in out):
            out.append(Build(py, v))
    if out and _probe(out[0].python, ACCELERATOR_PROBE):
        out.append(Build(out[0].python, f"{out[0].version}+sim", ACCELERATOR_SETUP))
    return out


def _probe(python: str, code: str) -> bool:
    try:
        return subprocess.run([python, "-c", code], capture_output=True, timeout=120,
                              env=_child_env()).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# Note [Three machines]
# "Safe" is a promise for three machines: one without an accelerator, one with
# CUDA and one with another accelerator, the kind the migration is for (docs/
# scan.md, "A fix is a promise"). Here, the first is the real CPU build (and
# Debian's 1.13 for the rows old enough); the third is the same torch with a
# PrivateUse1 accelerator registered by anydev.torch.register_sim(), used as
# soon as that function exists (before, the environment is absent and the
# proofs say which builds they ran on). The CUDA machine is tools/gpu_check.sh's.


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s.strip() else s


def prove(extra_pythons: Optional[list[str]] = None, only: Optional[set[str]] = None) -> dict:
    """Runs the proof; the proofs document (see compat_map/SCHEMA.md)."""
    rows = [r for r in proof_rows() if only is None or r.code in only]
    builds = builds_at_hand(extra_pythons or [])
    doc_rows: dict[str, dict] = {}
    per_build: dict[str, list[dict]] = {b.version: [] for b in builds}
    plan: dict[str, list[tuple[int, str, str, str]]] = {}
    for row in rows:
        entry: dict[str, Any] = {"legacy": row.legacy, "replacement": row.replacement,
                                 "fix": row.fix, "since": row.since, "torch": [], "cases": []}
        doc_rows[row.code] = entry
        if row.since == "main":
            entry["verdict"] = (f"not run: no PyTorch release up to the newest the table knows "
                                f"has {row.replacement} (since = main)")
            continue
        snips, why = snippets(row)
        if why:
            entry["verdict"] = f"not run: {why}"
            continue
        cases = []
        for label, src in snips:
            new, why = rewrite(src, row.code)
            case = {"call": label, "rewrite": None, "outcomes": {}}
            if new is None:
                case["not_rewritten"] = why
            else:
                case["rewrite"] = _rewritten_label(label, src, new)
                cases.append((len(entry["cases"]), src, new))
            entry["cases"].append(case)
        if not cases:
            entry["verdict"] = "not run: " + entry["cases"][0].get("not_rewritten", "no case")
            continue
        plan[row.code] = cases
        for b in builds:
            if split_version(row.since or "0") <= split_version(b.version):
                entry["torch"].append(b.version)
                per_build[b.version] += [{"id": f"{row.code}/{i}", "kind": row.kind,
                                          "legacy": src, "rewrite": new}
                                         for i, src, new in cases]
    answers: dict[str, dict] = {}
    for b in builds:
        if per_build[b.version]:
            answers[b.version] = run_child(b.python, "run", per_build[b.version], b.setup)
    for code, entry in doc_rows.items():
        if "verdict" in entry:
            continue
        differs: list[str] = []
        errors: list[str] = []
        for version, case, rec in _answered(code, entry, answers, errors):
            case["outcomes"][version] = {
                k: rec[k] for k in ("legacy", "rewrite", "same", "relation", "identity")
                if k in rec}
            if not rec["same"]:
                differs.append(f"on torch {version} `{case['call']}` {rec['legacy']}, "
                               f"`{case['rewrite']}` {rec['rewrite']}"
                               + (f" ({rec['relation']})" if rec.get("relation") else ""))
        if not entry["torch"]:
            entry["verdict"] = (f"not run: no build at hand has the replacement "
                                f"(since {entry['since']})")
        elif errors:
            entry["verdict"] = "not run: " + "; ".join(errors)
        elif differs:
            more = f" (and {len(differs) - 1} more case(s))" if len(differs) > 1 else ""
            entry["verdict"] = f"differs: {differs[0]}{more}"
        else:
            entry["verdict"] = "same"
    doc_rows.update(_prove_literals(builds, only))
    return {"schema": 1,
            "about": "Written by `tools/prove_fixes.py --write`: for each Python row with a fix, "
                     "the legacy call and its rewrite by `anydev fix --unsafe-fixes`, run on "
                     "the real PyTorch builds listed (see compat_map/SCHEMA.md).",
            "torch": [b.version for b in builds],
            "rows": doc_rows}


def _rewritten_label(label: str, src: str, new: str) -> str:
    """The rewritten form of a case's label: the lines that changed."""
    old_lines, new_lines = src.splitlines(), new.splitlines()
    changed = [n.removeprefix("_result = ") for n in new_lines if n not in old_lines]
    return "; ".join(changed) if changed else _first_line(new)


def summary(entry: dict) -> str:
    """One line for `anydev rule`: what was proven, on which torch."""
    v = entry["verdict"]
    n = sum(1 for c in entry["cases"] if c.get("rewrite"))
    if v == "same":
        return (f"same behaviour on torch {', '.join(entry['torch'])} for {n} call form(s)")
    return v


def safe_failures(doc: dict) -> list[str]:
    """Rows marked safe whose proof does not show the same behaviour."""
    return [f"{code}: {e['verdict']}" for code, e in doc["rows"].items()
            if e["fix"] == "safe" and e["verdict"] != "same"]


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {os.path.relpath(PROOFS, ROOT)}")
    ap.add_argument("--check", action="store_true", help="exit 1 when proofs.json is stale")
    ap.add_argument("--json", metavar="OUT", help="write the document to OUT")
    ap.add_argument("--python", action="append", default=[], metavar="PY",
                    help="another interpreter with torch to run on")
    ap.add_argument("--child", choices=("run", "forms"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        payload = json.load(sys.stdin)
        if os.environ.get("PROVE_FIXES_SETUP"):  # the environment's own (Note [Three machines])
            exec(os.environ["PROVE_FIXES_SETUP"], {})
        answer = child_run(payload) if args.child == "run" else child_forms(payload)
        print(json.dumps(answer))
        return 0
    started = time.monotonic()
    doc = prove(args.python)
    elapsed = time.monotonic() - started
    if not doc["torch"]:
        print("prove_fixes: no interpreter with torch at hand", file=sys.stderr)
        return 2
    for code, e in doc["rows"].items():
        print(f"{code}  {e['fix']:6}  {e['legacy']:45}  {summary(e)}")
    print(f"prove_fixes: {len(doc['rows'])} rows on torch {', '.join(doc['torch'])} "
          f"in {elapsed:.1f} s", file=sys.stderr)
    text = dumps(doc)
    status = 0
    for line in safe_failures(doc):
        print(f"prove_fixes: marked safe but not proven: {line}", file=sys.stderr)
        status = 1
    for line in literal_failures(doc):
        print(f"prove_fixes: a literal row's rewrite is not what its note says: {line}",
              file=sys.stderr)
        status = 1
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text)
    if args.write:
        tmp = PROOFS + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, PROOFS)
        print(f"prove_fixes: wrote {os.path.relpath(PROOFS, ROOT)}", file=sys.stderr)
    elif args.check:
        try:
            with open(PROOFS, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            print(f"prove_fixes: {os.path.relpath(PROOFS, ROOT)} is stale; run "
                  "`tools/prove_fixes.py --write`", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
