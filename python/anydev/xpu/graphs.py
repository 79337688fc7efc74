# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
"""``torch.xpu.graphs`` over anydev: the entry points of anydev.xpu that torch.xpu.graphs holds,
the same objects (counted and warned as there)."""

from anydev.xpu import (
    XPUGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

__all__ = ['XPUGraph', 'graph', 'graph_pool_handle', 'is_current_stream_capturing', 'make_graphed_callables']
