"""CUDA-only code, found at run time: the call sites that ask PyTorch for CUDA
while another accelerator is current.

``anydev run --torch --accelerator sim`` makes anydev's sim PyTorch's
accelerator (:mod:`anydev._torch.sim`) and calls :func:`install` in every
Python process of the run. From then on each call site, outside PyTorch and
anydev, that asks for CUDA is counted in the runtime report (file, line, rule
of the compat table), whether the call raised or not, and marked CUDA-only
(``"cuda_only": true`` and ``"raised": N`` in the report's JSON; ``anydev
report show`` lists these sites first). What asks for CUDA, and how it is seen:

* ``torch.cuda.*`` calls: the deprecated entry points are anydev.torch's
  forwarders (:mod:`anydev._torch.adapter`), which count every call natively
  (and the calls that raised), and the report marks their sites here
  (:func:`_extend`); the functions of the table's kept rows
  (``torch.cuda.get_device_name``, ...), which the adapter leaves alone, are
  wrapped here while installed.
* ``.cuda()`` on a tensor or module (AD907): the adapter's counted methods,
  marked likewise.
* ``"cuda"`` strings and ``torch.device("cuda")`` given as a device: a
  :class:`torch.overrides.TorchFunctionMode` sees every call of a PyTorch
  function and tensor method made from Python, with its arguments:
  ``device=`` of a factory or ``new_*`` method (AD902), ``Tensor.to`` and
  ``Module.to`` (AD903; the mode sees the ``torch._C._nn._parse_to`` that
  Module.to calls with its arguments), the construction of a ``torch.device``
  itself (AD901). ``torch.load(map_location=...)`` is no PyTorch function
  the mode sees: wrapped (AD902).
* ``.is_cuda`` (AD908): the mode sees the property's getter
  (``Tensor.is_cuda.__get__``, as torch.overrides.get_testing_overrides lists
  it).
* ``torch.autocast("cuda")``, ``torch.amp.GradScaler("cuda")`` and a
  GradScaler without a device, whose default is CUDA (AD904): their
  ``__init__`` is wrapped.
* ``"nccl"`` as the backend of ``torch.distributed.init_process_group`` or
  ``new_group`` (AD910): wrapped.

The mode's ``__torch_function__`` and the wrappers are native
(``anydev._C._watch``, python/src/bind_watch.cc): no frame of anydev's
stands between the user's code and PyTorch, so PyTorch's warnings keep the
user's line; only a call that asks for CUDA runs Python code here.

Note [Whose call site]: a site is the first frame, going out from the call,
whose file is neither PyTorch's nor anydev's (nor the standard library's,
for a call PyTorch makes on the user's behalf). A request made inside
PyTorch for the user (``nn.Linear(8, 8, device="cuda")`` creates its
parameters in torch/nn; ``model.to("cuda")`` moves each tensor in
Module._apply; a DeviceContext adds ``device=`` to a factory call) is the
user's line, counted once per call of it: while that call runs, the
requests it makes are part of it (:func:`_locate` finds the call's outermost
PyTorch frame among the frames it walks). Requests made inside a
``torch.cuda`` function (its own files) are not counted again: the
``torch.cuda`` call is. ``.is_cuda``, ``torch.device("cuda")`` and the kept
``torch.cuda`` functions are counted only where the user's code itself reads,
makes or calls them, as the adapter's forwarders are: PyTorch reads
``is_cuda`` of tensors for its own purposes all the time, and makes
``torch.device("cuda")`` for its own (torch.distributed's
init_process_group does, with a gloo backend), where a factory or ``.to()``
with CUDA inside PyTorch fails without a GPU and is made only for the user.

Cost: with the mode on, every call of a PyTorch function or tensor method
made from Python goes through PyTorch's mode dispatch (about 1.7 us more a
call on the 2-core CI machine, most of it PyTorch's own: popping and pushing
the mode, the argument tuple); benchmarks/python/bench_cuda_only.py measures
it on a small training step. The mode is thread-local, as all of PyTorch's
modes are: it is entered in the thread that installs it (the main thread of
each process of a run), so calls made in threads the program starts are not
seen; the wrapped functions are seen in every thread.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import threading
import time
from typing import Any, Callable, Optional

from anydev import _C
from anydev._C import _watch

__all__ = ["install", "installed", "sites", "uninstall"]

# What each kind of request is counted as: rows of compat_map/literals.toml.
DEVICE_CALL = "AD901"      # torch.device("cuda")
DEVICE_KEYWORD = "AD902"   # device="cuda", map_location="cuda"
TO_CALL = "AD903"          # .to("cuda"), Module.to("cuda")
AMP_DEVICE = "AD904"       # torch.autocast("cuda"), torch.amp.GradScaler("cuda")
IS_CUDA = "AD908"          # x.is_cuda
NCCL = "AD910"             # init_process_group("nccl")

# The report's names of the adapter's counted .cuda() methods (adapter._COUNTED_METHODS).
_CUDA_METHODS = frozenset({"torch.Tensor.cuda", "torch.nn.Module.cuda"})


class _Site:
    """One (file, line, rule): what the report shows."""

    __slots__ = ("file", "line", "module", "rule", "legacy", "replacement", "count", "raised",
                 "first_seen")

    def __init__(self, file: str, line: int, module: str, rule: str, legacy: str,
                 replacement: str):
        self.file = file
        self.line = line
        self.module = module
        self.rule = rule
        self.legacy = legacy
        self.replacement = replacement
        self.count = 0
        self.raised = 0
        self.first_seen = time.time()


class _Call:
    """One call that asked for CUDA, with the site it counted for: the
    requests PyTorch makes while it runs are part of it (Note [Whose call
    site]), and a call that raised counts once as raised."""

    __slots__ = ("site", "entry", "caller", "raised")

    def __init__(self, site: _Site, entry: Any = None, caller: Any = None):
        self.site = site
        self.entry = entry    # its outermost frame of PyTorch's, when it was made there
        self.caller = caller  # the user's frame that called a wrapped function
        self.raised = False


_lock = threading.Lock()
_sites: dict[tuple[str, int, str], _Site] = {}
_tls = threading.local()  # .call: the last _Call made inside PyTorch on this thread
_state: Optional["_State"] = None
_extension_added = False
_fork_hooked = False


# --- where a request comes from ------------------------------------------------------

_USER, _INTERNAL, _STDLIB, _CUDA_API = 0, 1, 2, 3
_kinds: dict[str, int] = {}
_dirs: Optional[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = None


def _folders() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(torch.cuda's folder, PyTorch's and anydev's folders, the standard
    library's folders), each ending in a separator."""
    global _dirs
    if _dirs is None:
        import torch

        torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
        anydev_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        paths = sysconfig.get_paths()
        stdlib = {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths}
        _dirs = ((os.path.join(torch_dir, "cuda") + os.sep,),
                 (torch_dir + os.sep, anydev_dir + os.sep),
                 tuple(sorted(d + os.sep for d in stdlib)))
    return _dirs


