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
  a Python without anydev (another version) only chains to the user's own;
* a forked child (a ``multiprocessing.Pool`` or DataLoader worker, a forkserver
  child, ``os.fork()``) starts its counts from zero with a new process id
  (the parent's counts stay the parent's), and writes its report when it ends:
  at exit, from multiprocessing's finalizers (its workers end with
  ``os._exit``), or by ``os._exit``;
* any child ended by SIGTERM (``Pool.terminate()``, a spawn pool's ``with``
  block included) or SIGHUP writes its report first, then dies of the signal
  as before; one whose report folder is gone (a process that outlived the
  run, such as multiprocessing's resource tracker) writes nothing and says
  so only if it counted calls.

The run's report (:func:`anydev.report.run_snapshot`) merges the run's own
counts with every child's; children are told apart by their process ids.
The run's own process ends with :func:`finish_run` (the summary, the report
file, the folder removed), whichever way it ends: normally, by an exception,
by SIGTERM or SIGHUP (after which it dies of the signal), or by ``os._exit``;
a small watcher process removes the folder if it is killed outright.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from typing import Any, Callable, Optional

ENV = "ANYDEV_RUN_CHILD"

# Note [The bootstrap's own module]: Python's site.py imports sitecustomize,
# and the import system, when the module's code has run, takes the module out
# of sys.modules and puts it back (importlib._bootstrap._load_unlocked). The
# bootstrap takes itself out to let the user's own sitecustomize (further on
# the path) be imported; had it left that entry empty, every Python of a run
# printed "Error in sitecustomize; set PYTHONVERBOSE for traceback: KeyError:
# 'sitecustomize'" (3.9 to 3.13). So the entry is always filled again: with
# the user's module if there is one, else with the bootstrap's own. The
# user's module failing is reported as site.py would report it.
_BOOTSTRAP = '''\
# Written by `anydev run` (anydev/_cli/run_child.py): makes every Python started
# by the run count its legacy calls into the run's report.
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
_self = _sys.modules.pop("sitecustomize", None)
try:  # the user's own sitecustomize, if there is one further on the path
    import sitecustomize  # noqa: F401
except Exception as _e:
    if not (isinstance(_e, ImportError) and _e.name == "sitecustomize"):
        _sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\\n"
                          "%s: %s\\n" % (_e.__class__.__name__, _e))
finally:  # Note [The bootstrap's own module] in anydev/_cli/run_child.py
    if "sitecustomize" not in _sys.modules and _self is not None:
        _sys.modules["sitecustomize"] = _self
try:
    from anydev._cli import run_child as _run_child
except ModuleNotFoundError as _e:  # a Python without anydev (another version): not counted
    if not (_e.name or "").startswith("anydev"):
        print(f"anydev run: this process is not counted: {_e}", file=_sys.stderr)
except Exception as _e:  # never break the user's program
    print(f"anydev run: this process is not counted: {_e}", file=_sys.stderr)
else:
    try:
        _run_child.start()
    except Exception as _e:  # never break the user's program
        print(f"anydev run: this process is not counted: {_e}", file=_sys.stderr)
'''

_config: Optional[dict[str, Any]] = None
_run_pid = -1       # the run's own process (prepare); its children have another pid
_root: Optional[str] = None  # the run's temporary folder, in the run's own process
_written_pid = -1
_finished = False   # the run's own process has printed its summary and written its report
_summary_printed = False
_anchor = type("_Anchor", (), {})()  # kept alive: multiprocessing's after-fork key
_real_exit: Callable[[int], Any] = os._exit
_STOP_SIGNALS = ("SIGTERM", "SIGHUP")


def _child_path() -> str:
    """This process's report file. Named by the process's own id as well as its
    pid: a busy machine reuses pids within one run (pid_max is 32,768 on many
    systems; DataLoader workers come and go every epoch), and a later process
    with the pid of an earlier one would overwrite its report."""
    assert _config is not None
    from anydev import report

    return os.path.join(_config["dir"], f"child-{os.getpid()}-{report._process_id}.json")


def _in_run_process() -> bool:
    return _run_pid == os.getpid()


def _write_now() -> None:
    """In a child of the run: writes its report once (whichever of exit,
    finalizer, os._exit or SIGTERM comes first, or the first of them to finish).

    A pool worker that got its sentinel ends normally and writes from its
    finalizers while ``Pool.terminate()`` sends it SIGTERM: the signal can land
    anywhere in here. It is blocked while the report is written, so one sent
    then waits until the file is complete; one that came just before (its
    Python handler still pending, which runs at the next bytecode even with
    the signal blocked) writes the whole report itself, atomically, before it
    kills the process. The report counts as written only once a write has
    finished: the handler never returns to code that would wait for it."""
    global _written_pid
    if _config is None or _written_pid == os.getpid() or _in_run_process():
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _stop_signals())
    try:
        from anydev import report

        if not os.path.isdir(_config["dir"]):
            _outlived(report)
        else:
            try:
                report.write(_child_path())
            except (report.ReportError, OSError) as e:
                if os.path.isdir(_config["dir"]):
                    report.say(f"anydev run: could not write this process's report: {e}")
                else:  # the run ended while this was written
                    _outlived(report)
        _written_pid = os.getpid()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _outlived(report: Any) -> None:
    """A child that outlived its run (its report folder is gone): multiprocessing's
    resource tracker, a daemon. Its counts cannot join the run's report; it
    says so only when it has some."""
    n = sum(c["count"] for c in report.snapshot()["calls"])
    if n:
        report.say(f"anydev run: process {os.getpid()} outlived the run; its {n} legacy "
                   f"call{'s' if n != 1 else ''} are not in the run's report")


