"""`anydev run --torch` counts every process of the run: spawned children
(torch.multiprocessing.spawn), forked ones (a multiprocessing Pool, DataLoader
workers), forkserver children and torchrun's ranks, into one merged report."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_command

torch = pytest.importorskip("torch")

SCRIPT = textwrap.dedent('''
    import multiprocessing as mp
    import torch
    import torch.multiprocessing
    from torch.utils.data import DataLoader, Dataset


    def spawned(rank):
        for _ in range(3):
            torch.cuda.is_available()                      # @spawned: 2 children x 3


    def pooled(x):
        torch.cuda.device_count()                          # @pooled: 4 tasks
        return x


    def served(x):
        return torch.cuda.device_count()                   # @served: 2 tasks (forkserver)


    class Items(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            torch.cuda.is_available()                      # @loaded: 4 items, 2 workers
            return i


    if __name__ == "__main__":
        torch.cuda.is_available()                          # @main: the run's own process
        torch.multiprocessing.spawn(spawned, nprocs=2, join=True)
        with mp.get_context("fork").Pool(2) as pool:       # __exit__ terminates the workers
            assert pool.map(pooled, range(4)) == list(range(4))
        fs = mp.get_context("forkserver").Pool(2)
        assert fs.map(served, range(2)) == [0, 0]
        fs.close()
        fs.join()
        loader = DataLoader(Items(), num_workers=2, multiprocessing_context="fork")
        assert sorted(int(b) for b in loader) == [0, 1, 2, 3]
''')

WORKER = textwrap.dedent('''
    import os
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    torch.cuda.device_count()                              # @rank: one per rank
    dist.barrier()
    dist.destroy_process_group()
    assert int(os.environ["WORLD_SIZE"]) == 2
''')


def _counts(report: dict, path: Path) -> dict[str, int]:
    """The counts of the report's calls in ``path``, by the ``# @name`` marker
    on their line."""
    marks = {i: line.split("# @")[1].split(":")[0]
             for i, line in enumerate(path.read_text().splitlines(), 1) if "# @" in line}
    return {marks.get(c["line"], str(c["line"])): c["count"]
            for c in report["calls"] if c["file"] == str(path)}


def test_every_process_of_a_run_is_counted(tmp_path):
    # Seven Pythons import torch here (the run, 2 spawned, the forkserver and,
    # forked, the workers): seconds on an idle machine, minutes on a loaded one.
    script = tmp_path / "multi.py"
    script.write_text(SCRIPT)
    out = tmp_path / "report.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "run", "--torch", "--report",
                              str(out), str(script)], timeout=900)
    assert rc == 0, err
    report = json.loads(out.read_text())
    assert _counts(report, script) == {"spawned": 6, "pooled": 4, "served": 2, "loaded": 4,
                                       "main": 1}, report["calls"]
    ids = [p["id"] for p in report["processes"]]
    assert len(ids) == len(set(ids))
    # the run, 2 spawned, 2 pool workers, the forkserver's 2 workers, 2 loader workers
    # (and the forkserver itself, and spawn's resource tracker, which call nothing)
    assert len(ids) >= 9
    # The summary printed at the end is the merged one.
    assert "17 legacy calls" in err, err


def test_torchrun_ranks_are_counted_with_their_rank(tmp_path):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    out = tmp_path / "report.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "run", "--torch", "--report",
                              str(out), "-m", "torch.distributed.run", "--standalone",
                              "--nproc-per-node", "2", str(worker)], timeout=900)
    if rc != 0 and "gloo" in err.lower() and "unavailable" in err.lower():
        pytest.skip(f"this torch cannot run gloo here: {err[-300:]}")
    assert rc == 0, err
    report = json.loads(out.read_text())
    assert _counts(report, worker) == {"rank": 2}, report["calls"]
    ranks = sorted(p["rank"] for p in report["processes"] if p.get("world_size") == 2)
    assert ranks == [0, 1]


def test_merging_a_report_twice_counts_it_once(tmp_path):
    script = tmp_path / "one.py"
    script.write_text("import torch\ntorch.cuda.is_available()\n")
    out = tmp_path / "r.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "run", "--torch", "--report",
                              str(out), str(script)], timeout=120)
    assert rc == 0, err
    merged = tmp_path / "m.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "report", "merge", str(out), str(out),
                              "-o", str(merged)])
    assert rc == 0, err
    data = json.loads(merged.read_text())
    assert _counts(data, script) == {"2": 1}
    assert len(data["processes"]) == 1


def test_report_file_has_the_umasks_mode(tmp_path):
    script = tmp_path / "one.py"
    script.write_text("import torch\ntorch.cuda.is_available()\n")
    out = tmp_path / "r.json"
    rc, _, err = run_command(["sh", "-c", f"umask 022 && exec {sys.executable} -m anydev run "
                              f"--torch --report {out} {script}"], timeout=120)
    assert rc == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_reused_pid_does_not_overwrite_an_earlier_childs_report(tmp_path, monkeypatch):
    # pids wrap around on a busy machine within one run: a forked child that gets the
    # pid of one that ended writes a report of its own beside the first one
    from anydev._cli import run_child as _run_child
    from anydev import report

    monkeypatch.setattr(_run_child, "_config", {"dir": str(tmp_path)})
    monkeypatch.setattr(report, "_process_id", report._process_id)
    first = _run_child._child_path()
    report._new_process()  # what a forked child does (os.register_at_fork)
    second = _run_child._child_path()
    assert first != second
    assert all(os.path.basename(p).startswith(f"child-{os.getpid()}-") for p in (first, second))



POOLS = textwrap.dedent('''
    import multiprocessing as mp
    import anydev.cuda


    def pooled(x):
        anydev.cuda.device_count()                         # @pooled
        return x


    if __name__ == "__main__":
        for _ in range(100):
            with mp.get_context("fork").Pool(2) as pool:   # __exit__ terminates the workers
                assert pool.map(pooled, range(4)) == list(range(4))
''')


def test_a_pool_worker_terminated_while_it_writes_its_report_is_counted(tmp_path):
    # Pool.__exit__ sends SIGTERM to workers that may already be ending on their
    # sentinel and writing their report from multiprocessing's finalizers. Before
    # the fix, one pool in about eight lost a worker's counts (774 of 800 calls
    # in 200 pools), and test_every_process_of_a_run_is_counted failed now and then.
    script = tmp_path / "pools.py"
    script.write_text(POOLS)
    out = tmp_path / "report.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "run", "--report", str(out),
                              str(script)], timeout=600)
    assert rc == 0, err
    assert _counts(json.loads(out.read_text()), script) == {"pooled": 400}


# --- issue 30: nothing lost, nothing invented ---------------------------------------


def _run(tmp_path: Path, script: str, *options: str, env=None, timeout: float = 300):
    """`anydev run [options] script.py` (no --torch: anydev.cuda's shims count)
    in tmp_path, with its own temporary folder (tmp_path/tmp: what a run
    leaves there is seen); (rc, stderr, the report or None)."""
    (tmp_path / "s.py").write_text(textwrap.dedent(script))
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    out = tmp_path / "r.json"
    rc, _, err = run_command([sys.executable, "-m", "anydev", "run", "--report", str(out),
                              *options, str(tmp_path / "s.py")],
                             env=dict({"TMPDIR": str(tmp), "PYTHONWARNINGS": "ignore"},
                                      **(env or {})), timeout=timeout)
    return rc, err, (json.loads(out.read_text()) if out.exists() else None)


def _total(report) -> int:
    return sum(c["count"] for c in report["calls"])


def _left_behind(tmp_path: Path, wait: float = 10.0) -> list[str]:
    """The run folders left in tmp_path/tmp, once the watcher had `wait` s to act."""
    import time

    deadline = time.monotonic() + wait
    while True:
        left = sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("anydev-run-"))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_a_spawn_pool_ended_by_terminate_is_counted(tmp_path):
    # `with ctx.Pool() as pool:` ends with terminate(): the spawned workers got
    # SIGTERM with its default action and died with their counts ("no legacy
    # calls ran" where 10 ran); the fork context was counted.
    rc, err, report = _run(tmp_path, '''
        import multiprocessing as mp
        import anydev.cuda

        def pooled(x):
            anydev.cuda.device_count()
            return x

        if __name__ == "__main__":
            with mp.get_context("spawn").Pool(2) as pool:
                assert pool.map(pooled, range(10)) == list(range(10))
    ''')
    assert rc == 0, err
    assert _total(report) == 10, report["calls"]
    assert "10 legacy calls" in err


def _pythons() -> list[str]:
    """This Python and pyenv's 3.9 to 3.13 where they are installed (the
    bootstrap is plain Python: it must run quietly in each)."""
    import glob

    found = [sys.executable]
    for minor in range(9, 14):
        for p in sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3"))):
            found.append(p)
            break
    return found


@pytest.mark.parametrize("user_site", [False, True])
def test_no_python_of_a_run_prints_an_error_and_the_users_sitecustomize_still_runs(
        tmp_path, user_site):
    # Every Python a run started printed "Error in sitecustomize; set
    # PYTHONVERBOSE for traceback: KeyError: 'sitecustomize'" (3.9 to 3.13),
    # and multiprocessing's resource tracker, which outlives the run, "could
    # not write the runtime report: ... reports does not exist".
    user = tmp_path / "user_site"
    user.mkdir()
    if user_site:
        (user / "sitecustomize.py").write_text(
            "import sys\nsys.stderr.write('user sitecustomize ran\\n')\n")
    pythons = _pythons()
    rc, err, report = _run(tmp_path, f'''
        import multiprocessing as mp
        import subprocess
        import anydev.cuda

        def work(x):
            anydev.cuda.device_count()
            return x

        if __name__ == "__main__":
            for py in {pythons!r}:
                subprocess.run([py, "-c", "pass"], check=True)
            subprocess.run([{sys.executable!r}, "-c", "import anydev.cuda; anydev.cuda.device_count()"],
                           check=True)
            ctx = mp.get_context("spawn")
            lock = ctx.Lock()  # a named semaphore: the resource tracker starts
            with ctx.Pool(1) as pool:
                assert pool.map(work, range(3)) == [0, 1, 2]
    ''', env={"PYTHONPATH": os.pathsep.join(filter(None, [str(user),
                                                       os.environ.get("PYTHONPATH")]))})
    assert rc == 0, err
    assert "Error in sitecustomize" not in err and "KeyError" not in err, err
    assert "could not write" not in err and "not counted" not in err, err
    # the user's own sitecustomize: in the run (without the bootstrap) and each child
    assert err.count("user sitecustomize ran") >= (len(pythons) + 2 if user_site else 0), err
    assert _total(report) == 4, report["calls"]


FORKED = '''
    import os
    import sys
    import anydev.cuda

    pid = os.fork()
    if pid == 0:
        for _ in range(5):
            anydev.cuda.device_count()
        {end}
    else:
        os.waitpid(pid, 0)
        anydev.cuda.device_count()
'''


@pytest.mark.parametrize("end", ["sys.exit(0)", "pass  # returns", "raise SystemExit(3)"])
def test_a_forked_child_that_exits_or_returns_is_counted_once(tmp_path, end):
    # The child unwound into `anydev run`'s own code: a second summary, and its
    # exit removed the run's folder, so its calls were missing from the report.
    rc, err, report = _run(tmp_path, FORKED.replace("{end}", end))
    assert rc == 0, err
    assert _total(report) == 6, report["calls"]
    assert err.count("legacy call") == 1, err  # one summary: the run's
    assert "6 legacy calls" in err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_run_stopped_by_sigterm_or_sighup_writes_its_counts_and_dies_of_it(tmp_path, signum):
    import subprocess
    import time

    (tmp_path / "s.py").write_text(textwrap.dedent('''
        import time
        import anydev.cuda
        for _ in range(7):
            anydev.cuda.device_count()
        print("ready", flush=True)
        time.sleep(120)
    '''))
    (tmp_path / "tmp").mkdir()
    out = tmp_path / "r.json"
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "anydev", "run", "--report", str(out),
                          str(tmp_path / "s.py")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline() == "ready\n"
        p.send_signal(signum)
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signum, err  # the signal's usual effect
    assert _total(json.loads(out.read_text())) == 7
    assert "7 legacy calls" in err
    assert _left_behind(tmp_path) == []


def test_a_run_ended_by_os_exit_writes_its_counts_and_removes_its_folder(tmp_path):
    rc, err, report = _run(tmp_path, '''
        import os
        import anydev.cuda
        for _ in range(3):
            anydev.cuda.device_count()
        os._exit(3)
    ''')
    assert rc == 3, err
    assert report is not None and _total(report) == 3
    assert _left_behind(tmp_path, wait=0) == []


def test_a_run_killed_outright_has_its_folder_removed_by_the_watcher(tmp_path):
    rc, err, report = _run(tmp_path, '''
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    assert rc == -signal.SIGKILL
    assert _left_behind(tmp_path) == []


def test_processes_sharing_one_report_path_merge_their_counts(tmp_path):
    # 32 processes given one ANYDEV_REPORT path without {pid} or {rank} each
    # replaced the file: 1 process and 1,000 of 32,000 calls were left.
    import subprocess

    ready = tmp_path / "ready"
    ready.mkdir()
    script = tmp_path / "rank.py"
    script.write_text(textwrap.dedent(f'''
        import os, time
        import anydev.cuda
        for _ in range(1000):
            anydev.cuda.device_count()
        open(os.path.join({str(ready)!r}, str(os.getpid())), "w").close()
        while len(os.listdir({str(ready)!r})) < 32:  # all overlap, as a job's ranks do
            time.sleep(0.01)
    '''))
    out = tmp_path / "shared.json"
    env = dict(os.environ, ANYDEV_REPORT=str(out), PYTHONWARNINGS="ignore")
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stderr=subprocess.PIPE,
                              text=True) for _ in range(32)]
    errs = [p.communicate(timeout=600)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    report = json.loads(out.read_text())
    assert len(report["processes"]) == 32 and _total(report) == 32_000
    # a report from before these processes started is replaced, not merged
    out.write_text(json.dumps(report))
    os.utime(out, (0, 0))
    rc, err = run_command([sys.executable, "-c", "import anydev.cuda; anydev.cuda.device_count()"],
                          env={"ANYDEV_REPORT": str(out), "PYTHONWARNINGS": "ignore"})[::2]
    assert rc == 0, err
    assert _total(json.loads(out.read_text())) == 1


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_a_child_blocked_when_sigterm_lands_still_writes_its_counts_and_dies(tmp_path, context):
    # Note [A stop signal while blocked] in anydev/_cli/run_child.py: the
    # signal's handler only runs when the main thread's blocking call returns.
    # Here the SIGTERM is taken by another thread while the main thread waits
    # for a lock nobody releases (what an idle pool worker does when
    # Pool.terminate() holds its queue's lock): the child hung for good.
    rc, err, report = _run(tmp_path, f'''
        import multiprocessing as mp
        import signal, threading, time
        import anydev.cuda

        def child():
            anydev.cuda.device_count()
            def other():
                time.sleep(0.5)
                signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # to this thread
                time.sleep(60)
            threading.Thread(target=other, daemon=True).start()
            held = threading.Lock()
            held.acquire()
            held.acquire()  # waits for good

        if __name__ == "__main__":
            p = mp.get_context({context!r}).Process(target=child)
            p.start()
            p.join(60)
            if p.exitcode is None:
                p.kill()
                raise SystemExit("the child did not die of its SIGTERM")
            assert p.exitcode == -signal.SIGTERM, p.exitcode
    ''', timeout=300)
    assert rc == 0, err
    assert _total(report) == 1, report["calls"]


def test_a_relative_report_path_is_the_starting_folders(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "s.py").write_text("import os\nimport anydev.cuda\nanydev.cuda.device_count()\n"
                                   "os.chdir('elsewhere')\n")
    # It was checked against the starting folder, then written against the script's.
    rc, _, err = _in(tmp_path, "run", "--report", "r.json", "s.py")
    assert rc == 0, err
    assert (tmp_path / "r.json").exists() and not (tmp_path / "elsewhere" / "r.json").exists()


def _in(folder: Path, *argv: str):
    import subprocess

    p = subprocess.run([sys.executable, "-m", "anydev", *argv], cwd=folder, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    return p.returncode, p.stdout, p.stderr


def test_a_script_that_closes_stderr_keeps_its_exit_status(tmp_path):
    (tmp_path / "s.py").write_text("import sys\nimport anydev.cuda\nanydev.cuda.device_count()\n"
                                   "sys.stderr.close()\n")
    rc, _, err = _in(tmp_path, "run", "s.py")
    assert rc == 0, err  # was 1: the summary's print to the closed stream failed
    assert "1 legacy call" in err  # written to the descriptor sys.stderr left open


def test_a_script_that_waits_for_all_its_children_is_not_kept_waiting(tmp_path):
    # The run's folder watcher is no child of the run's process.
    rc, err, report = _run(tmp_path, '''
        import os
        import anydev.cuda
        if os.fork() == 0:
            anydev.cuda.device_count()
            os._exit(0)
        while True:
            try:
                os.wait()
            except ChildProcessError:
                break
    ''', timeout=120)
    assert rc == 0, err
    assert _total(report) == 1
