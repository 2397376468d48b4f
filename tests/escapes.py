"""The escape corpus: programs that try to leave the sandbox, and programs that must keep working.

`ATTACKS` are one attack per row: `(id, category, code, kind, message)`. `kind` is the error
type the run must end with and `message` a part of its message. In `code`, `CANARY` stands
for the path of a file that must never be created and `SECRET` for a file whose contents must
never come back; `tests/test_escapes.py` fills in both. A `Bomb` row is the same, run with
small limits (`BOMB_LIMITS`): the point there is which limit stops it.

`BENIGN` are tutorial programs with the exact output they must print, so that safety never
breaks teaching.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.safety.limits import Limits


@dataclass(frozen=True)
class Attack:
    """A program that must be refused (or fail cleanly) without any side effect."""

    id: str
    category: str
    code: str
    kind: str
    message: str


class Bomb(Attack):
    """A resource bomb: run under `BOMB_LIMITS`, stopped by the limit `kind` names."""


# Small enough that bombs end quickly, large enough that every limit is the one that trips.
BOMB_LIMITS = Limits(time_s=1.5, loop_iterations=100_000)

PRIVATE = "private attribute"
FILES = "reaches files, processes or native code"
DUNDER = "dunder names"
FORMAT = "format field"
STR_FORMAT = "rather than `str.format(...)`"
MEMORY = "the memory limit for one run"
STOPPED = "stopped after 1.5 s"
LOOPS = "loop iterations"
BIG_INT = "more than a million bits"
RECURSION = "keeps calling itself"
NESTED = "nested too deeply"
NOT_ALLOWED = "is not allowed; available"
NOT_AVAILABLE = "is not available in the sandbox"
MODULE = "leads to the module"
CLASSES = "must subclass torch.autograd.Function, torch.nn.Module, a Dataset or a class"
GEN = "(i for i in range(3))\n"

ATTACKS: list[Attack] = [
    # --- dunder walks: from a value to the interpreter's classes, globals and builtins -----
    Attack("subclasses", "dunder", "().__class__.__base__.__subclasses__()", "Refused", PRIVATE),
    Attack("mro", "dunder", "[].__class__.__mro__[1].__subclasses__()", "Refused", PRIVATE),
    Attack("bases", "dunder", "(1).__class__.__bases__[0].__subclasses__()", "Refused", PRIVATE),
    Attack("str-mro", "dunder", "''.__class__.__mro__[-1].__subclasses__()", "Refused", PRIVATE),
    Attack("init-globals", "dunder", "torch.ones(1).__class__.__init__.__globals__", "Refused",
           PRIVATE),
    Attack("func-globals", "dunder", "torch.nn.functional.relu.__globals__['os']", "Refused",
           "`.__globals__`"),
    Attack("func-code", "dunder", "(lambda: 0).__code__.co_consts", "Refused", "`.__code__`"),
    Attack("module-dict", "dunder", "torch.__dict__['load']('SECRET')", "Refused", "`.__dict__`"),
    Attack("builtin-self", "dunder", "print.__self__", "Refused", "`.__self__`"),
    Attack("loader", "dunder", "np.__loader__", "Refused", "`.__loader__`"),
    Attack("spec", "dunder", "torch.__spec__", "Refused", "`.__spec__`"),
    Attack("reduce", "dunder", "torch.ones(1).__reduce_ex__(2)", "Refused", "`.__reduce_ex__`"),
    Attack("builtins-name", "dunder", "__builtins__['open']('SECRET')", "Refused", DUNDER),
    Attack("import-name", "dunder", "__import__('os').system('touch CANARY')", "Refused", DUNDER),
    Attack("def-globals", "dunder", "def f():\n    pass\nf.__globals__", "Refused", PRIVATE),
    Attack("setattr-dunder", "dunder", "x = torch.ones(1)\nx.__setattr__('y', 1)", "Refused",
           PRIVATE),
    Attack("set-class", "dunder", "x = torch.ones(1)\nx.__class__ = torch.nn.Parameter",
           "Refused", "may be read, not changed"),
    Attack("array-interface", "dunder", "np.ones(1).__array_interface__", "Refused", PRIVATE),
    Attack("full-width-walk", "dunder", "（）.__class__.__base__", "Refused", PRIVATE),
    Attack("type-subclasses", "dunder", "type(1).__subclasses__()", "Refused", PRIVATE),

    # --- generators, frames and tracebacks ---------------------------------------------------
    Attack("gi-frame", "frame", "g = " + GEN + "g.gi_frame", "Refused",
           "`.gi_frame` " + FILES),
    Attack("gi-frame-globals", "frame", "g = " + GEN + "g.gi_frame.f_globals", "Refused",
           "`.f_globals` " + FILES),
    Attack("gi-code", "frame", "g = " + GEN + "g.gi_code", "Refused", "`.gi_code`"),
    Attack("gi-yieldfrom", "frame", "g = " + GEN + "g.gi_yieldfrom", "Refused",
           "`.gi_yieldfrom`"),
    Attack("f-back", "frame", "g = " + GEN + "f = g.gi_frame\nf.f_back", "Refused",
           "`.gi_frame`"),
    Attack("traceback", "frame", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
           "    tb = e.__traceback__", "Refused", "`.__traceback__`"),
    Attack("tb-frame", "frame", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
           "    e.with_traceback(None).tb_frame", "Refused", "`.tb_frame`"),
    Attack("tb-next", "frame", "e = None\ne.tb_next", "Refused", "`.tb_next`"),
    Attack("yield", "frame", "g = (lambda: (yield))()\ng.gi_frame", "Refused", "`.gi_frame`"),
    Attack("def-yield", "frame", "def f():\n    yield 1\nf().gi_code", "Refused", "`.gi_code`"),
    Attack("yield-from", "frame", "def f():\n    yield from [1]\nf().gi_yieldfrom", "Refused",
           "`.gi_yieldfrom`"),
    Attack("async", "frame", "async def f():\n    pass", "Refused", "async code"),
    Attack("f-locals", "frame", "torch.f_locals", "Refused", "`.f_locals`"),
    Attack("co-code", "frame", "(lambda: 1).co_code", "Refused", "`.co_code`"),
    Attack("cr-frame", "frame", "x = 1\nx.cr_frame", "Refused", "`.cr_frame`"),
    Attack("import-inspect", "frame", "import inspect\ninspect.currentframe()", "Refused",
           NOT_ALLOWED),
    Attack("import-sys-frame", "frame", "import sys\nsys._getframe()", "Refused", NOT_ALLOWED),
    Attack("gi-frame-format", "frame", "g = " + GEN + "'{0.gi_frame}'.format(g)", "Refused",
           FORMAT),

    # --- str.format walks attributes from inside the string ----------------------------------
    Attack("format-class", "format", "'{0.__class__}'.format(1)", "Refused", FORMAT),
    Attack("format-mro", "format", "'{0.__class__.__mro__}'.format(torch.ones(1))", "Refused",
           FORMAT),
    Attack("format-globals", "format", "'{0.__globals__}'.format(torch.nn.functional.relu)",
           "Refused", FORMAT),
    Attack("format-init-globals", "format",
           "'{0.__init__.__globals__[os]}'.format(torch.nn.Module())", "Refused", FORMAT),
    Attack("format-keyword", "format", "'{x.__class__}'.format(x=1)", "Refused", FORMAT),
    Attack("format-index", "format", "'{0[0].__class__}'.format([1])", "Refused", FORMAT),
    Attack("format-map", "format", "'{a.__class__}'.format_map({'a': 1})", "Refused", FORMAT),
    Attack("format-nested-spec", "format", "'{0:{1.__class__}}'.format(1, 2)", "Refused",
           FORMAT),
    Attack("format-blocked", "format", "'{0.f_globals}'.format(1)", "Refused", FORMAT),
    Attack("str-format", "format", "str.format('{0.__class__}', 1)", "Refused", STR_FORMAT),
    Attack("str-format-map", "format", "str.format_map('{a.__class__}', {'a': 1})", "Refused",
           STR_FORMAT),
    Attack("np-str-format", "format", "np.str_.format('{0.__class__.__mro__}', 1)", "Refused",
           STR_FORMAT),
    Attack("np-str-format-bound", "format", "f = np.str_.format\n"
           "f('{0.__globals__[__builtins__]}', torch.nn.functional.relu)", "Refused",
           STR_FORMAT),
    Attack("type-str-format", "format", "type('').format('{0.__class__}', 1)", "Refused",
           STR_FORMAT),
    Attack("format-module", "format", "'{0.os.environ}'.format(torch)", "Refused",
           "`.os` leads to the module `os`"),
    Attack("format-sys", "format", "'{0.sys.modules}'.format(torch)", "Refused",
           "`.sys` leads to the module `sys`"),
    Attack("format-in-map", "format", "list(map('{0.__class__}'.format, [1]))", "Refused",
           FORMAT),
    Attack("fstring-dunder", "format", "x = 1\nf'{x.__class__.__bases__}'", "Refused", PRIVATE),

    # --- reaching attributes, names and modules by name --------------------------------------
    Attack("getattr", "reflection", "getattr(torch, 'load')('SECRET')", "Refused",
           "`.load` " + FILES),
    Attack("vars", "reflection", "vars(torch)['load']", "Refused", "`vars` " + NOT_AVAILABLE),
    Attack("globals", "reflection", "globals()['__builtins__']", "Refused",
           "`globals` " + NOT_AVAILABLE),
    Attack("locals", "reflection", "locals()", "Refused", "`locals` " + NOT_AVAILABLE),
    Attack("setattr", "reflection", "setattr(torch, 'load', print)", "Refused",
           "`.load` " + FILES),
    Attack("delattr", "reflection", "delattr(torch, 'load')", "Refused", "`.load` " + FILES),
    Attack("eval", "reflection", "eval('1')", "Refused", "`eval` " + NOT_AVAILABLE),
    Attack("exec", "reflection", "exec('import os')", "Refused", "`exec` " + NOT_AVAILABLE),
    Attack("compile-builtin", "reflection", "compile('1', 'f', 'eval')", "Refused",
           "`compile` " + NOT_AVAILABLE),
    Attack("open-read", "reflection", "print(open('SECRET').read())", "Refused",
           "`open` " + NOT_AVAILABLE),
    Attack("open-write", "reflection", "open('CANARY', 'w')", "Refused",
           "`open` " + NOT_AVAILABLE),
    Attack("breakpoint", "reflection", "breakpoint()", "Refused", "`breakpoint` " + NOT_AVAILABLE),
    Attack("dir", "reflection", "dir(torch.os)", "Refused", MODULE),
    Attack("input", "reflection", "input()", "NameError", "'input' is not defined"),
    Attack("map-getattr", "reflection", "list(map(getattr, [torch], ['load']))", "Refused",
           "`.load` " + FILES),
    Attack("attrgetter", "reflection",
           "torch.autograd.profiler_util.attrgetter('__globals__')", "Refused", "`operator`"),
    Attack("wraps", "reflection", "torch.optim.lr_scheduler.wraps", "Refused", "`functools`"),
    Attack("functools-module", "reflection", "torch.nn.modules.module.functools", "Refused",
           MODULE),
    Attack("importlib-module", "reflection", "torch.nn.functional.importlib.import_module('os')",
           "Refused", "the module `importlib`"),
    Attack("torch-builtins", "reflection", "torch.builtins.eval('1')", "Refused",
           "the module `builtins`"),
    Attack("from-builtins", "reflection", "from torch import builtins\nbuiltins.eval('1')",
           "Refused", "the module `builtins`"),
    Attack("from-sys", "reflection", "from torch import sys\n"
           "sys.modules['torch.utils.collect_env'].run('touch CANARY')", "Refused",
           "the module `sys`"),
    Attack("from-os-as", "reflection", "from torch.cuda import os as o\no.getcwd()",
           "Refused", "the module `os`"),
    Attack("from-serialization", "reflection", "from torch import serialization", "Refused",
           "`.serialization` " + FILES),
    Attack("from-lib", "reflection", "from numpy.lib import npyio", "Refused", NOT_ALLOWED),
    Attack("get-submodule", "reflection", "torch.nn.Module().get_submodule('__class__')",
           "AttributeError", "is not an nn.Module"),
    Attack("default-tensor-type", "reflection", "torch.set_default_tensor_type('this.x')",
           "Refused", "is not a tensor type"),
    Attack("default-tensor-type-from", "reflection", "from torch import set_default_tensor_type"
           " as s\ns('antigravity.x')", "Refused", "is not a tensor type"),
    Attack("tensor-type-by-name", "reflection", "torch.ones(1).type('os.system')", "ValueError",
           "invalid type"),
    Attack("storage-type-by-name", "reflection", "torch.UntypedStorage(1).type('os.getpid')",
           "Refused", "raw storage"),
    Attack("time-os", "reflection", "import time\ntime.os", "AttributeError",
           "has no attribute 'os'"),
    Attack("random-os", "reflection", "import random\nrandom._os", "Refused", PRIVATE),

    # --- classes and decorators ---------------------------------------------------------------
    Attack("class-no-base", "class", "class A(np.ndarray):\n    pass", "Refused", CLASSES),
    Attack("object-subclasses", "class", "object.__subclasses__()", "Refused", PRIVATE),
    Attack("class-int", "class", "class A(int):\n    pass", "Refused", CLASSES),
    Attack("class-tensor", "class", "class A(torch.Tensor):\n    pass", "Refused", CLASSES),
    Attack("class-type-base", "class", "class A(type(torch.ones(1))):\n    pass", "Refused",
           CLASSES),
    Attack("metaclass", "class", "class A(torch.nn.Module, metaclass=type):\n    pass",
           "Refused", "`metaclass=`"),
    Attack("type-three-args", "class", "type('A', (), {})", "Refused", "making classes"),
    Attack("type-of-type", "class", "type(type(1))", "Refused", "making classes"),
    Attack("function-meta", "class", "torch.autograd.function.FunctionMeta('A', (), {})",
           "Refused", "outside the sandbox"),
    Attack("slots", "class", "class A(torch.nn.Module):\n    __slots__ = ()", "Refused",
           DUNDER),
    Attack("dunder-method", "class", "class A(torch.nn.Module):\n    def __getattr__(self, n):\n"
           "        return 1", "Refused", DUNDER),
    Attack("nested-class", "class", "class A(torch.nn.Module):\n"
           "    class B(torch.nn.Module):\n        pass", "Refused", "a class body may hold"),
    Attack("class-builtins", "class", "class A(torch.nn.Module):\n    b = __builtins__",
           "Refused", DUNDER),
    # `super().__setattr__(k, v)` runs (fast.ai's DummyModule), checked as `setattr` is.
    Attack("super-setattr", "class", "class A(torch.nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        super().__setattr__('__dict__', {})\nA()",
           "Refused", "may be read, not changed"),
    Attack("ctx-class", "class", "class F(torch.autograd.Function):\n    @staticmethod\n"
           "    def forward(ctx, x):\n        return ctx.__class__.__mro__", "Refused", PRIVATE),
    Attack("decorator-jit", "class", "@torch.jit.script\ndef f(x):\n    return x", "Refused",
           "`.jit`"),
    Attack("decorator-compile", "class", "@torch.compile\ndef f(x):\n    return x", "Refused",
           "`.compile`"),
    Attack("decorator-custom-op", "class", "@torch.library.custom_op('a::b', mutates_args=())\n"
           "def f(x):\n    return x", "Refused", "`.library`"),
    Attack("decorator-fx", "class", "@torch.fx.wrap\ndef f(x):\n    return x", "Refused",
           "`.fx`"),
    Attack("decorator-globals", "class", "@(lambda f: f.__globals__)\ndef g():\n    pass",
           "Refused", PRIVATE),
    Attack("decorator-getattr", "class", "@vars\ndef g():\n    pass", "Refused",
           "`vars` " + NOT_AVAILABLE),
    Attack("patch-method", "class", "torch.Tensor.add = print", "Refused", "read-only"),
    Attack("patch-module", "class", "np.pi = 3", "Refused", "read-only"),
    Attack("patch-functional", "class", "torch.nn.functional.relu = print", "Refused",
           "read-only"),
    Attack("delete-module-attr", "class", "del torch.nn.functional.relu", "Refused",
           "read-only"),
    Attack("patch-call", "class", "torch.nn.Module.__call__ = print", "Refused",
           "may be read, not changed"),
    Attack("reserved-assign", "class", "__ae_attr__ = lambda o, n: 0", "Refused",
           "reserved by the explorer"),
    Attack("reserved-argument", "class", "def f(__ae_tick__=None):\n    pass", "Refused",
           "reserved by the explorer"),

    # --- files, through torch and numpy --------------------------------------------------------
    Attack("torch-load", "files", "torch.load('SECRET', weights_only=False)", "Refused",
           "`.load` " + FILES),
    Attack("torch-save", "files", "torch.save(torch.ones(1), 'CANARY')", "Refused",
           "`.save` " + FILES),
    Attack("serialization-load", "files", "torch.serialization.load('SECRET')", "Refused",
           "`.load` " + FILES),
    Attack("serialization", "files", "torch.serialization.safe_globals", "Refused",
           "`.serialization` " + FILES),
    Attack("install-paths", "files", "print(np.get_include())", "Refused",
           "`.get_include` " + FILES),
    Attack("build-config", "files", "np.show_config()", "Refused", "`.show_config` " + FILES),
    Attack("from-file", "files", "torch.from_file('CANARY', shared=True, size=10)", "Refused",
           "`.from_file` " + FILES),
    Attack("storage-from-file", "files", "torch.UntypedStorage.from_file('CANARY', True, 10)",
           "Refused", "`.from_file` " + FILES),
    Attack("np-load-pickle", "files", "np.load('SECRET', allow_pickle=True)", "Refused",
           "`.load` " + FILES),
    Attack("np-fromfile", "files", "np.fromfile('SECRET', dtype=np.uint8)", "Refused",
           "`.fromfile` " + FILES),
    Attack("np-loadtxt", "files", "np.loadtxt('SECRET')", "Refused", "`.loadtxt` " + FILES),
    Attack("np-genfromtxt", "files", "np.genfromtxt('SECRET')", "Refused",
           "`.genfromtxt` " + FILES),
    Attack("np-fromregex", "files", "np.fromregex('SECRET', '(.*)', [('a', 'S9')])", "Refused",
           "`.fromregex` " + FILES),
    Attack("np-memmap", "files", "np.memmap('CANARY', mode='w+', shape=(4,))", "Refused",
           "`.memmap` " + FILES),
    Attack("np-tofile", "files", "np.ones(3).tofile('CANARY')", "Refused", "`.tofile` " + FILES),
    Attack("np-save", "files", "np.save('CANARY', np.ones(3))", "Refused", "`.save` " + FILES),
    Attack("np-savetxt", "files", "np.savetxt('CANARY', np.ones(3))", "Refused",
           "`.savetxt` " + FILES),
    Attack("np-savez", "files", "np.savez('CANARY', a=np.ones(3))", "Refused",
           "`.savez` " + FILES),
    Attack("np-dump", "files", "np.ones(2).dump('CANARY')", "Refused", "`.dump` " + FILES),
    Attack("np-open-memmap", "files", "np.lib.format.open_memmap('CANARY', mode='w+')",
           "Refused", "`.open_memmap` " + FILES),
    Attack("np-lib", "files", "np.lib.npyio", "Refused", MODULE),
    Attack("np-datasource", "files", "np.DataSource().open('SECRET')", "Refused",
           "`.DataSource` " + FILES),
    Attack("gds-file", "files", "torch.cuda.gds.GdsFile('CANARY', 65)", "Refused",
           "`.gds` " + FILES),
    Attack("share-memory", "files", "torch.nn.Linear(2, 2).share_memory()", "Refused",
           "`.share_memory` " + FILES),
    Attack("share-memory-tensor", "files", "torch.ones(2).share_memory_()", "Refused",
           "`.share_memory_` " + FILES),
    Attack("package-exporter", "files", "torch.package.PackageExporter('CANARY')", "Refused",
           "`.package` " + FILES),
    Attack("chrome-trace", "files", "p = None\np.export_chrome_trace('CANARY')", "Refused",
           "`.export_chrome_trace` " + FILES),
    Attack("onnx-export", "files", "torch.onnx.export(torch.nn.Linear(1, 1), torch.ones(1), "
           "'CANARY')", "Refused", "`.export` " + FILES),
    Attack("onnx", "files", "torch.onnx", "Refused", "`.onnx` " + FILES),

    # --- native code, compilers, processes and the network -----------------------------------
    Attack("torch-ops", "native", "torch.ops.aten.add(torch.ones(1), 1)", "Refused",
           "`.ops` " + FILES),
    Attack("ops-load-library", "native", "torch.ops.load_library('/lib/x.so')", "Refused",
           "`.load_library` " + FILES),
    Attack("torch-C", "native", "torch._C._get_tracing_state()", "Refused", FILES),
    Attack("torch-private", "native", "torch._dynamo", "Refused", PRIVATE),
    Attack("torch-classes", "native", "torch.classes.loaded_libraries", "Refused",
           "`.classes` " + FILES),
    Attack("torch-library", "native", "torch.library.Library('aten', 'IMPL')", "Refused",
           "`.library` " + FILES),
    Attack("cpp-extension", "native", "torch.utils.cpp_extension.load_inline('x', 'int x;')",
           "Refused", "`.cpp_extension` " + FILES),
    Attack("import-cpp-extension", "native", "import torch.utils.cpp_extension", "Refused",
           NOT_ALLOWED),
    Attack("from-utils-import", "native", "from torch.utils import cpp_extension", "Refused",
           NOT_ALLOWED),
    Attack("jit-script", "native", "torch.jit.script(torch.nn.Linear(1, 1))", "Refused",
           "`.jit` " + FILES),
    Attack("jit-load", "native", "torch.jit.load('SECRET')", "Refused", "`.load` " + FILES),
    Attack("torch-compile", "native", "torch.compile(lambda x: x)(torch.ones(1))", "Refused",
           "`.compile` " + FILES),
    Attack("torch-cond", "native", "torch.cond(torch.tensor(True), lambda x: x, lambda x: -x, "
           "(torch.ones(1),))", "Refused", "`torch.cond` compiles"),
    Attack("torch-while-loop", "native", "torch.while_loop", "Refused", "_higher_order_ops"),
    Attack("fx-trace", "native", "torch.fx.symbolic_trace(torch.nn.Linear(1, 1))", "Refused",
           "`.fx` " + FILES),
    Attack("export", "native", "torch.export.export(torch.nn.Linear(1, 1), (torch.ones(1),))",
           "Refused", "`.export` " + FILES),
    Attack("storage-resize", "native", "torch.ones(2).untyped_storage().resize_(0)", "Refused",
           "of a storage"),
    Attack("storage-type-import", "native", "torch.ones(2).storage().type('os.system')",
           "Refused", "of a storage"),
    Attack("storage-share", "native", "torch.ones(2).untyped_storage().share_memory_()",
           "Refused", FILES),
    Attack("storage-class", "native", "torch.UntypedStorage(8)", "Refused", "raw storage"),
    Attack("from-buffer", "native", "torch.ByteStorage.from_buffer(b'x')", "Refused",
           "`.from_buffer` " + FILES),
    Attack("set-storage", "native", "x = torch.ones(2)\nx.set_(torch.ones(4))", "Refused",
           "`.set_` " + FILES),
    Attack("data-ptr-ctypes", "native", "p = torch.ones(2).data_ptr()\nimport ctypes",
           "Refused", "import of `ctypes` " + NOT_ALLOWED),
    Attack("array-ctypes", "native", "np.ones(2).ctypes.data", "Refused", "`.ctypes` " + FILES),
    Attack("bit-generator-ctypes", "native", "np.random.PCG64().ctypes.next_uint64", "Refused",
           "`.ctypes` " + FILES),
    Attack("bit-generator-cffi", "native", "np.random.PCG64().cffi", "Refused",
           "`.cffi` " + FILES),
    Attack("ctypeslib", "native", "np.ctypeslib.as_array(1, (1,))", "Refused",
           "`.ctypeslib` " + FILES),
    Attack("as-strided-numpy", "native", "np.lib.stride_tricks.as_strided(np.ones(1), (9,))",
           "Refused", "`.as_strided` " + FILES),
    Attack("pluggable-allocator", "native", "torch.cuda.CUDAPluggableAllocator("
           "'/lib/x86_64-linux-gnu/libc.so.6', 'malloc', 'free')", "Refused",
           "`.CUDAPluggableAllocator` " + FILES),
    Attack("xpu-allocator", "native", "torch.xpu.XPUPluggableAllocator('/lib/x.so', 'a', 'f')",
           "Refused", "`.XPUPluggableAllocator` " + FILES),
    Attack("cudart", "native", "torch.cuda.cudart()", "Refused", "`.cudart` " + FILES),
    Attack("backends", "native", "torch.backends._nnapi", "Refused", PRIVATE),
    Attack("quantization", "native", "torch.quantization.quantize_jit", "Refused",
           "the module `torch.quantization`"),
    Attack("ao-by-origin", "native", "torch.nn.quantized.Linear", "Refused", "`torch.ao."),
    Attack("ddp", "native", "torch.nn.parallel.DistributedDataParallel", "Refused",
           "`torch.nn.parallel.distributed`"),
    Attack("set-num-threads", "native", "torch.set_num_threads(64)", "Refused",
           "`.set_num_threads`"),
    Attack("f2py", "native", "np.f2py.run_main(['-c', 'x.f'])", "Refused", "`.f2py` " + FILES),
    Attack("overrides", "native", "torch.overrides.get_testing_overrides()", "Refused",
           "`.overrides` " + FILES),
    Attack("import-os", "process", "import os\nos.system('touch CANARY')", "Refused",
           "import of `os` " + NOT_ALLOWED),
    Attack("import-subprocess", "process", "import subprocess", "Refused", NOT_ALLOWED),
    Attack("from-os", "process", "from os import system", "Refused", NOT_ALLOWED),
    Attack("torch-os", "process", "torch.os.system('touch CANARY')", "Refused",
           "the module `os`"),
    Attack("from-torch-os", "process", "from torch import os\nos.system('touch CANARY')",
           "Refused", "the module `os`"),
    Attack("cuda-os", "process", "torch.cuda.os.popen('touch CANARY')", "Refused",
           "the module `os`"),
    Attack("deep-os", "process", "torch.nn.modules.module.torch.os.execv('/bin/sh', ['sh'])",
           "Refused", "the module `os`"),
    Attack("warnings-module", "process", "torch.nn.functional.warnings", "Refused",
           "the module `warnings`"),
    Attack("collect-env", "process", "torch.utils.collect_env.run('touch CANARY')", "Refused",
           MODULE),
    Attack("compiler-check", "process", "torch.utils.cpp_extension."
           "check_compiler_ok_for_platform('touch')", "Refused", "`.cpp_extension` " + FILES),
    Attack("multiprocessing", "process", "torch.multiprocessing.spawn(print)", "Refused",
           "`.multiprocessing` " + FILES),
    Attack("dataloader-workers", "process",
           "list(torch.utils.data.DataLoader([1], num_workers=2))", "PermissionError",
           "Permission denied"),  # the guard lets it be; the wall stops the worker processes
    Attack("import-antigravity", "process", "import antigravity", "Refused", NOT_ALLOWED),
    Attack("import-importlib", "process", "import importlib", "Refused", NOT_ALLOWED),
    Attack("import-socket", "network", "import socket", "Refused", NOT_ALLOWED),
    Attack("import-urllib", "network", "import urllib.request", "Refused", NOT_ALLOWED),
    Attack("hub-load", "network", "torch.hub.load('pytorch/vision', 'resnet18')", "Refused",
           "`.load` " + FILES),
    Attack("hub-list", "network", "torch.hub.list('pytorch/vision')", "Refused",
           "`.hub` " + FILES),
    Attack("hub-download", "network", "torch.hub.download_url_to_file('http://127.0.0.1:9/x', "
           "'CANARY')", "Refused", "`.download_url_to_file` " + FILES),
    Attack("state-dict-url", "network", "torch.hub.load_state_dict_from_url('http://127.0.0.1:9')",
           "Refused", "`.load_state_dict_from_url` " + FILES),
    Attack("tcp-store", "network", "torch.distributed.TCPStore('127.0.0.1', 9)", "Refused",
           "`.distributed` " + FILES),

    # --- what the program text itself can do to the checker ---------------------------------
    Attack("surrogate", "input", "x = '\ud800'", "SyntaxError", "U+D800 is not valid text"),
    Attack("nul", "input", "print(1)\x00", "SyntaxError", "null bytes"),
    Attack("unary-chain", "input", "-" * 90_000 + "1", "Refused", NESTED),
    Attack("not-chain", "input", "not " * 20_000 + "1", "Refused", NESTED),
    Attack("lambda-chain", "input", "lambda: " * 5_000 + "1", "Refused", NESTED),
    Attack("binop-chain", "input", "1" + "+1" * 40_000, "Refused", NESTED),
    Attack("parentheses", "input", "(" * 300 + ")" * 300, "SyntaxError", "too many nested"),
    Attack("huge-program", "input", "x = 1\n" * 20_000, "Refused", "at most 100,000"),

    # --- resource bombs: each stopped by a limit --------------------------------------------
    Bomb("ones-40GB", "memory", "torch.ones(100000, 100000)", "MemoryLimit", MEMORY),
    Bomb("empty-2**40", "memory", "torch.empty(2**40)", "MemoryLimit", MEMORY),
    Bomb("expand-contiguous", "memory", "torch.ones(1).expand(10**5, 10**5).contiguous()",
         "MemoryLimit", MEMORY),
    Bomb("repeat", "memory", "torch.ones(10, 10).repeat(10**4, 10**4)", "MemoryLimit", MEMORY),
    Bomb("matmul-alloc", "memory", "torch.ones(50000, 50000) @ torch.ones(50000, 50000)",
         "MemoryLimit", MEMORY),
    Bomb("outer", "memory", "torch.ones(10**4).outer(torch.ones(10**5))", "MemoryLimit", MEMORY),
    Bomb("einsum-4d", "memory", "a = torch.ones(1000)\ntorch.einsum('i,j,k,l->ijkl', a, a, a, a)",
         "MemoryLimit", MEMORY),
    Bomb("cartesian", "memory", "a = torch.arange(100)\ntorch.cartesian_prod(a, a, a, a, a, a)",
         "MemoryLimit", MEMORY),
    Bomb("linear-layer", "memory", "torch.nn.Linear(10**5, 10**5)", "MemoryLimit", MEMORY),
    Bomb("embedding", "memory", "torch.nn.Embedding(10**9, 10)", "MemoryLimit", MEMORY),
    Bomb("randint", "memory", "torch.randint(0, 10, (10**10,))", "MemoryLimit", MEMORY),
    Bomb("np-ones", "memory", "np.ones((10**5, 10**5))", "MemoryLimit", MEMORY),
    Bomb("np-zeros", "memory", "np.zeros(10**12)", "MemoryLimit", MEMORY),
    Bomb("string-repeat", "memory", "'a' * 10**10", "MemoryLimit", MEMORY),
    Bomb("bytes-repeat", "memory", "b'a' * 10**10", "MemoryLimit", MEMORY),
    Bomb("list-repeat", "memory", "[0] * 10**10", "MemoryLimit", MEMORY),
    Bomb("string-growth", "memory", "s = 'x' * 2**20\nwhile True:\n    s = s * 4", "MemoryLimit",
         MEMORY),
    Bomb("list-range", "memory", "list(range(10**9))", "MemoryLimit", MEMORY),
    Bomb("expand-sum", "time", "torch.ones(1).expand(2**62).sum()", "TimeLimit", STOPPED),
    Bomb("matmul-loop", "time", "a = torch.ones(2000, 2000)\nfor i in range(1000):\n"
         "    a = a @ a", "TimeLimit", STOPPED),
    Bomb("matrix-power", "time", "torch.randn(2000, 2000).matrix_power(10**9)", "TimeLimit",
         STOPPED),
    Bomb("factorial", "time", "math.factorial(10**8)", "TimeLimit", STOPPED),
    Bomb("sum-range", "time", "sum(range(10**13))", "TimeLimit", STOPPED),
    Bomb("sleep", "time", "import time\ntime.sleep(100)", "TimeLimit", STOPPED),
    Bomb("power", "number", "10**10**10", "NumberLimit", BIG_INT),
    Bomb("power-2-64", "number", "2**(2**64)", "NumberLimit", BIG_INT),
    Bomb("power-assign", "number", "x = 10\nx **= 10**9", "NumberLimit", "too large"),
    Bomb("pow-call", "number", "pow(7, 10**9)", "NumberLimit", BIG_INT),
    Bomb("shift", "number", "1 << (1 << 40)", "NumberLimit", BIG_INT),
    Bomb("int-string", "number", "int('9' * 100000)", "ValueError", "integer string conversion"),
    Bomb("endless-loop", "loop", "while True:\n    pass", "LoopLimit", LOOPS),
    Bomb("comprehension", "loop", "[i for i in range(10**9)]", "LoopLimit", LOOPS),
    Bomb("swallowed-limit", "loop", "while True:\n    try:\n        while True:\n"
         "            pass\n    except Exception:\n        pass", "LoopLimit", LOOPS),
    Bomb("nested-lists", "loop", "x = []\nwhile True:\n    x = [x, x]", "LoopLimit", LOOPS),
    Bomb("print-loop", "output", "while True:\n    print('x' * 10000)", "LoopLimit", LOOPS),
    Bomb("recursion", "recursion", "def f(n):\n    return f(n + 1)\nf(0)", "RecursionError",
         RECURSION),
    Bomb("lambda-recursion", "recursion", "f = lambda: f()\nf()", "RecursionError", RECURSION),
    Bomb("module-recursion", "recursion", "class M(torch.nn.Module):\n"
         "    def forward(self, x):\n        return self(x)\nM()(1)", "RecursionError",
         RECURSION),
    Bomb("deep-list-repr", "recursion", "x = []\nfor i in range(50000):\n    x = [x]\nprint(x)",
         "RecursionError", RECURSION),
]

# Printing gigabytes is not an error: the output is cut at the cap and a note says so.
PRINT_BOMB = "s = 'x' * 10**8\nprint(s)\nprint(s)\n"


@dataclass(frozen=True)
class Benign:
    """A tutorial program that must run and print exactly `stdout`."""

    id: str
    code: str
    stdout: str


BENIGN: list[Benign] = [
    Benign("module-subclass", """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))