def _kind(filename: str) -> int:
    """Whose code ``filename`` is (cached per file name)."""
    kind = _kinds.get(filename)
    if kind is not None:
        return kind
    if filename.startswith("<frozen "):
        kind = _STDLIB
    elif filename.startswith("<"):
        kind = _USER  # <string>, <stdin>: code the user ran
    else:
        cuda_api, internal, stdlib = _folders()
        path = os.path.abspath(filename)
        if path.startswith(cuda_api):
            kind = _CUDA_API
        elif path.startswith(internal):
            kind = _INTERNAL
        elif any(path.startswith(d) and not path[len(d):].startswith(("site-packages",
                                                                       "dist-packages"))
                 for d in stdlib):
            kind = _STDLIB
        else:
            kind = _USER
    _kinds[filename] = kind
    return kind


def _locate(frame: Any, rule: str, walk: bool, wrapped: bool = False) -> Optional[_Call]:
    """The call a request for CUDA made by ``frame`` belongs to (Note [Whose
    call site]), its site counted when the call is new; None when it is not
    the user's request. ``walk``: a request made inside PyTorch is the user's
    line that called PyTorch. ``wrapped``: the request is a call of a wrapped
    function itself (its requests while it runs are part of it)."""
    entry = None
    walked = []
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind == _USER:
            break
        if kind == _CUDA_API or not walk:
            return None
        entry = frame
        walked.append(frame)
        frame = frame.f_back
    else:
        return None
    if entry is not None:
        current = _watch.current()  # a wrapped function's call under way
        if current is not None and current.caller is frame:
            return current
        last = getattr(_tls, "call", None)
        if last is not None and last.entry is not None and any(f is last.entry for f in walked):
            return last  # a further request of a call already counted
    call = _Call(_count(frame, rule), entry, frame if wrapped else None)
    if entry is not None:
        _tls.call = call
    return call


