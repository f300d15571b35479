"""The package's layers: imports point one way (down), counting imports inside functions too.

A module may import modules of its own layer or of a lower one. The layers, lowest first:

    0  errors, _vocab (the project's words), _io (atomic writes, safe names, the cache root),
       measures, schema (how the YAML files' fields are declared and checked)
    1  spaces (search distributions), params (declarations), papers (published values), semisupervised
    2  algorithms (the registry), solvers/, baselines/   the estimators and their compiled cores
    3  estimators                                 every estimator, the complete registry
    4  data/                                      the dataset registry, fetch, parse + cache, preprocess
    5  config/                                    YAML -> validated ExperimentConfig
    6  results/                                   results.csv and run.json: schema, writing, reading
    7  experiment/, figures/                      orchestration; figures from results only
    8  report, reproduce, publish, benchmarks/,   benchmarks: declared comparisons through the experiment loop;
       api                                        api: the Python entry point (run a config on arrays)
    9  cli/                                       the only place that imports Typer

A process a module starts on a kernelbench module (`python -m kernelbench.X`) counts as an import of
that module: the child runs the module's code for the parent, so the arrow is the same.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kernelbench"
LAYERS = {
    "kernelbench": 0, "kernelbench.errors": 0, "kernelbench._vocab": 0, "kernelbench._io": 0, "kernelbench.measures": 0,
    "kernelbench.schema": 0,
    "kernelbench.spaces": 1, "kernelbench.params": 1, "kernelbench.papers": 1, "kernelbench.semisupervised": 1,
    "kernelbench.algorithms": 2, "kernelbench.solvers": 2, "kernelbench.baselines": 2,
    "kernelbench.estimators": 3,
    "kernelbench.data": 4,
    "kernelbench.config": 5,
    "kernelbench.results": 6,
    "kernelbench.experiment": 7, "kernelbench.figures": 7,
    "kernelbench.report": 8, "kernelbench.reproduce": 8, "kernelbench.publish": 8,
    "kernelbench.benchmarks": 8, "kernelbench.api": 8,
    "kernelbench.cli": 9,
}
# Imports of kernelbench modules inside a function, each for a heavy dependency: the CLI loads a
# command's layers when the command runs (`--help` and `datasets` answer at once), and a tune
# draws its search (matplotlib) only at the end.
LAZY = {"kernelbench.cli.app", "kernelbench.cli.bench", "kernelbench.cli.demo", "kernelbench.cli.summaries", "kernelbench.cli.sweep",
        "kernelbench.experiment.tuning"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()
COMPILED = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in PACKAGE.rglob("*.pyx")}


def _imports(name: str, path: Path):
    """(imported kernelbench module, line, inside a function) of every import statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function = {id(node) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for node in ast.walk(f)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES or f"{base}.{a.name}" in COMPILED
                       else base for a in node.names]
        else:
            continue
        for target in targets:
            if target in COMPILED or not target.startswith("kernelbench"):
                continue
            while target not in MODULES:
                target = target.rpartition(".")[0]
            if target != name:
                yield target, node.lineno, id(node) in in_function


# what a module starts a process with: a module that imports none of these starts none
PROCESS_STARTERS = ("subprocess", "multiprocessing")
_RUN_MODULE = re.compile(r"(?:^|\s)-m\s+(kernelbench(?:\.\w+)*)")


def process_starts(source: str):
    """(kernelbench module, line) of every `-m kernelbench.X` in a module that can start a process: a
    "-m" element followed by "kernelbench..." in a list or tuple (an argument list), or the words
    `-m kernelbench...` in one string (a shell command); docstrings, which only describe, are left out."""
    tree = ast.parse(source)
    imported = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    if not imported & set(PROCESS_STARTERS):
        return
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            items = node.elts
            for flag, target in zip(items, items[1:]):
                if (isinstance(flag, ast.Constant) and flag.value == "-m" and isinstance(target, ast.Constant)
                        and isinstance(target.value, str) and target.value.startswith("kernelbench")):
                    yield target.value, target.lineno
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for match in _RUN_MODULE.finditer(node.value):
                yield match.group(1), node.lineno