net = Net()
print(net(torch.ones(4, 3)).shape, sum(p.numel() for p in net.parameters()))
""", "torch.Size([4, 2]) 8\n"),
    Benign("sgd-loop", """
w = torch.tensor(0.0, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.25)
for step in range(20):
    opt.zero_grad()
    loss = (w - 2.0) ** 2
    loss.backward()
    opt.step()
print(round(w.item(), 4))
""", "2.0\n"),
    Benign("functional", """
import torch.nn.functional as F
x = torch.tensor([[-1.0, 0.0, 2.0]])
print(F.relu(x).tolist(), F.softmax(torch.zeros(1, 4), dim=1).tolist())
print(round(F.cross_entropy(torch.zeros(1, 4), torch.tensor([1])).item(), 4))
""", "[[0.0, 0.0, 2.0]] [[0.25, 0.25, 0.25, 0.25]]\n1.3863\n"),
    Benign("broadcasting", """
a = torch.arange(3).reshape(3, 1)
b = torch.arange(4)
print((a + b).shape, (a * b)[2].tolist())
""", "torch.Size([3, 4]) [0, 2, 4, 6]\n"),
    Benign("indexing", """
x = torch.arange(12).reshape(3, 4)
print(x[1], x[:, 2].tolist(), x[x > 9].tolist(), x[[0, 2], [1, 3]].tolist())
""", "tensor([4, 5, 6, 7]) [2, 6, 10] [10, 11] [1, 11]\n"),
    Benign("einsum", """