def _count(frame: Any, rule: str) -> _Site:
    file = frame.f_code.co_filename
    line = frame.f_lineno or 0
    key = (file, line, rule)
    site = _sites.get(key)
    if site is None:
        with _lock:
            site = _sites.get(key)
            if site is None:
                legacy, replacement = _row(rule)
                module = frame.f_globals.get("__name__", "")
                site = _Site(file, line, module if isinstance(module, str) else "", rule,
                             legacy, replacement)
                _sites[key] = site
    site.count += 1
    return site


@functools.lru_cache(maxsize=None)
def _row(code: str) -> tuple[str, str]:
    """(legacy, replacement) of the table's row ``code``."""
    from anydev._compat.table import ROWS_BY_CODE

    row = ROWS_BY_CODE[code]
    return row.legacy, row.replacement


def _on_request(rule: str, walk: bool) -> Optional[_Call]:
    """The mode's native __torch_function__ found a request for CUDA: made by
    the frame that called PyTorch (this function's caller's, since the native
    code has no frame)."""
    return _locate(sys._getframe(1), rule, walk)


def _on_raised(call: _Call) -> None:
    """A call that asked for CUDA raised: counted once per call."""
    if not call.raised:
        call.raised = True
        call.site.raised += 1


# --- what asks for CUDA ------------------------------------------------------------

_device_class: Any = ()  # torch.device once installed (isinstance(x, ()) is False)


def _is_cuda(device: Any) -> bool:
    """Whether ``device`` (an argument given as a device) names CUDA. Reads
    nothing of another object (an FX proxy would record the read)."""
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return isinstance(device, _device_class) and device.type == "cuda"


# How the native mode reads a function's arguments (bind_watch.cc's CheckKind).
_FIRST_ARG, _SECOND_ARG, _DEVICE_TYPE, _IS_CUDA_READ = 1, 2, 3, 4


def _make_mode(torch: Any) -> Any:
    """The TorchFunctionMode that sees the requests for CUDA made through
    PyTorch's functions and tensor methods: its __torch_function__ is native
    (Note [Warnings keep their line] in python/src/bind_watch.cc)."""
    checks: dict[Any, int] = {
        torch._C.TensorBase.to: _SECOND_ARG,
        torch.device: _DEVICE_TYPE,
        torch.Tensor.is_cuda.__get__: _IS_CUDA_READ,
    }
    parse_to = getattr(getattr(torch._C, "_nn", None), "_parse_to", None)
    if parse_to is not None:  # what Module.to calls with its arguments
        checks[parse_to] = _FIRST_ARG
    watch = _watch.RequestWatch(checks, torch.device,
                                (DEVICE_CALL, DEVICE_KEYWORD, TO_CALL, IS_CUDA), _on_request,
                                _on_raised, _C._compat.Forwarder)

    class CudaRequests(torch.overrides.TorchFunctionMode):
        """anydev: counts the calls that ask for CUDA (anydev._torch.cuda_only)."""

        __torch_function__ = watch

    return CudaRequests()


