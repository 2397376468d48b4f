"""Checking a program's own autograd.Function classes with gradcheck. Pure.

`gradient_checks(code)` writes a separate program that checks each Function class of `code`
with a double-precision `torch.autograd.gradcheck` at the inputs the program gives it. It
keeps the program's imports and classes, then replays the program's first top-level
statements (up to its first loop, of which it replays the first round up to its calls, or
up to its last call; any error there is caught) and takes the arguments of each class's first
`X.apply(...)` call outside a function (aliases such as `relu = X.apply` followed) as they
are just before that call. Those values are checked where they suit gradcheck (finite, no
kink within its step); otherwise seeded random values of their shapes, or of 8 elements
where the check cannot see what the program passes.
The check also computes the two Jacobians gradcheck compares: the analytical one (the class's
backward, one output element at a time) and the numerical one (central differences). A class
whose forward equals torch.relu's is also compared with autograd's ReLU gradient. `verdicts`,
`inputs_used` and `jacobians` read the results back from the check's variables.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from explorer.trace import Variables, value_of
from explorer.trace.schema import Variable

EPS, ATOL, RTOL = 1e-6, 1e-4, 1e-3  # gradcheck's step and tolerances
SIZE = 8  # elements of each random input where the program gives none to see
# The Jacobian block shown: output elements (rows) by input elements (columns), within the
# 1,000 values a run keeps of a tensor.
ROWS, COLUMNS = 48, 16
LOOPS_DEEP = 8  # loops around a call whose first rounds are replayed; deeper, they are not
FAST = 1_024  # more input elements than this: gradcheck's fast mode (a full Jacobian is n²)
SOURCES = ("program", "unsuited", "unbuilt", "absent")  # whose values were checked

HEAD = f"""import torch

CHECK_EPS, CHECK_ATOL, CHECK_RTOL = {EPS}, {ATOL}, {RTOL}


def seeded_generator():
    \"\"\"A random generator seeded the same for every check.\"\"\"
    return torch.Generator().manual_seed(0)


def random_inputs(count):
    \"\"\"`count` seeded random double-precision inputs of {SIZE} elements that require grad.\"\"\"
    generator = seeded_generator()
    return tuple(torch.randn({SIZE}, dtype=torch.double, generator=generator,
                             requires_grad=True) for _ in range(count))


def is_float_tensor(value):
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def differentiable(value):
    \"\"\"A program's argument as gradcheck takes it: a float tensor in double precision that
    requires grad; another tensor detached; anything else as it is.\"\"\"
    if is_float_tensor(value):
        return value.detach().to("cpu", torch.double).requires_grad_()
    return value.detach().cpu() if isinstance(value, torch.Tensor) else value


