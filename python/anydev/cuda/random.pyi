# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
from anydev.cuda import (
    get_rng_state as get_rng_state,
    get_rng_state_all as get_rng_state_all,
    initial_seed as initial_seed,
    manual_seed as manual_seed,
    manual_seed_all as manual_seed_all,
    seed as seed,
    seed_all as seed_all,
    set_rng_state as set_rng_state,
    set_rng_state_all as set_rng_state_all,
)

__all__ = ['get_rng_state', 'get_rng_state_all', 'initial_seed', 'manual_seed', 'manual_seed_all', 'seed', 'seed_all', 'set_rng_state', 'set_rng_state_all']
