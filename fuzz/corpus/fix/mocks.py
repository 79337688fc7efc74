# Patch targets of legacy symbols in tests: findings of kind "mock".
import unittest
from unittest import mock
from unittest.mock import patch

import pytest
import torch
import torch as th


@mock.patch("torch.cuda.set_device")
def test_decorated(set_device):
    pass


def test_forms(monkeypatch, mocker):
    with mock.patch("torch.cuda.is_available", return_value=False):
        pass
    with patch('torch.cuda.current_device') as cd:
        pass
    with unittest.mock.patch("torch.cuda.amp.autocast"):
        pass
    mocker.patch("torch.xpu.synchronize")
    with mock.patch.object(torch.cuda, "device_count", return_value=2):
        pass
    with patch.object(th.cuda, "empty_cache"):
        pass
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr("torch.cuda.manual_seed", lambda s: None)
    monkeypatch.delattr(th.xpu, "is_available")
    setattr(torch.cuda, "memory_allocated", lambda: 0)


def test_not_targets(monkeypatch):
    mock.patch("torch.cuda.get_device_name")         # kept: device-specific, no finding
    mock.patch("torch.accelerator.synchronize")      # not legacy
    mock.patch("th.cuda.synchronize")                # an import path, not an alias
    mock.patch(f"torch.cuda.{name}")                 # not a plain literal
    mock.patch("torch.cuda." "synchronize")          # concatenated
    mock.patch("mypkg.torch.cuda.synchronize")       # another package
    monkeypatch.setattr(torch.cuda, name, None)      # not a literal
    mock.patch.object(torch.cuda, "no_such_name")    # no row
    monkeypatch.setattr(os, "environ", {})           # not torch
    x.object(torch.cuda, "synchronize")              # not patch.object
    "mock.patch('torch.cuda.synchronize')"           # a string
    # mock.patch("torch.cuda.synchronize")           a comment