def flat_outputs(apply, inputs):
    \"\"\"apply's tensor outputs as one row of numbers.\"\"\"
    out = apply(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    return torch.cat([o.reshape(-1) for o in outs if isinstance(o, torch.Tensor)])


def kinked(apply, inputs):
    \"\"\"Does a derivative jump within CHECK_EPS of `inputs`? One-sided differences along a
    seeded random direction disagree there (as they do where a ReLU's input is 0).\"\"\"
    generator = seeded_generator()
    step = [CHECK_EPS * torch.randn(x.shape, dtype=x.dtype, generator=generator)
            if is_float_tensor(x) else None for x in inputs]
    with torch.no_grad():
        here = flat_outputs(apply, inputs)
        ahead = flat_outputs(apply, [x if s is None else x + s for x, s in zip(inputs, step)])
        behind = flat_outputs(apply, [x if s is None else x - s for x, s in zip(inputs, step)])
    return not torch.allclose(ahead - here, here - behind, atol=CHECK_ATOL * CHECK_EPS,
                              rtol=CHECK_RTOL)


def suits(apply, inputs):
    \"\"\"Can gradcheck judge apply at these values: finite, outputs too, and no kink?\"\"\"
    try:
        with torch.no_grad():
            finite = all(bool(x.isfinite().all()) for x in inputs if is_float_tensor(x))
            finite = finite and bool(flat_outputs(apply, inputs).isfinite().all())
        return finite and not kinked(apply, inputs)
    except Exception:
        return False


def random_like(value):
    \"\"\"Seeded random values of a float tensor's shape that require grad; else the value.\"\"\"
    if not is_float_tensor(value):
        return value
    return torch.randn(value.shape, dtype=torch.double, generator=seeded_generator(),
                       requires_grad=True)


def inputs_at(apply, captured, count):
    \"\"\"The inputs to check apply at, and whose values they are: the program's arguments
    where they suit gradcheck, else seeded random values of their shapes; {SIZE}-element
    random ones where the arguments could not be rebuilt.\"\"\"
    if captured is None:
        return random_inputs(count), "unbuilt"
    inputs = tuple(differentiable(x) for x in captured)
    if not suits(apply, inputs):
        return tuple(random_like(x) for x in inputs), "unsuited"
    return inputs, "program"


def float_elements(inputs):
    return sum(x.numel() for x in inputs if is_float_tensor(x))


def verdict(apply, inputs):
    \"\"\"gradcheck's verdict and, if it failed, the first line of what it said.\"\"\"
    try:
        return torch.autograd.gradcheck(apply, inputs, eps=CHECK_EPS, atol=CHECK_ATOL,
                                        rtol=CHECK_RTOL,
                                        fast_mode=float_elements(inputs) > {FAST}), ""
    except RuntimeError as error:
        return False, str(error).partition("\\n")[0]


def jacobians(apply, inputs, rows={ROWS}, columns={COLUMNS}):
    \"\"\"How many elements apply's outputs have, and per input (None for one that takes no
    gradient) the analytical Jacobian (your backward, one output element at a time) and the
    numerical one (central differences, as gradcheck computes them), of the first `rows`
    output elements and the first `columns` input elements.\"\"\"
    out = flat_outputs(apply, inputs)
    rows = min(rows, out.numel())
    wanted = [is_float_tensor(x) and x.requires_grad for x in inputs]
    analytical = [torch.zeros(rows, min(columns, x.numel()), dtype=torch.double) if w
                  else None for x, w in zip(inputs, wanted)]
    varying = [x for x, w in zip(inputs, wanted) if w]
    for i in range(rows):
        grads = iter(torch.autograd.grad(out[i], varying, retain_graph=True,
                                         allow_unused=True))
        for jacobian in analytical:
            grad = next(grads) if jacobian is not None else None
            if grad is not None:
                jacobian[i] = grad.reshape(-1)[:jacobian.shape[1]]
    numerical = []
    with torch.no_grad():
        for k, x in enumerate(inputs):
            if analytical[k] is None:
                numerical.append(None)
                continue
            jacobian = torch.zeros_like(analytical[k])
            for j in range(jacobian.shape[1]):
                step = torch.zeros(x.numel(), dtype=torch.double)
                step[j] = CHECK_EPS
                step = step.view_as(x)
                plus = flat_outputs(apply, [y + step if m == k else y
                                            for m, y in enumerate(inputs)])
                minus = flat_outputs(apply, [y - step if m == k else y
                                             for m, y in enumerate(inputs)])
                jacobian[:, j] = ((plus - minus) / (2 * CHECK_EPS))[:rows]
            numerical.append(jacobian)
    return out.numel(), [None if a is None else (a, n) for a, n in zip(analytical, numerical)]


def relu_like(apply, inputs):
    \"\"\"Is apply a ReLU: one float input, and its forward equals torch.relu's at these
    values and at seeded random ones of their shape?\"\"\"
    if len(inputs) != 1 or not is_float_tensor(inputs[0]):
        return False
    try:
        with torch.no_grad():
            return all(torch.equal(flat_outputs(apply, (x,)), torch.relu(x).reshape(-1))
                       for x in (inputs[0], random_like(inputs[0])))
    except Exception:
        return False


def matches_relu(apply, inputs):
    \"\"\"Does apply's gradient equal torch.relu's at these inputs?\"\"\"
    grad, = torch.autograd.grad(apply(*inputs).sum(), inputs)
    relu_grad, = torch.autograd.grad(torch.relu(inputs[0]).sum(), inputs)
    return bool(torch.allclose(grad, relu_grad))
"""

INPUTS = "{name}_inputs, {name}_source = inputs_at({name}.apply, {name}_captured, {count})\n"
ABSENT = "{name}_inputs, {name}_source = random_inputs({count}), 'absent'\n"

CHECK = """{name}_line = {line}
{inputs}{each_input}{name}_gradcheck, {name}_says = verdict({name}.apply, {name}_inputs)
{name}_outputs, {name}_jacobians = jacobians({name}.apply, {name}_inputs)
{unpack}if relu_like({name}.apply, {name}_inputs):
    {name}_matches_relu = matches_relu({name}.apply, {name}_inputs)
"""

INPUT = "{name}_input_{k} = {name}_inputs[{k}]\n"
UNPACK = """if {name}_jacobians[{k}] is not None:
    {name}_analytical_{k}, {name}_numerical_{k} = {name}_jacobians[{k}]
"""

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
LOOPS = (ast.For, ast.While)


def inputs(node: ast.ClassDef) -> int:
    """How many tensors `forward` takes: its positional parameters without a default, but for
    `ctx` (which a class with `setup_context` does not take); at least one."""
    methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return 1
    args = forward.args
    count = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    return max(1, count - ("setup_context" not in methods))


def _outside_functions(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what it holds, but for functions and classes (their names are not the
    program's variables)."""
    stack = [node]
    while stack:
        here = stack.pop()
        if not isinstance(here, SCOPES):
            yield here
            stack.extend(ast.iter_child_nodes(here))


def _applies(func: ast.expr, names: set[str], aliases: dict[str, str]) -> str | None:
    """The Function class a call of `func` applies: `X.apply` or an alias of it."""
    if (isinstance(func, ast.Attribute) and func.attr == "apply"
            and isinstance(func.value, ast.Name) and func.value.id in names):
        return func.value.id
    return aliases.get(func.id) if isinstance(func, ast.Name) else None


def first_calls(body: list[ast.stmt], names: set[str]) -> dict[str, ast.Call]:
    """Each class's first call of its apply in the program's own scope (not in a function or
    a class)."""
    aliases: dict[str, str] = {}
    for statement in body:
        for node in _outside_functions(statement):
            if isinstance(node, ast.Assign) and (name := _applies(node.value, names, {})):
                aliases.update((target.id, name) for target in node.targets
                               if isinstance(target, ast.Name))
    found: dict[str, ast.Call] = {}
    for statement in body:
        calls = sorted((node for node in _outside_functions(statement)
                        if isinstance(node, ast.Call)),
                       key=lambda call: (call.lineno, call.col_offset))
        for call in calls:
            name = _applies(call.func, names, aliases)
            if name is not None and name not in found:
                found[name] = call
    return found


def _rebuildable(call: ast.Call) -> bool:
    """Can the check take a call's arguments as they are: no keywords, no `*args`?"""
    return not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args)


