"""Dataclasses for the scanner's results without importing :mod:`dataclasses`.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``,
``tokenize``): about a fifth of ``anydev scan``'s start-up
(benchmarks/python/bench_startup.py). :func:`record` makes the same class as
``@dataclass(frozen=..., slots=...)`` for the plain cases the scanner uses
(fields with no default, a constant default, or ``field(default_factory=)``):
``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` of a frozen class,
``__match_args__``, frozen assignment raising ``FrozenInstanceError``, and
pickling. ``dataclasses.fields``, ``asdict``, ``replace`` and
``is_dataclass`` work on the result: its ``__dataclass_fields__`` and
``__dataclass_params__`` are those of a twin made by ``dataclasses`` itself,
built when first asked for.

Type checkers see ``dataclasses.dataclass`` (``anydev.scan`` imports this
module only at run time).
"""

from __future__ import annotations

_MISSING = object()


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory):
        self.factory = factory


def field(*, default_factory):
    """As ``dataclasses.field(default_factory=...)``."""
    return _Factory(default_factory)


class _LazyDataclassAttr:
    """``__dataclass_fields__`` / ``__dataclass_params__``, from a twin made
    by ``dataclasses`` on first access (then stored on the class)."""

    def __init__(self, attr: str):
        self.attr = attr

    def __get__(self, obj, cls):
        import dataclasses

        twin = dataclasses.make_dataclass(
            cls.__name__,
            [(n, cls.__annotations__[n]) if d is _MISSING else
             (n, cls.__annotations__[n],
              dataclasses.field(default_factory=d.factory) if isinstance(d, _Factory)
              else dataclasses.field(default=d))
             for n, d in cls._record_defaults],
            frozen=cls._record_frozen)
        for attr in ("__dataclass_fields__", "__dataclass_params__"):
            type.__setattr__(cls, attr, getattr(twin, attr))
        return getattr(cls, self.attr)


def _frozen_setattr(self, name, value):
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _make_init(cls, defaults: list, frozen: bool):
    params, body, env = [], [], {"_MISSING": _MISSING}
    for n, d in defaults:
        if d is _MISSING:
            params.append(n)
            value = n
        elif isinstance(d, _Factory):
            env[f"_f_{n}"] = d.factory
            params.append(f"{n}=_MISSING")
            value = f"_f_{n}() if {n} is _MISSING else {n}"
        else:
            env[f"_d_{n}"] = d
            params.append(f"{n}=_d_{n}")
            value = n
        body.append(f"    _set(self, {n!r}, {value})" if frozen else f"    self.{n} = {value}")
    env["_set"] = object.__setattr__
    src = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(src, env)  # noqa: S102 - the code is made from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


# Note [Written-out __init__]: making __init__ from source (exec) compiles it,
# and compiling is most of what a class costs to define: the scanner's
# classes, defined at `anydev scan` start-up (benchmarks/python/bench_startup.py),
# write theirs out instead (as @dataclass keeps an __init__ the class
# defines). _check_init holds such an __init__ to what record would make: the
# fields as its parameters, in order, with their defaults (_MISSING for a
# default_factory, which it must call itself); a frozen class's sets each
# field through object.__setattr__ (else its own __setattr__ refuses).


def _check_init(cls, init, defaults: list) -> None:
    code = init.__code__
    params = code.co_varnames[1:code.co_argcount]
    want = tuple(n for n, _ in defaults)
    given = tuple(init.__defaults__ or ())
    expected = tuple(_MISSING if isinstance(d, _Factory) else d
                     for _, d in defaults if d is not _MISSING)
    if params != want or code.co_kwonlyargcount or len(given) != len(expected) or \
            any(g is not e and g != e for g, e in zip(given, expected)):
        raise TypeError(f"{cls.__qualname__}.__init__ must take the fields {want} with "
                        f"their defaults, not {params}")


def record(cls=None, /, *, frozen: bool = False, slots: bool = False):
    """Returns ``cls`` as ``@dataclass(frozen=frozen, slots=slots)`` would."""

    def wrap(cls):
        names = list(cls.__dict__.get("__annotations__", {}))
        defaults = [(n, cls.__dict__.get(n, _MISSING)) for n in names]
        init = cls.__dict__.get("__init__")
        if init is None:
            init = _make_init(cls, defaults, frozen)
        else:  # written out (as dataclass, keep it): Note [Written-out __init__]
            _check_init(cls, init, defaults)
        ns = {k: v for k, v in cls.__dict__.items()
              if k not in names and k not in ("__dict__", "__weakref__")}
        fields = tuple(names)

        def __repr__(self):
            return (f"{type(self).__qualname__}("
                    + ", ".join(f"{n}={getattr(self, n)!r}" for n in fields) + ")")

        def __eq__(self, other):
            if other.__class__ is self.__class__:
                return all(getattr(self, n) == getattr(other, n) for n in fields)
            return NotImplemented

        def __reduce__(self):
            return (type(self), tuple(getattr(self, n) for n in fields))

        ns.update(__init__=init, __repr__=__repr__, __eq__=__eq__, __reduce__=__reduce__,
                  __match_args__=fields, _record_defaults=tuple(defaults),
                  _record_frozen=frozen,
                  __dataclass_fields__=_LazyDataclassAttr("__dataclass_fields__"),
                  __dataclass_params__=_LazyDataclassAttr("__dataclass_params__"))
        if frozen:
            def __hash__(self):
                return hash(tuple(getattr(self, n) for n in fields))

            ns.update(__hash__=__hash__, __setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        else:
            ns["__hash__"] = None  # as a dataclass with eq and not frozen
        if slots:
            ns["__slots__"] = fields
            for n in names:
                ns.pop(n, None)
        new = type(cls)(cls.__name__, cls.__bases__, ns)
        new.__qualname__ = cls.__qualname__
        return new

    return wrap if cls is None else wrap(cls)


def make_twin(cls, name: str, init=None):
    """A plain (not frozen) class with ``cls``'s slots and ``__init__``: an
    instance becomes a ``cls`` by ``__class__`` assignment (Note [Building
    findings] in anydev/scan.py). ``init``: that __init__ written out (it
    assigns each slot, in order: Note [Written-out __init__])."""
    names = cls.__slots__
    if init is not None:
        code = init.__code__
        if code.co_varnames[1:code.co_argcount] != tuple(names):
            raise TypeError(f"{name}.__init__ must take the slots {names}")
        return type(name, (), {"__slots__": names, "__init__": init})
    src = (f"def __init__(self, {', '.join(names)}):\n"
           + "\n".join(f"    self.{n} = {n}" for n in names) + "\n")
    env: dict = {}
    exec(src, env)  # noqa: S102 - made from the class's own slot names
    return type(name, (), {"__slots__": names, "__init__": env["__init__"]})
