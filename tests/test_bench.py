"""The benchmark's smoke run: `python -m explorer.bench --quick` prints every section, its
tables hold numbers, and each target has a verdict. Timings are not judged here. And the
calibration relay's parser (explorer.bench.relay) on frames websockets itself makes."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.client import ClientProtocol
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from explorer.bench.relay import ASKED, FINISHED, Messages, Note, noting
from explorer.content.examples import EXAMPLES
from tests.conftest import ROOT

SECTIONS = ("== 1. Pipeline vs bare torchviz", "== 2. Seed programs", "== 3. The animation",
            "== 4. Memory over", "== 5. Where the time goes ==", "== 6. The wall's cost",
            "== 7. Famous lessons", "== 8. The Training page",
            "== 9. The server's patterns", "== 10. Steps inside loops", "== Targets ==")
NINJA = ("chunked", "cross_entropy", "batchnorm", "training")  # the four exercises' files
NUMBER = re.compile(r"[+-]?\d+(\.\d+)?x?")


@pytest.fixture(scope="module")
def report() -> str:
    done = subprocess.run([sys.executable, "-m", "explorer.bench", "--quick"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    return done.stdout


def _tables(report: str) -> dict[str, list[dict[str, str]]]:
    """Section title -> the rows of its table, as column -> cell; a section's second table
    and later under its title with " #2"..."""
    tables = {}
    for section in report.split("\n== ")[1:]:
        lines = section.splitlines()
        rules = [i for i, line in enumerate(lines) if line.startswith("---")]
        for number, rule in enumerate(rules, 1):  # none in the targets
            header = lines[rule - 1].split()
            end = next((i for i in range(rule + 1, len(lines)) if not lines[i].strip()),
                       len(lines))
            rows = [line.split() for line in lines[rule + 1:end]]
            assert all(len(row) == len(header) for row in rows), section
            title = lines[0] if number == 1 else f"{lines[0]} #{number}"
            tables[title] = [dict(zip(header, row, strict=True)) for row in rows]
    return tables


def test_every_section_and_target_is_printed(report: str) -> None:
    for title in SECTIONS:
        assert title in report, title
    verdicts = report.split("== Targets ==")[1].strip().splitlines()
    assert len(verdicts) == 11
    assert all(line.startswith(("PASS  ", "MISS  ")) for line in verdicts)
    loops = next(line for line in verdicts if "training loops (seeds" in line)
    assert loops.count("(500 calls)") == 2  # the seed's two 500-iteration loops, timed
    lines = next(line for line in verdicts if "with line steps <=" in line)
    assert "sequential" in lines and "dataloader" in lines
    assert next(line for line in verdicts if "record with line steps" in line).startswith(
        "PASS  ")  # whatever the machine: the record fits, thinned where it must be


def test_the_tables_hold_numbers(report: str) -> None:
    tables = _tables(report)
    pipeline = next(rows for title, rows in tables.items() if title.startswith("1."))
    assert [row["ops"] for row in pipeline] == ["10", "50"]
    for row in pipeline:
        assert int(row["nodes"]) == 2 * int(row["ops"]) + 5  # muls, saved tensors, x, sum, loss
        assert NUMBER.fullmatch(row["torchviz"]) or row["torchviz"] == "RecursionError"
        for column in ("raised", "drawing", "draw_ratio", "run", "view", "layout", "figure",
                       "total", "ratio"):
            assert NUMBER.fullmatch(row[column]), (column, row)
        assert float(row["total"]) > 0
    seeds = next(rows for title, rows in tables.items() if title.startswith("2."))
    assert [row["example"] for row in seeds] == [e.key for e in EXAMPLES]
    for row in seeds:
        assert all(NUMBER.fullmatch(row[c]) for c in ("runs", "p50", "p95", "max", "bare"))
    lessons = next(rows for title, rows in tables.items() if title.startswith("7."))
    assert [row["lesson"] for row in lessons] == [f"backprop_ninja_ex{k}_{name}" for k, name in
                                                  enumerate(NINJA, 1)]
    for row in lessons:  # each sends its whole record, a fraction of what every step whole was
        assert (row["thinned"], row["error"]) == ("no", "-"), row
        assert float(row["sent_MiB"]) < float(row["whole_MiB"]), row
        assert all(NUMBER.fullmatch(row[c]) for c in ("statements", "run", "bare")), row
    loops, rounds, records = [rows for title, rows in tables.items() if title.startswith("10.")]
    assert [row["loop"] for row in loops] == [row["loop"] for row in rounds] == [
        "sequential", "dataloader"]
    for row in loops:  # twenty backward calls each, three ways; inner steps only when on
        assert row["iterations"] == "20" and row["error"] == "-", row
        assert int(row["steps"]) > int(row["steps_off"]) > 0, row
        assert all(NUMBER.fullmatch(cell) for cell in list(row.values())[1:-1]), row
    for row in rounds:  # the same loops four times as long: a round's cost apart
        assert row["long_iterations"] == "80", row
        assert all(NUMBER.fullmatch(cell) for cell in list(row.values())[1:]), row
    assert [row["record"] for row in records] == ["sequential", "dataloader", "large"]
    for row in records:  # each under the cap; the large one thinned, its note read
        assert row["under_cap"] == "yes" and row["error"] == "-", row
        assert float(row["sent_MiB"]) <= 16 and (row["levels"] != "0") is (
            float(row["whole_MiB"]) > 16), row
    for title, rows in tables.items():
        if title.startswith(("3.", "4.", "5.")):
            assert rows and all(NUMBER.fullmatch(cell) for row in rows
                                for cell in list(row.values())[1:]), title


def test_the_seed_programs_are_timed_against_a_revision_turn_about() -> None:
    before = _worktrees()
    done = _bench("--seeds", "--quick", "--against", "HEAD", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("HEAD…") == done.stderr.count("now…") == 2  # two rounds each
    lines = done.stdout.splitlines()
    assert lines[0].startswith("== Seed programs against HEAD")
    assert lines[1].split() == ["example", "now_ms", "HEAD_ms", "ratio"]
    rows = [line.split() for line in lines[3:lines.index("")]]
    assert [row[0] for row in rows] == [e.key for e in EXAMPLES]
    assert all(NUMBER.fullmatch(cell) and float(cell) > 0 for row in rows for cell in row[1:])
    verdict = re.fullmatch(r"(PASS|MISS)  seed programs' p50 within 10% of HEAD's: "
                           r"(\d+\.\d) ms against (\d+\.\d) ms \((\d\.\d\d)×\)", lines[-1])
    assert verdict is not None, lines[-1]
    now, then, ratio = map(float, verdict.groups()[1:])
    assert ratio == pytest.approx(now / then, abs=0.01 + 0.1 / then)  # its numbers, rounded
    if ratio != 1.1:  # else rounding may hide which side of the target it is
        assert (verdict[1] == "PASS") is (ratio < 1.1)
    assert _worktrees() == before  # the revision's checkout is gone


@pytest.mark.parametrize(("asked", "said"), [
    (["--seeds"], "--seeds compares with a revision: give --against REVISION"),
    (["--seeds", "--against", "no-such-revision"],
     "cannot check out 'no-such-revision': fatal: invalid reference: no-such-revision")])
def test_a_comparison_without_a_revision_to_check_out_says_so(asked: list[str],
                                                               said: str) -> None:
    before = _worktrees()
    done = _bench(*asked, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == f"python -m explorer.bench: error: {said}"
    assert _worktrees() == before  # nothing is left checked out


def test_a_revision_too_old_to_time_the_seed_programs_says_so() -> None:
    first = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()[0]
    before = _worktrees()
    done = _bench("--seeds", "--quick", "--against", first, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith(  # the revision's own words follow
        f"python -m explorer.bench: error: the seed programs cannot be timed in {first}: "
        "ModuleNotFoundError: No module named 'explorer.")
    assert _worktrees() == before


def _bench(*asked: str, timeout: int) -> subprocess.CompletedProcess[str]:
    """`python -m explorer.bench` with `asked`, as a person runs it here."""
    return subprocess.run([sys.executable, "-m", "explorer.bench", *asked], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _worktrees() -> list[str]:
    """The checkouts git knows of beside this one."""
    return subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.splitlines()


@pytest.mark.browser
def test_the_browser_mode_times_both_programs_in_chromium_against_a_revision() -> None:
    before = _worktrees()
    done = _bench("--browser", "--quick", "--against", "HEAD", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    graph, replay = done.stdout.split("\n\n")
    assert graph.startswith("== Browser: Run -> graph visible on the Graph page")
    assert replay.startswith("== Browser: Run -> replay picture on the Backward page")
    for section, chain in ((graph, "chain of 1000"), (replay, "chain of 100")):
        lines = section.splitlines()
        rows = lines[next(i for i, line in enumerate(lines) if line.startswith("---")) + 1:]
        assert [(row.split("(")[0].strip(), row.split()[-5]) for row in rows] == [
            ("autograd-basics", "now"), ("autograd-basics", "HEAD"), (chain, "now"),
            (chain, "HEAD")]
        for row in rows:  # four times in ms after the program and the app
            assert all(NUMBER.fullmatch(cell) and float(cell) > 0
                       for cell in row.split()[-4:]), row
    assert _worktrees() == before  # the revision's checkout is gone


CLASSROOM = re.compile(r"classroom: scenario=(lesson|distinct|hosted) sessions=\d+ runs=\d+ "
                       r"p50_s=\d+\.\d{3} p95_s=\d+\.\d{3} errors=\d+ cache_hits=\d+")


def test_the_classroom_mode_prints_every_scenario_and_the_knee() -> None:
    done = subprocess.run([sys.executable, "-m", "explorer.bench", "--classroom", "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("classroom:")]
    scenarios = [CLASSROOM.fullmatch(line) for line in lines[:3]]
    assert [m.group(1) for m in scenarios if m] == ["lesson", "distinct", "hosted"]
    assert all(" errors=0 " in line and " runs=0 " not in line for line in lines[:3]), lines
    # The lesson's program was run once before the class (warming the app): every learner's
    # run is then kept from it; programs that differ are run each time.
    hits = {m.group(1): int(m.group(0).rsplit("=", 1)[1]) for m in scenarios if m}
    runs = {m.group(1): int(re.search(r"runs=(\d+)", m.group(0)).group(1))
            for m in scenarios if m}
    assert hits["lesson"] == runs["lesson"] and hits["distinct"] == 0, lines
    # This client against Chromium on the same work: on the wire, in the tab, drawn.
    assert re.fullmatch(r"classroom: calibration sessions=4 protocol_p50_s=\d+\.\d{3} "
                        r"browser_p50_s=\d+\.\d{3} ratio=\d+\.\d\d browser_tab_p50_s=\d+\.\d{3} "
                        r"browser_drawn_p50_s=\d+\.\d{3}", lines[3]), lines
    assert re.fullmatch(r"classroom: knee_sessions=(\d+|>\d+)", lines[-1])


def _opened() -> tuple[ClientProtocol, ServerProtocol, bytes, bytes]:
    """A websocket client and server after their handshake, and the heads each sent."""
    client, server = ClientProtocol(parse_uri("ws://127.0.0.1/_stcore/stream")), ServerProtocol()
    client.send_request(client.connect())
    asked = b"".join(client.data_to_send())
    server.receive_data(asked)
    [request] = server.events_received()
    server.send_response(server.accept(request))
    answered = b"".join(server.data_to_send())
    client.receive_data(answered)
    assert client.events_received()[0].status_code == 101
    return client, server, asked, answered


def test_the_relay_reads_a_message_sent_in_frames_once_whole_at_its_last_byte() -> None:
    # A run asked for, its 70,000 bytes in three masked frames (each of the three length
    # encodings) with a ping between them, fed to the relay's parser one byte at a time.
    client, _, asked, _ = _opened()
    run = BackMsg()
    run.rerun_script.query_string = "q" * 70_000
    payload = run.SerializeToString()
    client.send_binary(payload[:100], fin=False)
    client.send_ping(b"still there?")
    client.send_continuation(payload[100:400], fin=False)
    client.send_continuation(payload[400:], fin=True)
    stream = asked + b"".join(client.data_to_send())
    seen: list[tuple[bytes, float]] = []
    notes: list[Note] = []
    raw = Messages(lambda message, at: seen.append((message, at)), from_client=True)
    noted = Messages(noting(BackMsg, "rerun_script", notes, ASKED), from_client=True)
    for at, byte in enumerate(stream):
        raw.feed(bytes([byte]), at)
        noted.feed(bytes([byte]), at)
    assert seen == [(payload, len(stream) - 1)]
    assert notes == [(len(stream) - 1, ASKED)]


def test_the_relay_notes_only_a_finished_script_from_the_server() -> None:
    # The server's response head and frames (unmasked) in chunks as they may come: the head
    # with another message, then a script finished in two frames around a pong, then another.
    _, server, _, answered = _opened()
    finished = ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY).SerializeToString()
    server.send_binary(ForwardMsg(hash="before").SerializeToString())
    server.send_binary(finished[:1], fin=False)
    server.send_pong(b"")
    server.send_continuation(finished[1:], fin=True)
    server.send_binary(ForwardMsg(hash="after").SerializeToString())
    first, *rest = server.data_to_send()
    notes: list[Note] = []
    messages = Messages(noting(ForwardMsg, "script_finished", notes, FINISHED),
                        from_client=False)
    for at, chunk in enumerate([answered + first, *rest]):
        messages.feed(chunk, at)
    assert len(rest) == 4 and notes == [(3, FINISHED)]
