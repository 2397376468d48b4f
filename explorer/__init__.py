"""Autograd Explorer as a library, through the same sandbox and worker pool as the app:

    import explorer
    trace = explorer.run("x = torch.ones(2, requires_grad=True)\\n(x * 3).sum().backward()")
    trace.variables["x"].grad           # [3.0, 3.0]
    explorer.show(code)                 # in Jupyter: output, graph and backward animation

A Trace (`explorer.Trace`) is what one run produced; `Trace.from_json` reads one back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.trace import Trace
    from explorer.views.notebook import Shown

__all__ = ["Trace", "run", "show"]


def run(code: str, *, device: str = "cpu", seed: int | None = 0) -> Trace:
    """Run `code` in the default worker pool (started on first use) and return its Trace."""
    from explorer.pool import worker  # here, not above: a worker imports this package too

    return worker.run(code, device=device, seed=seed)


def show(code: str, *, device: str = "cpu", seed: int | None = 0, lang: str = "en") -> Shown:
    """Run `code` like `run` and return what a notebook shows of it (`_repr_html_`)."""
    from explorer.views.notebook import Shown

    return Shown(run(code, device=device, seed=seed), lang)


def __getattr__(name: str) -> Any:
    """`explorer.Trace`, imported when first asked for: importing the package itself stays
    light (the launch command and every run import it, graphviz or not)."""
    if name == "Trace":
        from explorer.trace import Trace

        return Trace
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")
