# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""``torch.cuda.graphs`` over anydev: the entry points of anydev.cuda that torch.cuda.graphs holds,
the same objects (counted and warned as there)."""

from anydev.cuda import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

__all__ = ['CUDAGraph', 'graph', 'graph_pool_handle', 'is_current_stream_capturing', 'make_graphed_callables']
