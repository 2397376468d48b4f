"""The package's layout: imports go one way, only explorer.ui imports Streamlit, and the
benchmark and test harness (explorer.bench) stay out of what `pip install .` ships.

Layers, highest first; a module imports from its own layer and the ones below it only:

    explorer.ui        the Streamlit widgets and pages' parts
    explorer (top)     the library's API (`explorer.run`, `explorer.show`) and command line
    explorer.views     what pages show, built from a Trace: pure, no Streamlit
    explorer.pool      the server's side of a run: the worker pool, kept results
    explorer.record    inside the box, imports PyTorch: execution, snapshot, graph, hooks
    explorer.trace     the Trace both sides share: its definition, the wire, its check
    explorer.serve     hosted mode's settings, the rate limit, the launch command
    explorer.safety    the allow-list and guards, the run's limits, the operating system's wall
    explorer.content   lessons, programs, interface text, rules, error explanations (data)

explorer.record is the run's side of the wall, with the guards it installs
(explorer.safety.guards): only they import PyTorch, and nothing outside explorer.record imports
them (the pool starts the zygote by its module's name), so the server never holds PyTorch
(SECURITY.md).

explorer.bench (the benchmark, the harness that serves the app for tests, the websocket
client) may import anything; nothing in the package imports it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "explorer"
LAYERS = ("content", "safety", "serve", "trace", "record", "pool", "views", "top", "ui")
BOX = "record"  # imported by nothing outside it
BOX_MODULES = ("explorer.record", "explorer.safety.guards")  # the run's side: imports PyTorch
OUTSIDE = "bench"  # run from a checkout, never imported by the package
MODULES = sorted(path for path in PACKAGE.rglob("*.py")  # content's folders hold programs: data
                 if path.relative_to(PACKAGE).parts[:1] != ("content",)
                 or len(path.relative_to(PACKAGE).parts) == 2)


def layer(module: str) -> str:
    """The layer of a dotted module name inside the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in (*LAYERS, OUTSIDE) else "top"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def exists(module: str) -> bool:
    """Whether a dotted name inside the package is a module or a package of it."""
    place = ROOT.joinpath(*module.split("."))
    return place.with_suffix(".py").is_file() or (place / "__init__.py").is_file()


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file, at any depth (functions, TYPE_CHECKING)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import"
            if node.module == "explorer":  # `from explorer import views`: the subpackages
                yield from ((node.lineno, f"explorer.{alias.name}") for alias in node.names)
            else:
                yield node.lineno, node.module or ""


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_go_one_way(path: Path) -> None:
    source = layer(module_name(path))
    wrong = []
    for line, target in imports(path):
        if target != "explorer" and not target.startswith("explorer."):
            continue
        to = layer(target)
        if not exists(target):
            wrong.append(f"line {line}: {target} (no such module)")
        elif to == OUTSIDE and source != OUTSIDE:
            wrong.append(f"line {line}: {target} (explorer.bench is not part of the package)")
        elif target.startswith(BOX_MODULES) and source not in (BOX, OUTSIDE):
            wrong.append(f"line {line}: {target} (only explorer.record imports the run's side)")
        elif source != OUTSIDE and to != OUTSIDE and LAYERS.index(to) > LAYERS.index(source):
            wrong.append(f"line {line}: {target} ({source} may not import {to})")
    assert not wrong, wrong


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_the_ui_and_the_harness_import_streamlit(path: Path) -> None:
    if layer(module_name(path)) in ("ui", OUTSIDE):
        return
    found = [line for line, target in imports(path) if target.split(".")[0] == "streamlit"]
    assert not found, f"streamlit imported on lines {found}"


def test_every_layer_is_a_package_and_the_top_holds_only_the_api() -> None:
    for name in (*LAYERS, OUTSIDE):
        if name != "top":
            assert (PACKAGE / name / "__init__.py").is_file(), name
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {name for name in (*LAYERS, OUTSIDE) if name != "top"}
    top = {p.name for p in PACKAGE.glob("*.py")}
    assert top == {"__init__.py", "__main__.py", "cli.py"}


def test_pip_install_ships_every_layer_but_not_the_bench() -> None:
    with open(ROOT / "pyproject.toml", "rb") as file:
        setuptools = tomllib.load(file)["tool"]["setuptools"]
    packages = {module_name(p) for p in PACKAGE.rglob("__init__.py")
                if "__pycache__" not in p.parts}
    assert set(setuptools["packages"]) == packages - {"explorer.bench"}
    assert not any("bench" in pattern for patterns in setuptools["package-data"].values()
                   for pattern in patterns)


SERVER = [module_name(path) for path in MODULES
          if not module_name(path).startswith((*BOX_MODULES, f"explorer.{OUTSIDE}"))
          and path.name != "__main__.py"]


def test_the_server_side_never_imports_pytorch() -> None:
    """Every module outside the run's side, imported in a fresh interpreter, loads no part of
    PyTorch (SECURITY.md: the server holds none of the state a program could reach)."""
    script = (f"import importlib, sys\n"
              f"for name in {SERVER!r}: importlib.import_module(name)\n"
              f"loaded = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
              f"print(len(loaded), loaded[:5])\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.split(" ", 1)[0] == "0", done.stdout
    assert len(SERVER) > 40  # the pool, the Trace, the views, the ui, the API