def _die_of(signum: int) -> None:
    """Ends the process by ``signum``, as it would have ended without anydev."""
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})  # it may run inside _write_now
    os.kill(os.getpid(), signum)


def _on_stop_signal(signum: int, frame: Any) -> None:
    """SIGTERM or SIGHUP: the counts so far are written (a child's report, or
    the run's summary and report), then the signal's usual effect follows."""
    global _stop_handled
    _stop_handled = True
    signal.pthread_sigmask(signal.SIG_BLOCK, _stop_signals())  # no second one in here
    try:
        if _in_run_process():
            finish_run()
        else:
            _write_now()
    finally:
        _die_of(signum)


def _stop_signals() -> set:
    return {getattr(signal, s) for s in _STOP_SIGNALS if hasattr(signal, s)}


# Note [A stop signal while blocked]
# A Python signal handler runs in the main thread between two bytecodes, or
# when a blocking call returns EINTR. A signal that lands just before the
# main thread enters a blocking call (after the last check, before the
# system call) only sets the handler's flag: the call then blocks, and the
# handler runs when it returns. With the action left at its default the
# process would have died at once. That is what hung
# tests/python/cli/test_run_processes.py::test_a_pool_worker_terminated_while_it_writes_its_report_is_counted
# for 600 s on a loaded machine: Pool.terminate() takes its task queue's read
# lock for good (multiprocessing/pool.py, _help_stuff_finish), so an idle
# worker waits in sem_wait for a lock nobody will release, and the SIGTERM
# meant to end it arrived in that window; its status showed SIGTERM caught,
# not pending, not blocked, and the handler (which restores the default
# action) never run. So a child of the run also has a small thread, the
# kicker: Python's C handler writes each signal's number to the wakeup fd
# (signal.set_wakeup_fd), the kicker reads it and, while the handler has not
# started, sends the signal again to the main thread (signal.pthread_kill),
# which interrupts the blocking call and lets the pending handler run. It
# acts only for SIGTERM and SIGHUP, only while the handler is still anydev's
# (a program's own handler is not run twice), and only where no one else
# set the wakeup fd (asyncio's loop sets its own when it adds signal
# handlers: then there is no kicker). The run's own process has none: a
# thread there would make every fork of the user's program a fork of a
# threaded process (Python 3.12 warns about those); the window is a few
# instructions wide, and a process that missed its SIGTERM still ends by the
# SIGKILL that schedulers send next, its folder removed by the watcher.
_stop_handled = False
_kicker_fd = -1


def _start_kicker() -> None:
    """Starts the kicker of this child (Note [A stop signal while blocked]),
    from its main thread; nothing where that cannot be done."""
    global _kicker_fd
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "pthread_kill"):
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(r)
        os.close(w)
        return
    if old != -1 and old != _kicker_fd:  # someone else's: theirs stays
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        return
    _kicker_fd = w
    main = threading.get_ident()
    threading.Thread(target=_kick, args=(r, main), name="anydev-run-stop-signal",
                     daemon=True).start()


def _kick(r: int, main: int) -> None:
    import time

    stops = _stop_signals()
    while True:
        try:
            data = os.read(r, 64)
        except OSError:
            return
        if not data:
            return
        for signum in {b for b in data if b in stops}:
            for delay in (0.05, 0.2, 0.5, 1.0, 2.0):
                time.sleep(delay)
                if _stop_handled or signal.getsignal(signum) is not _on_stop_signal:
                    break
                try:
                    signal.pthread_kill(main, signum)
                except OSError:
                    return


def _stop_kicker_in_fork() -> None:
    """A forked child does not have its parent's kicker thread: the wakeup
    fd that fed it goes (its signals must not kick the parent)."""
    global _kicker_fd, _stop_handled
    _stop_handled = False
    if _kicker_fd < 0:
        return
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # not the main thread
        pass
    try:
        os.close(_kicker_fd)
    except OSError:
        pass
    _kicker_fd = -1


def _catch_stop_signals() -> None:
    """Installs _on_stop_signal for SIGTERM and SIGHUP where their action is the
    default one (a signal the program ignores, as under nohup, or handles
    itself, stays so)."""
    for name in _STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _on_stop_signal)
        except ValueError:  # not the main thread
            pass


def _exit(status: int) -> Any:
    """os._exit under a run: the counts so far are written first (the run's
    summary and report, or a child's report), then the process ends as
    os._exit ends it, at once."""
    try:
        if _in_run_process():
            finish_run()
        elif _config is not None:
            _write_now()
    except BaseException:  # noqa: BLE001 - os._exit must end the process whatever happens
        pass
    return _real_exit(status)