a = torch.arange(6.0).reshape(2, 3)
print(torch.einsum('ij,ij->i', a, a).tolist(), torch.einsum('ij->ji', a).shape)
""", "[5.0, 50.0] torch.Size([3, 2])\n"),
    Benign("no-grad", """
x = torch.ones(2, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, (x * 2).requires_grad)
""", "False True\n"),
    Benign("numpy-bridge", """
a = np.ones(3)
t = torch.from_numpy(a)
t.add_(1)
print(a.tolist(), t.numpy().sum(), torch.tensor(a).dtype)
""", "[2.0, 2.0, 2.0] 6.0 torch.float64\n"),
    Benign("string-formatting", """
x = torch.tensor(3.14159)
name = 'pi'
print(f'{name}={x.item():.2f}', '{} {:>5}'.format('a', 7), '%d%%' % 50, '{0[1]}'.format([1, 2]))
print('{n:.1f}'.format_map({'n': 2.25}), 'x'.join(['a', 'b']).upper())
""", "pi=3.14 a     7 50% 2\n2.2 AXB\n"),
    Benign("comprehensions", """
squares = [i * i for i in range(5)]
evens = {i for i in range(10) if i % 2 == 0}
names = {k: len(k) for k in ['ab', 'cde']}
print(squares, sorted(evens), names, sum(x for x in range(4)))
""", "[0, 1, 4, 9, 16] [0, 2, 4, 6, 8] {'ab': 2, 'cde': 3} 6\n"),
    Benign("try-except", """
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except RuntimeError as e:
    print('caught', type(e).__name__)
