"""Throwaway slowdowns for measuring ``benchmarks.compare``: commits that make one map's transform slower.

Used by the ``regression-power`` experiment and the tests, always in a temporary
clone, never in the project's history.
"""

#: map -> (module file, class) whose ``transform`` the injected commits slow down.
TARGETS = {"rff": ("algorithms/rff.py", "RandomFourierFeatures"),
           "fastfood": ("algorithms/fastfood.py", "Fastfood"),
           "nystroem": ("algorithms/nystroem.py", "Nystroem"),
           "orf": ("algorithms/orf.py", "OrthogonalRandomFeatures")}

_INJECTION = '''

# A throwaway commit of the regression-power experiment: transform {factor}x slower.
import time as _time  # noqa: E402

_original_transform = {cls}.transform


def _slower_transform(self, X):
    started = _time.perf_counter()
    features = _original_transform(self, X)
    until = _time.perf_counter() + ({factor} - 1.0) * (_time.perf_counter() - started)
    while _time.perf_counter() < until:  # busy, as real work would be
        pass
    return features


{cls}.transform = _slower_transform
'''


def transform_pattern(name):
    """The compare selection of one map's transform benchmarks."""
    return rf"time_transform\('{name}'"


def inject(clone, name, factor, keep=False):
    """Commit, in ``clone``, a ``factor``x slower transform of map ``name``; return the commit.

    The clone's branch is reset to before the commit (which stays reachable by its
    SHA) unless ``keep``, which leaves it on the branch, as a regression lands.
    """
    import subprocess
    from pathlib import Path

    path, cls = TARGETS[name]
    module = Path(clone) / path
    module.write_text(module.read_text() + _INJECTION.format(cls=cls, factor=float(factor)))

    def git(*args):
        return subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True, text=True).stdout.strip()

    git("-c", "user.name=regression-power", "-c", "user.email=none@localhost", "commit", "-qam",
        f"inject a {factor}x slower {cls}.transform")
    sha = git("rev-parse", "HEAD")
    if not keep:
        git("reset", "-q", "--hard", "HEAD~1")
    return sha


def main(argv=None):
    """``python -m benchmarks._regression_injection CLONE MAP FACTOR``: commit a slowdown on
    the clone's branch (for rehearsing a bisection) and print the commit."""
    import sys

    clone, name, factor = (argv or sys.argv[1:])[:3]
    print(inject(clone, name, float(factor), keep=True))


if __name__ == "__main__":
    main()