def _layer(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in LAYERS:
            return LAYERS[".".join(parts[:i])]
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def test_every_import_points_down_or_sideways():
    upward = [f"{name}:{line} imports {target} (layer {_layer(target)} > {_layer(name)})"
              for name, path in MODULES.items() for target, line, _ in _imports(name, path)
              if _layer(target) > _layer(name)]
    assert not upward, "\n".join(upward)


def test_every_process_start_points_down_or_sideways():
    """A module that runs another as its own process (`python -m kernelbench.X`) depends on it as on
    an import: a sweep point's process is the experiment layer's (experiment.point), not the CLI's."""
    found = [(name, target, line) for name, path in MODULES.items()
             for target, line in process_starts(path.read_text(encoding="utf-8"))]
    assert any(name == "kernelbench.experiment.sweep" for name, _, _ in found)     # the finder sees the sweep's
    upward = [f"{name}:{line} starts {target} (layer {_layer(target)} > {_layer(name)})"
              for name, target, line in found if _layer(target) > _layer(name)]
    assert not upward, "\n".join(upward)


def test_a_process_start_is_found_in_an_argument_list_or_a_shell_string_not_a_docstring():
    source = ('"""Starts `python -m kernelbench.cli run`."""\nimport subprocess\nimport sys\n'
              'args = [sys.executable, "-m", "kernelbench.cli", "run"]\n'
              'subprocess.run("python -m kernelbench.report --check", shell=True)\n')
    assert sorted(process_starts(source)) == [("kernelbench.cli", 4), ("kernelbench.report", 5)]
    printed = 'import shlex\nwords = [sys.executable, "-m", "kernelbench.cli"]\n'   # a command to print
    assert list(process_starts(printed)) == []


def test_there_is_no_import_cycle():
    edges = {name: {t for t, _, _ in _imports(name, path)} for name, path in MODULES.items()}
    # importing a.b.c runs a.b's __init__ first: an edge to every enclosing package of the target
    for name, targets in edges.items():
        for target in list(targets):
            parts = target.split(".")
            targets |= {".".join(parts[:i]) for i in range(2, len(parts))
                        if not name.startswith(".".join(parts[:i]) + ".") and ".".join(parts[:i]) != name}
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_kernelbench_is_imported_inside_functions_only_for_heavy_layers():
    inside = sorted({name for name, path in MODULES.items() for _, _, lazy in _imports(name, path) if lazy})
    assert set(inside) <= LAZY, f"kernelbench imports inside functions in {set(inside) - LAZY}: import at the top"


# modules that read results: a solver's compiled core or private helper is no business of theirs
RESULT_READERS = ("kernelbench.figures", "kernelbench.report", "kernelbench.reproduce", "kernelbench.publish")


def test_figures_and_the_report_import_no_private_solver_module():
    """They may call a solver's public functions (e.g. solvers.merging), never `solvers._bsgd` and
    the like: a private module's names change with the solver, unseen by its public interface."""
    private = []
    for name, path in MODULES.items():
        if not any(name == r or name.startswith(r + ".") for r in RESULT_READERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                dotted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):        # `from kernelbench.solvers import _bsgd` too
                dotted = [f"{node.module or ''}.{a.name}" for a in node.names]
            else:
                continue
            private += [f"{name}:{node.lineno} imports {d}" for d in dotted
                        if re.search(r"(^|\.)(solvers|baselines)\._", d)]
    assert not private, "\n".join(private)


def test_only_the_cli_imports_typer():
    users = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "typer" for n in names):
                users.append(name)
    assert users and all(u.startswith("kernelbench.cli") for u in users), users


def test_the_layer_map_names_real_modules():
    assert all(any(m == key or m.startswith(key + ".") for m in MODULES) for key in LAYERS), \
        [k for k in LAYERS if not any(m == k or m.startswith(k + ".") for m in MODULES)]


def test_no_private_name_is_imported_from_another_module():
    """A name with a leading underscore is its module's own: another module that needs it needs a
    public name (compiled cores, `_dsg` and the like, are modules, not names)."""
    found = []
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            if not base.startswith("kernelbench"):
                continue
            for alias in node.names:
                target = f"{base}.{alias.name}"
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and target not in MODULES and target not in COMPILED:
                    found.append(f"{name}:{node.lineno} imports {target}")
    assert not found, found
