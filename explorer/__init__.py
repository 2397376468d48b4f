"""Autograd Explorer as a library, through the same sandbox and worker pool as the app:

    import explorer
    trace = explorer.run("x = torch.ones(2, requires_grad=True)\\n(x * 3).sum().backward()")
    trace.variables["x"]["grad"]        # [3.0, 3.0]
    explorer.show(code)                 # in Jupyter: output, graph and backward animation
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.runner.trace import Trace
    from explorer.views.notebook import Shown

__all__ = ["run", "show"]


def run(code: str, *, device: str = "cpu", seed: int | None = 0) -> Trace:
    """Run `code` in the default worker pool (started on first use) and return its Trace."""
    from explorer.runner import worker  # here, not above: a worker imports this package too

    return worker.run(code, device=device, seed=seed)


def show(code: str, *, device: str = "cpu", seed: int | None = 0, lang: str = "en") -> Shown:
    """Run `code` like `run` and return what a notebook shows of it (`_repr_html_`)."""
    from explorer.views.notebook import Shown

    return Shown(run(code, device=device, seed=seed), lang)
