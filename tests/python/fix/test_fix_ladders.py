"""Dispatch ladders (anydev._migrate.fix.ladders, Note [Collapsing a dispatch
ladder]): an if/elif ladder of device checks whose branches are the same code
but for the device's name becomes one torch.accelerator form, in safe mode,
and runs what the ladder ran on every machine it names (checked against a
model of torch for each machine kind); any other ladder is left as before,
refused with its reasons."""

from __future__ import annotations

import ast
import textwrap
import types

import pytest

from anydev.fix import fix_source
from anydev.scan import scan_source
from fix_default import newest_default_target  # noqa: F401 (autouse)


def _fix(src: str, target: str = "2.13", unsafe: bool = False, path: str = "m.py"):
    data = textwrap.dedent(src).encode()
    findings, errors = scan_source(data, path)
    assert not errors
    new, applied, skipped = fix_source(data, path, findings, unsafe=unsafe, target_torch=target)
    return data.decode(), new.decode(), applied, skipped


# --- a model of torch on each kind of machine ------------------------------------------

class _Device:
    def __init__(self, kind: str, index=None):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return isinstance(other, _Device) and (self.type, self.index) == (other.type, other.index)

    def __repr__(self):
        return f"device({self.type!r})"


def _torch_on(machine: str, count: int = 1) -> types.SimpleNamespace:
    """torch as a machine with ``count`` of ``machine``'s accelerator (or "cpu":
    none) sees it."""
    def avail(kind):
        return lambda: machine == kind

    def counted(kind):
        return lambda: count if machine == kind else 0

    def current_accelerator(check_available=False):
        return None if machine == "cpu" else _Device(machine)

    def device(kind, index=None):
        return _Device(kind, index)

    acc = types.SimpleNamespace(current_accelerator=current_accelerator,
                                is_available=lambda: machine != "cpu",
                                device_count=lambda: 0 if machine == "cpu" else count)
    return types.SimpleNamespace(
        cuda=types.SimpleNamespace(is_available=avail("cuda"), device_count=counted("cuda")),
        xpu=types.SimpleNamespace(is_available=avail("xpu"), device_count=counted("xpu")),
        npu=types.SimpleNamespace(is_available=avail("npu"), device_count=counted("npu")),
        backends=types.SimpleNamespace(mps=types.SimpleNamespace(is_available=avail("mps"))),
        accelerator=acc, device=device)


class _Model:
    def __init__(self):
        self.calls = []

    def to(self, *a, **k):
        self.calls.append(("to", a, k))
        return self


def _run(src: str, machine: str, fn: str, *args, count: int = 1):
    code = src.replace("import torch\n", "")
    ns = {"torch": _torch_on(machine, count), "RuntimeError": RuntimeError}
    exec(compile(code, "<ladder>", "exec"), ns)
    try:
        return ns[fn](*args)
    except RuntimeError as e:
        return ("raised", str(e))


def _same_on_named_machines(old: str, new: str, fn: str, machines, args=lambda: ()):
    for m in machines:
        a, b = _run(old, m, fn, *args()), _run(new, m, fn, *args())
        if isinstance(a, _Model):
            a, b = a.calls, b.calls
        assert a == b, (m, a, b)


DEVICE_LADDER = """\
    import torch


    def pick():
        if torch.cuda.is_available():
            device = torch.device("cuda")
        elif torch.xpu.is_available():
            device = torch.device("xpu")
        elif torch.backends.mps.is_available():
            device = torch.device("mps")
        else:
            device = torch.device("cpu")
        return device
    """


def test_a_device_assignment_ladder_becomes_the_accelerator_or_the_cpu_in_safe_mode():
    old, new, applied, skipped = _fix(DEVICE_LADDER)
    assert new == textwrap.dedent("""\
        import torch


        def pick():
            device = (
                torch.accelerator.current_accelerator(check_available=True)
                or torch.device("cpu")
            )
            return device
        """)
    assert {f.rule for f in applied} == {"AD101", "AD401", "AD901"} and not skipped
    # the same on every machine the ladder names; an NPU machine now gets its NPU
    _same_on_named_machines(old, new, "pick", ["cuda", "xpu", "mps", "cpu"])
    assert _run(old, "npu", "pick") == _Device("cpu")
    assert _run(new, "npu", "pick") == _Device("npu")
    # a second run changes nothing
    assert _fix(new)[1] == new


