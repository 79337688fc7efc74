# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
from anydev.xpu import (
    XPUGraph as XPUGraph,
    graph as graph,
    graph_pool_handle as graph_pool_handle,
    is_current_stream_capturing as is_current_stream_capturing,
    make_graphed_callables as make_graphed_callables,
)

__all__ = ['XPUGraph', 'graph', 'graph_pool_handle', 'is_current_stream_capturing', 'make_graphed_callables']
