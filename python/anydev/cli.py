"""The ``anydev`` command.

    anydev doctor        what anydev sees: backends, devices, the accelerator and why
    anydev demo          a tour of devices, streams and events on the simulated accelerator
    anydev version       the version

Exit codes: 0 success, 1 a check failed (``doctor`` with a bad configuration),
2 usage errors.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from typing import Sequence


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _cmd_doctor(args: argparse.Namespace) -> int:
    import anydev

    print(f"anydev {anydev.__version__} ({os.path.dirname(anydev.__file__)})")
    print(f"python {sys.version.split()[0]} ({sys.executable})")
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("ANYDEV_")}
    print("environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) or "no ANYDEV_ variables set"))
    print()
    rows = []
    for b in anydev.backends():
        state = "available" if b.available else ("not built" if not b.built else "unavailable")
        rows.append([b.name, "yes" if b.built else "no", state, str(b.device_count), b.reason])
    print(_table(rows, ["backend", "built", "state", "devices", "reason"]))
    print()
    try:
        acc = anydev.accelerator.current_accelerator()
    except RuntimeError as e:
        print(f"accelerator: configuration error: {e}")
        return 1
    if acc is None:
        print("accelerator: none (device-generic calls use the CPU; set ANYDEV_SIM_DEVICES=N "
              "for a simulated one)")
        return 0
    n = anydev.accelerator.device_count()
    print(f"accelerator: {acc.type} with {n} device{'s' if n != 1 else ''}")
    for i in range(n):
        p = anydev.get_device_properties(anydev.device(acc.type, i))
        print(f"  {acc.type}:{i}  {p.name}, {p.total_memory / 2**30:.2f} GiB, "
              f"{p.multi_processor_count} multiprocessors" + (f", {p.arch}" if p.arch else ""))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    # The simulated accelerator is opt-in; the demo opts in for itself.
    os.environ.setdefault("ANYDEV_SIM_DEVICES", str(args.devices))
    import anydev
    from anydev import testing

    acc = anydev.accelerator
    print("== backends ==")
    for b in anydev.backends():
        print(f"  {b.name:5} {'available' if b.available else 'unavailable':11} "
              f"devices={b.device_count}  {b.reason}")

    current = acc.current_accelerator()
    if current is None:
        print("no accelerator is available; see `anydev doctor`", file=sys.stderr)
        return 1
    print(f"\n== devices ==\n  current accelerator: {current.type}, "
          f"{acc.device_count()} device(s)")
    for i in range(acc.device_count()):
        print(f"  {anydev.get_device_properties(i)!r}")

    print("\n== current device (per thread) ==")
    last = acc.device_count() - 1
    acc.set_device_index(last)
    print(f"  set_device_index({last}) -> current_device_index() = {acc.current_device_index()}")
    with acc.device_index(0):
        print(f"  inside `with device_index(0)`: {acc.current_device_index()}")
    print(f"  after the block: {acc.current_device_index()}")
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(acc.current_device_index()))
    t.start()
    t.join()
    print(f"  a new thread starts on device {seen[0]}")
    acc.set_device_index(0)

    print("\n== streams and events ==")
    producer = anydev.Stream()
    consumer = anydev.Stream(priority=-1)
    print(f"  producer: {producer!r}\n  consumer: {consumer!r} (priority {consumer.priority})")
    start = anydev.Event(enable_timing=True)
    done = anydev.Event(enable_timing=True)
    start.record(producer)
    testing.sleep(args.work, producer)          # "a kernel" that takes args.work seconds
    done.record(producer)
    consumer.wait_event(done)                   # the consumer's work starts after it
    after = consumer.record_event(anydev.Event(enable_timing=True))
    t0 = time.perf_counter()
    print(f"  queued {args.work * 1000:.0f} ms of work; producer.query() = {producer.query()}, "
          f"consumer.query() = {consumer.query()} (work is in flight)")
    after.synchronize()
    waited = (time.perf_counter() - t0) * 1000
    print(f"  consumer's event completed after {waited:.1f} ms on the host clock")
    print(f"  elapsed_time(start, done) = {start.elapsed_time(done):.1f} ms (device clock)")
    print(f"  elapsed_time(start, consumer's event) = {start.elapsed_time(after):.1f} ms")

    with consumer:
        print(f"  inside `with consumer`: current_stream() == consumer -> "
              f"{acc.current_stream() == consumer}")
    print(f"  after the block: current_stream() is the default stream -> "
          f"{acc.current_stream().stream_id == 0}")
    acc.synchronize()
    print("\nok")
    return 0


def _cmd_version(args: argparse.Namespace) -> int:
    import anydev

    print(anydev.__version__)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anydev",
        description="Device-generic runtime and migration kit for torch.cuda-era code.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("doctor", help="show backends, devices and why a backend is unavailable")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser("demo", help="a tour of devices, streams and events on the simulated accelerator")
    p.add_argument("--devices", type=int, default=2, metavar="N",
                   help="simulated devices when ANYDEV_SIM_DEVICES is unset (default: 2)")
    p.add_argument("--work", type=float, default=0.05, metavar="SECONDS",
                   help="length of the simulated kernel (default: 0.05)")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("version", help="print the version")
    p.set_defaults(func=_cmd_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "devices", 1) < 1 or getattr(args, "devices", 1) > 64:
        print("anydev demo: --devices must be in 1..64", file=sys.stderr)
        return 2
    if getattr(args, "work", 0.0) < 0 or getattr(args, "work", 0.0) > 60:
        print("anydev demo: --work must be in [0, 60] seconds", file=sys.stderr)
        return 2
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
