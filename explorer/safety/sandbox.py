"""What a learner's program may contain: an AST allow-list, checked before anything runs.

`prepare(code)` parses the program, refuses anything outside the teaching subset with a
`Refused` error that names the line and the reason, and rewrites the tree so that the
runtime guards in `explorer.safety.guards` see every loop turn, attribute store, big power,
import and class statement. Names the rewrite introduces start with `__ae_`, which no
user program can spell (dunder names are refused), so they cannot be replaced.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

FILENAME = "<program>"  # the file name a program is parsed and compiled under
USER_MODULE = "__main__"  # a program's `__name__`, and its classes' `__module__`

# Modules a program may import (`time` and `functools` bind stand-ins with a few of their
# functions, `__future__` nothing).
# Submodules reachable by attribute from these are checked like any other attribute.
MODULES = frozenset({
    "torch", "torch.nn", "torch.nn.functional", "torch.autograd", "torch.autograd.functional",
    "torch.optim", "torch.linalg", "torch.fft", "torch.special", "torch.cuda",
    "torch.distributions", "torch.func", "torch.autograd.forward_ad", "torch.autograd.function",
    "torch.nn.utils", "torch.utils.data", "torch.testing", "numpy", "numpy.linalg",
    "numpy.random", "numpy.lib.stride_tricks", "math", "random", "time", "functools",
    "__future__",
})

# Private names of a library's objects that teach something and give no reach: a tensor's
# version counter, its base when it is a view, and what an autograd node saved for backward
# (`_saved_self`...). The program's own plain classes and objects may have any (`_prev`).
ALLOWED_PRIVATE = re.compile(r"^(_version|_base|_saved_\w+|_raw_saved_\w+)$")

# Attribute names refused on any object: files, processes, native code, compilers and
# introspection that walks from a value to the interpreter (frames, code, globals).
BLOCKED_ATTRS = frozenset({
    # files and serialisation
    "load", "save", "from_file", "fromfile", "tofile", "memmap", "loadtxt", "savetxt", "savez",
    "savez_compressed", "genfromtxt", "fromregex", "DataSource", "open_memmap", "dump", "dumps",
    "load_library", "load_state_dict_from_url", "download_url_to_file", "export_chrome_trace",
    "export_stacks", "get_unsafe_globals_in_checkpoint", "tunable", "debug_dump",
    # where the server's files are (install paths, build configuration)
    "get_include", "show_config", "show_runtime", "cmake_prefix_path", "get_file_path",
    # native code, compilers, process and device reach
    "ctypes", "cffi", "ctypeslib", "f2py", "distutils", "hub", "ops", "jit", "compile", "compiler",
    "library", "classes", "fx", "cpp_extension", "multiprocessing", "distributed",
    "package", "onnx", "export", "profiler", "profiler_legacy", "jiterator", "_C",
    "share_memory_", "share_memory", "from_buffer", "set_per_process_memory_fraction",
    "memory_snapshot", "nvtx", "overrides", "prepare_multiprocessing_environment",
    "as_strided", "PyTorchFileReader", "PyTorchFileWriter",
    "serialization", "gds", "cudart", "CUDAPluggableAllocator", "XPUPluggableAllocator",
    "change_current_allocator", "compile_shader",
    # more threads than the pool gave this run would take cores from every other run
    "set_num_threads", "set_num_interop_threads",
    # interpreter introspection
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "gi_frame", "gi_code",
    "gi_yieldfrom", "cr_frame", "cr_code", "ag_frame", "ag_code", "tb_frame", "tb_next",
    "co_code", "func_globals", "mro", "set_",
})

# String methods whose fields walk attributes from inside the string: "{0.__class__}".
FORMAT_METHODS = frozenset({"format", "format_map"})

# Dunder attributes that are plain strings and teach something (`torch.__version__`).
ALLOWED_DUNDER_ATTRS = frozenset({"__version__", "__name__", "__doc__", "__class__"})
# Dunder names a program may use: `if __name__ == "__main__":`, and the methods of its own
# classes that Python calls for it (a Dataset's `__len__` and `__getitem__`...).
ALLOWED_DUNDER_NAMES = frozenset({"__name__"})
ARITHMETIC = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow")
DUNDER_METHODS = frozenset({
    "__init__", "__call__", "__len__", "__getitem__", "__setitem__", "__iter__", "__next__",
    "__repr__", "__str__", "__contains__", "__enter__", "__exit__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__neg__", "__pos__",
    "__abs__", "__setattr__", *(f"__{kind}{op}__" for op in ARITHMETIC
                                for kind in ("", "r", "i"))})
# What a method may reach of its class's parent by name: `super().__init__(...)`, and
# `super().__setattr__(k, v)` in a `__setattr__` of its own (checked as `setattr` is).
SUPER_METHODS = frozenset({"__init__", "__setattr__"})

# Statements and expressions of the teaching subset. Anything else is refused by name.
ALLOWED_NODES = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.Break,
    ast.Continue, ast.If, ast.For, ast.While, ast.With, ast.withitem, ast.FunctionDef,
    ast.Lambda, ast.Return, ast.ClassDef, ast.Import, ast.ImportFrom, ast.alias, ast.arguments,
    ast.arg, ast.keyword, ast.Delete, ast.Assert, ast.Raise, ast.Try, ast.ExceptHandler,
    ast.Name, ast.Load, ast.Store, ast.Del, ast.Constant, ast.Attribute, ast.Subscript,
    ast.Slice, ast.Starred, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.Call, ast.BinOp,
    ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp, ast.comprehension, ast.JoinedStr, ast.FormattedValue, ast.NamedExpr,
    ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context,
)

REASONS = {
    ast.AsyncFunctionDef: "async code is outside the teaching subset",
    ast.Await: "async code is outside the teaching subset",
    ast.Match: "`match` statements are outside the teaching subset",
}

# Builtins that run code from strings, open files or reach a namespace or raw memory. They are
# not in a program's namespace; naming them gets this clear refusal rather than a NameError.
# (`getattr`, `setattr` and `delattr` are there, checked like a written attribute.)
ESCAPE_NAMES = frozenset({"exec", "eval", "compile", "open", "vars", "globals", "locals",
                          "breakpoint", "memoryview"})

# Longer programs are refused before parsing: a lesson is a page of code, not megabytes.
MAX_CODE_CHARS = 100_000

# Full-width punctuation that Chinese input methods produce inside code.
FULL_WIDTH = str.maketrans("（）【】，：；＝＋－＊／．“”‘’", "()[],:;=+-*/.\"\"''")


class Refused(BaseException):
    """The program asks for something outside the sandbox. Found before it runs, nothing of it
    ran; found while it runs, the program stops there: like a limit, `except Exception` in the
    program cannot catch it."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.line = line
        self.reason = reason