# --- the wrapped functions ---------------------------------------------------------


def _watched(original: Callable, check: Callable[[tuple, dict], Optional[str]],
             walk: bool = True) -> Any:
    """``original`` behind a native wrapper (no Python frame between the
    caller and it) that counts the calls ``check`` finds asking for CUDA (it
    returns the rule, or None)."""

    def judge(*args: Any, **kwargs: Any) -> Optional[_Call]:
        rule = check(args, kwargs)
        if rule is None:
            return None
        return _locate(sys._getframe(1), rule, walk, wrapped=True)

    w = _watch.Watched(original, judge, _on_raised)
    functools.update_wrapper(w, original)
    return w


def _argument(args: tuple, kwargs: dict, index: int, name: str, default: Any = None) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _nccl_at(index: int) -> Callable[[tuple, dict], Optional[str]]:
    def check(args: tuple, kwargs: dict) -> Optional[str]:
        backend = _argument(args, kwargs, index, "backend")
        return NCCL if isinstance(backend, str) and "nccl" in backend.lower() else None
    return check


def _map_location(args: tuple, kwargs: dict) -> Optional[str]:
    where = _argument(args, kwargs, 1, "map_location")
    if isinstance(where, dict):
        return DEVICE_KEYWORD if any(_is_cuda(v) for v in where.values()) else None
    return DEVICE_KEYWORD if _is_cuda(where) else None


def _amp_device(name: str, default: Any) -> Callable[[tuple, dict], Optional[str]]:
    """autocast's device_type / GradScaler's device (its self comes first)."""
    def check(args: tuple, kwargs: dict) -> Optional[str]:
        device = _argument(args, kwargs, 1, name, default)
        return AMP_DEVICE if device == "cuda" else None
    return check


def _always(code: str) -> Callable[[tuple, dict], Optional[str]]:
    return lambda args, kwargs: code


class _Patch:
    """An attribute replaced while installed."""

    __slots__ = ("owner", "name", "original", "replacement", "own")

    def __init__(self, owner: Any, name: str, replacement: Any):
        self.owner = owner
        self.name = name
        self.original = getattr(owner, name)
        self.replacement = replacement
        self.own = name in vars(owner)

    def apply(self) -> None:
        setattr(self.owner, self.name, self.replacement)

    def undo(self) -> None:
        if vars(self.owner).get(self.name) is self.replacement:
            if self.own:
                setattr(self.owner, self.name, self.original)
            else:
                delattr(self.owner, self.name)


def _patches(torch: Any) -> list[_Patch]:
    """The functions this module wraps in ``torch``."""
    patches = [_Patch(torch, "load", _watched(torch.load, _map_location))]
    serialization = sys.modules.get("torch.serialization")
    if serialization is not None and getattr(serialization, "load", None) is torch.load:
        patches.append(_Patch(serialization, "load", patches[0].replacement))
    amp = getattr(torch, "amp", None)
    for cls, name, default in ((getattr(amp, "autocast", None), "device_type", None),
                               (getattr(amp, "GradScaler", None), "device", "cuda")):
        if isinstance(cls, type) and "__init__" in vars(cls):
            patches.append(_Patch(cls, "__init__", _watched(vars(cls)["__init__"],
                                                            _amp_device(name, default))))
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available():
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        for name, index in (("init_process_group", 0), ("new_group", 2)):
            original = getattr(dist, name, None)
            if original is None:
                continue
            wrapper = _watched(original, _nccl_at(index))
            patches.append(_Patch(dist, name, wrapper))
            if c10d is not None and getattr(c10d, name, None) is original:
                patches.append(_Patch(c10d, name, wrapper))
    patches += _kept_cuda_calls(torch)
    return patches


