"""The docstrings' examples run, and every public name has one.

Each module of the package (and of ``kernelmaps.datasets``) gets a test that runs
its doctests, each docstring's from an empty namespace, as a user pastes it. The
examples print shapes and rounded numbers only, so they hold on any machine.
"""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import kernelmaps
import kernelmaps.datasets

OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _module_names():
    names = {"kernelmaps", "kernelmaps.datasets"}
    for package in (kernelmaps, kernelmaps.datasets):
        # walk_packages reaches subpackages such as kernelmaps._solvers
        names.update(info.name for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."))
    return sorted(names)


@pytest.mark.parametrize("module_name", _module_names())
def test_doctests_pass_from_an_empty_namespace(module_name):
    """Each docstring's examples run as pasted alone into a new interpreter: they
    import what they use (an empty ``globs``, not the module's namespace)."""
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, globs={}, optionflags=OPTIONS, verbose=False, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {module_name}"


def _public_objects():
    """Every registered estimator class, and every class and function in ``kernelmaps.__all__``."""
    objects = {cls.__name__: cls for cls in kernelmaps.ALGORITHMS.values()}
    for name in kernelmaps.__all__:
        value = getattr(kernelmaps, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            objects[name] = value
    return objects


def _has_examples(obj):
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
            return any(later.lstrip().startswith(">>>") for later in lines[i + 2:])
    return False


def test_every_public_class_and_function_has_an_example():
    missing = sorted(name for name, obj in _public_objects().items() if not _has_examples(obj))
    assert not missing, f"no Examples section with a >>> line in the docstring of: {', '.join(missing)}"
