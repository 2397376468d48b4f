"""The Trace, typed: what a run sends (`Answer`), what `Trace.to_json` writes (`python -m
explorer run --json`, the pages' JSON download) and `python -m explorer schema` prints as a
JSON Schema with the format's VERSION. A test holds every Trace of the test corpus to it.

Each record is a msgspec Struct, read by attribute: msgspec decodes a run's answer straight
into them, checking every type, bound and required field in one pass (explorer.trace.check
adds what a type cannot say: caps from the run's Limits, references, cut text). A field a
record may lack is None, and is left out of its JSON.
JSON has no NaN or infinity: a non-finite number is written as the text `nan`, `inf` or `-inf`,
in a value as in a `Real` field, which reads back as the float.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypedDict

import msgspec

VERSION = 3  # of the format: a reader of saved Traces checks it (2: non-finite numbers as
# text; 3: notes as keys and numbers)
MAX_CALLS = 64  # backward calls kept in full: a run keeps 20, and those asked for
MAX_DIMS = 1_000  # sizes of a shape (PyTorch allows hundreds)
MAX_NESTING = 16  # loops and function calls told around a step (the innermost, of deeper ones)
MAX_LIBRARY = 12  # backward passes made inside library functions whose graph is kept
MAX_UNSTEPPED = 8  # loops told whose last round was not stepped
MAX_PARTS = 16  # parts of one note (what thinning took: 8 levels; lines not recorded: 3)
MAX_VALUES = 8  # numbers of one note or part
MAX_NUMBER = 10**15  # of a note's numbers

# A run's counts, sizes and addresses, and the elements of a shape, fit in an int64, as
# PyTorch's and NumPy's do.
MAX_COUNT = 2**63 - 1

Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
Dims = Annotated[list[Count], msgspec.Meta(max_length=MAX_DIMS)]
NON_FINITE = "^(nan|inf|-inf)$"
# A number; a non-finite one as text, read back as the float.
Real = float | Annotated[str, msgspec.Meta(pattern=NON_FINITE)]
# A node id as explorer.record.graph writes one: `n12`, `n3.self[0]`.
NODE_ID = r"^[\w.\[\]]{1,200}$"
NodeId = Annotated[str, msgspec.Meta(pattern=NODE_ID)]


class Record(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A record of the Trace: its fields by name; one it may lack defaults to None."""


class Explanation(Record, kw_only=True):
    """PyTorch's or Python's error in plain words."""

    en: str
    zh: str


class Error(Record, kw_only=True):
    """How the run stopped: the exception's type and message, the program's line."""

    type: str
    message: str
    line: Count | None
    explanation: Explanation | None


class Tensor(Record, kw_only=True):
    """What a variable and a graph's tensor node say of a tensor."""

    shape: Dims | None = None
    dtype: str | None = None
    device: str | None = None
    requires_grad: bool | None = None
    is_leaf: bool | None = None
    grad_fn: str | None = None
    version: Count | None = None  # its _version


class Variable(Tensor, kw_only=True):
    """A variable after a step (explorer.record.snapshot): its kind (`tensor`, `ndarray`,
    `int`, a class's name...) and values; tensors and arrays with their metadata."""

    kind: str
    values: Any  # numbers, text, true/false or null in nested lists; or a text
    type: str | None = None
    numel: Count | None = None
    is_view: bool | None = None
    retains_grad: bool | None = None
    strides: Annotated[list[int], msgspec.Meta(max_length=MAX_DIMS)] | None = None
    data_ptr: Count | None = None
    # [first, last) address of its bytes
    memory: Annotated[list[Count], msgspec.Meta(min_length=2, max_length=2)] | None = None
    writeable: bool | None = None
    truncated: bool | None = None  # values holds the leading block only
    grad: Any = None
    tangent: Any = None  # forward-mode AD: a dual tensor's tangent (its values' block)
    norm: Real | None = None
    grad_norm: Real | None = None
    length: Count | None = None  # a list's, tuple's, dict's or set's len
    # A module's: what its parameters hold (their version counters, and their `.grad`s' and
    # whether they have one), hashed: a backward, an optimizer's step or zero_grad changes it.
    parameters: Count | None = None


