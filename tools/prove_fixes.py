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
Where anydev's sim can be registered in the running interpreter's torch, a
third environment runs every case with sim as PyTorch's accelerator, a
non-CUDA one: there the rewrite must be correct, not the same (Note [Correct
on a non-CUDA accelerator]), and the output says where the meaning changes.

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
import re
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
    if _current_accelerator() is not None:  # each side starts on device 0, as a process does
        torch.accelerator.set_device_index(0)
    ns: dict[str, Any] = {"__name__": "__case__"}
    try:
        exec(compile(src, "<case>", "exec"), ns)  # noqa: S102 - the harness's own snippets
        value = ns.get("_result")
        out: dict[str, Any] = {"value": _project(value)}
        if kind in ("class", "context_manager") and hasattr(value, "device"):
            out["device"] = str(value.device)
        if kind == "context_manager":
            entered = value.__enter__()
            out["enter"] = "self" if entered is value else _project(entered)
            if _current_accelerator() is not None:  # what a device context is for
                out["inside"] = torch.accelerator.current_device_index()
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
    acc = _current_accelerator()
    out = []
    for c in cases:
        old, old_value = _run_side(c["legacy"], c["kind"])
        new, new_value = _run_side(c["rewrite"], c["kind"])
        rec = {"id": c["id"], "legacy": _describe(old), "rewrite": _describe(new)}
        rec["same"] = _compare(c["kind"], old, old_value, new, new_value, rec)
        if acc is not None and c.get("oracle"):
            src, why = _oracle_source(c["oracle"], acc)
            if src is None:
                rec["own"], rec["correct"] = why, False
            else:
                own, own_value = _run_side(src, c["kind"])
                rec["own"] = _describe(own)
                rec["correct"] = _compare_with_own(c["kind"], own, own_value, new, new_value)
        out.append(rec)
    return {"torch": torch.__version__, "accelerator": acc, "cases": out}


def _compare(kind: str, old: dict, old_value: Any, new: dict, new_value: Any,
             rec: dict) -> bool:
    """Whether two outcomes of a case are the same (see the module's
    docstring); the relation of classes and the identity of references go
    into ``rec``."""
    if "raises" in old and "raises" in new:
        return True
    if "raises" in old or "raises" in new:
        return False
    if kind == "attribute":
        rec["identity"] = old_value is new_value
        return old_value is new_value
    if kind in ("class", "context_manager"):
        rel = _relation(old_value, new_value)
        rec["relation"] = rel
        return (rel in ("same type", "legacy type subclasses the replacement's")
                and old["value"].get("attrs") == new["value"].get("attrs")
                and old.get("enter") == new.get("enter") and old.get("exit") == new.get("exit"))
    return old == new


def _compare_with_own(kind: str, own: dict, own_value: Any, new: dict, new_value: Any) -> bool:
    """Whether the rewrite does what the accelerator's own device module does
    (Note [Correct on a non-CUDA accelerator]): calls and references as
    _compare has them; objects by what they are for, not by class
    (torch.sim.device and torch.accelerator.device_index are different
    classes that do the same): the same device, and inside a context manager
    the same current device."""
    if kind not in ("class", "context_manager"):
        return _compare(kind, own, own_value, new, new_value, {})
    if ("raises" in own) != ("raises" in new):
        return False
    return "raises" in own or all(own.get(k) == new.get(k) for k in ("device", "inside", "exit"))


def _current_accelerator() -> Optional[str]:
    """The type of PyTorch's current accelerator in this child, None where
    there is none (or torch has no torch.accelerator)."""
    import torch  # noqa: PLC0415
    acc = getattr(torch, "accelerator", None)
    if acc is None or not acc.is_available():
        return None
    return acc.current_accelerator().type


