"""Which benchmark modules a ``-b`` pattern can select, decided from their source without importing them.

``benchmarks.compare`` runs this tree's benchmark definitions against two
commits' ``kernelmaps``. A module that cannot be imported at an older commit
(it uses a class that did not exist yet) is reported as absent there, but a
module the pattern cannot select should not be imported at all. A compare key
is ``module.Class.method(params)``:

* the name part, ``module.Class.method``, comes from this tree's source and is
  the same at both commits: :func:`benchmark_names` reads it from the module's
  syntax tree (its classes, their ``time_``/``track_`` methods, inherited ones
  included);
* the parameter part depends on the commit (the benchmarks generate their
  parameters from its registry) and is unknown until the module is imported.

:func:`could_select` is conservative: it answers False only when no parameter
part can make the pattern match. It relies on one property of the parameter
part, :func:`parameters_follow_the_contract`, which the tests check for every
key of this suite: it never contains the markers of a name, ``bench_``,
``time_`` or ``track_`` (in any case), nor a word character followed by ``(``.
Then, in every branch of the pattern (its top-level ``|`` alternatives), a
match

* of an escaped ``\\(`` right after a literal word character is the key's first
  ``(``, so what precedes it in the branch matches the end of the name part;
* of a literal run with a marker before any ``(`` lies inside the name part;
* of an anchored branch (``^`` or ``\\A``) starts with the name part.

So ``-b time_transform`` or ``-b "time_transform\\('rff'"`` imports only the
modules with a ``time_transform`` method. A pattern with none of these pieces
(``tensor_sketch``, which a parameter can contain) may select every module,
and every module is imported. A pattern in verbose mode is not analysed.
"""

import ast
import re
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PREFIXES = {"time": "time_", "track": "track_"}
_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")
_WORD = re.compile(r"\w")
#: Text that only a key's name part holds: a module's, a timing's or a track's prefix.
_NAME_MARKER = re.compile("bench_|time_|track_", re.IGNORECASE)


def module_names(bench_dir=BENCH_DIR):
    """The benchmark modules of the suite, ``bench_*``, sorted."""
    return sorted(path.stem for path in Path(bench_dir).glob("bench_*.py"))


def parameters_follow_the_contract(key):
    """Whether the parameter part of ``key`` keeps the contract :func:`could_select` relies on."""
    params = key[key.index("("):]
    return not _NAME_MARKER.search(params) and not re.search(r"\w\(", params)


def _statements(body):
    """The statements of a body and of the ``if``/``try``/``with`` blocks in it, not of nested definitions."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _statements(getattr(node, field, []))


def _makes_classes_at_run_time(tree):
    """A class statement inside a function, or a call of ``type`` with three arguments or of
    ``globals``: classes a reading of the module's top level cannot name."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(inner, ast.ClassDef) for inner in ast.walk(node)):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                (node.func.id == "type" and len(node.args) == 3) or node.func.id in ("globals", "setattr")):
            return True
    return False


class _Module:
    """One module of the suite as its syntax tree tells: its classes, their own attributes and bases,
    and the names it imports from the ``benchmarks`` package."""

    def __init__(self, name, bench_dir):
        tree = ast.parse((Path(bench_dir) / f"{name}.py").read_text())
        self.dynamic = _makes_classes_at_run_time(tree)
        self.classes, self.aliases, self.imports = {}, {}, {}
        for node in _statements(tree.body):
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                self.aliases.update({target.id: node.value.id for target in node.targets
                                     if isinstance(target, ast.Name)})
            elif isinstance(node, ast.ImportFrom) and (node.level == 1 or node.module == "benchmarks"
                                                       or (node.module or "").startswith("benchmarks.")):
                source = (node.module or "").removeprefix("benchmarks").lstrip(".")
                for alias in node.names:
                    # (None, module) for ``from . import common``, (module, name) for a name in it
                    self.imports[alias.asname or alias.name] = (source or None, alias.name)