def _kept_cuda_calls(torch: Any) -> list[_Patch]:
    """The functions of the table's kept torch.cuda rows (device-specific:
    the adapter leaves them alone), counted where the user's code calls them."""
    from anydev._compat.table import ROWS

    out = []
    for row in ROWS:
        if (row.language != "python" or row.status != "kept" or row.kind != "call"
                or not row.legacy.startswith("torch.cuda.")):
            continue
        module_name, _, name = row.legacy.rpartition(".")
        module = sys.modules.get(module_name)
        original = None if module is None else vars(module).get(name)
        if original is None or isinstance(original, type) or not callable(original):
            continue
        # counted only where the user's code calls it, as the adapter counts
        out.append(_Patch(module, name, _watched(original, _always(row.code), walk=False)))
    return out


# --- install ---------------------------------------------------------------------


class _State:
    def __init__(self, accelerator: str, mode: Any, patches: list[_Patch]):
        self.accelerator = accelerator
        self.mode = mode
        self.patches = patches


def installed() -> bool:
    """Whether CUDA requests are being counted in this process."""
    return _state is not None


def install() -> None:
    """Counts, from now on in this process, the call sites that ask for CUDA
    (see the module's docstring). PyTorch's current accelerator must be
    another one (``anydev.torch.register_sim()`` first). Idempotent."""
    global _state, _extension_added, _fork_hooked, _device_class
    import torch

    if _state is not None:
        return
    acc = torch.accelerator.current_accelerator()
    if acc is None or acc.type == "cuda":
        raise RuntimeError("anydev: CUDA-only code is found while another accelerator is "
                           f"current, and PyTorch's is {acc.type if acc else 'none'}")
    _device_class = torch.device
    mode = _make_mode(torch)
    patches = _patches(torch)
    for p in patches:
        p.apply()
    mode.__enter__()
    _state = _State(acc.type, mode, patches)
    if not _extension_added:
        from anydev import report

        report._snapshot_extensions.append(_extend)
        _extension_added = True
    if not _fork_hooked:
        os.register_at_fork(after_in_child=_forget)
        _fork_hooked = True


def uninstall() -> None:
    """Stops counting: the mode left, the wrapped functions put back. The
    counts so far stay in the report. The mode must be the innermost one."""
    global _state
    import torch

    state = _state
    if state is None:
        return
    stack = torch.overrides._get_current_function_mode_stack()
    if not stack or stack[-1] is not state.mode:
        raise RuntimeError("anydev: a TorchFunctionMode entered after the CUDA-only counting "
                           "is still active; leave it first")
    state.mode.__exit__(None, None, None)
    for p in reversed(state.patches):
        p.undo()
    _state = None


def _forget() -> None:
    """A forked child starts its counts from zero, as the report does."""
    global _tls
    _sites.clear()
    _tls = threading.local()


def sites() -> list[dict[str, Any]]:
    """The sites counted here so far (not the adapter's), as report entries."""
    from anydev import report

    return [{"file": s.file, "line": s.line, "module": s.module, "legacy": s.legacy,
             "replacement": s.replacement, "rule": s.rule, "count": s.count,
             "first_seen": report._iso(s.first_seen), "cuda_only": True, "raised": s.raised}
            for s in list(_sites.values())]


def _extend(calls: list[dict[str, Any]], native: list[dict[str, Any]]) -> None:
    """anydev.report.snapshot's extension, in a process that installed the
    counting: marks the adapter's torch.cuda.* and .cuda() sites CUDA-only
    and adds the sites counted here."""
    for call, n in zip(calls, native):
        legacy = n.get("legacy", "")
        if n.get("scope") in ("in", "out") and (legacy.startswith("torch.cuda.")
                                                or legacy in _CUDA_METHODS):
            call["cuda_only"] = True
            call["raised"] = int(n.get("raised", 0))
    calls.extend(sites())