def _oracle_source(oracle: dict, acc: str) -> tuple[Optional[str], str]:
    """The legacy snippet addressed to the accelerator's own device module
    (Note [Correct on a non-CUDA accelerator]): each ``torch.<dev>.NAME``
    becomes ``torch.get_device_module().NAME`` (where the module lacks a
    deprecated NAME, the name ``oracle["alias"]`` gives it), and each
    ``"<dev>`` device string names the accelerator; or (None, why) when the
    module has no such function."""
    import re  # noqa: PLC0415

    import torch  # noqa: PLC0415
    module = torch.get_device_module(acc)
    dev, alias = oracle.get("dev"), oracle.get("alias", {})
    if dev is None:  # the rewrite keeps the device: the legacy call is the answer
        return oracle["src"], ""
    missing: list[str] = []

    def has(name: str) -> bool:
        obj: Any = module
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return False
        return True

    def to_module(m: re.Match[str]) -> str:
        name = m.group(1)
        for n in (name, alias.get(name)):
            if n and has(n):
                return f"torch.get_device_module({acc!r}).{n}"
        missing.append(name)
        return m.group(0)

    src = re.sub(rf"\btorch\.{dev}\.([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)",
                 to_module, oracle["src"])
    if missing:
        return None, (f"no answer: torch.{acc} has no {missing[0]}"
                      + (f" nor {alias[missing[0]]}" if alias.get(missing[0]) else ""))
    if not oracle.get("literals"):
        return src, ""
    # device strings, x.cuda() and x.is_cuda (PyTorch makes x.sim() and x.is_sim for a
    # PrivateUse1 backend: torch.utils.generate_methods_for_privateuse1_backend)
    src = src.replace(f'"{dev}', f'"{acc}').replace(f".{dev}(", f".{acc}(")
    src = re.sub(rf"\.is_{dev}\b", f".is_{acc}", src)
    if dev == "cuda" and '"nccl"' in src:  # the accelerator's own collective backend
        import torch.distributed as dist  # noqa: PLC0415
        backend = dist.Backend.default_device_backend_map.get(acc, "gloo")
        src = src.replace('"nccl"', repr(backend))
    return src, ""


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
    1.13); the child needs only its own torch. Nor the sim device count and
    memory of the caller's environment: the accelerator's machine is the
    setup's (two devices), whoever runs the proof."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "ANYDEV_SIM_DEVICES", "ANYDEV_SIM_MEMORY")}


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
            if split_version(row.since or "0") > split_version(b.version):
                continue
            if b.accelerator:
                entry["accelerator"] = {
                    "torch": b.version,
                    "correct": (f"the rewrite names the current accelerator where the legacy "
                                f"code named CUDA, so on {b.accelerator} it must do what the "
                                f"same code written for {b.accelerator} does")}
            else:
                entry["torch"].append(b.version)
            per_build[b.version] += [
                {"id": f"{row.code}/{i}", "kind": "call", "legacy": src, "rewrite": new,
                 **({"oracle": {"src": src, "dev": "cuda", "literals": True}}
                    if b.accelerator else {})}
                for i, src, new in todo]
    answers = {}
    for b in builds:
        if per_build[b.version]:
            answers[b.version] = run_child(b.python, "run", per_build[b.version], b.setup)
            _check_accelerator(b, answers[b.version])
    acc_build = next((b for b in builds if b.accelerator), None)
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
        wrong = _judge_accelerator(code, entry, answers, acc_build,
                                   "no non-CUDA accelerator at hand")
        if missing:
            entry["verdict"] = "not rewritten: " + missing[0]
        elif not entry["torch"]:
            entry["verdict"] = f"not run: no build at hand has the replacement (since {entry['since']})"
        elif errors:
            entry["verdict"] = "not run: " + "; ".join(errors)
        elif off:
            entry["verdict"] = f"differs from the note: {off[0]}"
        else:  # unsafe by design: what the rewrite does on an accelerator is the summary's
            del wrong
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
    registers an accelerator that is not CUDA, named ``accelerator``)."""
    python: str
    version: str
    setup: str = ""
    accelerator: str = ""


#: The third environment (Note [Three machines]): an accelerator that is not
#: CUDA inside the real torch. Its setup runs in the child before the cases;
#: the environment is used where the probe, the same registration, succeeds on
#: the interpreter (the first one builds sim's library for this torch: a minute).
ACCELERATOR = "sim"
ACCELERATOR_SETUP = "import anydev.torch as _adt; _adt.register_sim(devices=2)"
ACCELERATOR_PROBE = (ACCELERATOR_SETUP + "\nimport torch\n"
                     "assert torch.accelerator.current_accelerator().type == 'sim'")


def builds_at_hand(extra: list[str]) -> tuple[list[Build], str]:
    """This interpreter's torch, Debian's 1.13 under /usr/bin/python3, any
    ``--python``, each once by version; and, where ``anydev.torch`` can
    register its accelerator in this interpreter's torch, the same torch with
    an accelerator that is not CUDA (version ``<v>+sim``). Also why that last
    one is missing ("" where it is there)."""
    out: list[Build] = []
    for py in [sys.executable, OLD_PYTHON, *extra]:
        v = torch_version_of(py)
        if v and all(b.version != v for b in out):
            out.append(Build(py, v))
    if not out:
        return out, "no interpreter with torch"
    why = _probe(out[0].python, ACCELERATOR_PROBE)
    if not why:
        out.append(Build(out[0].python, f"{out[0].version}+{ACCELERATOR}", ACCELERATOR_SETUP,
                         ACCELERATOR))
    return out, why


def _probe(python: str, code: str) -> str:
    """"" where ``code`` runs on ``python``, else the last line it printed."""
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600,
                              check=False,
                              env=_child_env())
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{python} did not run ({type(e).__name__})"
    if proc.returncode == 0:
        return ""
    return _first_line("\n".join(reversed((proc.stderr or proc.stdout).strip().splitlines())))


# Note [Three machines]
# "Safe" is a promise for three machines: one without an accelerator, one with
# CUDA and one with another accelerator, the kind the migration is for (docs/
# scan.md, "A fix is a promise"). Here, the first is the real CPU build (and
# Debian's 1.13 for the rows old enough); the third is the same torch with
# anydev's sim registered as its PrivateUse1 accelerator by
# anydev.torch.register_sim(devices=2), wherever that registration succeeds
# (the child checks that sim is PyTorch's current accelerator, and a child
# that did not have it answers with an error). On the first two the rewrite
# must behave as the legacy call; on the third it must be correct (Note
# [Correct on a non-CUDA accelerator]). The CUDA machine is tools/gpu_check.sh's.


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s.strip() else s


def _device_kept(row) -> bool:
    """Whether ``row``'s rewrite keeps the legacy call's device (a rename:
    ``torch.cuda.amp.autocast(...)`` -> ``torch.amp.autocast("cuda", ...)``,
    an exception class that is the same object) rather than asking for the
    current accelerator (Note [Correct on a non-CUDA accelerator])."""
    return row.kind == "attribute" or row.replacement.startswith("torch.amp.")


def _what_correct_means(row, acc: str) -> str:
    if _device_kept(row):
        return (f"the rewrite keeps the legacy call's device ({device_type(row.legacy)}), so on "
                f"{acc} it must do what the legacy call does there")
    return (f"the rewrite asks the current accelerator, so on {acc} it must do what {acc}'s own "
            f"device module (torch.get_device_module(), torch.{acc}) does for the legacy call")


def prove(extra_pythons: Optional[list[str]] = None, only: Optional[set[str]] = None) -> dict:
    """Runs the proof; the proofs document (see compat_map/SCHEMA.md)."""
    rows = [r for r in proof_rows() if only is None or r.code in only]
    builds, no_accelerator = builds_at_hand(extra_pythons or [])
    acc_build = next((b for b in builds if b.accelerator), None)
    doc_rows: dict[str, dict] = {}
    per_build: dict[str, list[dict]] = {b.version: [] for b in builds}
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
        for b in builds:
            if split_version(row.since or "0") > split_version(b.version):
                continue
            if b.accelerator:
                entry["accelerator"] = {"torch": b.version,
                                        "correct": _what_correct_means(row, b.accelerator)}
            else:
                entry["torch"].append(b.version)
            per_build[b.version] += [_case_payload(row, f"{row.code}/{i}", src, new, b)
                                     for i, src, new in cases]
    answers: dict[str, dict] = {}
    for b in builds:
        if per_build[b.version]:
            answers[b.version] = run_child(b.python, "run", per_build[b.version], b.setup)
            _check_accelerator(b, answers[b.version])
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
        wrong = _judge_accelerator(code, entry, answers, acc_build, no_accelerator)
        if not entry["torch"]:
            entry["verdict"] = (f"not run: no build at hand has the replacement "
                                f"(since {entry['since']})")
        elif errors:
            entry["verdict"] = "not run: " + "; ".join(errors)
        elif differs:
            more = f" (and {len(differs) - 1} more case(s))" if len(differs) > 1 else ""
            entry["verdict"] = f"differs: {differs[0]}{more}"
        elif wrong:
            entry["verdict"] = wrong
        else:
            entry["verdict"] = "same"
    doc_rows.update(_prove_literals(builds, only))
    for entry in doc_rows.values():
        if "accelerator" in entry:  # the line `anydev rule` shows (compat_map/generate.py)
            entry["accelerator"]["summary"] = accelerator_summary(entry)
    return {"schema": 1,
            "about": "Written by `tools/prove_fixes.py --write`: for each Python row with a fix, "
                     "the legacy call and its rewrite by `anydev fix --unsafe-fixes`, run on "
                     "the real PyTorch builds listed (see compat_map/SCHEMA.md).",
            "torch": [b.version for b in builds],
            "accelerator": ({"torch": acc_build.version, "name": acc_build.accelerator}
                            if acc_build else {"not_run": no_accelerator}),
            "rows": doc_rows}


def _case_payload(row, cid: str, src: str, new: str, build: Build) -> dict:
    """One case for a child; on an accelerator's build, with the oracle of
    a rewrite that asks the current accelerator (its own device module's
    answer to the legacy call)."""
    out = {"id": cid, "kind": row.kind, "legacy": src, "rewrite": new}
    if build.accelerator:
        dev = device_type(row.legacy)
        if _device_kept(row):
            out["oracle"] = {"src": src}  # the legacy call itself
        else:
            # a deprecated name the device module may lack: the replacement's own name
            out["oracle"] = {"src": src, "dev": dev, "alias": {
                row.legacy.split(".", 2)[2]: row.replacement.rsplit(".", 1)[1]}}
    return out


def _check_accelerator(build: Build, answer: dict) -> None:
    """An accelerator's build whose child did not have that accelerator
    current answered for another machine: its answer becomes an error."""
    if build.accelerator and "error" not in answer and answer.get("accelerator") != \
            build.accelerator:
        answer.clear()
        answer["error"] = (f"the child was to run with {build.accelerator} as PyTorch's "
                           f"accelerator, and had {answer.get('accelerator')}")


def _judge_accelerator(code: str, entry: dict, answers: dict, acc_build: Optional[Build],
                       no_accelerator: str) -> str:
    """Fills in the row's accelerator leg (Note [Correct on a non-CUDA
    accelerator]); "" where the rewrite is correct there (or the leg did not
    run: ``entry["accelerator"]`` says why), else the verdict that says how
    it is wrong."""
    leg = entry.get("accelerator")
    if acc_build is None or leg is None:
        entry["accelerator"] = {"verdict": "not run: " + (
            no_accelerator if acc_build is None else
            f"{entry['replacement']} is not in torch {acc_build.version}")}
        return ""
    ans = answers.get(leg["torch"], {})
    if "error" in ans:
        leg["verdict"] = f"not run: {ans['error']}"
        return f"not run on a non-CUDA accelerator: {ans['error']}"
    by_id = {c["id"]: c for c in ans.get("cases", [])}
    wrong, changes = [], []
    for i, case in enumerate(entry["cases"]):
        rec = by_id.get(f"{code}/{i}")
        if rec is None:
            continue
        case["accelerator"] = {k: rec[k] for k in ("legacy", "rewrite", "own", "correct")}
        changed = not rec["same"]
        if not rec["correct"]:
            wrong.append(f"`{case['rewrite']}` {rec['rewrite']} where the accelerator's own "
                         f"answer {rec['own']}" if not rec["own"].startswith("no answer") else
                         f"`{case['rewrite']}` {rec['rewrite']}, and {rec['own']}")
        elif changed:  # correct, and not what the legacy call does there
            changes.append(f"`{case['call']}` {rec['legacy']}, the rewrite {rec['rewrite']}")
    acc = ans["accelerator"]
    if wrong:
        more = f" (and {len(wrong) - 1} more case(s))" if len(wrong) > 1 else ""
        leg["verdict"] = f"wrong on {acc}: {wrong[0]}{more}"
        return f"wrong on a non-CUDA accelerator ({acc}, torch {leg['torch']}): {wrong[0]}{more}"
    leg["verdict"] = "correct"
    if changes:
        more = f" (and {len(changes) - 1} more case(s))" if len(changes) > 1 else ""
        leg["changes"] = f"the meaning changes there: {changes[0]}{more}"
    return ""


# Note [Correct on a non-CUDA accelerator]
# On the third machine (Note [Three machines]) the legacy call and its rewrite
# are meant to differ where the rewrite asks the current accelerator:
# torch.cuda.is_available() is False on an XPU machine, torch.accelerator.
# is_available() True. What the rewrite must do there is what that
# accelerator's own device module does for the same call, the module PyTorch
# returns from torch.get_device_module() ("the module associated with a given
# device", torch/__init__.py) and that torch.cuda is for CUDA: the oracle is
# the legacy snippet with each torch.cuda.NAME addressed to it (a deprecated
# name it lacks, such as reset_max_memory_allocated, by the replacement's name,
# which PyTorch's torch.cuda function calls: torch/cuda/memory.py) and "cuda"
# device strings naming the accelerator. A rewrite that keeps the device (an
# amp rename still naming "cuda", an exception class) must do what the legacy
# call does. The row's entry records, per case, the legacy call's outcome
# there, the rewrite's and the oracle's, and says where the meaning changes.


def _rewritten_label(label: str, src: str, new: str) -> str:
    """The rewritten form of a case's label: the lines that changed."""
    old_lines = set(src.splitlines())
    changed: list[str] = []
    statement: list[str] = []  # the lines of a statement the fixer wrapped (Note [Wrapping
    depth = 0                  # rewritten lines]): one label, as if on one line
    for line in new.splitlines():
        if not statement and line in old_lines:
            continue
        statement.append(line.strip() if statement else line.removeprefix("_result = "))
        depth += sum(map(line.count, "([{")) - sum(map(line.count, ")]}"))
        if depth <= 0:
            text = " ".join(statement)
            text = re.sub(r"([(\[{]) ", r"\1", re.sub(r",? ([)\]}])", r"\1", text))
            changed.append(text)
            statement, depth = [], 0
    if statement:
        changed.append(" ".join(statement))
    return "; ".join(changed) if changed else _first_line(new)


