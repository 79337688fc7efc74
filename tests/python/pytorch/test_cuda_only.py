"""anydev._torch.cuda_only: the call sites that ask PyTorch for CUDA while sim is
PyTorch's accelerator, counted in the runtime report (what `anydev run --torch
--accelerator sim` turns on; tests/python/cli/test_run_sim.py runs the command).

Each case runs a script in a fresh interpreter (registering a PrivateUse1
backend changes the whole process); the script's lines carry `# @name`
markers, and the report's CUDA-only sites are compared by marker.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import run_command

torch = pytest.importorskip("torch")

import sys  # noqa: E402

PRELUDE = """\
import json, os, sys, warnings
os.chdir(os.path.dirname(os.path.abspath(__file__)))
import torch
import anydev.torch
from anydev import report
from anydev._torch import cuda_only
anydev.torch.register_sim(devices=2)
cuda_only.install()
"""

EPILOGUE = """
print("REPORT " + json.dumps([c for c in report.snapshot()["calls"] if c.get("cuda_only")]))
"""


def run_script(tmp_path: Path, body: str, name: str = "user.py", extra: dict | None = None,
               prelude: str = PRELUDE) -> tuple[dict, str, Path]:
    """Runs ``prelude + body`` as ``tmp_path/name`` (``extra``: other files to
    write beside it); returns the CUDA-only sites by marker (name -> (rule,
    count, raised)), stdout and the script's path."""
    for fname, text in (extra or {}).items():
        (tmp_path / fname).write_text(textwrap.dedent(text))
    script = tmp_path / name
    script.write_text(prelude + textwrap.dedent(body) + EPILOGUE)
    rc, out, err = run_command([sys.executable, str(script)], timeout=300)
    assert rc == 0, f"exit {rc}\n--- stdout\n{out}\n--- stderr\n{err}"
    line = next(ln for ln in out.splitlines() if ln.startswith("REPORT "))
    calls = json.loads(line[len("REPORT "):])
    return sites_by_marker(calls, tmp_path), out, script


def sites_by_marker(calls: list[dict], folder: Path) -> dict:
    marks = {}
    for f in folder.glob("*.py"):
        for i, text in enumerate(f.read_text().splitlines(), 1):
            if "# @" in text:
                marks[(str(f), i)] = text.split("# @")[1].split()[0]
    out = {}
    for c in calls:
        key = marks.get((c["file"], c["line"]), f"{Path(c['file']).name}:{c['line']}")
        assert key not in out or out[key][0] != c["rule"], f"{key} twice: {calls}"
        out[key if key not in out else f"{key}+{c['rule']}"] = (c["rule"], c["count"], c["raised"])
    return out


def test_each_way_of_asking_for_cuda_is_counted_with_its_rule_and_whether_it_raised(tmp_path):
    sites, _, _ = run_script(tmp_path, """
        def fails(fn):
            try:
                fn()
            except Exception:
                pass

        x = torch.ones(2, device="sim")
        fails(lambda: torch.zeros(2, device="cuda"))             # @factory
        fails(lambda: torch.randn(2, device=torch.device("cuda", 0)))  # @factory_device
        fails(lambda: x.new_zeros(2, device="cuda:1"))           # @new_method
        d = torch.device("cuda", 1)                              # @device
        d2 = torch.device(type="cuda")                           # @device_kw
        x.is_cuda                                                # @is_cuda
        fails(lambda: x.to("cuda"))                              # @to
        fails(lambda: x.to(device="cuda"))                       # @to_kw
        for _ in range(3):
            fails(lambda: torch.nn.Linear(4, 4).to("cuda"))      # @module_to
        fails(lambda: torch.nn.Linear(4, 4).to(device="cuda"))   # @module_to_kw
        fails(lambda: torch.nn.Linear(4, 4, device="cuda"))      # @module_init
        with torch.autocast("cuda"):                             # @autocast
            pass
        torch.amp.GradScaler()                                   # @scaler_default
        torch.amp.GradScaler("cuda")                             # @scaler
        torch.save({"w": x.cpu()}, "ckpt.pt")
        fails(lambda: torch.load("ckpt.pt", map_location="cuda"))  # @load
        fails(lambda: torch.load("ckpt.pt", map_location={"cpu": "cuda:0"}))  # @load_dict
        fails(lambda: torch.cuda.get_device_name(0))             # @kept
        torch.cuda.is_available()                                # @legacy
        fails(lambda: torch.cuda.set_device(1))                  # @legacy_raises
        fails(lambda: x.cuda())                                  # @cuda_method
        import torch.distributed as dist
        fails(lambda: dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1",  # @nccl
                                              rank=0, world_size=1))
    """)
    want = {
        "factory": ("AD902", 1, 1), "factory_device": ("AD902", 1, 1),
        "factory_device+AD901": ("AD901", 1, 0),  # the torch.device made on the line too
        "new_method": ("AD902", 1, 1), "device": ("AD901", 1, 0), "device_kw": ("AD901", 1, 0),
        "is_cuda": ("AD908", 1, 0), "to": ("AD903", 1, 1), "to_kw": ("AD903", 1, 1),
        "module_to": ("AD903", 3, 3), "module_to_kw": ("AD903", 1, 1),
        "module_init": ("AD902", 1, 1),
        "autocast": ("AD904", 1, 0), "scaler_default": ("AD904", 1, 0),
        "scaler": ("AD904", 1, 0), "load": ("AD902", 1, 1),
        "load_dict": ("AD902", 1, 1), "kept": ("AD120", 1, 1), "legacy": ("AD101", 1, 0),
        "legacy_raises": (sites.get("legacy_raises", ("?",))[0], 1, 1),
        "cuda_method": ("AD907", 1, 1), "nccl": ("AD910", 1, 1),
    }
    assert sites == want