@dataclass
class Program:
    """A checked and rewritten program, ready to run statement by statement."""

    tree: ast.Module
    notes: list[str] = field(default_factory=list)  # the keys of the run's notes it makes


def prepare(code: str) -> Program:
    """Parse, check and rewrite `code`; raise `Refused` or `SyntaxError` if it may not run."""
    if len(code) > MAX_CODE_CHARS:
        raise Refused(None, f"the program has {len(code):,} characters; a program here may "
                            f"have at most {MAX_CODE_CHARS:,}")
    notes: list[str] = []
    try:
        tree = _parse(code)
    except SyntaxError as error:
        tree = _parse_full_width(code, error)
        notes.append("full_width")  # （ ） ， ： read as ( ) , :
    _Checker().visit(tree)
    tree = ast.fix_missing_locations(_Rewriter().visit(tree))
    return Program(tree, notes)


def _parse(code: str) -> ast.Module:
    """`ast.parse`, every failure of it a `SyntaxError` or `Refused` naming the problem."""
    try:
        return ast.parse(code, FILENAME)
    except UnicodeEncodeError as error:  # a lone surrogate such as "\ud800" is not text
        line = code.count("\n", 0, error.start) + 1
        raise SyntaxError(f"character U+{ord(code[error.start]):04X} is not valid text",
                          (FILENAME, line, None, None)) from None
    except ValueError as error:  # a NUL character, on Python versions that say so this way
        raise SyntaxError(str(error)) from None
    except (MemoryError, RecursionError):  # the parser ran out of stack
        raise Refused(None, "the program is nested too deeply to check") from None


