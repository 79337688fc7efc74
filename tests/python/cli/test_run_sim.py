"""`anydev run --torch --accelerator sim[:N]`: sim is PyTorch's accelerator in every
Python process of the run, before the user's code runs, and the report names the
call sites that asked for CUDA (CUDA-only code), listed first. With `-m pytest` on
trainkit (tests/fixtures/projects/trainkit, a training package written against
torch.cuda) it names trainkit's CUDA-only sites, file and line."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_command

torch = pytest.importorskip("torch")

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"


def anydev_run(*args: str, cwd: Path | None = None, env: dict | None = None,
               timeout: float = 600) -> tuple[int, str, str]:
    argv = [sys.executable, "-m", "anydev", "run", *args]
    if cwd is None:
        return run_command(argv, env=env, timeout=timeout)
    import subprocess

    from conftest import clean_env

    p = subprocess.run(argv, cwd=cwd, env=clean_env(env), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def cuda_only(report: dict, root: Path) -> set[tuple[str, int, str, str]]:
    """The report's CUDA-only sites under ``root``: (path, line, legacy, rule)."""
    return {(os.path.relpath(c["file"], root), c["line"], c["legacy"], c["rule"])
            for c in report["calls"] if c.get("cuda_only")}


SCRIPT = textwrap.dedent('''
    import multiprocessing as mp
    import subprocess
    import sys
    import torch


    def spawned(q):
        q.put(torch.accelerator.device_count())
        torch.device("cuda")                               # @spawned


    class Items(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return torch.zeros(1).is_cuda                  # @loaded (forked workers)


    if __name__ == "__main__":
        print("devices", torch.accelerator.current_accelerator(),
              torch.accelerator.device_count())
        torch.xpu.is_available()                           # @xpu (a legacy call, not CUDA)
        for _ in range(3):
            torch.xpu.is_available()                       # @xpu_often
        torch.cuda.is_available()                          # @main
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=spawned, args=(q,))
        p.start()
        print("spawned devices", q.get())
        p.join()
        out = subprocess.run([sys.executable, "-c", "import torch; "
                              "print(torch.accelerator.device_count()); "
                              "torch.zeros(1, device='sim'); torch.device('cuda')"],
                             capture_output=True, text=True, check=True).stdout
        print("subprocess devices", out.strip())
        loader = torch.utils.data.DataLoader(Items(), num_workers=2,
                                             multiprocessing_context="fork")
        assert [bool(b) for b in loader] == [False] * 4
''')


