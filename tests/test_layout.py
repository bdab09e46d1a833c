"""The layout of ``algorithms/``: what a module may import from another, and file sizes.

Two rules hold for every module of the package, read with ``ast``:

1. A ``_``-prefixed name is private to its module: no other module imports it
   (``from m import _name``) or reads it as an attribute of the imported module
   (``m._name``). What several modules share is a plain name in a private module.
2. No re-export outside ``__init__.py``: each name is imported from the module
   that defines it (a ``def``, ``class`` or assignment at module level), never
   from a module that itself imported it.

Importing a submodule (``from ._core import validation``) imports no name and is
always allowed.
"""

import ast
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The package and the folders setuptools maps to it (pyproject.toml).
PACKAGE_DIRS = {"kernelmaps": ROOT / "algorithms", "kernelmaps.datasets": ROOT / "datasets"}
#: At most this many private modules stay at the top level of algorithms/.
MAX_TOP_LEVEL_PRIVATE = 8
MAX_LINES = 450


def module_tree(package_dirs):
    """``{dotted module name: path}`` of every module under the given package folders."""
    modules = {}
    for package, folder in package_dirs.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package] + parts)] = path
    return modules


def _top_level_statements(body):
    """Module-level statements, looking inside ``if``/``try``/``with``/``for`` blocks but not into
    functions or classes."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _top_level_statements(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                yield from _top_level_statements(handler.body)


def _target_names(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


class Module:
    """What one module defines and imports at module level."""

    def __init__(self, name, path, is_package):
        self.name, self.path, self.is_package = name, path, is_package
        self.tree = ast.parse(path.read_text(), filename=str(path))
        self.defined, self.imported = set(), {}
        for node in _top_level_statements(self.tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self.defined.update(_target_names(target))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                self.defined.update(_target_names(node.target))
            elif isinstance(node, (ast.For, ast.With)):
                targets = [node.target] if isinstance(node, ast.For) else [i.optional_vars for i in node.items]
                for target in targets:
                    if target is not None:
                        self.defined.update(_target_names(target))
            elif isinstance(node, ast.ImportFrom):
                source = self.resolve(node)
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (source, alias.name)

    def resolve(self, node):
        """The absolute module an ``ImportFrom`` reads."""
        if node.level == 0:
            return node.module
        package = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        return ".".join(package + ([node.module] if node.module else []))


def _origin(modules, source, name, seen=()):
    """The module that defines ``name`` as read from ``source``, following re-exports."""
    module = modules.get(source)
    if module is None or name in module.defined or (source, name) in seen:
        return source
    if name in module.imported:
        return _origin(modules, *module.imported[name], seen=seen + ((source, name),))
    return source


def _import_findings(module, modules, aliases):
    """``(line, message)`` for each breach in ``from m import name``; records module aliases."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.name in modules and a.asname})
        if not isinstance(node, ast.ImportFrom) or module.resolve(node) not in modules:
            continue  # not an import from the package
        source = module.resolve(node)
        for alias in node.names:
            imported = alias.name
            if imported == "*":
                yield node.lineno, f"imports * from {source}"
            elif f"{source}.{imported}" in modules:
                aliases[alias.asname or imported] = f"{source}.{imported}"  # a submodule, not a name
            elif imported.startswith("_") and not imported.startswith("__"):
                yield node.lineno, f"imports the private name {imported} from {source}"
            elif (origin := _origin(modules, source, imported)) != source:
                yield node.lineno, (f"imports {imported} from {source}, which re-exports it: import it from "
                                    f"{origin}, which defines it")
            elif imported not in modules[source].defined:
                yield node.lineno, f"imports {imported} from {source}, which does not define it at module level"


def _attribute_findings(module, modules, aliases):
    """``(line, message)`` for each breach in reading ``m.name`` of an imported module ``m``."""
    for node in ast.walk(module.tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases):
            continue
        source, attribute = aliases[node.value.id], node.attr
        if f"{source}.{attribute}" in modules:
            continue
        if attribute.startswith("_") and not attribute.startswith("__"):
            yield node.lineno, f"reads the private name {attribute} of {source}"
        elif (origin := _origin(modules, source, attribute)) != source:
            yield node.lineno, (f"reads {attribute} of {source}, which re-exports it: read it from {origin}, "
                                "which defines it")