try:
    [][1]
except (IndexError, KeyError) as e:
    print('index', e)
""", "caught RuntimeError\nindex list index out of range\n"),
    Benign("backward", """
x = torch.ones(2, 2, requires_grad=True)
out = ((x + 2) * (x + 2) * 3).mean()
out.backward()
print(x.grad.tolist())
""", "[[4.5, 4.5], [4.5, 4.5]]\n"),
    Benign("autograd-grad", """
x = torch.tensor(3.0, requires_grad=True)
(g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
(h,) = torch.autograd.grad(g, x)
print(g.item(), h.item())
""", "27.0 18.0\n"),
    Benign("custom-function", """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

x = torch.tensor([1.0, 3.0], requires_grad=True)
Square.apply(x).sum().backward()
print(x.grad.tolist())
""", "[2.0, 6.0]\n"),
    Benign("sequential", """
model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
print(len(model), model(torch.zeros(5, 2)).shape)
""", "3 torch.Size([5, 1])\n"),
    Benign("adam-mse", """
torch.manual_seed(0)
model = torch.nn.Linear(1, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.linspace(0, 1, 20).reshape(-1, 1)
y = 3 * x + 1
for epoch in range(300):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(loss.item() < 1e-3, round(model.weight.item()), round(model.bias.item()))
""", "True 3 1\n"),
    Benign("hooks", """
x = torch.ones(3, requires_grad=True)
seen = []
h = x.register_hook(lambda g: seen.append(g.sum().item()))
(x * 2).sum().backward()
h.remove()
print(seen)
""", "[6.0]\n"),
    Benign("state-dict", """
net = torch.nn.Linear(2, 1)
sd = net.state_dict()
print(sorted(sd.keys()), net.load_state_dict(sd))
""", "['bias', 'weight'] <All keys matched successfully>\n"),
    Benign("dtype-device", """
x = torch.zeros(2, dtype=torch.long)
print(x.dtype, x.device, x.float().dtype, torch.cuda.is_available() in (True, False))
""", "torch.int64 cpu torch.float32 True\n"),
    Benign("linalg", """
a = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
print(torch.linalg.inv(a).tolist(), torch.linalg.det(a).item(), np.linalg.norm([3, 4]))
print(round(torch.linalg.cond(a).item(), 3), np.emath.sqrt(-1))
""", "[[0.5, 0.0], [0.0, 0.25]] 8.0 5.0\n2.0 1j\n"),
    Benign("math-random", """
import math
import random
random.seed(1)
r = random.random()
print(math.sqrt(16), math.pi > 3, 0 <= r < 1, math.isclose(math.exp(0), 1))
""", "4.0 True True True\n"),
    Benign("time-clock", """
import time
start = time.perf_counter()
time.sleep(0.01)
print(time.perf_counter() - start >= 0.01)
""", "True\n"),
    Benign("default-tensor-type", """
torch.set_default_tensor_type('torch.DoubleTensor')
print(torch.ones(1).dtype)
torch.set_default_tensor_type(torch.FloatTensor)
print(torch.ones(1).dtype)
""", "torch.float64\ntorch.float32\n"),
    Benign("from-imports", """
from torch import nn, optim
from torch.autograd import Function
from torch.nn import functional as F
from torch.nn.functional import relu
print(nn.Linear is torch.nn.Linear, optim.SGD is torch.optim.SGD, relu is F.relu,
      Function is torch.autograd.Function)
""", "True True True True\n"),
    Benign("views-and-versions", """
x = torch.arange(6.0)
v = x.view(2, 3)
v[0, 0] = 10
print(x[0].item(), x._version, v._base is x, x.is_contiguous(), v.t().is_contiguous())
""", "10.0 1 True True False\n"),
    Benign("saved-tensors", """
a = torch.tensor([2.0], requires_grad=True)
y = a * a
print(y.grad_fn.name(), y.grad_fn._saved_self.tolist(), len(y.grad_fn.next_functions))
""", "MulBackward0 [2.0] 2\n"),
    Benign("detach-clone", """
x = torch.ones(2, requires_grad=True)
d = x.detach()
c = x.clone()
print(d.requires_grad, c.requires_grad, c.grad_fn.name())
""", "False True CloneBackward0\n"),
    Benign("distributions", """
torch.manual_seed(0)
n = torch.distributions.Normal(torch.tensor(0.0), torch.tensor(1.0))
print(round(n.log_prob(torch.tensor(0.0)).item(), 4), n.sample((3,)).shape)
""", "-0.9189 torch.Size([3])\n"),
    Benign("lr-scheduler", """
w = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w], lr=1.0)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
lrs = []
for epoch in range(5):
    opt.step()
    sched.step()
    lrs.append(opt.param_groups[0]['lr'])
