"""anydev.accelerator.Graph, as torch.accelerator.Graph: capture the work
queued on the current stream, replay it. On sim the captured work really is
held back until a replay, so graph code is testable without a GPU."""

from __future__ import annotations

import inspect

import pytest

import anydev

Graph = anydev.accelerator.Graph


def _graphs_or_skip(g: Graph) -> None:
    try:
        g.capture_begin()
    except NotImplementedError as e:
        pytest.skip(f"the backend has no graph capture: {e}")


def test_signature_is_torchs():
    torch = pytest.importorskip("torch")
    for name in ("__init__", "capture_begin", "capture_end", "instantiate", "replay", "reset",
                 "pool", "enable_debug_mode", "debug_dump", "__enter__", "__exit__"):
        ours = inspect.signature(getattr(Graph, name))
        theirs = inspect.signature(getattr(torch.accelerator.Graph, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name


def test_captured_work_runs_on_replay_only(acc):
    s = anydev.Stream()
    buf = anydev.Buffer(4096, stream=s)
    buf.fill_(1, stream=s)
    s.synchronize()
    g = Graph()
    with s:
        assert not s.is_capturing()
        _graphs_or_skip(g)
        assert s.is_capturing()
        buf.fill_(9, stream=s)
        g.capture_end()
        assert not s.is_capturing()
    assert bytes(buf.copy_to_host())[:4] == b"\x01" * 4  # nothing ran
    with s:
        g.replay()
    s.synchronize()
    assert bytes(buf.copy_to_host()) == b"\x09" * 4096


def test_context_manager_and_replay_on_another_stream(acc):
    s, other = anydev.Stream(), anydev.Stream()
    src = anydev.Buffer(256, stream=s)
    dst = anydev.Buffer(256, stream=s)
    src.copy_from_host(bytes(range(256)))
    g = Graph()
    try:
        with s, g:
            dst.copy_(src, stream=s)
    except NotImplementedError as e:
        pytest.skip(f"the backend has no graph capture: {e}")
    assert bytes(dst.copy_to_host()) != bytes(range(256))
    with other:
        g.replay()  # replays on the current stream
    other.synchronize()
    assert bytes(dst.copy_to_host()) == bytes(range(256))


def test_keep_graph_and_debug_dump(acc, tmp_path):
    s = anydev.Stream()
    buf = anydev.Buffer(1024, stream=s)
    g = Graph(keep_graph=True)
    g.enable_debug_mode()
    with s:
        _graphs_or_skip(g)
        buf.fill_(3, stream=s)
        buf.fill_(4, stream=s)
        g.capture_end()
        g.instantiate()
        path = tmp_path / "graph.dot"
        try:
            g.debug_dump(str(path))
        except NotImplementedError:
            pass
        else:
            text = path.read_text()
            assert text.startswith("digraph")
            if acc.current_accelerator().type == "sim":
                assert "memset bytes 1024" in text and "n0 -> n1" in text
        g.replay()
    s.synchronize()
    assert bytes(buf.copy_to_host())[:1] == b"\x04"


def test_debug_dump_needs_debug_mode(acc, tmp_path):
    s = anydev.Stream()
    g = Graph(keep_graph=True)
    with s:
        _graphs_or_skip(g)
        g.capture_end()
    with pytest.raises(RuntimeError, match="enable_debug_mode"):
        g.debug_dump(str(tmp_path / "g.dot"))


def test_errors_as_torchs(acc):
    g = Graph()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.pool()
    with pytest.raises(RuntimeError, match="non-default stream"):
        g.capture_begin()  # the current stream is the default one
    with pytest.raises(RuntimeError, match="capture_error_mode"):  # torch's TORCH_CHECK
        with anydev.Stream():
            Graph(capture_error_mode="bogus").capture_begin()
    with pytest.raises(TypeError):
        Graph(False, None)  # pool is keyword-only, as torch's


def test_reset_and_pool_sharing(acc):
    s = anydev.Stream()
    g1 = Graph()
    with s:
        _graphs_or_skip(g1)
        g1.capture_end()
        pool = g1.pool()
        assert isinstance(pool, tuple) and len(pool) == 2
        g2 = Graph(pool=pool)
        with g2:
            pass
        assert g2.pool() == pool
        g1.reset()
        with pytest.raises(RuntimeError):
            g1.replay()
        with g1:  # reusable after reset
            pass
        g1.replay()


def test_capture_error_modes_are_accepted(acc):
    s = anydev.Stream()
    for mode in ("default", "global", "thread_local", "relaxed"):
        g = Graph(capture_error_mode=mode)
        with s:
            _graphs_or_skip(g)
            g.capture_end()


def test_capturing_stream_cannot_be_synchronized_on_sim(acc):
    if acc.current_accelerator().type != "sim":
        pytest.skip("the message is sim's")
    s = anydev.Stream()
    g = Graph()
    with s:
        g.capture_begin()
        with pytest.raises(RuntimeError, match="not permitted when stream is capturing"):
            s.synchronize()
        with pytest.raises(RuntimeError, match="not permitted when stream is capturing"):
            s.query()
        g.capture_end()
    s.synchronize()


def test_cpu_streams_never_capture():
    assert anydev.Stream("cpu").is_capturing() is False


def test_the_legacy_graph_classes_forward_onto_it(acc):
    import warnings

    import anydev.cuda
    import anydev.xpu

    for legacy in (anydev.cuda.CUDAGraph, anydev.xpu.XPUGraph):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = legacy()
        assert isinstance(g, Graph)
        assert any("anydev.accelerator.Graph" in str(w.message) for w in caught)
        s = anydev.Stream()
        buf = anydev.Buffer(64, stream=s)
        buf.fill_(1, stream=s)
        s.synchronize()
        with s:
            _graphs_or_skip(g)
            buf.fill_(7, stream=s)
            g.capture_end()
            g.replay()
        s.synchronize()
        assert bytes(buf.copy_to_host()) == b"\x07" * 64


def test_the_legacy_graph_context_managers_capture_until_replay(acc):
    import warnings

    import anydev.cuda
    import anydev.xpu

    for legacy_graph, legacy_cm, extra in ((anydev.cuda.CUDAGraph, anydev.cuda.graph,
                                            {"capture_error_mode": "thread_local"}),
                                           (anydev.xpu.XPUGraph, anydev.xpu.graph, {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = legacy_graph()
        buf = anydev.Buffer(128)
        buf.fill_(1)
        anydev.accelerator.synchronize()
        before = anydev.accelerator.current_stream()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with legacy_cm(g, **extra) as entered:
                    assert entered is None  # as torch's
                    side = anydev.accelerator.current_stream()
                    assert side != before and side.is_capturing()  # its own side stream
                    buf.fill_(5, stream=side)
            except NotImplementedError as e:
                pytest.skip(f"the backend has no graph capture: {e}")
        assert any("anydev.accelerator.Graph" in str(w.message) for w in caught)
        assert anydev.accelerator.current_stream() == before  # restored
        anydev.accelerator.synchronize()
        assert bytes(buf.copy_to_host()) == b"\x01" * 128  # captured, not run
        g.replay()
        anydev.accelerator.synchronize()
        assert bytes(buf.copy_to_host()) == b"\x05" * 128


def test_the_legacy_graph_context_manager_takes_a_stream_and_a_pool(acc):
    import warnings

    import anydev.cuda

    warnings.simplefilter("ignore")
    s = anydev.Stream()
    first, second = Graph(), anydev.cuda.CUDAGraph()
    try:
        with anydev.cuda.graph(first, stream=s):
            assert anydev.accelerator.current_stream() == s
    except NotImplementedError as e:
        pytest.skip(f"the backend has no graph capture: {e}")
    with anydev.cuda.graph(second, first.pool(), s):  # positionally, as torch's
        pass
    assert second.pool() == first.pool()


def test_the_legacy_graph_context_manager_refuses_what_it_cannot_take(acc):
    import warnings

    import anydev.cuda

    warnings.simplefilter("ignore")
    with pytest.raises(TypeError, match=r"torch\.cuda\.graph: cuda_graph must be a graph"):
        anydev.cuda.graph(object())
    with pytest.raises(TypeError, match="stream must be an anydev.Stream"):
        anydev.cuda.graph(Graph(), stream="cuda:0")
    with pytest.raises(TypeError, match="pool must be None or a graph's pool"):
        anydev.cuda.graph(Graph(), pool=7)
    before = anydev.accelerator.current_stream()
    with pytest.raises(RuntimeError, match="capture_error_mode"):
        with anydev.cuda.graph(Graph(), capture_error_mode="bogus"):
            pass  # pragma: no cover - the capture does not begin
    assert anydev.accelerator.current_stream() == before  # the stream was left again
    with pytest.raises(TypeError):
        anydev.cuda.graph(Graph(), None, None, "global", "extra")