class Node(Tensor, kw_only=True):
    """A node of the autograd graph: a backward node (kind `backward`) or a tensor (`leaf`,
    `saved`, `output`...), with a stable id the DOT, the layout and the replay share."""

    id: NodeId
    kind: str
    label: str
    name: str | None = None  # a backward node's class name
    saved: dict[str, str] | None = None  # what it saved, described
    custom: bool | None = None  # made by a custom autograd.Function
    seq: Count | None = None  # a backward node's sequence number from the run's start: the order
    # the program's thread made them in (none for a leaf's AccumulateGrad)
    module: str | None = None  # the nn.Module call that made it (`model.fc1`)
    # A backward node a backward call with create_graph=True made: its derivative order (2 for
    # what the forward's nodes' backward made; none: 1, the forward's), the node whose
    # backward made it, and the call.
    order: Annotated[int, msgspec.Meta(ge=2)] | None = None
    made_by: NodeId | None = None
    made_in: Annotated[int, msgspec.Meta(ge=1)] | None = None
    names: list[str] | None = None  # the program's names of a tensor
    colour: str | None = None  # its fill, as torchviz gives one to its kind


class Edge(Record, kw_only=True):
    src: NodeId
    dst: NodeId
    kind: Literal["grad", "saved", "view"]
    attrs: dict[str, str] | None = None


class Graph(Record, kw_only=True):
    """The autograd graph after a step: torchviz's DOT and the model it was drawn from
    (`note` says why one is not drawn)."""

    dot: str | None
    nodes: list[Node]
    edges: list[Edge]
    packed: bool | None = None
    note: Note | None = None


class Gradient(Record, kw_only=True):
    """A gradient the engine passed (its leading values when `truncated`)."""

    shape: Dims
    dtype: str
    device: str
    values: Any
    truncated: bool
    norm: Real
    max_abs: Real
    to: str | None = None  # the node it went to


class EngineStep(Record, kw_only=True):
    """One node the engine ran: what it received and what it sent along each edge."""

    node: str
    name: str
    grad_outputs: list[Gradient | None]
    grad_inputs: list[Gradient | None]
    raised: bool | None = None  # the engine stopped at it with the call's error: it sent nothing


class LeafGrad(Record, kw_only=True):
    """A tensor's `.grad` as written by engine step `after` (1-based): a leaf's, by its
    AccumulateGrad (`node`), or one that retains its grad (`retain_grad()`), as the node that
    made it (`node`) began."""

    node: str
    leaf: str
    names: list[str]
    after: Count
    grad: Gradient | None


class Returned(Record, kw_only=True):
    """What torch.autograd.grad returned for one of its inputs: the gradient of its outputs
    (vᵀJ, for a vector output and its v) with respect to that input."""

    input: str  # the input's tensor node
    names: list[str]  # the program's names for the input
    grad: Gradient | None  # None: an input the outputs do not use (allow_unused)


class Round(Record, kw_only=True):
    """A loop around a step, and the round it is in: `for epoch in ...` (line 4) in its 2nd
    round of `of` (when known before the loop ran)."""

    line: Count
    name: str  # what the loop walks (`epoch`), or `while`
    round: Annotated[int, msgspec.Meta(ge=1)]
    of: Count | None = None
    # The sequence number (explorer.record.graph.Ids.now) the next node had as the loop's run
    # began, as the round before this began, and as this round began: they date a node's `seq`
    # to its round, in rounds not stepped too.
    loop_began: Count | None = None
    previous_began: Count | None = None
    began: Count | None = None
    # How many of the step's `calls` the loop runs inside (None: at the top level); those
    # cut from a deep stack are not counted.
    depth: Annotated[int, msgspec.Meta(ge=1, le=MAX_NESTING)] | None = None


Rounds = Annotated[list[Round], msgspec.Meta(max_length=MAX_NESTING)]


