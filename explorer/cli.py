"""`python -m explorer run FILE.py [FILE.py ...]` or `python -m explorer export FILE.py ...`.

`run` runs each file (`-` reads standard input) in order through one warm worker pool and
prints its Trace: one JSON object per line with `--json`, a short readable summary without.
`export` runs one file the same way and writes what it made: the graph after the last step
(`--dot`, `--svg`, `--png`), the Trace (`--json`) and the backward animation as a page that
plays offline (`--html`). Each file is written whole or not at all; one that cannot be made
(no graph, no backward pass) is not written, and the exit status is 1.
`lessons check DIR` reads a folder of lessons and runs every program they open, printing
each problem as `file:line: reason`; the exit status is 1 if there is one.
`schema` prints the JSON Schema of a Trace's public form, with the format's version.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from explorer.content.i18n import LANGUAGES, text
from explorer.content.lesson_check import check
from explorer.pool.worker import WorkerPool, default_pool
from explorer.safety import box
from explorer.safety.limits import Limits
from explorer.serve.hosting import settings
from explorer.trace import Trace
from explorer.trace.notes import english
from explorer.trace.schema import json_schema
from explorer.views.export import (
    ExportError,
    animation_html,
    graph_dot,
    graph_png,
    graph_svg,
    trace_json,
)
from explorer.views.render import LayoutError

OUTPUTS = ("json", "dot", "svg", "png", "html")  # the order `export` writes them in


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "export":
        return export(args)
    if args.command == "lessons":
        return check_lessons(Path(args.folder), args.lang)
    if args.command == "schema":
        print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
        return 0
    pool = _pool(args)
    failed = False
    try:
        for name in args.files:
            code = _read(args.command_parser, name)
            trace = pool.run(code, device=args.device, seed=args.seed)
            failed |= not trace.ok
            print(trace.to_json() if args.json else summary(name, trace), flush=True)
    finally:
        pool.close()
    return 1 if failed else 0


def export(args: argparse.Namespace) -> int:
    """Run one program and write the files asked for; 1 if it failed or a file was not made."""
    parser = args.command_parser
    outputs = {kind: Path(getattr(args, kind)) for kind in OUTPUTS if getattr(args, kind)}
    if not outputs:
        parser.error("give at least one output: --html, --svg, --png, --dot or --json")
    _check_outputs(parser, args.file, list(outputs.values()))
    code = _read(parser, args.file)
    pool = _pool(args)
    try:
        trace = pool.run(code, device=args.device, seed=args.seed)
    finally:
        pool.close()
    print(summary(args.file, trace), flush=True)
    name = None if args.file == "-" else Path(args.file).name
    makers: dict[str, Callable[[Trace], str | bytes]] = {
        "json": trace_json, "dot": graph_dot, "svg": graph_svg, "png": graph_png,
        "html": lambda t: animation_html(t, name=name)}
    failed = not trace.ok
    for kind, path in outputs.items():
        try:
            write_whole(path, makers[kind](trace))
        except (ExportError, LayoutError, OSError) as error:
            print(f"{path} not written: {error}", file=sys.stderr, flush=True)
            failed = True
        else:
            print(f"wrote {path}", flush=True)
    return 1 if failed else 0


def check_lessons(folder: Path, lang: str) -> int:
    """Check the lessons of `folder` in the app's own pool; 1 if anything is wrong."""
    host = settings()
    report = check(folder, lambda code: default_pool().run(code, limits=host.training_limits))
    for problem in report.problems:
        print(problem.message(lang), flush=True)
    counts = {"lessons": report.lessons, "programs": report.programs}
    if report.problems:
        print(text("lessons_check_failed", lang, count=len(report.problems), **counts))
        return 1
    print(text("lessons_checked", lang, **counts))
    return 0


