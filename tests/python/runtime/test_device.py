"""anydev.device: parsed, printed and compared exactly as torch.device
(messages from c10/core/Device.cpp and torch/csrc/Device.cpp)."""

from __future__ import annotations

import copy
import pickle
import re

import pytest

import anydev

TYPES = ["cpu", "cuda", "hip", "xpu", "sim"]
TYPE_LIST = "cpu, cuda, hip, xpu, sim, mps, meta, privateuseone"


@pytest.mark.parametrize("type_", TYPES)
def test_parse_type_only(type_):
    d = anydev.device(type_)
    assert d.type == type_
    assert d.index is None
    assert str(d) == type_
    assert repr(d) == f"device(type='{type_}')"


@pytest.mark.parametrize("type_", TYPES)
@pytest.mark.parametrize("index", [0, 1, 7, 127])
def test_parse_type_and_index(type_, index):
    d = anydev.device(f"{type_}:{index}")
    assert (d.type, d.index) == (type_, index)
    assert str(d) == f"{type_}:{index}"
    assert repr(d) == f"device(type='{type_}', index={index})"
    assert anydev.device(type_, index) == d
    assert anydev.device(type=type_, index=index) == d


@pytest.mark.parametrize("text", ["sim:01", "sim:-1", "sim:1:2", " sim", "sim ", "sim:1 ",
                                  "sim:", ":1", "sim:a", "sim:1.0", "sim-1"])
def test_invalid_device_string(text):
    with pytest.raises(RuntimeError, match=re.escape(f"Invalid device string: '{text}'")):
        anydev.device(text)


def test_empty_device_string():
    with pytest.raises(RuntimeError, match="^Device string must not be empty$"):
        anydev.device("")


@pytest.mark.parametrize("text", ["foo:0", "SIM", "Sim:1", "xla", "gpu:0"])
def test_unknown_device_type(text):
    # torch names the type part ("...: foo" for "foo:0"); either way the
    # message names what was given.
    msg = f"Expected one of {TYPE_LIST} device type at start of device string: "
    with pytest.raises(RuntimeError, match="^" + re.escape(msg)) as info:
        anydev.device(text)
    assert text.split(":")[0] in str(info.value)


@pytest.mark.parametrize("text, index", [("sim:300", "300"), ("sim:128", "128"),
                                         ("cuda:99999999999999999999", "99999999999999999999")])
def test_index_too_large_in_string(text, index):
    # torch.device("cuda:300") silently wraps to index 44 (an int8); anydev refuses.
    with pytest.raises(RuntimeError, match=re.escape(index)):
        anydev.device(text)


def test_index_passed_twice():
    with pytest.raises(RuntimeError, match=re.escape(
            "type (string) must not include an index because index was passed explicitly: sim:1")):
        anydev.device("sim:1", 0)


@pytest.mark.parametrize("index", [-1, -2, -2**70])
def test_negative_index(index):
    # checked before the accelerator is looked up, as torch.device(-1)
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        anydev.device("sim", index)
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        anydev.device(index)


@pytest.mark.parametrize("index", [128, 2**40, 2**70])
def test_index_out_of_range(index):
    with pytest.raises(RuntimeError, match=f"Device index {index} is out of range"):
        anydev.device("sim", index)


@pytest.mark.parametrize("index", [128, 2**40, 2**70])
def test_int_index_out_of_range(acc, index):
    with pytest.raises(RuntimeError, match=f"Device index {index} is out of range"):
        anydev.device(index)


def test_index_none_is_no_index():
    assert anydev.device("sim", None) == anydev.device("sim")


def test_int_is_index_of_current_accelerator(acc):
    acc_type = acc.current_accelerator().type
    assert anydev.device(0) == anydev.device(acc_type, 0)
    assert anydev.device(1) == anydev.device(f"{acc_type}:1")


@pytest.mark.parametrize("bad", [None, 1.5, True, [0], object()])
def test_wrong_argument_type(bad):
    with pytest.raises(TypeError, match=re.escape(repr(bad))):
        anydev.device(bad)


@pytest.mark.parametrize("bad", ["1", 1.0, True])
def test_wrong_index_type(bad):
    with pytest.raises(TypeError, match="argument 'index' must be int"):
        anydev.device("sim", bad)


def test_device_from_device():
    d = anydev.device("sim:1")
    assert anydev.device(d) == d
    with pytest.raises(TypeError):
        anydev.device(d, 0)


def test_equality():
    assert anydev.device("sim:1") == anydev.device("sim", 1)
    assert anydev.device("sim:1") != anydev.device("sim:2")
    assert anydev.device("sim:1") != anydev.device("cuda:1")
    assert anydev.device("sim") != anydev.device("sim:0")  # as torch: no index is not index 0
    assert anydev.device("cpu") != anydev.device("cpu:0")
    assert anydev.device("sim:1") != "sim:1"
    assert not (anydev.device("sim:1") == "sim:1")
    assert anydev.device("sim:1") != 1


def test_hash():
    devices = [anydev.device(t) for t in TYPES] + [anydev.device(t, i) for t in TYPES
                                                     for i in range(8)]
    assert len({hash(d) for d in devices}) == len(devices)
    assert hash(anydev.device("sim:3")) == hash(anydev.device("sim", 3))
    table = {anydev.device("sim:1"): "a", anydev.device("sim"): "b"}
    assert table[anydev.device("sim", 1)] == "a"
    assert table[anydev.device("sim")] == "b"


@pytest.mark.parametrize("text", ["sim", "sim:0", "sim:3", "cpu", "cuda:127"])
def test_pickle_and_copy_round_trip(text):
    d = anydev.device(text)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(d, protocol=protocol))
        assert type(back) is anydev.device
        assert back == d and back.index == d.index and back.type == d.type
    assert copy.copy(d) == d
    assert copy.deepcopy(d) == d


def test_str_round_trip():
    for t in TYPES:
        for d in (anydev.device(t), anydev.device(t, 5)):
            assert anydev.device(str(d)) == d


def test_attributes_are_read_only():
    d = anydev.device("sim:1")
    with pytest.raises(AttributeError):
        d.index = 2
    with pytest.raises(AttributeError):
        d.type = "cpu"
    assert d == anydev.device("sim:1")


@pytest.mark.parametrize("text, shown", [
    ("\ud800", "'\\ud800' (not valid UTF-8)"),  # a lone surrogate: no UTF-8 to parse
    ("sim:\udce9", "'sim:\\udce9' (not valid UTF-8)"),
    ("cu\x00da", "'cu\\x00da'"),  # the NUL shown, not the message cut at it
    ("sim:0\n", "'sim:0\\x0a'"),
])
def test_device_strings_that_are_no_text_get_a_clear_error(text, shown):
    # torch says "error unpacking string as utf-8" and cuts at a NUL; anydev
    # names the string (what pybind11 said was "Unable to cast ... to C++ type '?'").
    for make in (anydev.device, lambda t: anydev.device(t, None), anydev.Stream):
        with pytest.raises(RuntimeError) as e:
            make(text) if make is not anydev.Stream else make(device=text)
        assert str(e.value) == f"Invalid device string: {shown}"