def layout_violations(package_dirs, checked_package="kernelmaps", skip=("kernelmaps.datasets",)):
    """Every breach of the two rules in the modules of ``checked_package`` (not under ``skip``).

    Parameters
    ----------
    package_dirs : dict of str to Path
        Package name -> its folder, for every package whose modules may be imported.
    checked_package : str
        The modules checked are this package's.
    skip : tuple of str
        Subpackages not checked (their modules are still known as import sources).

    Returns
    -------
    list of str
        ``path:line: message`` lines, by file and line, each message naming the name.
    """
    paths = module_tree(package_dirs)
    modules = {name: Module(name, path, path.name == "__init__.py") for name, path in paths.items()}
    found = []
    for name, module in sorted(modules.items()):
        inside = name == checked_package or name.startswith(checked_package + ".")
        if not inside or any(name == s or name.startswith(s + ".") for s in skip):
            continue
        where = module.path.relative_to(ROOT) if module.path.is_relative_to(ROOT) else module.path
        aliases = {}
        findings = list(_import_findings(module, modules, aliases))  # first: it records the module aliases
        findings += _attribute_findings(module, modules, aliases)
        found += [f"{where}:{line}: {message}" for line, message in sorted(findings)]
    return found


def test_algorithms_keep_the_two_import_rules():
    found = layout_violations(PACKAGE_DIRS)
    assert not found, "\n".join(found)


def _write(root, files):
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_planted_violation_is_named_by_file_line_and_name(tmp_path):
    _write(tmp_path / "pkg", {
        "__init__.py": "from ._helpers import shared\n",
        "_helpers.py": "def shared():\n    pass\n\n\ndef _private():\n    pass\n",
        "_relay.py": "from ._helpers import shared  # noqa: F401\n",
        "_sub/__init__.py": "",
        "_sub/deep.py": "from .. import _helpers\n\nVALUE = _helpers.shared\n",
        "good.py": "import numpy as np\n\nfrom ._helpers import shared\nfrom ._sub import deep\n",
        "bad.py": ("from ._helpers import _private\n"
                   "from ._relay import shared\n"
                   "from . import _helpers\n"
                   "\n"
                   "\n"
                   "def f():\n"
                   "    from ._sub.deep import VALUE, MISSING\n"
                   "    return _helpers._private, VALUE\n"),
    })
    bad = Path("pkg") / "bad.py"
    found = [line.replace(str(tmp_path) + "/", "") for line in layout_violations({"pkg": tmp_path / "pkg"}, "pkg")]
    assert found == [
        f"{bad}:1: imports the private name _private from pkg._helpers",
        f"{bad}:2: imports shared from pkg._relay, which re-exports it: import it from pkg._helpers, which defines it",
        f"{bad}:7: imports MISSING from pkg._sub.deep, which does not define it at module level",
        f"{bad}:8: reads the private name _private of pkg._helpers",
    ]


def test_a_violation_planted_in_a_copy_of_the_package_fails(tmp_path):
    copy = tmp_path / "algorithms"
    shutil.copytree(PACKAGE_DIRS["kernelmaps"], copy, ignore=shutil.ignore_patterns("__pycache__"))
    rff = copy / "rff.py"
    lines = rff.read_text().splitlines(keepends=True)
    first_import = next(i for i, line in enumerate(lines) if line.startswith("from ."))
    # base imports block_rows from parallel for its own use: importing it from base is a re-export
    lines.insert(first_import, "from ._core.base import block_rows, _PRIVATE_PLANTED\n")
    rff.write_text("".join(lines))
    found = layout_violations({"kernelmaps": copy, "kernelmaps.datasets": PACKAGE_DIRS["kernelmaps.datasets"]})
    where = f"{rff}:{first_import + 1}:"
    assert found == [
        f"{where} imports block_rows from kernelmaps._core.base, which re-exports it: import it from "
        "kernelmaps._core.parallel, which defines it",
        f"{where} imports the private name _PRIVATE_PLANTED from kernelmaps._core.base",
    ]


def test_few_private_modules_stay_at_the_top_level():
    private = sorted(p.name for p in PACKAGE_DIRS["kernelmaps"].glob("_*.py") if p.name != "__init__.py")
    assert len(private) <= MAX_TOP_LEVEL_PRIVATE, private


def test_private_subpackages_hold_only_a_docstring_in_their_init():
    for init in sorted(PACKAGE_DIRS["kernelmaps"].glob("_*/__init__.py")):
        body = ast.parse(init.read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), (
            f"{init.relative_to(ROOT)} holds more than its docstring")


@pytest.mark.parametrize("folder", ["algorithms", "benchmarks", "datasets"])
def test_no_file_is_over_the_line_limit(folder):
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / folder).rglob("*.py"))
            if "__pycache__" not in p.parts and (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"
