"""Every process of an ``anydev run`` counts its legacy calls into the run's report.

``anydev run`` (the run's own process) calls :func:`prepare`: it makes a
folder for the children's reports and a bootstrap folder holding a
``sitecustomize.py``, puts the bootstrap first on ``PYTHONPATH`` and describes
the run in ``ANYDEV_RUN_CHILD``. From then on:

* a new Python started with that environment (``torch.multiprocessing.spawn``
  and ``multiprocessing`` spawn children, the forkserver, ``torchrun``'s
  workers, ``subprocess.run([sys.executable, ...])``) runs the bootstrap,
  which chains to the user's own ``sitecustomize`` and calls :func:`start`:
  the same forwarders (``--torch``, ``--mode``) or facade (``--facade``), and
  the report written at exit to ``<children>/child-<pid>-<id>.json`` (the id: a pid is reused);
* a forked child (a ``multiprocessing.Pool`` or DataLoader worker, a forkserver
  child, ``os.fork()``) starts its counts from zero with a new process id
  (the parent's counts stay the parent's), and writes its report when it ends:
  at exit, from multiprocessing's finalizers (its workers end with
  ``os._exit``), or on SIGTERM (``Pool.terminate()``), after which it dies of
  the signal as before.

The run's report (:func:`anydev.report.run_snapshot`) merges the run's own
counts with every child's; children are told apart by their process ids.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from typing import Any, Optional

ENV = "ANYDEV_RUN_CHILD"

_BOOTSTRAP = '''\
# Written by `anydev run` (anydev/_cli/run_child.py): makes every Python started
# by the run count its legacy calls into the run's report.
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
del _sys.modules["sitecustomize"]
try:  # the user's own sitecustomize, if there is one further on the path
    import sitecustomize  # noqa: F401
except ImportError:
    pass
try:
    from anydev._cli import run_child as _run_child
    _run_child.start()
except Exception as _e:  # never break the user's program
    print(f"anydev run: this process is not counted: {_e}", file=_sys.stderr)
'''

_config: Optional[dict[str, Any]] = None
_written_pid = -1
_anchor = type("_Anchor", (), {})()  # kept alive: multiprocessing's after-fork key


def _child_path() -> str:
    """This process's report file. Named by the process's own id as well as its
    pid: a busy machine reuses pids within one run (pid_max is 32,768 on many
    systems; DataLoader workers come and go every epoch), and a later process
    with the pid of an earlier one would overwrite its report."""
    assert _config is not None
    from anydev import report

    return os.path.join(_config["dir"], f"child-{os.getpid()}-{report._process_id}.json")


def _write_now() -> None:
    """Writes this child's report once (whichever of exit, finalizer or
    SIGTERM comes first, or the first of them to finish).

    A pool worker that got its sentinel ends normally and writes from its
    finalizers while ``Pool.terminate()`` sends it SIGTERM: the signal can land
    anywhere in here. It is blocked while the report is written, so one sent
    then waits until the file is complete; one that came just before (its
    Python handler still pending, which runs at the next bytecode even with
    the signal blocked) writes the whole report itself, atomically, before it
    kills the process. The report counts as written only once a write has
    finished: the handler never returns to code that would wait for it."""
    global _written_pid
    if _config is None or _written_pid == os.getpid():
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        from anydev import report

        try:
            report.write(_child_path())
        except (report.ReportError, OSError) as e:
            print(f"anydev run: could not write this process's report: {e}", file=sys.stderr)
        _written_pid = os.getpid()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _on_sigterm(signum: int, frame: Any) -> None:
    _write_now()
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})  # it may run inside _write_now
    os.kill(os.getpid(), signum)  # die of the signal, as without anydev


def _after_fork_in_child() -> None:
    """os.register_at_fork: a forked child counts from zero under its own id."""
    from anydev import _C, report

    _C._compat.reset()
    report._new_process()
    report._children_dir = None  # only the run's own process merges
    try:
        report.enable_at_exit(_child_path())  # a plain os.fork() child that exits normally
    except report.ReportError as e:
        print(f"anydev run: this process is not counted: {e}", file=sys.stderr)


def _after_multiprocessing_fork(_obj: Any) -> None:
    """multiprocessing's after-fork hook (it runs after the child's finalizer
    registry was cleared): write the report from the finalizers, which a
    worker runs before os._exit, and on SIGTERM."""
    from multiprocessing import util

    util.Finalize(None, _write_now, exitpriority=100)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread
            pass


def _hook_forks() -> None:
    os.register_at_fork(after_in_child=_after_fork_in_child)
    from multiprocessing import util

    util.register_after_fork(_anchor, _after_multiprocessing_fork)


def prepare(*, torch: bool, facade: bool, mode: Optional[str], project: Optional[str],
            sim: Optional[int] = None) -> str:
    """In the run's own process: sets up the children's reports and the
    bootstrap (see the module's docstring); returns the children's folder,
    removed at exit."""
    global _config
    from anydev import report

    root = tempfile.mkdtemp(prefix="anydev-run-")
    children = os.path.join(root, "reports")
    boot = os.path.join(root, "bootstrap")
    os.mkdir(children)
    os.mkdir(boot)
    with open(os.path.join(boot, "sitecustomize.py"), "w", encoding="utf-8") as f:
        f.write(_BOOTSTRAP)
    _config = {"dir": children, "torch": torch, "facade": facade, "mode": mode,
               "project": project, "sim": sim}
    os.environ[ENV] = json.dumps(_config)
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = boot + (os.pathsep + path if path else "")
    report._children_dir = children
    _hook_forks()
    import atexit

    # Registered first, so it runs last: after the report is written.
    atexit.register(shutil.rmtree, root, True)
    return children


def start() -> None:
    """In a new Python of the run (called by the bootstrap): the run's
    forwarders or facade, and this process's report at exit."""
    global _config
    raw = os.environ.get(ENV)
    if not raw:
        return
    _config = json.loads(raw)
    if not os.path.isdir(_config["dir"]):
        _config = None  # the run is over (a process that outlived it)
        return
    if _config.get("facade"):
        from anydev._torch import facade as _torch_facade

        _torch_facade.install()
    elif _config.get("torch"):
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
        else:
            if _config.get("sim"):  # --accelerator sim[:N], before the adapter as in the run
                from . import sim_run as _sim_run

                _sim_run.start_child(_config["sim"])
            from anydev._torch import adapter as _torch_adapter

            _torch_adapter.install(mode=_config.get("mode") or "observe",
                                   project=_config.get("project"))
    from anydev import report

    report.enable_at_exit(_child_path())
    _hook_forks()