def test_the_ladder_runs_on_the_real_torch_of_this_machine():
    _, new, _, _ = _fix(DEVICE_LADDER)
    import torch
    ns: dict = {}
    exec(compile(new, "<fixed>", "exec"), ns)
    got = ns["pick"]()
    want = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
    assert got == want


def test_a_to_ladder_without_else_keeps_doing_nothing_where_there_is_no_accelerator():
    src = """\
        import torch


        def move(model):
            if torch.cuda.is_available():
                model.to("cuda")
            elif torch.xpu.is_available():
                model.to("xpu")
            return model
        """
    old, new, applied, skipped = _fix(src)
    assert "    if torch.accelerator.is_available():\n" \
        "        model.to(torch.accelerator.current_accelerator().type)\n" in new
    assert "torch.cuda" not in new and "elif" not in new and not skipped
    _same_on_named_machines(old, new, "move", ["cuda", "xpu", "cpu"], args=lambda: (_Model(),))


def test_an_f_string_device_and_an_else_of_other_code():
    src = """\
        import torch


        def setup(local_rank):
            if torch.cuda.is_available():
                device = torch.device(f"cuda:{local_rank}")
            elif torch.xpu.is_available():
                device = torch.device(f"xpu:{local_rank}")
            else:
                raise RuntimeError("no accelerator found")
            return device
        """
    old, new, applied, skipped = _fix(src)
    assert new.startswith("import torch\n\n\ndef setup(local_rank):\n"
                          "    if torch.accelerator.is_available():\n"
                          "        device = torch.device(\n"
                          '            f"{torch.accelerator.current_accelerator().type}:'
                          '{local_rank}"\n        )\n    else:\n'
                          '        raise RuntimeError("no accelerator found")\n')
    assert not skipped
    _same_on_named_machines(old, new, "setup", ["cuda", "xpu", "cpu"], args=lambda: (3,))


def test_a_device_string_in_an_expression_with_the_cpu_fallback_and_an_alias():
    src = """\
        import torch as th


        def autocast_type(x):
            if th.cuda.is_available():
                kind = "cuda"
            elif th.backends.mps.is_available():
                kind = "mps"
            else:
                kind = "cpu"
            return kind
        """
    old, new, applied, skipped = _fix(src)
    assert '    kind = (\n        th.accelerator.current_accelerator(check_available=True) or ' \
        'th.device("cpu")\n    ).type\n' in new
    code = old.replace("import torch as th\n", "")
    for m in ["cuda", "mps", "cpu"]:
        ns = {"th": _torch_on(m)}
        exec(compile(code, "<old>", "exec"), ns)
        ns2 = {"th": _torch_on(m)}
        exec(compile(new.replace("import torch as th\n", ""), "<new>", "exec"), ns2)
        assert ns["autocast_type"](0) == ns2["autocast_type"](0)


# --- ladders that are not one decision of the device's name: left as before ------------

