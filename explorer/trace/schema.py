"""The Trace, typed: what a run sends (`Answer`), what `Trace.to_json` writes (`python -m
explorer run --json`, the pages' JSON download) and `python -m explorer schema` prints as a
JSON Schema with the format's VERSION. A test holds every Trace of the test corpus to it.

Each record is a TypedDict: msgspec decodes a run's answer straight into them, checking every
type, bound and required key in one pass (explorer.trace.check adds what a type cannot say:
caps from the run's Limits, references, cut text), and the pages read the same dicts.
JSON has no NaN or infinity: a non-finite number is written as the text `nan`, `inf` or `-inf`,
in a value as in a `Real` field, which reads back as the float.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required, TypedDict

import msgspec

VERSION = 2  # of the format: a reader of saved Traces checks it (2: non-finite numbers as text)
MAX_CALLS = 64  # backward calls kept in full: a run keeps 20, and those asked for
MAX_DIMS = 1_000  # sizes of a shape (PyTorch allows hundreds)

Count = Annotated[int, msgspec.Meta(ge=0)]
Dims = Annotated[list[Count], msgspec.Meta(max_length=MAX_DIMS)]
NON_FINITE = "^(nan|inf|-inf)$"
# A number; a non-finite one as text, read back as the float.
Real = float | Annotated[str, msgspec.Meta(pattern=NON_FINITE)]
# A node id as explorer.record.graph writes one: `n12`, `n3.self[0]`.
NODE_ID = r"^[\w.\[\]]{1,200}$"
NodeId = Annotated[str, msgspec.Meta(pattern=NODE_ID)]


class Explanation(TypedDict):
    """PyTorch's or Python's error in plain words."""

    en: str
    zh: str


class Error(TypedDict):
    """How the run stopped: the exception's type and message, the program's line."""

    type: str
    message: str
    line: Count | None
    explanation: Explanation | None


class Tensor(TypedDict, total=False):
    """What a variable and a graph's tensor node say of a tensor."""

    shape: Dims
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    version: Count | None  # its _version


class Variable(Tensor, total=False):
    """A variable after a step (explorer.record.snapshot): its kind (`tensor`, `ndarray`,
    `int`, a class's name...) and values; tensors and arrays with their metadata."""

    kind: Required[str]
    values: Required[Any]  # numbers, text, true/false or null in nested lists; or a text
    type: str
    numel: Count
    is_view: bool
    retains_grad: bool
    strides: Annotated[list[int], msgspec.Meta(max_length=MAX_DIMS)]
    data_ptr: Count
    memory: Annotated[list[Count], msgspec.Meta(min_length=2, max_length=2)]  # [first, last)
    writeable: bool
    truncated: bool  # values holds the leading block only
    grad: Any
    norm: Real
    grad_norm: Real


class Node(Tensor, total=False):
    """A node of the autograd graph: a backward node (kind `backward`) or a tensor (`leaf`,
    `saved`, `output`...), with a stable id the DOT, the layout and the replay share."""

    id: Required[NodeId]
    kind: Required[str]
    label: Required[str]
    name: str  # a backward node's class name
    saved: dict[str, str]  # what it saved, described
    custom: bool  # made by a custom autograd.Function
    module: str  # the nn.Module call that made it (`model.fc1`)
    names: list[str]  # the program's names of a tensor
    colour: str  # its fill, as torchviz gives one to its kind


class Edge(TypedDict):
    src: NodeId
    dst: NodeId
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

    shape: Dims
    dtype: str
    device: str
    values: Any
    truncated: bool
    norm: Real
    max_abs: Real
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
    after: Count
    grad: Gradient | None


class Call(TypedDict):
    """One call of backward() or autograd.grad, recorded in full: the engine's steps in the
    order it ran them."""

    call: Annotated[int, msgspec.Meta(ge=1)]
    kind: str
    steps: list[EngineStep]
    leaf_grads: list[LeafGrad]
    value: Real | None  # the root's value, when a scalar
    roots: list[str]
    root: str | None
    vector: Any  # v of y.backward(v), when small
    graph: NotRequired[Count]  # index into graphs
    jacobian: NotRequired[Any]
    jacobian_reason: NotRequired[str]


class Summary(TypedDict):
    """Every backward call, in short: the loss and each leaf's gradient norm."""

    call: Annotated[int, msgspec.Meta(ge=1)]
    kind: str
    value: Real | None
    grad_norms: dict[str, Real]


class Step(TypedDict):
    """The program's state after one top-level statement."""

    line: Count
    end_line: Count
    output: str
    variables: dict[str, Variable]
    graph: Count | None  # index into graphs


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
    backward: Annotated[list[Call], msgspec.Meta(max_length=MAX_CALLS)]
    losses: list[Summary]
    warnings: list[str]
    notes: list[str]  # what the explorer changed or capped
    device: str
    threads: Count
    elapsed_ms: Real
    repeatable: bool
    reused: bool


class SentError(TypedDict):
    """The error as a run sends it: its explanation is made by the server."""

    type: str
    message: str
    line: NotRequired[Count | None]


class SentGraph(TypedDict):
    """A graph as a run sends it: a node the graph before holds unchanged goes as its id."""

    dot: NotRequired[str | None]
    nodes: list[Node | NodeId]
    edges: list[Edge]
    packed: NotRequired[bool]
    note: NotRequired[str]


class SentStep(TypedDict):
    """A step as a run sends it: a variable the step before describes alike goes as null."""

    line: Count
    end_line: Count
    output: str
    variables: dict[str, Variable | None]
    graph: NotRequired[Count | None]


class Answer(TypedDict, total=False):
    """What a run sends back (explorer.trace.wire), or a saved Trace: only `ok` is required,
    and keys it does not name are dropped."""

    version: int  # a saved Trace's
    ok: Required[bool]
    error: SentError | None
    stdout: str
    variables: dict[str, Variable | None]  # the end's; null: as the last step describes it
    steps: list[SentStep]
    graphs: list[SentGraph]
    backward: Annotated[list[Call], msgspec.Meta(max_length=MAX_CALLS)]
    losses: list[Summary]
    warnings: list[str]
    notes: list[str]
    device: str
    threads: Count
    elapsed_ms: Real
    repeatable: bool


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