class _Reader:
    """Method names of the suite's classes, bases resolved across its modules (each parsed once)."""

    def __init__(self, bench_dir):
        self.bench_dir, self.modules = Path(bench_dir), {}

    def module(self, name):
        if name not in self.modules:
            self.modules[name] = _Module(name, self.bench_dir)
        return self.modules[name]

    def _base(self, module, node):
        """``(module name, class name)`` of a base class expression; None for ``object``; raises
        LookupError when the source does not say."""
        if isinstance(node, ast.Name):
            target = self.module(module)
            if node.id in target.classes or node.id in target.aliases:
                return module, node.id
            if node.id in target.imports and target.imports[node.id][0] is not None:
                return target.imports[node.id]
            if node.id == "object":
                return None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            imported = self.module(module).imports.get(node.value.id)
            if imported and imported[0] is None:
                return imported[1], node.attr
        raise LookupError(ast.unparse(node))

    def attributes(self, module, class_name, depth=0):
        """The attribute names a class defines or inherits within the suite."""
        target = self.module(module)
        class_name = target.aliases.get(class_name, class_name)
        node = target.classes.get(class_name)
        if node is None or node.decorator_list or node.keywords or depth > 20:
            raise LookupError(f"{module}.{class_name}")
        names = set()
        for statement in _statements(node.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(statement.name)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
        for base in node.bases:
            resolved = self._base(module, base)
            if resolved is not None:
                names |= self.attributes(*resolved, depth + 1)
        return names


def benchmark_names(module, kinds=("time", "track"), bench_dir=BENCH_DIR, reader=None):
    """The ``module.Class.method`` names of ``module``'s benchmarks of ``kinds``, read from its
    source; None when the source leaves them open (classes made at run time, a base class
    from outside the suite, a decorated class)."""
    reader = reader or _Reader(bench_dir)
    target = reader.module(module)
    if target.dynamic:
        return None
    prefixes = tuple(PREFIXES[kind] for kind in kinds)
    names = set()
    for class_name in [*target.classes, *target.aliases]:
        if class_name.startswith("_") or target.aliases.get(class_name, class_name) not in target.classes:
            continue
        try:
            methods = reader.attributes(module, class_name)
        except LookupError:
            return None
        names.update(f"{module}.{class_name}.{method}" for method in methods if method.startswith(prefixes))
    return sorted(names)


def _atom_end(branch, start):
    """The end of the atom at ``start``: an escape, a character class, a group or one character."""
    if branch[start] == "\\":
        return start + 2
    if branch[start] == "[":
        i = start + 1 + (branch[start + 1:start + 2] == "^")
        i += branch[i:i + 1] == "]"  # a leading ] is a member
        while branch[i] != "]":
            i += 2 if branch[i] == "\\" else 1
        return i + 1
    if branch[start] == "(":
        if branch.startswith("(?#", start):
            return branch.index(")", start) + 1
        depth, i = 0, start
        while True:
            if i > start and (branch[i] in "\\[" or branch.startswith("(?#", i)):
                i = _atom_end(branch, i)
                continue
            depth += {"(": 1, ")": -1}.get(branch[i], 0)
            i += 1
            if depth == 0:
                return i
    return start + 1


def _split(pattern, separator=None):
    """The top-level atoms of ``pattern`` as ``(text, literal character or None)``, each with its
    quantifier (a quantified atom has no literal character); with ``separator='|'``, the
    top-level branches instead."""
    branches, atoms, i = [], [], 0
    while i < len(pattern):
        end = _atom_end(pattern, i)
        text = pattern[i:end]
        if text == "|" and separator:
            branches.append("".join(t for t, _ in atoms))
            atoms, i = [], end
            continue
        if text.startswith("\\"):
            literal = text[1] if not text[1].isalnum() else None
        else:
            literal = text if len(text) == 1 and text not in ".^$" else None
        quantifier = _QUANTIFIER.match(pattern, end)
        if quantifier and quantifier.group():
            text, literal, end = text + quantifier.group(), None, quantifier.end()
        atoms.append((text, literal))
        i = end
    return branches + ["".join(t for t, _ in atoms)] if separator else atoms


def _runs(atoms):
    """``(index of its first atom, text)`` of each maximal run of literal characters."""
    runs, start = [], None
    for index, (_, literal) in enumerate([*atoms, ("", None)]):
        if literal is not None and start is None:
            start = index
        elif literal is None and start is not None:
            runs.append((start, "".join(lit for _, lit in atoms[start:index])))
            start = None
    return runs


def _branch_tests(branch, flags):
    """The tests a name part must pass for the branch to match a key with that name."""
    atoms, tests = _split(branch), []
    for k in range(1, len(atoms)):
        if atoms[k][1] == "(" and atoms[k - 1][1] is not None and _WORD.fullmatch(atoms[k - 1][1]):
            prefix = "".join(text for text, _ in atoms[:k])
            if "(?=" not in prefix and "(?!" not in prefix:
                tests.append(re.compile(prefix + r"\Z", flags).search)
            break
    for _, run in _runs(atoms):
        name_part = run.split("(")[0]
        if _NAME_MARKER.search(name_part):
            end = r"\Z" if "(" in run else ""
            tests.append(re.compile(re.escape(name_part) + end, flags).search)
    if atoms and atoms[0][0] in ("^", "\\A") and len(atoms) > 1:
        leading = next((run for start, run in _runs(atoms) if start == 1), "")
        if leading:
            tests.append(lambda name, leading=leading: re.compile(re.escape(leading[:len(name) + 1]), flags).match(
                name + "("))
    return tests


def could_select(pattern, names):
    """Whether ``pattern`` can match a key whose name part is one of ``names`` (False only when no
    parameter part that keeps the contract lets it)."""
    compiled = re.compile(pattern)
    if compiled.flags & re.VERBOSE:
        return bool(names)
    flags = compiled.flags & (re.IGNORECASE | re.ASCII)
    try:
        branch_tests = [_branch_tests(branch, flags) for branch in _split(pattern, "|")]
    except (IndexError, ValueError, re.error):  # a construct the reading above does not know: no test
        return bool(names)
    return any(all(test(name) for test in tests) for name in names for tests in branch_tests)


def selected_modules(pattern, kinds=("time", "track"), bench_dir=BENCH_DIR):
    """The benchmark modules ``pattern`` can select: those with a benchmark of ``kinds`` whose name
    part could match, and those whose names the source leaves open."""
    reader = _Reader(bench_dir)
    chosen = []
    for module in module_names(bench_dir):
        names = benchmark_names(module, kinds, bench_dir, reader)
        if names is None or could_select(pattern, names):
            chosen.append(module)
    return chosen
