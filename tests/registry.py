"""The registry as the tests see it: names by kind, and small estimators to test."""

from kernelmaps import ALGORITHMS as REGISTRY

ALL = sorted(REGISTRY)
FEATURE_MAPS = sorted(name for name, cls in REGISTRY.items() if cls.kind == "feature_map")


def make(name, **extra):
    """``REGISTRY[name]`` with its small ``test_params``, seeded, updated by ``extra``."""
    cls = REGISTRY[name]
    params = dict(cls.test_params)
    if "random_state" in cls().get_params():
        params.setdefault("random_state", 0)
    params.update(extra)
    return cls(**params)
