"""The Trace's public form, typed: what `Trace.to_json` writes (`python -m explorer run --json`,
the pages' JSON download) and `python -m explorer schema` prints as a JSON Schema, with the
format's VERSION. A test holds every Trace of the test corpus to it, key for key.

Each record is a TypedDict: the pages read the same dicts the Trace holds. What a run may
send, and how much of it, is checked by explorer.trace.check.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, Required, TypedDict

import msgspec

VERSION = 1  # of the format: a reader of saved Traces checks it


class Explanation(TypedDict):
    """PyTorch's or Python's error in plain words."""

    en: str
    zh: str


class Error(TypedDict):
    """How the run stopped: the exception's type and message, the program's line."""

    type: str
    message: str
    line: int | None
    explanation: Explanation | None


class Tensor(TypedDict, total=False):
    """What a variable and a graph's tensor node say of a tensor."""

    shape: list[int]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    version: int | None  # its _version


class Variable(Tensor, total=False):
    """A variable after a step (explorer.record.snapshot): its kind (`tensor`, `ndarray`,
    `int`, a class's name...) and values; tensors and arrays with their metadata."""

    kind: Required[str]
    values: Required[Any]  # numbers, text, true/false or null in nested lists; or a text
    type: str
    numel: int
    is_view: bool
    retains_grad: bool
    strides: list[int]
    data_ptr: int
    memory: list[int]  # [first, last) address of its bytes
    writeable: bool
    truncated: bool  # values holds the leading block only
    grad: Any
    norm: float
    grad_norm: float


class Node(Tensor, total=False):
    """A node of the autograd graph: a backward node (kind `backward`) or a tensor (`leaf`,
    `saved`, `output`...), with a stable id the DOT, the layout and the replay share."""

    id: Required[str]
    kind: Required[str]
    label: Required[str]
    name: str  # a backward node's class name
    saved: dict[str, str]  # what it saved, described
    custom: bool  # made by a custom autograd.Function
    module: str  # the nn.Module call that made it (`model.fc1`)
    names: list[str]  # the program's names of a tensor
    colour: str  # its fill, as torchviz gives one to its kind


class Edge(TypedDict):
    src: str
    dst: str
    kind: Literal["grad", "saved", "view"]
    attrs: NotRequired[dict[str, str]]


class Graph(TypedDict):
    """The autograd graph after a step: torchviz's DOT and the model it was drawn from
    (`note` says why one is not drawn)."""

    dot: str | None
    nodes: list[Node]
    edges: list[Edge]
    packed: NotRequired[bool]
    note: NotRequired[str]


class Gradient(TypedDict):
    """A gradient the engine passed (its leading values when `truncated`)."""

    shape: list[int]
    dtype: str
    device: str
    values: Any
    truncated: bool
    norm: float
    max_abs: float
    to: NotRequired[str | None]  # the node it went to


class EngineStep(TypedDict):
    """One node the engine ran: what it received and what it sent along each edge."""

    node: str
    name: str
    grad_outputs: list[Gradient | None]
    grad_inputs: list[Gradient | None]


class LeafGrad(TypedDict):
    """A leaf's `.grad` as written after engine step `after` (1-based)."""

    node: str
    leaf: str
    names: list[str]
    after: int
    grad: Gradient | None


class Call(TypedDict):
    """One call of backward() or autograd.grad, recorded in full: the engine's steps in the
    order it ran them."""

    call: int
    kind: str
    steps: list[EngineStep]
    leaf_grads: list[LeafGrad]
    value: float | None  # the root's value, when a scalar
    roots: list[str]
    root: str | None
    vector: Any  # v of y.backward(v), when small
    graph: NotRequired[int]  # index into graphs
    jacobian: NotRequired[Any]
    jacobian_reason: NotRequired[str]


class Summary(TypedDict):
    """Every backward call, in short: the loss and each leaf's gradient norm."""

    call: int
    kind: str
    value: float | None
    grad_norms: dict[str, float]


class Step(TypedDict):
    """The program's state after one top-level statement."""

    line: int
    end_line: int
    output: str
    variables: dict[str, Variable]
    graph: int | None  # index into graphs


class Trace(TypedDict):
    """Everything one run produced."""

    version: int
    ok: bool
    error: Error | None
    stdout: str
    variables: dict[str, Variable]  # after the last statement
    steps: list[Step]
    graphs: list[Graph]  # distinct; steps and calls refer to them by index
    graph: Graph | None  # the last step's, repeated for a reader
    backward: list[Call]
    losses: list[Summary]
    warnings: list[str]
    notes: list[str]  # what the explorer changed or capped
    device: str
    threads: int
    elapsed_ms: float
    repeatable: bool
    reused: bool


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a Trace's public form, with the format's version."""
    schema = msgspec.json.schema(Trace)
    schema["$defs"]["Trace"]["properties"]["version"] = {"const": VERSION}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Autograd Explorer Trace", "version": VERSION} | schema


def conforms(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as the schema reads it (keys it does not name are dropped); a
    msgspec.ValidationError names the first place it does not fit."""
    return msgspec.convert(data, Trace)