@pytest.mark.parametrize("src, why", [
    # one more statement in one branch
    ("""\
        import torch


        def pick(args):
            if torch.cuda.is_available():
                torch.cuda.set_device(args.local_rank)
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """, "extra statement"),
    # a branch for a case that is not an accelerator comes first
    ("""\
        import torch


        def pick(args):
            if args.cpu:
                device = torch.device("cpu")
            elif torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """, "non-accelerator branch"),
    # a branch that is another device's own code (a collective backend's name)
    ("""\
        import torch


        def backend():
            if torch.cuda.is_available():
                name = "nccl"
            elif torch.xpu.is_available():
                name = "xccl"
            else:
                name = "gloo"
            return name
        """, "backend names"),
    # device modules in the branches
    ("""\
        import torch


        def name():
            if torch.cuda.is_available():
                return torch.cuda.get_device_name()
            elif torch.xpu.is_available():
                return torch.xpu.get_device_name()
            return "cpu"
        """, "device modules"),
    # a comment the collapse would drop
    ("""\
        import torch


        def pick():
            if torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                # Intel GPUs
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """, "comment"),
    # a condition with more than the check
    ("""\
        import torch


        def pick(use_gpu):
            if torch.cuda.is_available() and use_gpu:
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """, "condition"),
    # the function rebinds torch
    ("""\
        import torch


        def pick(torch):
            if torch.cuda.is_available():
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """, "rebound"),
])
def test_ladders_that_are_not_the_same_code_are_left_with_their_reasons(src, why):
    old, new, applied, skipped = _fix(src)
    assert "torch.accelerator" not in new or "torch.accelerator.current_accelerator(" \
        "check_available=True) or" not in new, why
    # no ladder became one statement: every `elif` is still there
    assert new.count("elif") == old.count("elif"), why
    # nor did a part of one (an `elif` chain below a branch of another kind)
    assert ast.dump(ast.parse(new)).count("If(") == ast.dump(ast.parse(old)).count("If("), why


def test_a_ladder_left_keeps_todays_refusal_reasons():
    src = """\
        import torch


        def pick(args):
            if torch.cuda.is_available():
                torch.cuda.set_device(args.local_rank)
                device = torch.device("cuda")
            elif torch.xpu.is_available():
                device = torch.device("xpu")
            else:
                device = torch.device("cpu")
            return device
        """
    old, new, applied, skipped = _fix(src)
    assert new == old
    why = {f.rule: w for f, w in skipped}
    assert "AD101" in why and "AD401" in why


def test_the_target_torch_decides_the_form():
    # the CPU fallback needs check_available (2.7): at 2.6 the ladder stays
    old, new, _, _ = _fix(DEVICE_LADDER, target="2.6")
    assert "elif" in new
    # without an else, torch.accelerator.is_available() and current_accelerator() (2.6) do
    src = """\
        import torch


        def move(model):
            if torch.cuda.is_available():
                model.to("cuda")
            elif torch.xpu.is_available():
                model.to("xpu")
            return model
        """
    old, new, _, _ = _fix(src, target="2.6")
    assert "if torch.accelerator.is_available():" in new and "elif" not in new
    # below 2.6 there is no torch.accelerator
    old, new, _, _ = _fix(src, target="2.5")
    assert new == old


def test_a_noqa_comment_keeps_the_ladder():
    src = DEVICE_LADDER.replace('device = torch.device("xpu")',
                                'device = torch.device("xpu")  # noqa: AD401')
    old, new, _, _ = _fix(src)
    assert "elif" in new


def test_findings_after_a_collapsed_ladder_are_fixed_and_reported_at_their_lines():
    src = textwrap.dedent(DEVICE_LADDER) + textwrap.dedent("""\


        def later():
            torch.cuda.synchronize()
            return torch.cuda.get_device_name(0)
        """)
    old, new, applied, skipped = _fix(src)
    assert "    torch.accelerator.synchronize()\n" in new
    sync = next(f for f in applied if f.rule == "AD107")
    assert old.splitlines()[sync.line - 1].strip() == "torch.cuda.synchronize()"
    for f, _why in skipped:
        assert f.text in old.splitlines()[f.line - 1]


def test_a_ladder_the_rewrites_make_collapsible_is_collapsed_in_the_same_run():
    # accelerate's utils/bnb.py: each branch calls its device's current_device(), which
    # the API rows make torch.accelerator.current_device_index(): the branches become
    # the same code, and a second run collapsed them (one run must be final)
    src = """\
        import torch


        def device_map_of(device_map=None):
            if device_map is None:
                if torch.cuda.is_available():
                    device_map = {"": torch.cuda.current_device()}
                elif torch.xpu.is_available():
                    device_map = {"": torch.xpu.current_device()}
                else:
                    raise RuntimeError("No GPU found. A GPU is needed for quantization.")
            return device_map
        """
    old, new, applied, skipped = _fix(src)
    assert ("        if torch.accelerator.is_available():\n"
            '            device_map = {"": torch.accelerator.current_device_index()}\n'
            "        else:\n"
            '            raise RuntimeError("No GPU found. A GPU is needed for quantization.")\n'
            ) in new
    assert not [f for f, _ in skipped if f.rule in ("AD101", "AD401")], skipped
    again = _fix(new)
    assert again[1] == new and not again[2]