def test_every_process_of_the_run_has_sim_and_reports_cuda_requests(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    out = tmp_path / "report.json"
    rc, stdout, err = anydev_run("--accelerator", "sim:3", "--report", str(out), str(script))
    assert rc == 0, err
    assert "devices sim 3" in stdout
    assert "spawned devices 3" in stdout
    assert "subprocess devices 3" in stdout
    report = json.loads(out.read_text())
    marks = {i: line.split("# @")[1].split()[0]
             for i, line in enumerate(script.read_text().splitlines(), 1) if "# @" in line}
    sites = {(marks.get(c["line"], c["file"]) if c["file"] == str(script) else c["file"],
              c["rule"], c.get("cuda_only", False))
             for c in report["calls"]}
    assert sites == {("main", "AD101", True), ("spawned", "AD901", True), ("loaded", "AD908", True),
                     ("<string>", "AD901", True), ("xpu", "AD401", False),
                     ("xpu_often", "AD401", False)}, report["calls"]
    # The summary lists the CUDA-only sites first, however often the others ran.
    lines = err.splitlines()
    head = next(i for i, ln in enumerate(lines) if "legacy calls from 6 call sites" in ln)
    assert "4 of them CUDA-only" in lines[head]
    assert all("CUDA-only" in ln for ln in lines[head + 1:head + 5]), err
    assert all("CUDA-only" not in ln for ln in lines[head + 5:head + 7]), err
    counts = {marks.get(c["line"]): c["count"] for c in report["calls"]
              if c["file"] == str(script)}
    assert counts["loaded"] == 4 and counts["xpu_often"] == 3


WORKER = textwrap.dedent('''
    import os
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    assert torch.accelerator.current_accelerator().type == "sim"
    assert torch.accelerator.device_count() == 2
    torch.accelerator.set_device_index(int(os.environ["LOCAL_RANK"]))
    x = torch.ones(2, device="sim")
    try:
        x.to("cuda")                                       # @rank
    except Exception:
        pass
    dist.barrier()
    dist.destroy_process_group()
''')


def test_torchrun_ranks_run_on_sim(tmp_path):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    out = tmp_path / "report.json"
    rc, _, err = anydev_run("--accelerator", "sim:2", "--report", str(out), "-m",
                            "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                            str(worker))
    if rc != 0 and "gloo" in err.lower() and "unavailable" in err.lower():
        pytest.skip(f"this torch cannot run gloo here: {err[-300:]}")
    assert rc == 0, err
    report = json.loads(out.read_text())
    ranks = [c for c in report["calls"] if c["file"] == str(worker)]
    assert [(c["rule"], c["count"], c["raised"], c["cuda_only"]) for c in ranks] == \
        [("AD903", 2, 2, True)], report["calls"]


def test_the_device_count_comes_from_anydev_sim_devices(tmp_path):
    script = tmp_path / "count.py"
    script.write_text("import torch\nprint('count', torch.accelerator.device_count())\n")
    rc, out, err = anydev_run("--torch", "--accelerator", "sim", str(script),
                              env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    assert "count 2" in out
    rc, out, err = anydev_run("--accelerator", "sim", str(script))
    assert rc == 0, err
    assert "count 1" in out
    # sim:N wins over the environment
    rc, out, err = anydev_run("--accelerator", "sim:4", str(script),
                              env={"ANYDEV_SIM_DEVICES": "2"})
    assert rc == 0, err
    assert "count 4" in out


@pytest.mark.parametrize("value, message", [
    ("cuda", "argument --accelerator: 'cuda' is not an accelerator anydev run can give "
             "PyTorch: use sim or sim:N (N simulated devices, 1..64)"),
    ("xpu:1", "argument --accelerator: 'xpu:1' is not an accelerator"),
    ("", "argument --accelerator: '' is not an accelerator"),
    ("sim:0", "argument --accelerator: 'sim:0': '0' is not a device count in 1..64"),
    ("sim:65", "argument --accelerator: 'sim:65': '65' is not a device count in 1..64"),
    ("sim:two", "argument --accelerator: 'sim:two': 'two' is not a device count in 1..64"),
    ("sim:", "argument --accelerator: 'sim:': '' is not a device count in 1..64"),
    ("sim:-1", "argument --accelerator: 'sim:-1': '-1' is not a device count in 1..64"),
    ("SIM", "argument --accelerator: 'SIM' is not an accelerator"),
])
def test_bad_accelerator_values_are_usage_errors(tmp_path, value, message):
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    rc, out, err = anydev_run("--accelerator", value, str(script), cwd=tmp_path)
    assert rc == 2, err
    assert message in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("value", ["abc", "0", "65", "2.0"])
def test_a_bad_anydev_sim_devices_is_a_usage_error(tmp_path, value):
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    rc, out, err = anydev_run("--accelerator", "sim", str(script), cwd=tmp_path,
                              env={"ANYDEV_SIM_DEVICES": value})
    assert rc == 2, err
    assert (f"argument --accelerator: 'sim' takes its device count from ANYDEV_SIM_DEVICES, "
            f"which is {value!r}") in err
    assert not (tmp_path / "ran").exists()


def test_accelerator_and_facade_exclude_each_other(tmp_path):
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    rc, out, err = anydev_run("--facade", "--accelerator", "sim", str(script), cwd=tmp_path)
    assert rc == 2, err
    assert "--torch/--mode/--accelerator and --facade exclude each other" in err
    assert not (tmp_path / "ran").exists()


def test_a_failed_build_is_one_line_and_exit_2_before_the_code_runs(tmp_path):
    # A torch whose sim backend is not built yet, and no compiler: the run stops.
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    rc, out, err = anydev_run("--accelerator", "sim", str(script), cwd=tmp_path,
                              env={"ANYDEV_CACHE_DIR": str(tmp_path / "cache"),
                                   "CXX": "no-such-compiler-anywhere"})
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == ["anydev run --accelerator sim: CXX='no-such-compiler-anywhere' names no "
                     "program on PATH"], err
    assert not (tmp_path / "ran").exists()


def test_an_old_torch_is_one_line_and_exit_2(tmp_path):
    # A PyTorch without the device-generic API (1.13 has no torch.accelerator)
    fake = tmp_path / "old" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '1.13.1'\n")
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "old"),
                                          os.environ.get("PYTHONPATH", "")])}
    rc, out, err = anydev_run("--accelerator", "sim", str(script), cwd=tmp_path, env=env)
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("anydev run --accelerator sim: this PyTorch (1.13.1) cannot take "
                               "anydev's sim as its PrivateUse1 backend: it lacks "
                               "torch.accelerator"), err
    assert not (tmp_path / "ran").exists()


