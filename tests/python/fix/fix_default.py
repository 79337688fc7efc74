"""The fixer's tests were written for a fix whose target is the newest
release the table knows, which was the default where a project declares no
torch. The default is now the oldest release (Note [The oldest release] in
anydev/_migrate/torch_versions.py), so the tests that do not say otherwise
run with the newest as the default, in this process (each module imports
this autouse fixture); a test marked ``oldest_default`` keeps the fixer's
own, and the commands run in a subprocess pass --target-torch."""

from __future__ import annotations

import pytest

from anydev._migrate import torch_versions as _versions


@pytest.fixture(autouse=True)
def newest_default_target(request, monkeypatch):
    if request.node.get_closest_marker("oldest_default") is None:
        monkeypatch.setattr(_versions, "DEFAULT", _versions.Target(_versions.NEWEST, "default"))
    yield