def write_whole(path: Path, data: str | bytes) -> None:
    """Write `path` whole or not at all: a temporary file beside it, renamed over it."""
    raw = data.encode() if isinstance(data, str) else data
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(raw)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as a plain `open` would have made it
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _check_outputs(parser: argparse.ArgumentParser, source: str, paths: list[Path]) -> None:
    """Refuse, before anything runs, outputs that could not be written."""
    seen = {Path(source).resolve()} if source != "-" else set()
    for path in paths:
        if path.resolve() in seen:
            parser.error(f"{path}: named twice, or the program itself")
        seen.add(path.resolve())
        folder = path.parent
        if path.is_dir():
            parser.error(f"{path}: is a directory")
        if not folder.is_dir():
            parser.error(f"cannot write {path}: {folder} is not a directory")
        if not os.access(folder, os.W_OK | os.X_OK):
            parser.error(f"cannot write {path}: {folder} is not writable")


def _read(parser: argparse.ArgumentParser, name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as error:
        parser.error(f"cannot read {name}: {error.strerror or error}")
    except UnicodeDecodeError:
        parser.error(f"cannot read {name}: not UTF-8 text")


def _pool(args: argparse.Namespace) -> WorkerPool:
    """The pool the command runs in; where AppArmor keeps it from walling runs off, what to
    run about it is said first."""
    if box.stopped_by_apparmor():
        print(box.apparmor_advice(), file=sys.stderr, flush=True)
    return WorkerPool(size=1, limits=Limits(time_s=args.time_limit, memory_mb=args.memory_limit))


def summary(name: str, trace: Trace) -> str:
    """A few readable lines: printed output, variables, and the error if any."""
    lines = [f"== {name} ({trace.elapsed_ms:.0f} ms, {trace.device})"]
    if trace.stdout:
        lines.append(trace.stdout.rstrip("\n"))
    for var, info in trace.variables.items():
        if info.kind == "tensor":
            lines.append(f"  {var}: tensor{info.shape} {info.dtype} {info.device} "
                         f"requires_grad={info.requires_grad} grad_fn={info.grad_fn}")
        else:
            lines.append(f"  {var}: {info.kind} {info.values!r:.60}")
    if trace.error:
        error = trace.error
        lines.append(f"error on line {error.line}: {error.type}: {error.message}")
        if error.explanation:
            lines.append(f"  {error.explanation.en}")
    lines.extend(f"note: {note}" for note in english(trace.notes))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run programs and print their traces")
    run.add_argument("files", nargs="+", help="Python files; - reads standard input")
    run.add_argument("--json", action="store_true", help="one JSON Trace per line")
    export = commands.add_parser(
        "export", help="run a program and write its graph, trace or backward animation",
        description="Run a program and write what it made to files (at least one).")
    export.add_argument("file", help="a Python file; - reads standard input")
    export.add_argument("--html", metavar="OUT",
                        help="the backward animation, a page that plays offline")
    export.add_argument("--svg", metavar="OUT", help="the graph after the last step, as SVG")
    export.add_argument("--png", metavar="OUT", help="the same graph as PNG")
    export.add_argument("--dot", metavar="OUT", help="the same graph as graphviz DOT")
    export.add_argument("--json", metavar="OUT", help="the Trace (written even if it failed)")
    commands.add_parser("schema", help="print the JSON Schema of a Trace (--json's form)")
    lessons = commands.add_parser("lessons", help="work with a folder of lessons")
    actions = lessons.add_subparsers(dest="action", required=True)
    checking = actions.add_parser(
        "check", help="read every lesson and run every program it opens",
        description="Read every lesson of a folder and run every program it opens as the app "
                    "would; print each problem as file:line: reason.")
    checking.add_argument("folder", help="a folder of lessons, e.g. explorer/content/lessons")
    checking.add_argument("--lang", choices=LANGUAGES, default="en",
                          help="the language of the messages (default: en)")
    for command in (run, export):
        command.set_defaults(command_parser=command)
        command.add_argument("--device", default="cpu",
                             help="cpu, cuda or cuda:N (default: cpu)")
        command.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
        command.add_argument("--time-limit", type=float, default=Limits.time_s,
                             help="seconds per run")
        command.add_argument("--memory-limit", type=int, default=Limits.memory_mb,
                             help="MiB per run")
    return parser
