"""The registry the report reads: each method's peers and why it is slower than them.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time (kernelmaps and the suite are imported on first use) and
defines no name asv would take for a benchmark.
"""

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


class Registry:
    """Peers and ``slower_because`` reasons, read lazily from the benchmark suite and
    ``kernelmaps.ALGORITHMS``; a broken import leaves the report without them (with
    a warning) rather than without a report."""

    #: families outside the registry's ``peers()``: the pipelines the learned maps
    #: replace, the exact learners, the solver and transform peers
    FIXED_PEERS = {"cnm": ["rff+pegasos"], "cnm-kerapp": ["rff+pegasos"],
                   "optimized_circulant": ["rff+pegasos"], "kernel_svc": ["sklearn.SVC"]}
    #: benchmark labels that are not registry names
    ALIASES = {"cnm-kerapp": "cnm", "rff_gl": "group_lasso_mkl_classifier",
               "rff_concat": "rff", "exact_mkl": "exact_mkl_classifier"}

    def __init__(self):
        self._common = self._algorithms = None
        self._loaded = False
        self.warnings = []

    def _load(self):
        if self._loaded:
            return
        self._loaded = True
        if str(_REPO) not in sys.path:
            sys.path.insert(0, str(_REPO))
        try:
            from kernelmaps import ALGORITHMS

            self._algorithms = ALGORITHMS
        except Exception as exc:  # a report must not need a working package
            self.warnings.append(f"kernelmaps could not be imported ({exc}): no peers, no reasons")
        try:
            from benchmarks import common

            self._common = common
        except Exception as exc:
            self.warnings.append(f"benchmarks.common could not be imported ({exc}): peers from the registry")

    def peers(self, label):
        """The peer labels of ``label`` (none for a peer or an unknown label)."""
        if label in self.FIXED_PEERS:
            return list(self.FIXED_PEERS[label])
        self._load()
        try:
            if self._common is not None:
                return list(self._common.peers_of(label))
            cls = (self._algorithms or {}).get(label)
            return sorted(cls.peers()) if cls is not None else []
        except Exception as exc:
            self.warnings.append(f"peers of {label} unknown ({exc})")
            return []

    def reason(self, label):
        """``benchmark["slower_because"]`` of ``label``'s class, or None."""
        self._load()
        cls = (self._algorithms or {}).get(label) or (self._algorithms or {}).get(self.ALIASES.get(label, ""))
        bench = getattr(cls, "benchmark", None) or {}
        reason = bench.get("slower_because") if isinstance(bench, dict) else None
        if not reason:  # families outside the registry's suite state theirs in their module
            try:
                from benchmarks import bench_learned_maps

                reason = bench_learned_maps.SLOWER_BECAUSE.get(label)
            except Exception:
                reason = None
        return str(reason) if reason else None