class LastRound(Record, kw_only=True):
    """A loop whose last round over the run was not stepped: a `while`, a `for` over what
    has no length before it runs, or one that a `break`, a `return` or an error ended before
    its length, ends unannounced, and rounds not kept are not described as they run. `loop`
    is its number in the program (the first loop written is 0): a run asked to keep that
    round (`rounds=`) steps through it."""

    loop: Count
    line: Annotated[int, msgspec.Meta(ge=1)]
    name: str  # what the loop walks (`batch`), or `while`
    round: Annotated[int, msgspec.Meta(ge=1)]  # its rounds over the run
    count: Annotated[int, msgspec.Meta(ge=1)] | None = None  # the last round in its own run,
    # where it ran more than once (an inner loop): the round its steps would be labelled
    of: Count | None = None  # the rounds its last run was to run, where that was known


Unstepped = Annotated[list[LastRound], msgspec.Meta(max_length=MAX_UNSTEPPED)]


# A note's or part's key (its words are the text `note_<key>` or `part_<key>`), and the name
# of a number it fills in.
NoteName = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z_]{0,39}$")]
NoteNumber = (Annotated[int, msgspec.Meta(ge=0, le=MAX_NUMBER)]
              | Annotated[float, msgspec.Meta(ge=0, le=MAX_NUMBER)])
NoteValues = Annotated[dict[NoteName, NoteNumber], msgspec.Meta(max_length=MAX_VALUES)]


class Part(Record, kw_only=True):
    """One of a note's parts: its key and the numbers its words fill in."""

    key: NoteName
    values: NoteValues = {}


class Note(Part, kw_only=True):
    """What the explorer changed or left out of a run, said in the learner's language
    (explorer.trace.notes): its key, numbers and parts."""

    parts: Annotated[list[Part], msgspec.Meta(max_length=MAX_PARTS)] = []


class Call(Record, kw_only=True):
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
    graph: Count | None = None  # index into graphs
    rounds: Rounds | None = None  # the loops it ran in, outermost first
    # The program's functions it was made in, outermost first, and which call of the innermost
    calls: Annotated[list[str], msgspec.Meta(max_length=MAX_NESTING)] | None = None
    called: Count | None = None
    raised: bool | None = None  # the engine stopped with an error (the run's, unless caught)
    after: Count | None = None  # the run's steps made before it: the next is its statement's
    jacobian: Any = None
    jacobian_reason: str | None = None
    returned: list[Returned] | None = None  # what torch.autograd.grad returned, input by input
    retained: list[LeafGrad] | None = None  # the .grad of variables that retain it

    def gradients(self) -> Iterator[Gradient]:
        """Every gradient the call holds: those its steps passed, wrote and returned."""
        for step in self.steps:
            yield from (g for g in (*step.grad_outputs, *step.grad_inputs) if g is not None)
        for held in (*self.leaf_grads, *(self.retained or ()), *(self.returned or ())):
            if held.grad is not None:
                yield held.grad


class Level(Record, kw_only=True):
    """One of torch.func's transforms a pass ran inside, and the level functorch gave it."""

    transform: Literal["vmap", "grad", "jvp", "functionalize"]
    level: Annotated[int, msgspec.Meta(ge=1)]


class LibraryPass(Record, kw_only=True):
    """Backward passes a library function the program called ran for it (torch.func's
    `grad`, `jacrev`, `vjp`…, torch.autograd.functional, gradcheck), not replayed: the graph
    of the function it ran through, the transforms around them, outermost first, and the
    level of the `grad` that traced the graph (None: one whose level had ended, as `vjp`'s
    and `jacrev`'s have when their backward runs, or no transform's)."""

    line: Annotated[int, msgspec.Meta(ge=1)]  # the program's line that called it
    called: str  # the function the program called: `grad`, `vmap`, `jacrev`, `hvp`…
    within: Annotated[list[Level], msgspec.Meta(max_length=MAX_NESTING)]
    level: Annotated[int, msgspec.Meta(ge=1)] | None
    graph: Count  # index into graphs
    passes: Annotated[int, msgspec.Meta(ge=1)]  # how many ran there so


class Summary(Record, kw_only=True):
    """Every backward call, in short: the loss and each leaf's gradient norm."""

    call: Annotated[int, msgspec.Meta(ge=1)]
    kind: str
    value: Real | None
    grad_norms: dict[str, Real]
    line: Count | None = None  # the program's line that made it


