"""The escape corpus (`tests/escapes.py`) through a real worker pool.

Every attack must end with its expected error and a readable message, leave no trace outside
its own process (the canary file is never created, the secret never comes back, no process is
left behind) and leave the pool working for the next run. Every benign program must still
print exactly what it prints in plain PyTorch. The runs go two at a time through the `pool`
fixture, each followed by a probe run, bombs under `BOMB_LIMITS`.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from explorer.content.examples import EXAMPLES, Example
from explorer.pool.worker import WorkerPool
from explorer.record.execute import execute
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.notes import english
from tests.escapes import ATTACKS, BENIGN, BOMB_LIMITS, PRINT_BOMB, Attack, Benign, Bomb
from tests.test_worker import run_processes, wait_until

PROBE = "print(6 * 7)"
Outcomes = dict[str, tuple[Trace, Trace]]  # id -> (the run's trace, the probe's after it)
CATEGORIES = {"dunder", "frame", "format", "reflection", "class", "files", "native", "process",
              "network", "input", "memory", "time", "number", "loop", "output", "recursion"}


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A directory with a secret file; `canary` inside it must never come to exist."""
    folder = tmp_path_factory.mktemp("canary")
    token = secrets.token_hex(16)
    (folder / "secret").write_text(token)
    yield folder, token


def fill(code: str, folder: Path) -> str:
    return code.replace("CANARY", str(folder / "canary")).replace("SECRET", str(folder / "secret"))


def run_all(pool: WorkerPool, jobs: list[tuple[str, str, Limits | None]]) -> Outcomes:
    """Run `(id, code, limits)` jobs four at a time (the pool lets two in), each followed by
    the probe program in the same pool."""
    def one(job: tuple[str, str, Limits | None]) -> tuple[str, tuple[Trace, Trace]]:
        key, code, limits = job
        return key, (pool.run(code, limits=limits), pool.run(PROBE))

    with ThreadPoolExecutor(max_workers=4) as threads:
        return dict(threads.map(one, jobs))


@pytest.fixture(scope="module")
def outcomes(pool: WorkerPool, canary: tuple[Path, str]) -> Outcomes:
    folder, _ = canary
    jobs = [(a.id, fill(a.code, folder), BOMB_LIMITS if isinstance(a, Bomb) else None)
            for a in ATTACKS] + [("print-bomb", PRINT_BOMB, BOMB_LIMITS)]
    return run_all(pool, jobs)


@pytest.fixture(scope="module")
def benign_outcomes(pool: WorkerPool) -> Outcomes:
    jobs = [(b.id, b.code, None) for b in BENIGN] + [(e.key, e.code, None) for e in EXAMPLES]
    return run_all(pool, jobs)


def test_the_corpus_is_large_and_well_formed() -> None:
    ids = [a.id for a in ATTACKS]
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    assert {a.category for a in ATTACKS} == CATEGORIES
    assert len(BENIGN) + len(EXAMPLES) >= 40


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: f"{a.category}-{a.id}")
def test_attack_is_stopped(attack: Attack, outcomes: Outcomes) -> None:
    trace, probe = outcomes[attack.id]
    assert trace.ok is False and trace.error is not None
    assert trace.error.type == attack.kind, trace.error
    assert attack.message in trace.error.message
    assert probe.ok and probe.stdout == "42\n", "the next run in the pool must work"


def test_printing_gigabytes_is_cut_at_the_cap(outcomes: Outcomes) -> None:
    trace, probe = outcomes["print-bomb"]
    assert trace.ok, trace.error
    assert len(trace.stdout) == BOMB_LIMITS.output_chars
    assert any("characters of output were dropped" in note for note in english(trace.notes))
    assert probe.ok


def test_no_attack_had_a_side_effect(pool: WorkerPool, canary: tuple[Path, str],
                                     outcomes: Outcomes) -> None:
    folder, token = canary
    assert [p.name for p in folder.iterdir()] == ["secret"]  # nothing created (`touch CANARY`)
    assert (folder / "secret").read_text() == token  # nor changed
    leaked = [key for key, (trace, _) in outcomes.items() if token in trace.to_json()]
    assert leaked == []
    # No process outlived its run: only the zygote is left, and no child's private directory.
    assert wait_until(lambda: run_processes(pool) == [])
    assert [p.name for p in Path(pool._dir.name).glob("run-*")] == []


def test_a_refusal_cannot_be_caught() -> None:
    trace = execute("try:\n    torch.os\nexcept Exception:\n    print('caught')\nprint('on')\n")
    assert trace.error is not None and trace.error.type == "Refused"
    assert (trace.error.line, trace.stdout) == (2, "")


@pytest.mark.parametrize("program", BENIGN, ids=lambda b: b.id)
def test_benign_program_works(program: Benign, benign_outcomes: Outcomes) -> None:
    trace, _ = benign_outcomes[program.id]
    assert trace.ok, trace.error
    assert trace.stdout == program.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_seed_example_works(example: Example, benign_outcomes: Outcomes) -> None:
    trace, _ = benign_outcomes[example.key]
    if example.error is None:
        assert trace.ok, trace.error
    else:  # the lesson is this error
        assert trace.error is not None
        assert example.error in trace.error.message
