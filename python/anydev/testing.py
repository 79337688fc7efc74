"""Testing aids for code that uses anydev.

``sleep(seconds, stream=None)`` queues work that keeps a stream busy, as
``torch.cuda._sleep`` does, so tests can observe asynchronous behaviour
(``stream.query()`` is False until it has run). Backends that cannot do this
raise NotImplementedError.
"""

from __future__ import annotations

from . import _C

__all__ = ["sleep"]


def sleep(seconds: float, stream: "_C.Stream | None" = None) -> None:
    """Queues ``seconds`` of busy time on ``stream`` (default: the current
    stream of the current accelerator) and returns at once."""
    if stream is None:
        from . import accelerator

        stream = accelerator.current_stream()
    _C._sleep(stream, float(seconds))