def _capture(name: str, call: ast.Call) -> ast.stmt:
    """`{name}_captured = (its arguments,)`, where an error leaves it None."""
    keep = ast.Assign([ast.Name(f"{name}_captured", ast.Store())],
                      ast.Tuple(list(call.args), ast.Load()))
    return _guarded([keep])


def _guarded(body: list[ast.stmt]) -> ast.stmt:
    """`body` in a `try` that passes over any Exception (not a run's limits)."""
    return ast.Try(body, [ast.ExceptHandler(ast.Name("Exception", ast.Load()), None,
                                            [ast.Pass()])], [], [])


def _holders(statements: list[ast.stmt], calls: dict[str, ast.Call]) -> dict[str, int]:
    """The index of the statement that holds each of `calls` (those some statement holds),
    found in one walk of the statements."""
    names: dict[int, list[str]] = {}
    for name, call in calls.items():
        names.setdefault(id(call), []).append(name)
    found: dict[str, int] = {}
    for index, statement in enumerate(statements):
        for node in _outside_functions(statement):
            found.update((name, index) for name in names.get(id(node), ()))
    return found


def _replayed(statements: list[ast.stmt], wanted: dict[str, ast.Call],
              skip: tuple[type, ...] = (), depth: int = 0) -> list[ast.stmt]:
    """`statements` up to their first loop or the last that holds a wanted call, each call's
    arguments captured just before the statement that holds it; of a loop that holds one,
    its first round up to there (inside `depth` loops already, up to LOOPS_DEEP: each level
    walks what it holds again)."""
    at = _holders(statements, wanted)
    last = max(at.values())
    stop = next((i for i, statement in enumerate(statements[:last + 1])
                 if isinstance(statement, LOOPS)), last)
    out: list[ast.stmt] = []
    for index, statement in enumerate(statements[:stop + 1]):
        here = {name: wanted[name] for name, i in at.items() if i == index}
        inside = {name: here[name] for name in _holders(statement.body, here)} if isinstance(
            statement, LOOPS) else {}
        first = _first_round(statement, inside, depth + 1) if inside else None
        out += [_capture(name, call) for name, call in here.items()
                if first is None or name not in inside]
        if first is not None:
            out += first
            continue
        if index < stop and not isinstance(statement, skip):
            out.append(statement)
    return out + [_capture(name, wanted[name]) for name, i in at.items() if i > stop]


