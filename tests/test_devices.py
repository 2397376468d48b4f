"""Devices: CPU and CUDA runs in real workers, the devices page's programs and what they show.

The same device code runs on both paths: on the GPU where this machine has one, on the CPU
otherwise. CUDA-only tests skip here with the reason "no CUDA device"; tests of what a
machine without a GPU tells a program skip on a machine with one. Nothing is mocked.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer.content.examples import by_key
from explorer.pool.worker import WorkerPool
from explorer.safety.limits import Limits
from explorer.trace import Trace
from explorer.trace.schema import Variable
from explorer.views import devices
from tests.conftest import ROOT

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device")
without_cuda = pytest.mark.skipif(CUDA, reason="checks a machine without CUDA; this one has it")
HERE = "cuda:0" if CUDA else "cpu"  # where the devices page measures on this machine
SEED_TABLE = next(ROOT.parent.glob("shared/seeds/002_*.txt"), None)  # the lesson notes
MOVE = """\
x = torch.randn(2, device="cpu")
device = torch.device("{device}")
y = torch.ones_like(x, device=device)
moved = x.to(device)
same_tensor = moved is x
z = moved + y
a = z.to("cpu", torch.double)
"""



@pytest.fixture(scope="module")
def probed(pool: WorkerPool) -> tuple[Trace, Trace]:
    first, second = devices.probe(pool.run, HERE)
    assert first.ok and second.ok, (first.error, second.error)
    return first, second


@pytest.fixture(scope="module")
def timing(pool: WorkerPool) -> Trace:
    trace = devices.measure(pool.run, HERE, pool.limits)
    assert trace.ok, trace.error
    return trace


# ---- CUDA safety of the workers -----------------------------------------------------------


def test_the_zygote_never_initialises_cuda(pool: WorkerPool) -> None:
    # A CPU run is a fork of the zygote that touches no GPU, so it reports the zygote's state,
    # also after a run that used the GPU (where there is one) in a sibling process.
    assert pool.run("x = torch.ones(2)", device=HERE).ok
    trace = pool.run("ok = torch.cuda.is_initialized()")
    assert trace.ok, trace.error
    assert trace.variables["ok"] == Variable(kind="bool", type="bool", values=False)


@needs_cuda
def test_a_cuda_run_puts_tensors_on_cuda_0(pool: WorkerPool) -> None:
    trace = pool.run("x = torch.ones(2)\ny = x * 2\nc = y.cpu()\n", device="cuda")
    assert trace.ok, trace.error
    assert trace.device == "cuda"
    assert [trace.variables[n].device for n in "xyc"] == ["cuda:0", "cuda:0", "cpu"]


@needs_cuda
def test_the_per_run_gpu_memory_cap_stops_a_large_allocation(pool: WorkerPool) -> None:
    code = "x = torch.empty(512 * 2**20, dtype=torch.uint8)\n"  # 512 MiB on the GPU
    capped = pool.run(code, device="cuda", limits=Limits(memory_mb=256))
    assert not capped.ok and capped.error.type == "MemoryLimit", capped.error
    assert "256 MiB" in capped.error.message
    roomy = pool.run(code, device="cuda", limits=Limits(memory_mb=1024))
    assert roomy.ok, roomy.error  # the cap, not the GPU's size, stopped the first run


# ---- the seeds' device code, as in PyTorch --------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
def test_the_seeds_device_code_behaves_as_in_pytorch(pool: WorkerPool, device: str) -> None:
    trace = pool.run(MOVE.format(device=device), device=device)
    assert trace.ok, trace.error
    found = trace.variables
    torch.manual_seed(0)  # every run is seeded with 0: the same code, in plain PyTorch here
    x = torch.randn(2, device="cpu")
    moved = x.to(torch.device(device))
    a = (moved + torch.ones_like(x, device=device)).to("cpu", torch.double)
    assert found["device"].values == device
    assert found["y"].device == found["z"].device == str(moved.device)
    assert found["same_tensor"].values is (moved is x)  # .to() is a no-op on its own device
    assert (found["a"].device, found["a"].dtype) == ("cpu", "torch.float64")
    assert found["a"].values == a.tolist()


@pytest.mark.parametrize("key", ["tensor-to-device", "tensor-to-device-recap",
                                 "tensor-to-device-notebook"])
def test_the_seeds_gpu_examples_take_the_branch_this_machine_allows(pool: WorkerPool,
                                                                     key: str) -> None:
    trace = pool.run(by_key(key).code, device=HERE)
    assert trace.ok, trace.error
    if CUDA:
        assert "device='cuda:0'" in trace.stdout and "dtype=torch.float64" in trace.stdout
    else:  # `if torch.cuda.is_available():` is False: the GPU lines are skipped
        assert trace.stdout == "" and "device" not in trace.variables


# ---- a program that asks for a GPU this machine does not have ------------------------------


@without_cuda
@pytest.mark.parametrize("code", ['x = torch.ones(2, device="cuda")\n',
                                  "x = torch.ones(2).cuda()\n"])
def test_asking_for_cuda_without_a_gpu_is_explained(pool: WorkerPool, code: str) -> None:
    trace = pool.run(code)
    assert not trace.ok and trace.error.line == 1
    assert trace.error.message == "Torch not compiled with CUDA enabled"
    assert "Traceback" not in trace.to_json() and 'File "' not in trace.to_json()
    explanation = trace.error.explanation
    assert "torch.cuda.is_available()" in explanation.en
    assert "torch.cuda.is_available()" in explanation.zh and "设备" in explanation.zh


@without_cuda
def test_the_playground_shows_a_cuda_request_as_an_explained_error() -> None:
    at = _at("en", "pages/1_Playground.py")
    at.session_state["playground.code"] = 'x = torch.ones(2, device="cuda")\n'
    at.button(key="playground.run").click().run()
    assert not at.exception
    assert at.error[0].value == "AssertionError on line 1"
    assert "torch.cuda.is_available()" in at.info[0].value
    shown = "\n".join(str(e.value) for kind in ("markdown", "code", "error", "info", "caption")
                      for e in getattr(at, kind))
    assert "Torch not compiled with CUDA enabled" in shown and "Traceback" not in shown


@without_cuda
def test_the_cli_reports_a_missing_gpu_in_error(tmp_path: Path) -> None:
    program = tmp_path / "on_gpu.py"
    program.write_text("x = torch.ones(2)\n")
    done = subprocess.run([sys.executable, "-m", "explorer", "run", str(program), "--device",
                           "cuda", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    trace = json.loads(done.stdout)
    assert trace["ok"] is False and trace["device"] == "cuda" and trace["variables"] == {}
    assert trace["error"]["type"] == "DeviceUnavailable"
    assert "no CUDA GPU" in trace["error"]["message"]
    assert "Traceback" not in done.stdout + done.stderr


# ---- what the devices page asks, and how it shows it ---------------------------------------


def test_cuda_devices_lists_what_pytorch_sees(pool: WorkerPool) -> None:
    expected = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    assert devices.cuda_devices(pool.run) == expected


def test_the_page_measures_on_the_chosen_gpu_else_the_first_else_the_cpu() -> None:
    assert devices.measuring_device("cuda:1", ["cuda:0", "cuda:1"]) == "cuda:1"
    assert devices.measuring_device("cpu", ["cuda:0", "cuda:1"]) == "cuda:0"
    assert devices.measuring_device("cpu", []) == "cpu"


def _values(rows: list[dict[str, str]]) -> dict[str, str]:
    """call → value, inline code marks removed (the first row of a call that repeats)."""
    found: dict[str, str] = {}
    for row in rows:
        call, _, value = row.values()
        found.setdefault(call.replace("`", ""), value.strip("`"))
    return found


def test_the_probe_fills_the_seeds_gpu_table_from_this_machine(
        pool: WorkerPool, probed: tuple[Trace, Trace]) -> None:
    if SEED_TABLE is None:
        pytest.skip("the lesson notes (../shared/seeds) are not beside this checkout")
    values = _values(devices.machine_rows(*probed, "en"))
    seed_calls = re.findall(r"^\| ((?:device = )?torch\.[^|]*?) +\|", SEED_TABLE.read_text(),
                            re.MULTILINE)
    assert len(seed_calls) == 8
    for call in seed_calls:
        assert call in values, call
    assert values["torch.__version__"] == torch.__version__
    assert values["torch.version.cuda"] == str(torch.version.cuda)
    assert values["torch.get_num_threads()"] == str(pool.threads)
    assert values["device = torch.device('cuda')"] == "cuda"
    assert values["torch.cuda.is_available()"] == str(CUDA)
    assert values["torch.cuda.device_count()"] == str(torch.cuda.device_count())
    assert values["torch.cuda.empty_cache()"] == "None"  # it ran, with or without a GPU
    assert values[devices.SEED_ROW.api] == ("True" if CUDA else "— (no GPU)")  # a GPU's seed
    name = values["torch.cuda.get_device_name(device)"]
    if CUDA:
        assert name == torch.cuda.get_device_name(0)
        assert values["torch.cuda.memory_allocated(device)"] == "4.0 MiB"
    else:
        assert name == values["torch.cuda.current_device()"] == "— (no GPU)"


def test_the_table_speaks_chinese(probed: tuple[Trace, Trace]) -> None:
    rows = devices.machine_rows(*probed, "zh")
    assert list(rows[0]) == ["调用", "说明", "本机的值"]
    assert rows[4]["说明"] == "查看是否有 GPU"  # the seed's own words
    assert all(re.search("[\u4e00-\u9fff]", row["说明"]) for row in rows)


def test_two_runs_draw_the_same_seeded_numbers(probed: tuple[Trace, Trace]) -> None:
    torch.manual_seed(0)  # what the explorer does before every run
    expected = "`tensor([" + ", ".join(f"{v:.4f}" for v in torch.rand(3, device=HERE)) + "])`"
    rows = devices.seed_rows(*probed, "en")
    assert [row["values"] for row in rows] == [expected] * 3
    assert devices.same_random_numbers(*probed) is True


def test_a_machine_without_a_gpu_says_why(probed: tuple[Trace, Trace]) -> None:
    reason = devices.no_gpu_reason(probed[0], "en")
    if CUDA:
        assert reason is None
    elif torch.version.cuda is None:
        assert reason == "This PyTorch is a CPU-only build (`torch.version.cuda` is None)."
    else:
        assert f"CUDA `{torch.version.cuda}`" in reason


def test_the_timing_program_times_cpu_and_gpu_where_present(timing: Trace) -> None:
    series = {line.key: line for line in devices.timing_series(timing)}
    gpu = ["gpu_matmul", "to_gpu", "to_cpu"] if CUDA else []
    assert sorted(series) == sorted(["cpu_matmul", "cpu_to_double", *gpu])
    assert all(line.sizes == list(devices.SIZES) for line in series.values())
    assert all(0 < ms < 2000 for line in series.values() for ms in line.ms)
    # 1024 × 1024 @ 1024 × 1024 is 2.1 GFLOP: more than a millisecond on any two-core CPU
    assert series["cpu_matmul"].ms[-1] > 1
    # 64 × 64 is 64 times less work than 256 × 256, and timed so: no step is recorded inside
    # the timed loop (its first rounds', recorded, made the smallest product the slowest)
    assert series["cpu_matmul"].ms[0] < series["cpu_matmul"].ms[2]
    assert all(step.within is None for step in timing.steps)
    assert timing.elapsed_ms < Limits().time_s * 1000 / 2  # well under the time limit


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_timing_figure_has_a_line_per_series_on_log_axes(timing: Trace, lang: str) -> None:
    series = devices.timing_series(timing)
    figure = devices.timing_figure(series, lang).to_dict()
    names = [trace["name"] for trace in figure["data"]]
    cpu = "a @ b on the CPU" if lang == "en" else "CPU 上的 a @ b"
    assert names[0] == cpu and len(names) == len(series)
    assert list(figure["data"][0]["y"]) == series[0].ms
    layout = figure["layout"]
    assert layout["xaxis"]["type"] == layout["yaxis"]["type"] == "log"
    assert list(layout["xaxis"]["tickvals"]) == list(devices.SIZES)


# ---- the page, through Streamlit's AppTest --------------------------------------------------


def _at(lang: str, page: str) -> AppTest:
    at = AppTest.from_file("../streamlit_app.py", default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(page).run()
    assert not at.exception
    return at


def _chart_names(at: AppTest) -> list[str]:
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    return [trace["name"] for trace in json.loads(charts[0].proto.spec)["data"]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_devices_page_shows_the_table_and_the_chart(lang: str) -> None:
    at = _at(lang, "pages/4_Devices.py")
    assert at.title[0].value == ("Devices" if lang == "en" else "设备")
    machine, seeds = at.table[0].value, at.table[1].value
    value = "on this machine" if lang == "en" else "本机的值"
    call = "call" if lang == "en" else "调用"
    rows = machine.set_index(call)[value]
    assert len(rows) == len(devices.ROWS) + 1
    assert rows["`torch.cuda.is_available()`"] == f"`{CUDA}`"
    assert len(set(seeds.iloc[:, 1])) == 1  # three draws, one value
    names = _chart_names(at)
    assert names[0] == ("a @ b on the CPU" if lang == "en" else "CPU 上的 a @ b")
    assert any(("GPU" in name) for name in names) is CUDA
    if not CUDA:
        warning = at.warning[0].value
        assert ("No GPU" if lang == "en" else "没有 GPU") in warning
        assert "torch.version.cuda" in warning
        assert at.sidebar.selectbox(key="device.widget").options == ["cpu"]


def test_measure_again_runs_the_timing_again() -> None:
    at = _at("en", "pages/4_Devices.py")
    before = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["y"]
    at.button(key="devices.again").click().run()
    assert not at.exception
    after = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["y"]
    assert after != before  # fresh clock readings, not the stored ones


@needs_cuda
def test_the_gpu_chosen_in_the_sidebar_is_used_by_every_page() -> None:
    at = _at("en", "pages/1_Playground.py")
    at.sidebar.selectbox(key="device.widget").set_value("cuda:0").run()
    at.session_state["playground.code"] = "x = torch.ones(2)\n"
    at.button(key="playground.run").click().run()
    assert any("Ran on cuda:0" in c.value for c in at.caption)
    at.switch_page("pages/4_Devices.py").run()
    assert not at.exception
    assert any("cuda:0" in c.value for c in at.caption)
    assert "a @ b on the GPU" in _chart_names(at)