class Step(TypedDict):
    """The program's state after one executed line: a top-level statement, or a line inside
    one (a loop's, a block's, a function's), or where the run's error stopped it."""

    line: Count
    end_line: Count
    output: str
    variables: dict[str, Variable]
    graph: Count | None  # index into graphs
    within: Count | None  # the line of the top-level statement it is inside
    rounds: list[Round] | None  # the loops around it, outermost first
    calls: list[str] | None  # the program's functions it is in, outermost first
    locals: dict[str, Variable] | None  # the innermost function's variables
    # The run's clock (Node.seq) as the innermost of `calls` began: what the line that called
    # it made before is that line's
    entered: Count | None
    called: Count | None  # which call of the innermost of `calls`, over the run (1: its first)
    # The lines its frames around it are at, outermost first: the last called its function
    calling: list[Count] | None
    # What ran since the step before, none of it stepped: for each loop around the step
    # before, the round its run reached (None: it goes on around this step, or is not known);
    # for each loop around this step, the round its run was in at the step before (0: it
    # began since; None: not known); and the lines that ran
    reached: list[Count | None] | None
    since: list[Count | None] | None
    skipped: Count | None
    stopped: bool | None  # the state where the run's error stopped this line


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
    library: Annotated[list[LibraryPass], msgspec.Meta(max_length=MAX_LIBRARY)]
    unstepped: Unstepped
    losses: list[Summary]
    warnings: list[str]
    notes: list[Note]  # what the explorer changed or capped
    device: str
    threads: Count
    elapsed_ms: Real
    repeatable: bool
    reused: bool


class SentError(Record, kw_only=True):
    """The error as a run sends it: its explanation is made by the server."""

    type: str
    message: str
    line: Count | None = None


class SentGraph(Graph, kw_only=True):
    """A graph as a run sends it: a node the graph before holds unchanged goes as its id, and
    `dot` may be left out."""

    dot: str | None = None
    nodes: list[Node | NodeId]  # type: ignore[assignment]


class SentStep(Record, kw_only=True):
    """A step as a run sends it: a variable the step before describes alike goes as null."""

    line: Count
    end_line: Count
    output: str
    variables: dict[str, Variable | None]
    graph: Count | None = None
    within: Count | None = None
    rounds: Rounds | None = None
    calls: Annotated[list[str], msgspec.Meta(max_length=MAX_NESTING)] | None = None
    locals: dict[str, Variable] | None = None
    entered: Count | None = None
    called: Count | None = None
    calling: Annotated[list[Count], msgspec.Meta(max_length=MAX_NESTING)] | None = None
    reached: Annotated[list[Count | None], msgspec.Meta(max_length=MAX_NESTING)] | None = None
    since: Annotated[list[Count | None], msgspec.Meta(max_length=MAX_NESTING)] | None = None
    skipped: Count | None = None
    stopped: bool | None = None


class Answer(Record, kw_only=True):
    """What a run sends back (explorer.trace.wire), or a saved Trace: only `ok` is required,
    and fields it does not name are dropped."""

    version: int = VERSION  # a saved Trace's
    ok: bool
    error: SentError | None = None
    stdout: str = ""
    variables: dict[str, Variable | None] = {}  # the end's; null: as the last step says it
    steps: list[SentStep] = []
    graphs: list[SentGraph] = []  # Graphs once checked (explorer.trace.check)
    backward: Annotated[list[Call], msgspec.Meta(max_length=MAX_CALLS)] = []
    library: Annotated[list[LibraryPass], msgspec.Meta(max_length=MAX_LIBRARY)] = []
    unstepped: Unstepped = []
    losses: list[Summary] = []
    warnings: list[str] = []
    notes: list[Note] = []
    device: str = "cpu"
    threads: Count = 1
    elapsed_ms: Real = 0.0
    repeatable: bool = False


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a Trace's public form, with the format's version."""
    schema = msgspec.json.schema(Trace)
    schema["$defs"]["Trace"]["properties"]["version"] = {"const": VERSION}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Autograd Explorer Trace", "version": VERSION} | schema


def conforms(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as the schema reads it, as plain data again (keys it does not name are dropped);
    a msgspec.ValidationError names the first place it does not fit."""
    return msgspec.to_builtins(msgspec.convert(data, Trace))
