"""The text of a legacy entry point's deprecation, shared by the runtime shims
(their warnings and ``__deprecated__``) and compat_map/generate.py (the
``@deprecated`` of the generated stubs), so the two always say the same.

Plain Python with no imports: the generator loads this file by its path,
before anydev is built.
"""

# Note [Replacements no release has yet]
# Some rows name a replacement that only PyTorch's main branch has (`since =
# "main"`: torch.accelerator.random.manual_seed, ...; compat_map/SCHEMA.md).
# Telling a user of PyTorch 2.13 or 1.13 to "use" it sent them to a module
# their PyTorch does not have. So where the user's PyTorch lacks it (or, with
# no PyTorch at hand, where no release the table knows has it), the text
# says that no release up to the newest the table knows has a device-generic
# replacement, that the legacy call is still the one to use there, and names
# the replacement only as what a later release is expected to bring.


def _future(row, newest: str, torch_has) -> bool:
    """Whether ``row``'s PyTorch replacement is one the user cannot call yet:
    ``torch_has`` is True or False when the user's PyTorch was asked, None
    when it was not (then the table's ``since`` decides)."""
    if not row.replacement:
        return False
    if torch_has is not None:
        return not torch_has
    return getattr(row, "since", None) == "main"


def future_text(row, newest: str = "2.13") -> str:
    """What to say of a replacement no release has yet (Note [Replacements no
    release has yet])."""
    return (f"no PyTorch release up to {newest} has a device-generic replacement, so "
            f"{row.legacy} is still the call to make there; {row.replacement} is expected "
            f"in a later release")


def legacy_message(row, shim_name: str, newest: str = "2.13", torch_has=None) -> str:
    """Names the legacy entry point, its replacement and the rule code. ``row``
    is a table row (anything with ``legacy``, ``anydev``, ``replacement``,
    ``since`` and ``code``); ``newest``: the newest PyTorch the table knows;
    ``torch_has``: whether the user's PyTorch has the replacement (None: not
    known; Note [Replacements no release has yet])."""
    future = _future(row, newest, torch_has)
    if row.anydev:
        if future:
            return (f"{shim_name} is a legacy device-specific API ({row.legacy}); use "
                    f"{row.anydev} (in PyTorch: {future_text(row, newest)}) [{row.code}]")
        return (f"{shim_name} is a legacy device-specific API ({row.legacy}); use {row.anydev} "
                f"(in PyTorch: {row.replacement}) [{row.code}]")
    if row.replacement:
        if future:
            return (f"{shim_name} is a legacy device-specific API ({row.legacy}); "
                    f"{future_text(row, newest)} [{row.code}]")
        return (f"{shim_name} is a legacy device-specific API ({row.legacy}); in PyTorch use "
                f"{row.replacement} [{row.code}]")
    return f"{shim_name} is a legacy device-specific API ({row.legacy}) [{row.code}]"
