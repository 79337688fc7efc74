"""torch is imported inside the functions only (a lazy import): the rewrites use
those bindings and the module gets no `import torch`."""


def available():
    import torch
    from torch.cuda import current_device as cd

    return torch.cuda.is_available() and cd() >= 0


def aliased():
    import torch as th
    from torch.cuda import empty_cache

    empty_cache()
    return th.cuda.memory_allocated()