def _parse_full_width(code: str, error: SyntaxError) -> ast.Module:
    """Parse `code` typed with a Chinese input method, or raise the original error."""
    fixed = code.translate(FULL_WIDTH)
    try:
        if fixed != code:
            return _parse(fixed)
    except SyntaxError:
        pass
    raise error


def check_name(name: str, line: int | None) -> None:
    """Refuse a name outside the sandbox (at `line`, or at run time)."""
    if name in ESCAPE_NAMES:
        raise Refused(line, f"`{name}` is not available in the sandbox: a program may not run "
                            "code from strings, open files or reach a namespace")
    if name.startswith("__ae_"):
        raise Refused(line, f"the name `{name}` is reserved by the explorer")
    if name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDER_NAMES:
        raise Refused(line, f"dunder names such as `{name}` are outside the sandbox")


def check_attr(attr: str, line: int | None, *, store: bool = False) -> None:
    """Refuse an attribute name outside the sandbox (at `line`, or at run time), to read or,
    with `store`, to set or delete. A private name is judged with its object, at run time
    (`check_private`)."""
    if store and attr.startswith("__"):
        raise Refused(line, f"`.{attr}` may be read, not changed")
    if attr in ALLOWED_DUNDER_ATTRS:
        return
    if attr in BLOCKED_ATTRS:
        raise Refused(line, f"`.{attr}` reaches files, processes or native code, which this "
                            "sandbox does not allow")
    if attr.startswith("__") and attr.endswith("__"):
        raise Refused(line, f"private attribute `.{attr}` is outside the sandbox (allowed: "
                            "`_version`, `_base`, `_saved_*`)")


def check_private(attr: str, line: int | None) -> None:
    """Refuse a private name of a library's object or module (at `line`, or at run time); a
    dunder name is `check_attr`'s."""
    dunder = attr.startswith("__") and attr.endswith("__")
    if attr.startswith("_") and not dunder and not ALLOWED_PRIVATE.match(attr):
        raise Refused(line, f"private attribute `.{attr}` of a library is outside the sandbox "
                            "(allowed: `_version`, `_base`, `_saved_*`, and any of your own "
                            "classes' objects)")


