"""Reach attacks, judged by effect: every way a program might get from torch or numpy to the
standard library or a file reader, each used to read a canary secret, create a file or run a
command. Through a real pool, none may succeed: the secret is in no Trace, no file appears,
every run ends within its time limit + 1 s, and the pool still works after each.

The attacks are made from three lists (what is reached, how it is reached, what it is used
for), so that a new route or module adds a whole row of attacks."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.trace import Trace

SECRET = "reach-canary-4b7c1e"
LIMITS = Limits(time_s=2.0)
# What a module would be used for once reached: read the canary, make a file, run a command.
USES = {
    "os": ".popen('cat {canary}').read()", "sys": ".modules['os'].popen('cat {canary}').read()",
    "subprocess": ".check_output(['cat', '{canary}'])",
    "builtins": ".open('{canary}').read()", "io": ".open('{canary}').read()",
    "pathlib": ".Path('{canary}').read_text()", "shutil": ".copy('{canary}', '{made}')",
    "importlib": ".import_module('os').popen('cat {canary}').read()",
    "ctypes": ".CDLL(None).system(b'cat {canary} > {made}')",
    "socket": ".socket().connect(('127.0.0.1', 9))", "pickle": ".loads(b'cos\\nsystem\\n.')",
    "marshal": ".loads(b'')", "runpy": ".run_path('{canary}')",
    "inspect": ".getsource(inspect)", "gc": ".get_objects()[0]",
    "signal": ".pthread_kill(1, 9)", "threading": ".Thread(target=print).start()",
    "multiprocessing": ".Process(target=print).start()",
    "tempfile": ".NamedTemporaryFile(dir='{folder}', delete=False)",
    "glob": ".glob('{folder}/*')", "code": ".interact()", "posix": ".system('cat {canary}')",
    "resource": ".setrlimit(0, (-1, -1))", "mmap": ".mmap(-1, 10)",
    "types": ".FunctionType", "functools": ".partial(open, '{canary}')()",
    "operator": ".attrgetter('os')(torch)", "warnings": ".sys.modules['os']",
    "platform": ".popen('cat {canary}').read()", "sysconfig": ".get_paths()",
    "linecache": ".getline('{canary}', 1)", "tokenize": ".open('{canary}').read()",
}
# How a module might be reached from the sandbox's names.
ROUTES = {
    "attribute": "torch.{module}{use}",
    "numpy-attribute": "np.{module}{use}",
    "getattr": "getattr(torch, '{module}'){use}",
    "from-import": "from torch import {module}\n{module}{use}",
    "format-walk": "print('{{0.{module}.{first}}}'.format(torch))",
}
# File readers and writers inside torch and numpy themselves, by three routes each.
FILE_CALLS = {
    "torch.load": "torch.load('{canary}')", "torch.save": "torch.save(1, '{made}')",
    "from_file": "torch.from_file('{canary}', size=4)", "np.load": "np.load('{canary}')",
    "np.fromfile": "np.fromfile('{canary}')", "np.loadtxt": "np.loadtxt('{canary}')",
    "np.genfromtxt": "np.genfromtxt('{canary}')", "np.memmap": "np.memmap('{canary}')",
    "np.save": "np.save('{made}', np.ones(1))", "tofile": "np.ones(1).tofile('{made}')",
    "PyTorchFileReader": "torch.PyTorchFileReader('{canary}')",
    "PyTorchFileWriter": "torch.PyTorchFileWriter('{made}')",
    "np.info": "np.info('os', toplevel='os')", "np.test": "np.test('os')",
}


def attacks(canary: Path, made: Path) -> dict[str, str]:
    """Every attack's program, by name."""
    fill = {"canary": canary, "made": made, "folder": canary.parent}
    found = {}
    for module, use in USES.items():
        first = use[1:].split("(")[0].split("[")[0]  # the function the use calls
        for route, shape in ROUTES.items():
            found[f"{route}-{module}"] = shape.format(module=module, use=use.format(**fill),
                                                      first=first)
    for name, call in FILE_CALLS.items():
        code = call.format(**fill)
        owner, _, rest = code.partition(".")
        function, arguments = rest.split("(", 1)
        found[f"call-{name}"] = code
        found[f"getattr-{name}"] = f"getattr({owner}, '{function}')({arguments}"
        found[f"lambda-{name}"] = f"(lambda: {code})()"
    return found


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    folder = tmp_path_factory.mktemp("reach")
    canary, made = folder / "secret.txt", folder / "made"
    canary.write_text(SECRET)
    canary.chmod(0o644)
    folder.chmod(0o755)
    pool = WorkerPool(size=2, limits=LIMITS, kept_bytes=0)

    def run(item: tuple[str, str]) -> tuple[str, tuple[Trace, float]]:
        started = time.monotonic()
        trace = pool.run(item[1])
        return item[0], (trace, time.monotonic() - started)

    try:
        with ThreadPoolExecutor(max_workers=4) as threads:
            results = dict(threads.map(run, attacks(canary, made).items()))
        results["after"] = (pool.run("print(6 * 7)"), 0.0)
        yield folder, results
    finally:
        pool.close()


def test_there_are_enough_attacks() -> None:
    assert len(attacks(Path("/c"), Path("/m"))) >= 150


def test_no_reach_attack_has_any_effect(outcomes: tuple[Path, dict]) -> None:
    folder, results = outcomes
    after, _ = results.pop("after")
    assert after.ok and after.stdout == "42\n"
    leaked = [name for name, (trace, _) in results.items() if SECRET in trace.to_json()]
    assert leaked == []
    assert sorted(os.listdir(folder)) == ["secret.txt"]  # nothing made, nothing removed
    assert (folder / "secret.txt").read_text() == SECRET
    slow = {name: round(seconds, 2) for name, (_, seconds) in results.items()
            if seconds > LIMITS.time_s + 1.5}
    assert slow == {}
    succeeded = [name for name, (trace, _) in results.items() if trace.ok]
    assert succeeded == [], json.dumps({n: results[n][0].stdout[:80] for n in succeeded})
