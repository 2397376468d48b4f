"""How fast the explorer is, measured against bare torchviz: `python -m explorer.bench`.

In one process and one run (the machine is noisy, so results are ratios and medians):

1. the pipeline for a chain of N `y = y * 1.001` ops with a final backward — run in a real
   WorkerPool (with scale limits, see SCALE_LIMITS), Trace, view, graphviz layout, animation
   figure and its JSON — against torchviz's `make_dot(...).pipe("svg")` on the same graph
   built here in torch, for graphs of ~20 to ~10,000 nodes; and the explorer's own drawing
   of that torch graph (explorer.record.graph + view + dot) against torchviz's;
2. warm end-to-end latency of every seed program (`explorer.content.examples.EXAMPLES`), p50/p95,
   the first run's cost (the zygote importing PyTorch) apart, and the program's own time in
   plain PyTorch;
3. the animation figure's JSON size, collapsed (the page's default) and uncollapsed;
4. RSS of the zygote and of this process before and after many runs;
5. where the time goes: a worker run split into the child's execute() and the rest, and
   the same chains executed in this process, stage by stage;
6. the operating-system wall's cost: the same programs through a walled pool (box + lock)
   and a bare one (neither), interleaved, median per run;
7. famous lessons at their published sizes (explorer.bench.lessons): time and record size;
8. the server's CPU for a Training page rerun after a loop of 120,000 backward calls
   (explorer.bench.rerun);
9. every pattern the server matches against a run's or a visitor's text, attacked with text
   made to make it backtrack (explorer.bench.patterns): the slowest;
10. steps inside loops (explorer.bench.lines): a 500-iteration training loop (a fixed tensor,
   and a DataLoader) by plain exec, by execute() with line steps and with Limits(line_steps=0),
   turn about, medians, and four times as long, for what one more round costs; and its record
   as it crosses the wire, thinned to fit;

then PASS/MISS for each target. `--quick` uses tiny sizes and few runs (tests/test_bench.py);
`--lines` measures section 10 alone, with its targets; `--seeds --against REVISION`, section 2
in this checkout and in that git revision's, turn about (explorer.bench.seeds).
`--browser` instead times, in Debian's Chromium, Run → graph visible on the Graph page, and
Run → replay picture on the Backward page (a tab's first run and its later ones);
`--classroom` plays a class of learners over Streamlit's websocket (explorer.bench.classroom).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from explorer.bench.browser import browser
from explorer.bench.classroom import classroom
from explorer.bench.lines import line_targets, measure_lines, section
from explorer.bench.report import POOL_SIZE, measure, render
from explorer.bench.seeds import seeds_against


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m explorer.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few runs")
    parser.add_argument("--browser", action="store_true",
                        help="time Run -> visible graph in Chromium instead")
    parser.add_argument("--against", metavar="REVISION",
                        help="with --browser or --seeds: time that git revision too, "
                             "interleaved")
    parser.add_argument("--classroom", action="store_true",
                        help="a class of learners over the websocket instead "
                             "(explorer.bench.classroom)")
    parser.add_argument("--lines", action="store_true",
                        help="only section 10, steps inside loops (explorer.bench.lines)")
    parser.add_argument("--seeds", action="store_true",
                        help="with --against: the seed programs here and in that revision")
    args = parser.parse_args(argv)

    def progress(what: str) -> None:
        print(f"[bench] {what}…", file=sys.stderr, flush=True)

    if args.seeds and not args.against:
        parser.error("--seeds compares with a revision: give --against REVISION")
    try:
        print(asked(args, progress))
    except LookupError as error:  # a revision git cannot check out, or too old to time
        parser.error(str(error))


def asked(args: argparse.Namespace, progress: Callable[[str], None]) -> str:
    """What the arguments ask for, measured and written out."""
    if args.classroom:
        return "\n".join(classroom(args.quick, progress))
    if args.seeds:
        return "\n".join(seeds_against(args.against, args.quick, progress))
    if args.lines:
        return "\n".join(lines_alone(args.quick, progress))
    if args.browser:
        return browser(args.quick, progress, args.against)
    return render(measure(args.quick, progress))


def lines_alone(quick: bool, progress: Callable[[str], None]) -> list[str]:
    """Section 10 and its targets, with torch's threads as a worker of the pool has them."""
    import torch

    torch.set_num_threads(max(1, (os.cpu_count() or 1) // POOL_SIZE))
    lines = measure_lines(quick, 2 if quick else 7, progress)
    return [f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), load average "
            f"{os.getloadavg()[0]:.2f} at the end", *section(lines), "== Targets ==",
            *(f"{'PASS' if ok else 'MISS'}  {text}" for ok, text in line_targets(lines))]


if __name__ == "__main__":
    main()
