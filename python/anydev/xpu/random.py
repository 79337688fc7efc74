# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
"""``torch.xpu.random`` over anydev: the entry points of anydev.xpu that torch.xpu.random holds,
the same objects (counted and warned as there)."""

from anydev.xpu import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)

__all__ = ['get_rng_state', 'get_rng_state_all', 'initial_seed', 'manual_seed', 'manual_seed_all', 'seed', 'seed_all', 'set_rng_state', 'set_rng_state_all']