def test_sim_code_asks_for_no_cuda(tmp_path):
    # A training step written against torch.accelerator, checkpoints, AMP and a
    # gloo group on sim: nothing counted, though PyTorch itself makes
    # torch.device("cuda") in init_process_group and reads is_cuda.
    sites, out, _ = run_script(tmp_path, """
        acc = torch.accelerator.current_accelerator()
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 1)).to(acc)
        opt = torch.optim.Adam(model.parameters())
        scaler = torch.amp.GradScaler(acc.type)
        x = torch.randn(32, 8, device=acc)
        for _ in range(3):
            with torch.autocast(acc.type, dtype=torch.bfloat16):
                loss = model(x).float().pow(2).mean()
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        torch.save(model.state_dict(), "m.pt")
        model.load_state_dict(torch.load("m.pt", map_location=acc))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        assert not x.device.type == "cuda"
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="file://" + os.path.abspath("rdv"),
                                rank=0, world_size=1)
        t = torch.ones(2, device=acc)
        dist.all_reduce(t.cpu())
        dist.destroy_process_group()
        print("trained")
    """)
    assert "trained" in out
    assert sites == {}


def test_requests_made_inside_pytorch_count_for_the_users_line_once_per_call(tmp_path):
    # model.to("cuda") moves each parameter in torch/nn: one request of the
    # user's line per call, however many tensors; requests PyTorch makes inside
    # a torch.cuda function are that function's (counted by anydev.torch).
    sites, _, _ = run_script(tmp_path, """
        model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(5)])
        with torch.device("cuda"):                               # @context
            pass
        for _ in range(2):
            try:
                model.to("cuda")                                 # @to
            except Exception:
                pass
        try:
            with torch.device("cuda"):                           # @context2
                torch.zeros(3)                                   # @default_device
        except Exception:
            pass
        import helper
        helper.place(torch.ones(2, device="sim"))                # @caller
    """, extra={"helper.py": """
        def place(t):
            try:
                t.to("cuda")                                     # @helper
            except Exception:
                pass
    """})
    assert sites == {"context": ("AD901", 1, 0), "context2": ("AD901", 1, 0),
                     "to": ("AD903", 2, 2),
                     "default_device": ("AD902", 1, 1), "helper": ("AD903", 1, 1)}


def test_warnings_keep_the_users_line(tmp_path):
    # PyTorch's warnings from C++ (TORCH_WARN: copy-constructing a tensor) and
    # with stacklevel=2 from Python (autocast on a device that is not there)
    # name the user's line with the counting on, as without it: no frame of
    # anydev's is between them (bind_watch.cc). A Python mode's frame would
    # take their place.
    _, out, script = run_script(tmp_path, """
        x = torch.randn(3, device="sim")
        for _ in range(2):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                torch.tensor(x)                                  # @cxx
                with torch.autocast("cuda"):                     # @autocast
                    pass
            print("WARNED", [(os.path.basename(w.filename), w.lineno) for w in seen])
            cuda_only.uninstall() if cuda_only.installed() else None
    """)
    lines = script.read_text().splitlines()
    want = [(script.name, i) for i, t in enumerate(lines, 1) if "# @cxx" in t or
            "# @autocast" in t]
    warned = [ln for ln in out.splitlines() if ln.startswith("WARNED")]
    assert len(warned) == 2
    assert warned[0] == warned[1] == f"WARNED {want!r}", out  # on, then off


def test_uninstall_puts_everything_back_and_counts_stay(tmp_path):
    sites, out, _ = run_script(tmp_path, """
        originals = (torch.load.__anydev_original__, torch.cuda.get_device_name.__anydev_original__,
                     torch.amp.GradScaler.__dict__["__init__"].__anydev_original__)
        torch.device("cuda")                                     # @before
        cuda_only.uninstall()
        assert not cuda_only.installed()
        assert not torch.overrides._get_current_function_mode_stack()
        assert (torch.load, torch.cuda.get_device_name,
                torch.amp.GradScaler.__dict__["__init__"]) == originals
        torch.device("cuda")                                     # @after
        torch.amp.GradScaler("cuda")                             # @after_wrapped
        cuda_only.install()
        cuda_only.install()                                      # idempotent
        assert len(torch.overrides._get_current_function_mode_stack()) == 1
        print("restored")
    """)
    assert "restored" in out
    assert sites == {"before": ("AD901", 1, 0)}


def test_install_needs_another_accelerator(tmp_path):
    rc, out, err = run_command([sys.executable, "-c", textwrap.dedent("""
        import torch
        from anydev._torch import cuda_only
        try:
            cuda_only.install()
        except RuntimeError as e:
            print(e)
        """)])
    assert rc == 0, err
    assert "another accelerator is current, and PyTorch's is none" in out


def test_a_forked_child_counts_from_zero(tmp_path):
    sites, _, _ = run_script(tmp_path, """
        torch.device("cuda")                                     # @parent
        pid = os.fork()
        if pid == 0:
            torch.device("cuda")                                 # @child
            calls = [c for c in report.snapshot()["calls"] if c.get("cuda_only")]
            print("CHILD", [(c["line"], c["count"]) for c in calls], flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    """)
    assert sites == {"parent": ("AD901", 1, 0)}


def test_wrapped_functions_are_counted_in_any_thread_and_the_mode_in_its_own(tmp_path):
    sites, _, _ = run_script(tmp_path, """
        import threading
        def work():
            torch.amp.GradScaler("cuda")                         # @thread_wrapped
            torch.device("cuda")                                 # @thread_mode
        t = threading.Thread(target=work)
        t.start(); t.join()
    """)
    assert sites == {"thread_wrapped": ("AD904", 1, 0)}