def _first_round(loop: ast.For | ast.While, wanted: dict[str, ast.Call],
                 depth: int) -> list[ast.stmt] | None:
    """A loop's first round, as plain statements, up to where it applies the wanted classes:
    `target = next(iter(...))` then its body (or `if test:` and its body); None where that
    part of the body breaks or continues the loop, or the loop is more than LOOPS_DEEP deep
    (`depth`)."""
    if depth > LOOPS_DEEP:
        return None
    body = _replayed(loop.body, wanted, depth=depth)
    if _jumps(body):
        return None
    if isinstance(loop, ast.While):
        return [ast.If(loop.test, body, [])]
    first = ast.Call(ast.Name("next", ast.Load()),
                     [ast.Call(ast.Name("iter", ast.Load()), [loop.iter], [])], [])
    return [ast.Assign([loop.target], first), *body]


def _jumps(statements: list[ast.stmt]) -> bool:
    """Does any of `statements` break or continue the loop that holds them?"""
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Break | ast.Continue):
            return True
        if isinstance(node, LOOPS):
            stack.extend(node.orelse)
        elif not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False


def replay(body: list[ast.stmt], calls: dict[str, ast.Call]) -> list[ast.stmt]:
    """The program's first top-level statements (no import or class: those come first), up to
    its first loop (whose first round is replayed up to its calls) or its last call, each class's
    arguments captured just before its call (`{name}_captured`, None where a call's arguments
    cannot be taken as they are); the whole guarded, so that an error there leaves what it
    did not reach None."""
    unset = [ast.parse(f"{name}_captured = None").body[0] for name in calls]
    wanted = {name: call for name, call in calls.items() if _rebuildable(call)}
    if not wanted:
        return unset
    return [*unset, _guarded(_replayed(body, wanted, (ast.Import, ast.ImportFrom,
                                                      ast.ClassDef)))]