def test_a_child_that_cannot_have_sim_stops_with_one_line(tmp_path):
    # A subprocess whose sim cannot be built (its own cache, no compiler) would
    # run without the accelerator the run asked for: it says why and exits 2.
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f'''
        import os, subprocess, sys
        env = dict(os.environ, ANYDEV_CACHE_DIR={str(tmp_path / "cache")!r}, CXX="no-cxx-here")
        p = subprocess.run([sys.executable, "-c", "open('child-ran', 'w').close()"],
                           env=env, capture_output=True, text=True)
        print("child exit", p.returncode)
        print("child said", p.stderr.strip())
    '''))
    rc, out, err = anydev_run("--accelerator", "sim", str(script), cwd=tmp_path)
    assert rc == 0, err
    assert "child exit 2" in out
    assert ("child said anydev run --accelerator sim: CXX='no-cxx-here' names no program on "
            "PATH") in out
    assert not (tmp_path / "child-ran").exists()


def _trainkit_tests(root: Path, report: Path) -> tuple[int, str, str]:
    return anydev_run("--torch", "--accelerator", "sim", "--report", str(report), "-m", "pytest",
                      "-q", "-p", "no:cacheprovider", "tests", cwd=root,
                      env={"PYTHONPATH": os.pathsep.join([str(root / "src"),
                                                          os.environ.get("PYTHONPATH", "")]),
                           "PYTHONDONTWRITEBYTECODE": "1"})


# trainkit's CUDA-only sites that its own tests reach on sim (the rest of its
# CUDA-only code, `device.type == "cuda"` comparisons, is the scanner's: AD909)
TRAINKIT_CUDA_ONLY = {
    ("src/trainkit/device.py", 12, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/device.py", 24, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/seed.py", 11, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/data.py", 12, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/checkpoint.py", 14, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/dist.py", 8, "torch.cuda.is_available", "AD101"),
    ("src/trainkit/amp.py", 14, "torch.cuda.amp.GradScaler", "AD314"),
}


def test_pytest_on_sim_names_trainkits_cuda_only_sites(tmp_path):
    root = tmp_path / "trainkit"
    shutil.copytree(PROJECTS / "trainkit", root, ignore=shutil.ignore_patterns("__pycache__"))
    report = tmp_path / "report.json"
    rc, out, err = _trainkit_tests(root, report)
    # On sim the legacy code trains on the CPU: the tests that expect the
    # accelerator fail, the others pass.
    assert rc == 1, out + err
    assert "3 failed, 7 passed" in out, out
    for name in ("test_the_default_device_is_the_accelerator_when_there_is_one",
                 "test_training_lowers_the_loss", "test_pinned_memory_only_with_an_accelerator"):
        assert f"FAILED tests/test_trainkit.py::{name}" in out, out
    data = json.loads(report.read_text())
    assert cuda_only(data, root) == TRAINKIT_CUDA_ONLY
    # `anydev report show` lists them first, with file:line
    import subprocess

    shown = subprocess.run([sys.executable, "-m", "anydev", "report", "show", str(report)],
                           cwd=root, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "7 of them CUDA-only" in lines[0]
    listed = {tuple(ln.split()[1].rsplit(":", 1)) for ln in lines[1:8]}
    assert listed == {(f, str(n)) for f, n, _, _ in TRAINKIT_CUDA_ONLY}
    assert all(ln.endswith("CUDA-only") for ln in lines[1:8])