def test_a_duplicate_branch_under_the_generic_check_is_folded():
    # --unsafe-fixes rewrites the XPU check to the generic one, which left
    # `if torch.cuda...: X elif torch.accelerator...: X` (a dead duplicate branch) and a
    # second run that changed the file again
    src = """\
        import torch


        def device_map_of():
            if torch.cuda.is_available():
                device_map = {"": torch.cuda.current_device()}
            elif torch.xpu.is_available():
                device_map = {"": torch.xpu.current_device()}
            else:
                raise RuntimeError("No GPU found.")
            return device_map
        """
    old, new, applied, skipped = _fix(src, unsafe=True)
    assert new == textwrap.dedent("""\
        import torch


        def device_map_of():
            if torch.accelerator.is_available():
                device_map = {"": torch.accelerator.current_device_index()}
            else:
                raise RuntimeError("No GPU found.")
            return device_map
        """)
    again = _fix(new, unsafe=True)
    assert again[1] == new and not again[2]
    # written by hand, half migrated: the same
    half = src.replace("elif torch.xpu.is_available():", "elif torch.accelerator.is_available():")
    half = half.replace("torch.xpu.current_device()", "torch.cuda.current_device()")
    assert "elif" not in _fix(half)[1]


def test_checks_anded_with_the_same_count_condition_collapse():
    # accelerate's tests/test_cli.py: the same body under `<device> is available and has
    # more than one`; --unsafe-fixes rewrote the XPU branch and a second run the CUDA
    # one, leaving two identical branches
    src = """\
        import torch


        def launch(args):
            if torch.cuda.is_available() and (torch.cuda.device_count() > 1):
                args = ["--multi_gpu"] + args
            elif torch.xpu.is_available() and (torch.xpu.device_count() > 1):
                args = ["--multi_gpu"] + args
            return args
        """
    for unsafe in (False, True):
        old, new, applied, skipped = _fix(src, unsafe=unsafe)
        assert new == textwrap.dedent("""\
            import torch


            def launch(args):
                if torch.accelerator.is_available() and torch.accelerator.device_count() > 1:
                    args = ["--multi_gpu"] + args
                return args
            """), new
        assert skipped == [] and len(applied) == 4
        again = _fix(new, unsafe=unsafe)
        assert again[1] == new and not again[2]
        # the same on every machine the ladder names, with one device and with two
        for count in (1, 2):
            for m in ("cuda", "xpu", "cpu"):
                assert _run(old, m, "launch", [], count=count) == \
                    _run(new, m, "launch", [], count=count), (m, count)
        # and an accelerator it did not name now takes the branch (the migration's point)
        assert _run(new, "npu", "launch", [], count=2) == ["--multi_gpu"]


@pytest.mark.parametrize("second", [
    "elif torch.xpu.is_available() and torch.xpu.device_count() > 2:",   # another count
    "elif torch.xpu.is_available() and torch.cuda.device_count() > 1:",  # CUDA's count
    "elif torch.xpu.is_available():",                                      # no count
    "elif torch.xpu.is_available() and torch.xpu.device_count() > 1 and x:",  # one more
])
def test_checks_anded_with_other_conditions_are_left(second):
    src = ("import torch\n\n\ndef f(x):\n"
           "    if torch.cuda.is_available() and torch.cuda.device_count() > 1:\n"
           "        return 1\n"
           f"    {second}\n        return 1\n    return 0\n")
    old, new, applied, skipped = _fix(src)
    assert "elif" in new, new
