"""anydev._migrate.record: the scanner's result classes as @dataclass makes them,
without importing dataclasses, their __init__ written out (Note [Written-out
__init__])."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Optional

import pytest

from anydev import scan
from anydev._migrate.record import field, record


def test_scanner_classes_are_what_dataclass_makes():
    for cls, frozen in ((scan.Finding, True), (scan.ScanError, True), (scan.ScanResult, False)):
        twin = dataclasses.make_dataclass(
            cls.__name__, [(f.name, f.type, f) for f in dataclasses.fields(cls)], frozen=frozen)
        names = [f.name for f in dataclasses.fields(twin)]
        assert list(cls.__match_args__) == names
        args = tuple(range(len(names)))
        a, b = cls(*args), twin(*args)
        assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
        assert a == cls(*args) and a != cls(*args[:-1], -1)
        assert pickle.loads(pickle.dumps(a)) == a
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        if frozen:
            assert hash(a) == hash(cls(*args))
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(a, names[0], 1)
        else:
            assert cls.__hash__ is None
    r = scan.ScanResult()
    assert r.findings == [] and r.errors == [] and r.findings is not scan.ScanResult().findings
    assert scan.ScanResult(files=3).files == 3


def test_the_fast_builder_makes_a_finding():
    f = scan._build(tuple(range(16)))
    assert type(f) is scan.Finding and f == scan.Finding(*range(16))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.line = 2


def test_a_written_out_init_must_take_the_fields():
    with pytest.raises(TypeError, match="must take the fields"):
        @record(frozen=True)
        class Wrong:
            a: int
            b: int

            def __init__(self, b, a):
                object.__setattr__(self, "a", a)

    with pytest.raises(TypeError, match="must take the fields"):
        @record
        class WrongDefault:
            a: int = 1

            def __init__(self, a=2):
                self.a = a

    @record
    class Right:
        a: int
        b: Optional[list] = field(default_factory=list)

        def __init__(self, a, b=scan._NO_LIST):
            self.a = a
            self.b = [] if b is scan._NO_LIST else b

    assert Right(1) == Right(1, []) and Right(1).b is not Right(1).b