def _check(node: ast.ClassDef, call: ast.Call | None) -> str:
    """The check of one class, at its captured arguments, or at random inputs where the
    program does not call it where the check can see."""
    name = node.name
    count = len(call.args) if call is not None and _rebuildable(call) else inputs(node)
    made = (ABSENT if call is None else INPUTS).format(name=name, count=count)
    return CHECK.format(
        name=name, line=None if call is None else call.lineno, inputs=made,
        each_input="".join(INPUT.format(name=name, k=k) for k in range(count)),
        unpack="".join(UNPACK.format(name=name, k=k) for k in range(count)))


def gradient_checks(code: str) -> tuple[list[str], str]:
    """The names of the classes in `code` that subclass an autograd Function, and a program
    of its imports and classes, the replay of its first statements, and a gradient check of
    each ([] and "" if there are none or `code` does not parse). Parses `code` once."""
    try:
        return _gradient_checks(ast.parse(code))
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # writing it back recurses too
        return [], ""


def _gradient_checks(tree: ast.Module) -> tuple[list[str], str]:
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)
               and any(ast.unparse(base).endswith("Function") for base in node.bases)]
    if not classes:
        return [], ""
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom
                                                     | ast.ClassDef)]
    calls = first_calls(tree.body, {node.name for node in classes})
    program = ast.unparse(ast.fix_missing_locations(ast.Module([*kept, *replay(tree.body,
                                                                             calls)], [])))
    return [node.name for node in classes], "\n".join(
        [program, HEAD, *(_check(node, calls.get(node.name)) for node in classes)])


def verdicts(variables: Variables, names: list[str]) -> list[dict[str, Any]]:
    """Per class: did gradcheck pass, and does the gradient match torch.relu's (None where
    its forward is not a ReLU)?"""
    out = []
    for name in names:
        passed = value_of(variables, f"{name}_gradcheck")
        matches = value_of(variables, f"{name}_matches_relu")
        out.append({"name": name, "gradcheck": passed,
                    "matches_relu": matches if isinstance(matches, bool) else None})
    return out


@dataclass(frozen=True)
class Inputs:
    """What one class was checked at: whose values (one of SOURCES), the program's line that
    calls it (None if none does), each input's shape, and how many elements they have."""

    source: str
    line: int | None
    shapes: list[str]
    elements: int

    @property
    def fast(self) -> bool:
        """Did gradcheck take its fast mode (a random projection of the Jacobians)?"""
        return self.elements > FAST


def inputs_used(variables: Variables, name: str) -> Inputs | None:
    """What class `name` was checked at, as the check recorded it (None if it did not get
    that far)."""
    source, line = value_of(variables, f"{name}_source"), value_of(variables, f"{name}_line")
    if source not in SOURCES:
        return None
    shown = [variables[f"{name}_input_{k}"] for k in range(len(variables))
             if f"{name}_input_{k}" in variables]
    return Inputs(source, line if isinstance(line, int) and not isinstance(line, bool) else None,
                  [_shape(info) for info in shown], sum(_elements(info) for info in shown))


def _shape(info: Variable) -> str:
    """A tensor's shape as PyTorch writes a tuple, `(3,)`; another value as itself."""
    if info.kind != "tensor" or info.shape is None:
        return str(info.values)[:40]
    return "(" + ", ".join(map(str, info.shape)) + ("," if len(info.shape) == 1 else "") + ")"


def _elements(info: Variable) -> int:
    """The elements of a float tensor (what gradcheck varies); 0 for anything else."""
    floats = info.kind == "tensor" and (info.dtype or "").startswith(("torch.float",
                                                                      "torch.double",
                                                                      "torch.half",
                                                                      "torch.bfloat"))
    return info.numel or 0 if floats else 0


