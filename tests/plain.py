"""Plain PyTorch, the reference the app is compared with: programs run with plain `exec` in
one subprocess that imports torch once, each in a fresh fork, seeded the way the app seeds a
run and with the worker's thread count (MKL's float sums depend on it).

With `observe`, a run also reports its variables at the end (tensors, arrays and numbers as
flat lists of floats, complex numbers as real/imaginary pairs, with each tensor's `.grad`) and,
after every top-level `torch.autograd.backward` call (`Tensor.backward` goes through it), the
`.grad` of every leaf tensor variable (the calling function's too, named as the app names them):
what the app's recording must agree with.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 300
FLAT = 2_000  # leading values kept per tensor: more than any block a Trace keeps

# Reads a JSON list of programs on stdin; argv: thread count, file name, "observe" or "",
# values kept per tensor.
# Prints a JSON list of {returncode, stdout, stderr, result} in the same order (with
# `observe`, result also holds `variables` and `calls`).
DRIVER = textwrap.dedent(
    """
    import json, os, random, sys, tempfile, traceback, warnings
    import numpy, torch
    THREADS, FILENAME, OBSERVE = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "observe"
    FLAT = int(sys.argv[4])
    # As the app's worker does: one thread until the fork (a fork must not inherit a started
    # OpenMP pool), and first-call set-up done once (an optimizer's first step imports
    # TorchDynamo), not in every fork.
    torch.set_num_threads(1)
    x = torch.ones(2, 2, requires_grad=True)
    (x * x + 1).mean().backward()
    torch.optim.SGD([x], lr=0.1).step()
    torch.func.vmap(torch.func.grad(lambda t: t.sin().sum()))(x.detach())
    del x

    def flat(x):
        try:
            if isinstance(x, torch.Tensor):
                t = x.detach().cpu()
                t = t.to_dense() if t.layout != torch.strided else t
                t = t.dequantize() if t.is_quantized else t
                t = t.resolve_conj().resolve_neg().reshape(-1)[:FLAT]
                t = torch.view_as_real(t).reshape(-1) if t.is_complex() else t
                return t.double().tolist()
            a = numpy.asarray(x).reshape(-1)[:FLAT]
            if a.dtype.kind == "c":
                a = numpy.stack([a.real, a.imag], -1).reshape(-1)
            return a.astype(numpy.float64).tolist() if a.dtype.kind in "biufc" else None
        except Exception:
            return None

    def describe(value):
        if isinstance(value, torch.Tensor):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                grad = value.grad
            return {"kind": "tensor", "values": flat(value),
                    "grad": None if grad is None else flat(grad)}
        if isinstance(value, numpy.ndarray):
            return {"kind": "ndarray", "values": flat(value)}
        if isinstance(value, (bool, int, float, complex, numpy.number, numpy.bool_)):
            return {"kind": "number", "values": flat(value)}
        if isinstance(value, str):
            return {"kind": "str", "values": value}
        return None

    def leaf_grads(namespace):
        return {name: flat(value.grad) if value.grad is not None else None
                for name, value in list(namespace.items())
                if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad}

    def in_scope(namespace, frame):
        # The calling function's variables too, named as a step there names them: `f.x`
        # where a global is `x`.
        while frame is not None and frame.f_code.co_filename != FILENAME:
            frame = frame.f_back
        if frame is None or frame.f_code.co_name == "<module>":
            return namespace
        local = {n: v for n, v in frame.f_locals.items() if not n.startswith("__")}
        return namespace | {n if n not in namespace else f"{frame.f_code.co_name}.{n}": v
                            for n, v in local.items()}

    def observe(namespace, calls):
        real, depth = torch.autograd.backward, [0]

        def backward(*args, **kwargs):
            depth[0] += 1
            try:
                return real(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    calls.append(leaf_grads(in_scope(namespace, sys._getframe(1))))
        torch.autograd.backward = backward

    def run(source, out, err):
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdout = open(1, "w", closefd=False)
        torch.set_num_threads(THREADS)
        torch.manual_seed(0)
        numpy.random.seed(0)
        random.seed(0)
        namespace, calls = {"__name__": "__main__"}, []
        if OBSERVE:
            observe(namespace, calls)
        result = {"ok": True, "type": None, "message": None, "line": None}
        try:
            exec(compile(source, FILENAME, "exec"), namespace)
        except Exception as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            lines = [frame.lineno for frame in frames if frame.filename == FILENAME]
            result = {"ok": False, "type": type(exc).__name__, "message": str(exc),
                      "line": lines[-1] if lines else None}
        sys.stdout.flush()
        if OBSERVE:
            described = {name: describe(value) for name, value in namespace.items()
                         if not name.startswith("__")}
            result["variables"] = {k: v for k, v in described.items() if v is not None}
            result["calls"] = calls
        return result

    runs = []
    for source in json.load(sys.stdin):
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \\
                tempfile.TemporaryFile("w+") as res:
            pid = os.fork()
            if pid == 0:
                res.write(json.dumps(run(source, out, err)))
                res.flush()
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            out.seek(0), err.seek(0), res.seek(0)
            text = res.read()
            runs.append({"returncode": os.waitstatus_to_exitcode(status), "stdout": out.read(),
                         "stderr": err.read(), "result": json.loads(text) if text else None})
    json.dump(runs, sys.__stdout__)
    """
)


@dataclass(frozen=True)
class PlainRun:
    """What one program did under plain PyTorch in a fresh process."""

    returncode: int
    stdout: str
    stderr: str
    result: dict[str, Any] | None
    """The driver's report: ok, type, message, line (and, observed, variables and calls);
    None if the driver never got there."""


def run_plain(codes: list[str], threads: int, *, filename: str = "<example>",
              observe: bool = False) -> list[PlainRun]:
    """Run each program with plain `exec` under `filename`, each in a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(threads), filename, "observe" if observe else "",
         str(FLAT)], input=json.dumps(codes), capture_output=True, text=True, encoding="utf-8",
        env=dict(os.environ, PYTHONIOENCODING="utf-8"), cwd=ROOT, timeout=TIMEOUT_S, check=True)
    return [PlainRun(**run) for run in json.loads(proc.stdout)]


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_addresses(stdout: str) -> str:
    """Blank out object addresses (`<AddBackward0 object at 0x7f...>` differs per process)."""
    return _ADDRESS.sub(" at 0x?", stdout)