def summary(entry: dict) -> str:
    """One line for `anydev rule`: what was proven, on which torch, and what
    the rewrite does on a non-CUDA accelerator."""
    v = entry["verdict"]
    n = sum(1 for c in entry["cases"] if c.get("rewrite"))
    if v == "same":
        v = f"same behaviour on torch {', '.join(entry['torch'])} for {n} call form(s)"
    acc = accelerator_summary(entry)
    return v + (f"; {acc}" if acc and not v.startswith(("wrong on", "not run")) else "")


def accelerator_summary(entry: dict) -> str:
    """What the row's rewrite does on a non-CUDA accelerator (Note [Correct
    on a non-CUDA accelerator]): "" where the leg was not planned."""
    leg = entry.get("accelerator")
    if not leg:
        return ""
    v = leg.get("verdict", "not run")
    if v != "correct":
        return f"on a non-CUDA accelerator: {v}"
    where = f"{ACCELERATOR}, torch {leg['torch'].rsplit('+', 1)[0]}"
    own = ("as the legacy call does there" if "the legacy call does there" in leg["correct"]
           else f"as torch.{ACCELERATOR}, its own device module, does"
           if "own device module" in leg["correct"]
           else f"as the same code written for {ACCELERATOR} does")
    return (f"on a non-CUDA accelerator ({where}) correct, {own}"
            + (f"; {leg['changes']}" if leg.get("changes") else ""))


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
    acc = doc["accelerator"]
    if "not_run" in acc:
        print(f"prove_fixes: the non-CUDA accelerator leg did not run: {acc['not_run']}",
              file=sys.stderr)
    else:
        legs = [e["accelerator"] for e in doc["rows"].values() if "accelerator" in e]
        ran = sum(1 for leg in legs if leg.get("verdict") == "correct" or
                  leg.get("verdict", "").startswith("wrong"))
        print(f"prove_fixes: a non-CUDA accelerator: {acc['name']} inside the real torch "
              f"({acc['torch']}: anydev.torch.register_sim()); {ran} rows ran there, "
              f"{sum(1 for leg in legs if leg.get('verdict') == 'correct')} correct, "
              f"{sum(1 for leg in legs if 'changes' in leg)} of them with a meaning that "
              "changes there", file=sys.stderr)
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
