"""`python -m explorer run FILE.py [FILE.py ...] [--device cpu|cuda] [--json]`.

Runs each file (`-` reads standard input) in order through one warm worker pool and prints
its Trace: one JSON object per line with `--json`, a short readable summary without.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from explorer.limits import Limits
from explorer.trace import Trace
from explorer.worker import WorkerPool


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    limits = Limits(time_s=args.time_limit, memory_mb=args.memory_limit)
    pool = WorkerPool(size=1, limits=limits)
    failed = False
    try:
        for name in args.files:
            code = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
            trace = pool.run(code, device=args.device, seed=args.seed)
            failed |= not trace.ok
            print(trace.to_json() if args.json else summary(name, trace), flush=True)
    finally:
        pool.close()
    return 1 if failed else 0


def summary(name: str, trace: Trace) -> str:
    """A few readable lines: printed output, variables, and the error if any."""
    lines = [f"== {name} ({trace.elapsed_ms:.0f} ms, {trace.device})"]
    if trace.stdout:
        lines.append(trace.stdout.rstrip("\n"))
    for var, info in trace.variables.items():
        if info["kind"] == "tensor":
            lines.append(f"  {var}: tensor{info['shape']} {info['dtype']} {info['device']} "
                         f"requires_grad={info['requires_grad']} grad_fn={info['grad_fn']}")
        else:
            lines.append(f"  {var}: {info['kind']} {info.get('values')!r:.60}")
    if trace.error:
        error = trace.error
        lines.append(f"error on line {error['line']}: {error['type']}: {error['message']}")
        if error["explanation"]:
            lines.append(f"  {error['explanation']['en']}")
    lines.extend(f"note: {note}" for note in trace.notes)
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run programs and print their traces")
    run.add_argument("files", nargs="+", help="Python files; - reads standard input")
    run.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    run.add_argument("--json", action="store_true", help="one JSON Trace per line")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    run.add_argument("--time-limit", type=float, default=Limits.time_s, help="seconds per run")
    run.add_argument("--memory-limit", type=int, default=Limits.memory_mb, help="MiB per run")
    return parser
