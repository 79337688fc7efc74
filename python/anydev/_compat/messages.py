"""The text of a legacy entry point's deprecation, shared by the runtime shims
(their warnings and ``__deprecated__``) and compat_map/generate.py (the
``@deprecated`` of the generated stubs), so the two always say the same.

Plain Python with no imports: the generator loads this file by its path,
before anydev is built.
"""


def legacy_message(row, shim_name: str) -> str:
    """Names the legacy entry point, its replacement and the rule code. ``row``
    is a table row (anything with ``legacy``, ``anydev``, ``replacement`` and
    ``code``)."""
    if row.anydev:
        return (f"{shim_name} is a legacy device-specific API ({row.legacy}); use {row.anydev} "
                f"(in PyTorch: {row.replacement}) [{row.code}]")
    if row.replacement:
        return (f"{shim_name} is a legacy device-specific API ({row.legacy}); in PyTorch use "
                f"{row.replacement} [{row.code}]")
    return f"{shim_name} is a legacy device-specific API ({row.legacy}) [{row.code}]"