class _Checker(ast.NodeVisitor):
    """Refuses every node outside the allow-list, naming its line."""

    def generic_visit(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", None)
        if not isinstance(node, ALLOWED_NODES):
            reason = REASONS.get(type(node), f"`{type(node).__name__}` is outside the teaching "
                                             "subset")
            raise Refused(line, reason)
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        check_name(node.id, node.lineno)

    def visit_arg(self, node: ast.arg) -> None:
        check_name(node.arg, node.lineno)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        store = not isinstance(node.ctx, ast.Load)
        if store or not (node.attr in SUPER_METHODS and _is_super_call(node.value)):
            check_attr(node.attr, node.lineno, store=store)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg:
            check_name(node.arg, node.value.lineno)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name not in DUNDER_METHODS:  # methods Python calls for the program's classes
            check_name(node.name, node.lineno)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        check_name(node.name, node.lineno)
        if node.keywords:
            raise Refused(node.lineno, "class keywords such as `metaclass=` are outside the "
                                       "sandbox")
        for stmt in node.body:
            if not isinstance(stmt, ast.FunctionDef | ast.Expr | ast.Assign | ast.Pass):
                raise Refused(stmt.lineno, "a class body may hold methods, a docstring and "
                                           "plain assignments only")
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is None:
            raise Refused(node.lineno, "a bare `except:` would hide the explorer's limits; "
                                       "name the exception, e.g. `except RuntimeError as e:`")
        if node.name:
            check_name(node.name, node.lineno)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            _check_module(alias.name, node.lineno)
            if alias.asname:
                check_name(alias.asname, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            raise Refused(node.lineno, "relative imports are outside the sandbox")
        if not all(_submodule(node.module, alias.name) for alias in node.names):
            _check_module(node.module, node.lineno)
        for alias in node.names:
            if alias.name == "*":
                raise Refused(node.lineno, "`import *` is outside the sandbox: name what you "
                                           "use")
            if node.module != "__future__":
                check_attr(alias.name, node.lineno)
                check_private(alias.name, node.lineno)
            check_name(alias.asname or alias.name, node.lineno)


def _is_super_call(node: ast.expr) -> bool:
    """`super()` or `super(Cls, self)`, as in `super().__init__()`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "super")


def _submodule(module: str, name: str) -> str | None:
    """`module.name` if it is a module a program may import (`from torch.utils import data`
    is `import torch.utils.data as data`), else None."""
    whole = f"{module}.{name}"
    return whole if whole in MODULES else None


def _check_module(name: str, line: int) -> None:
    if name not in MODULES:
        allowed = ", ".join(sorted(m for m in MODULES if m != "__future__"))
        raise Refused(line, f"import of `{name}` is not allowed; available: {allowed}")


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(f"__ae_{name}__", ast.Load()), list(args), [])


class _Rewriter(ast.NodeTransformer):
    """Routes loops, stores, powers, imports and classes through the runtime guards."""

    def _tick_body(self, node: ast.For | ast.While) -> ast.AST:
        self.generic_visit(node)
        tick = ast.Expr(_call("tick"))
        node.body.insert(0, ast.copy_location(tick, node.body[0]))
        return node

    visit_For = visit_While = _tick_body

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.iter = ast.copy_location(_call("iter", node.iter), node.iter)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            node.value = ast.copy_location(_call("settable", node.value,
                                                 ast.Constant(node.attr)), node.value)
            return node
        guard = "format" if node.attr in FORMAT_METHODS else "attr"
        return ast.copy_location(_call(guard, node.value, ast.Constant(node.attr)), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        for keyword in node.keywords:  # `**mapping`: its keys are names too
            if keyword.arg is None:
                keyword.value = ast.copy_location(_call("keywords", keyword.value),
                                                  keyword.value)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow | ast.LShift):
            op = ast.Constant(type(node.op).__name__)
            return ast.copy_location(_call("binop", op, node.left, node.right), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow | ast.LShift):
            op = ast.Constant(type(node.op).__name__)
            node.value = ast.copy_location(_call("operand", op, node.value), node.value)
        return node

    def visit_Import(self, node: ast.Import) -> ast.stmt:
        names, values = [], []
        for alias in node.names:
            # `import torch.nn.functional` binds `torch`; `... as F` binds the submodule.
            module = alias.name if alias.asname else alias.name.split(".")[0]
            names.append(alias.asname or module)
            values.append(_call("import", ast.Constant(module)))
        return _bind(node, names, values)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.stmt:
        if node.module == "__future__":
            return ast.copy_location(ast.Pass(), node)
        values = []
        for alias in node.names:  # `from torch import os` is `torch.os`: the same guard
            whole = _submodule(node.module, alias.name)
            values.append(_call("import", ast.Constant(whole)) if whole else _call(
                "attr", _call("import", ast.Constant(node.module)), ast.Constant(alias.name)))
        return _bind(node, [alias.asname or alias.name for alias in node.names], values)


def _bind(node: ast.stmt, names: list[str], values: list[ast.expr]) -> ast.stmt:
    """One assignment of `values` (each through its guard) to `names`, standing for the
    import `node`: one statement, as the program wrote it, so one step (`a, b = va, vb`)."""
    if len(names) == 1:
        target: ast.expr = ast.Name(names[0], ast.Store())
        value: ast.expr = values[0]
    else:
        target = ast.Tuple([ast.Name(name, ast.Store()) for name in names], ast.Store())
        value = ast.Tuple(values, ast.Load())
    return ast.copy_location(ast.Assign([target], value), node)
