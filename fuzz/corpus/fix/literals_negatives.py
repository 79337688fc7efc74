"""Strings and names that mention cuda and are no device literal: no AD9xx findings."""

import logging
from unittest import mock

import torch

log = logging.getLogger(__name__)


def messages(args, cfg, x):
    log.info("cuda")
    print("using cuda", "cuda")
    raise RuntimeError("cuda")


def keys_and_config(args, cfg, table):
    table["cuda"] = 1
    opts = {"cuda": True, "device": "cuda"}
    if args.device == "cuda":
        pass
    if cfg.backend != "cuda":
        pass
    return opts.get("cuda"), table["cuda"], "cuda" in args.devices


@mock.patch("torch.cuda.is_available", return_value=False)
def test_without_gpu(_):
    with mock.patch.object(torch, "cuda"):
        pass


def not_devices(x, s, cuda):
    name = "cuda"
    kinds = ("cuda", "cpu")
    mode = "cuda" if s else "cpu"        # a condition of the user's own
    y = s.to_string("cuda")              # not `.to`
    z = x.type("torch.cuda.FloatTensor")
    b = torch.device(b"cuda" if False else "cpu")
    doc = """torch.device("cuda") in a docstring"""
    # torch.device("cuda") in a comment; x.cuda(); x.is_cuda
    w = cuda(x)                          # a function of the user's own
    return name, kinds, mode, y, z, b, doc, w, x.is_cuda_like, x.cuda_count()


def defaults(device="cuda"):             # a parameter default, not a call
    return device


def not_the_idiom(use_cuda):
    if use_cuda:
        device = "cuda"
    else:
        device = "cpu"
    return device