def _after_fork_in_child() -> None:
    """os.register_at_fork: a forked child counts from zero under its own id,
    and writes its own report, not the run's."""
    from anydev import _C, report

    _C._compat.reset()
    report._new_process()
    report._children_dir = None  # only the run's own process merges
    report.disable_at_exit()
    _stop_kicker_in_fork()


def _after_multiprocessing_fork(_obj: Any) -> None:
    """multiprocessing's after-fork hook (it runs after the child's finalizer
    registry was cleared): write the report from the finalizers, which a
    worker runs before os._exit."""
    from multiprocessing import util

    util.Finalize(None, _write_now, exitpriority=100)
    _catch_stop_signals()
    _start_kicker()


def _hook_forks() -> None:
    os.register_at_fork(after_in_child=_after_fork_in_child)
    from multiprocessing import util

    util.register_after_fork(_anchor, _after_multiprocessing_fork)


def _hook_exits() -> None:
    """What every process of the run does, however it ends (see the module's
    docstring)."""
    import atexit

    atexit.register(_write_now)  # a child's; nothing in the run's own process
    _catch_stop_signals()
    os._exit = _exit  # type: ignore[assignment]


# Note [The run's folder]: the children's reports and the bootstrap live in a
# temporary folder that the run's own process removes when it ends (at exit,
# on SIGTERM or SIGHUP, by os._exit). A process killed outright (SIGKILL, a
# crash) runs none of that, so a watcher is started with the run: a Python
# of its own (-I -S: nothing of the user's environment, no site), in a
# session of its own (a terminal's ^C does not reach it), which waits until
# every process holding the write end of a pipe has ended (the run, and its
# forked children, which inherit it; not a program it starts, since the end
# is closed at exec) and then removes the folder. It costs one small process
# per run, which ends with the run.
_WATCHER = '''\
import os, shutil, sys
fd, root = int(sys.argv[1]), sys.argv[2]
try:
    while os.read(fd, 4096):
        pass
except OSError:
    pass
shutil.rmtree(root, ignore_errors=True)
'''


def _start_watcher(root: str) -> None:
    """Starts the watcher (Note [The run's folder]) as no child of the run:
    a shell puts it in the background and ends at once (the run waits for
    the shell only), so that a script that waits for all its children
    (`os.wait()` until ChildProcessError) is not kept waiting by it."""
    global _watch_fd
    r, w = os.pipe()  # w: non-inheritable (closed at exec), kept open by forks
    try:
        os.set_inheritable(r, True)
        shell = "/bin/sh"
        pid = os.posix_spawn(
            shell, [shell, "-c", '"$0" -I -S -c "$1" "$2" "$3" &', sys.executable, _WATCHER,
                    str(r), root],
            os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0)
                                      for fd in (0, 1, 2)], setsid=True)
        os.waitpid(pid, 0)
    except (OSError, AttributeError, TypeError):  # no watcher: any ordinary end still removes it
        os.close(w)
        w = -1
    finally:
        os.close(r)
    _watch_fd = w


_watch_fd = -1


def _remove_folder() -> None:
    if _in_run_process() and _root is not None:
        shutil.rmtree(_root, ignore_errors=True)


def prepare(*, torch: bool, facade: bool, mode: Optional[str], project: Optional[str],
            sim: Optional[int] = None) -> str:
    """In the run's own process: sets up the children's reports and the
    bootstrap (see the module's docstring); returns the children's folder,
    removed when the run ends (Note [The run's folder])."""
    global _config, _run_pid, _root
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
    _run_pid, _root = os.getpid(), root
    os.environ[ENV] = json.dumps(_config)
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = boot + (os.pathsep + path if path else "")
    report._children_dir = children
    _start_watcher(root)
    import atexit

    # Registered before multiprocessing's own exit function (_hook_forks
    # imports it), so that it runs after it: the children that function
    # joins at exit are in the report.
    atexit.register(finish_run)
    report._hooked = True  # finish_run writes the run's report (enable_at_exit adds no hook)
    _hook_forks()
    _hook_exits()
    return children


def print_summary() -> None:
    """The run's summary on standard error, once (the run's own process)."""
    global _summary_printed
    if _summary_printed or not _in_run_process():
        return
    _summary_printed = True
    from anydev import report

    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
    report.say(report.render(report.run_snapshot()).rstrip("\n"))


def finish_run() -> None:
    """In the run's own process, once: the summary (if not printed yet), the
    report file (if one was asked for) and the folder removed. What the run's
    exit, SIGTERM/SIGHUP and os._exit all end with."""
    global _finished
    if _finished or not _in_run_process():
        return
    _finished = True
    from anydev import report

    print_summary()
    report.write_registered()
    _remove_folder()


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

    report.disable_at_exit()  # an inherited ANYDEV_REPORT is the run's own
    _hook_forks()
    _hook_exits()
    _start_kicker()
