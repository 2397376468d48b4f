"""Answers a run could send once past the sandbox: a Trace's JSON with the run's words chosen
to be markup (an image, a script link, HTML) wherever the run chooses words."""

from __future__ import annotations

import json
import re
from typing import Any

from explorer.trace import Trace

# A blank line first: it would end a code span and start a paragraph of the run's own.
EVIL = ("w\n\n![x](http://evil.example/x.png) [click](javascript:alert(1)) "
        "<img src=x onerror=alert(1)>")
LINK = 'URL="javascript:alert(1)" href="javascript:alert(2)" target=_top'
# A note is a key and numbers: a run chooses no words of one.
NOTE = {"key": "output_dropped", "values": {"count": 1, "cap": 2}}
# Markup markdown or HTML would act on: an image or link `](`, a tag `<img`, `<a `, `<script`.
ACTIVE = re.compile(r"(?<!\\)(?:\]\(|<(?:img|a|script|svg|iframe)\b)", re.IGNORECASE)


def forged(**fields: Any) -> dict[str, Any]:
    """A Trace as a run would send it, with `fields` replaced."""
    return json.loads(Trace(ok=True).to_json()) | fields


def gradient(**fields: Any) -> dict[str, Any]:
    """A recorded gradient, as explorer.record.backward sends one."""
    return {"shape": [1], "dtype": "torch.float32", "device": "cpu", "values": [1.0],
            "truncated": False, "norm": 1.0, "max_abs": 1.0} | fields


def hostile() -> dict[str, Any]:
    """An answer with EVIL in every name, type, text and label a page shows, and links in the
    DOT: one step, its graph (a leaf into a backward node) and one backward call over it."""
    tensor = {"kind": "tensor", "shape": [1], "dtype": f"[('{EVIL}', '<f8')]", "device": EVIL,
              "requires_grad": True, "is_leaf": True, "grad_fn": EVIL, "version": 0,
              "numel": 1, "is_view": False, "retains_grad": False, "values": [EVIL],
              "truncated": False, "grad": [1.0], "href": "javascript:alert(3)"}
    variables = {"x": tensor, EVIL: {"kind": "object", "type": EVIL, "values": EVIL}}
    leaf = {"id": "t1", "kind": "leaf", "label": f"{EVIL}\n (1)", "colour": f'red" {LINK} x="',
            "names": [EVIL], "shape": [1], "dtype": EVIL, "device": EVIL,
            "requires_grad": True, "is_leaf": True, "grad_fn": None, "version": 0,
            "URL": "javascript:alert(4)"}
    op = {"id": "n2", "kind": "backward", "label": EVIL, "name": EVIL, "saved": {EVIL: EVIL},
          "custom": False}
    out = leaf | {"id": "t3", "kind": "output", "names": ["x"], "grad_fn": EVIL}
    graph = {"dot": f'digraph {{ t1 [{LINK} label=<<b>{EVIL}</b>>] }}',
             "nodes": [leaf, op, out],
             "edges": [{"src": "t1", "dst": "n2", "kind": "grad",
                        "attrs": {"URL": "javascript:alert(5)", "style": "dotted"}},
                       {"src": "n2", "dst": "t3", "kind": "grad"}]}
    call = {"call": 1, "kind": "backward", "value": 1.0, "graph": 0, "roots": ["t3"],
            "root": "t3", "vector": None,
            "steps": [{"node": "n2", "name": EVIL, "grad_outputs": [gradient(device=EVIL)],
                       "grad_inputs": [gradient(values=[EVIL], to="t1")]}],
            "leaf_grads": [{"node": "n2", "leaf": "t1", "names": [EVIL], "after": 1,
                            "grad": gradient(values=[EVIL])}],
            "retained": [{"node": "n2", "leaf": "t3", "names": [EVIL], "after": 1,
                          "grad": gradient(values=[EVIL])}]}
    step = {"line": 1, "end_line": 1, "output": EVIL, "variables": variables, "graph": 0}
    return forged(ok=False, stdout=EVIL, variables=variables, steps=[step], graphs=[graph],
                  backward=[call], warnings=[EVIL], notes=[NOTE], device=EVIL,
                  library=[{"line": 1, "called": EVIL, "within": [{"transform": "vmap",
                                                                  "level": 1}],
                            "level": None, "graph": 0, "passes": 2}],
                  unstepped=[{"loop": 0, "line": 1, "name": EVIL, "round": 30}],
                  losses=[{"call": 1, "kind": "backward", "value": 1.0,
                           "grad_norms": {EVIL: 1.0}}],
                  error={"type": EVIL, "message": f"name '{EVIL}' is not defined", "line": 1,
                         "explanation": {"en": EVIL, "zh": EVIL}})