print(lrs)
""", "[1.0, 0.5, 0.5, 0.25, 0.25]\n"),
    Benign("classifier", """
torch.manual_seed(0)
x = torch.randn(64, 2)
y = (x[:, 0] > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for i in range(100):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
acc = (model(x).argmax(1) == y).float().mean().item()
print(acc > 0.9)
""", "True\n"),
    Benign("while-break", """
n, steps = 27, 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
    if steps > 1000:
        break
print(steps)
""", "111\n"),
    Benign("functions-and-lambdas", """
def poly(x, a=1, *rest, scale=2, **extra):
    return scale * (x ** 2 + a) + sum(rest) + len(extra)

square = lambda t: t * t
print(poly(3), poly(3, 0, 1, 2, scale=1, k=0), square(torch.tensor(4.0)).item())
""", "20 13 16.0\n"),
    Benign("big-ints", """
print(2 ** 100, 7 ** 20 % 1000, pow(3, 200, 7), 1 << 70)
""", "1267650600228229401496703205376 1 2 1180591620717411303424\n"),
    Benign("list-dict-ops", """
d = {'a': [1, 2]}
d.setdefault('b', []).append(3)
items = sorted(d.items())
xs = list(range(10))[::3]
xs.reverse()
print(items, xs, max(d, key=len), dict(zip('ab', (1, 2))))
""", "[('a', [1, 2]), ('b', [3])] [9, 6, 3, 0] a {'a': 1, 'b': 2}\n"),
    Benign("isinstance-type", """
x = torch.ones(1)
print(isinstance(x, torch.Tensor), type(x).__name__, type(3).__name__, callable(print))
""", "True Tensor int True\n"),
    Benign("module-repr", """
class Small(torch.nn.Module):
    def __init__(self):
        super(Small, self).__init__()
        self.w = torch.nn.Parameter(torch.ones(2))

    def extra_repr(self):
        return 'two weights'

print(Small())
""", "Small(two weights)\n"),
    Benign("torch-version", """
print(isinstance(torch.__version__, str), np.__name__, torch.ones.__doc__ is not None)
""", "True numpy True\n"),
    Benign("jacobian", """
from torch.autograd.functional import jacobian
print(jacobian(lambda v: v ** 2, torch.tensor([1.0, 2.0])).tolist())
""", "[[2.0, 0.0], [0.0, 4.0]]\n"),
    Benign("vmap", """
print(torch.vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2)).tolist())
""", "[2.0, 2.0, 2.0]\n"),
    Benign("full-width", "x = torch.ones（2, 3）\nprint（x.shape）\n", "torch.Size([2, 3])\n"),
]
