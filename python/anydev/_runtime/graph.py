"""anydev.accelerator.Graph, as torch.accelerator.Graph (torch/accelerator/graphs.py)."""

from __future__ import annotations

from anydev import _C

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs `import anydev` a few milliseconds
    from typing import Literal, Optional, Tuple

    _CaptureErrorMode = Literal["default", "global", "thread_local", "relaxed"]

__all__ = ["Graph"]


class Graph(_C._Graph):
    """Captures the work queued on the current stream and replays it.

    As ``torch.accelerator.Graph``: ``capture_begin()`` ... ``capture_end()``
    (or ``with stream, graph:``) records, instead of running, what is queued on
    the calling thread's current stream (not the default stream);
    ``replay()`` queues all of it on the current stream as one unit. With
    ``keep_graph=True`` the captured graph is kept and made executable by
    ``instantiate()`` or the first ``replay()``. As torch's CUDA graphs, what
    the capturing stream allocates comes from the graph's private memory pool,
    kept for the graph's life; ``pool`` shares another graph's (its
    ``pool()``). Buffers allocated before the capture and used by captured
    work are kept too: freed, their memory stays reserved until the graph is
    reset or collected, so a replay never writes into reused memory. Calls on
    the capturing stream without ``stream=`` are recorded and return at once.

    On sim the stream's worker records the queued items (nothing captured runs
    until a replay, and ``Stream.is_capturing()`` answers True meanwhile); on
    CUDA and HIP it is stream capture; Level Zero and the CPU raise
    ``NotImplementedError``.

        s = anydev.Stream()
        g = anydev.accelerator.Graph()
        with s, g:
            buf.fill_(1)            # recorded, not run
        g.replay()                  # runs it
    """

    def __new__(cls, keep_graph: bool = False, *, pool: "Optional[Tuple[int, int]]" = None,
                capture_error_mode: "_CaptureErrorMode" = "default") -> "Graph":
        return super().__new__(cls, keep_graph)

    def __init__(self, keep_graph: bool = False, *, pool: "Optional[Tuple[int, int]]" = None,
                 capture_error_mode: "_CaptureErrorMode" = "default") -> None:
        super().__init__(keep_graph)
        self.graph_pool = pool
        self.capture_error_mode = capture_error_mode

    def capture_begin(self) -> None:  # type: ignore[override]
        """Begins capturing the current stream, with the pool and capture error
        mode given at construction."""
        super().capture_begin(pool=self.graph_pool, capture_error_mode=self.capture_error_mode)

    def capture_end(self) -> None:
        """Ends the capture (on the stream it began on)."""
        super().capture_end()

    def instantiate(self) -> None:
        """Makes the captured graph executable (done by ``capture_end`` unless
        ``keep_graph=True``, else by the first ``replay``)."""
        super().instantiate()

    def replay(self) -> None:
        """Queues the captured work on the current stream."""
        super().replay()

    def reset(self) -> None:
        """Drops the graph; this object can capture again."""
        super().reset()

    def pool(self) -> "Tuple[int, int]":
        """Returns the id of this graph's memory pool, which another graph's
        ``pool=`` can share."""
        return super().pool()

    def enable_debug_mode(self) -> None:
        """Keeps the captured graph for ``debug_dump``."""
        super().enable_debug_mode()

    def debug_dump(self, path: str) -> None:
        """Writes the captured graph to ``path`` (Graphviz DOT; debug mode)."""
        super().debug_dump(path)

    def __enter__(self) -> None:
        # As anydev.accelerator.synchronize(), empty_cache() and
        # empty_host_cache() (this module is below anydev.accelerator).
        _C._acc_synchronize(None)
        _C._acc_empty_cache()
        _C._acc_empty_host_cache()
        self.capture_begin()

    def __exit__(self, *exc_info: object) -> None:
        self.capture_end()