@dataclass(frozen=True)
class Jacobian:
    """One input's two Jacobians (row i, column j: d output[i] / d input[j]) and where they
    differ by gradcheck's rule; `index` is the input's place among forward's arguments and
    `elements` how many elements it has (the columns, of which the first COLUMNS are kept)."""

    analytical: list[list[float]]
    numerical: list[list[float]]
    differs: list[list[bool]]
    index: int
    elements: int

    @property
    def count(self) -> int:
        """How many entries differ."""
        return sum(map(sum, self.differs))

    @property
    def size(self) -> int:
        """How many entries there are."""
        return sum(map(len, self.differs))

    def worst(self) -> tuple[int, int] | None:
        """Row and column of the differing entry farthest apart (None if none differs)."""
        marked = [(i, j) for i, row in enumerate(self.differs) for j, mark in enumerate(row)
                  if mark]
        return max(marked, key=lambda at: _gap(self.analytical[at[0]][at[1]],
                                               self.numerical[at[0]][at[1]]), default=None)


def differs(analytical: float, numerical: float, atol: float = ATOL,
            rtol: float = RTOL) -> bool:
    """gradcheck's rule (torch.allclose): |a - n| > atol + rtol * |n|; NaN always differs."""
    return not abs(analytical - numerical) <= atol + rtol * abs(numerical)


def _gap(analytical: float, numerical: float) -> float:
    """|a - n|, infinite where either is not a number."""
    gap = abs(analytical - numerical)
    return math.inf if math.isnan(gap) else gap


def jacobians(variables: Variables, name: str) -> tuple[int, list[Jacobian]]:
    """How many output elements class `name` has, and its Jacobians per input that takes a
    gradient, as the check left them ((0, []) if it did not get that far)."""
    outputs = value_of(variables, f"{name}_outputs")
    found = []
    for k in range(len(variables)):
        given = variables.get(f"{name}_input_{k}")
        if given is None:
            break
        analytical = _matrix(variables.get(f"{name}_analytical_{k}"))
        numerical = _matrix(variables.get(f"{name}_numerical_{k}"))
        if analytical is None or numerical is None or list(map(len, analytical)) != list(
                map(len, numerical)):
            continue
        found.append(Jacobian(analytical, numerical, [
            [differs(a, n) for a, n in zip(row_a, row_n, strict=True)]
            for row_a, row_n in zip(analytical, numerical, strict=True)], k, _elements(given)))
    if not isinstance(outputs, int) or isinstance(outputs, bool) or not found:
        return 0, []
    return outputs, found


def said(variables: Variables, name: str) -> str:
    """The first line of gradcheck's own message when class `name` failed ("" if none)."""
    says = value_of(variables, f"{name}_says")
    return says.strip().rstrip(",") if isinstance(says, str) else ""


def _matrix(info: Variable | None) -> list[list[float]] | None:
    """A Jacobian's values as floats (NaN for what is not a number), at most ROWS by COLUMNS;
    None if `info` is not a matrix."""
    values = None if info is None else info.values
    if not isinstance(values, list) or not all(isinstance(row, list) for row in values):
        return None
    return [[_float(v) for v in row[:COLUMNS]] for row in values[:ROWS]]


def _float(value: Any) -> float:
    """A recorded number as a float ("inf", "nan" are recorded as text); NaN if it is none."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def number(value: float, digits: int = 4) -> str:
    """`value` in `digits` significant digits, without the sign of a negative zero."""
    return f"{value + 0.0:.{digits}g}"


def table(values: list[list[float]], marked: list[list[bool]]) -> str:
    """A markdown table of a Jacobian: a row per output element, a column per input element,
    the marked entries bold on red."""
    columns = max(map(len, values), default=0)
    lines = ["| | " + " | ".join(str(j) for j in range(columns)) + " |",
             "|---:|" + "---:|" * columns]
    for i, (row, marks) in enumerate(zip(values, marked, strict=True)):
        cells = [f":red-background[**{number(v)}**]" if mark else number(v)
                 for v, mark in zip(row, marks, strict=True)]
        lines.append(f"| **{i}** | " + " | ".join(cells) + " |")
    return "\n".join(lines)
