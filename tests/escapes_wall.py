"""Hostile programs as a learner would type them, judged by effect (`tests/test_escapes_wall.py`).

Unlike `tests/escapes.py`, a row does not say which error stops it: whatever stops it (the
guard, a limit, the operating system's wall), the effect must be nil. In `code`, `SECRET` is
the path of a file whose contents must never come back and `CANARY` a path that must never
come to exist. Every program runs under `WALL_LIMITS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.safety.limits import Limits

WALL_LIMITS = Limits(time_s=1.5, loop_iterations=100_000)


@dataclass(frozen=True)
class Hostile:
    """A program and its category; `crash` marks one that must end as a clear error."""

    id: str
    category: str
    code: str
    crash: bool = False


def _rows(category: str, programs: dict[str, str]) -> list[Hostile]:
    return [Hostile(key, category, code) for key, code in programs.items()]


FILES = _rows("files", {
    "np-loadtxt": "print(np.loadtxt('SECRET', dtype=str))",
    "np-genfromtxt": "print(np.genfromtxt('SECRET', dtype=str))",
    "np-fromfile": "print(np.fromfile('SECRET', dtype=np.uint8))",
    "np-load": "print(np.load('SECRET', allow_pickle=True))",
    "np-memmap": "print(np.memmap('SECRET', dtype=np.uint8))",
    "np-savetxt": "np.savetxt('CANARY', np.ones(2))",
    "np-save": "np.save('CANARY', np.ones(2))",
    "np-tofile": "np.ones(2).tofile('CANARY')",
    "np-datasource": "print(np.lib.npyio.DataSource().open('SECRET').read())",
    "np-DataSource": "print(np.DataSource(None).open('SECRET').read())",
    "torch-load": "print(torch.load('SECRET'))",
    "torch-save": "torch.save(torch.ones(1), 'CANARY')",
    "torch-from-file": "print(torch.from_file('SECRET', size=8, dtype=torch.uint8))",
    "file-reader": "print(torch.PyTorchFileReader('SECRET'))",
    "file-writer": "torch.PyTorchFileWriter('CANARY')",
    "untyped-from-file": "print(torch.UntypedStorage.from_file('SECRET', False, 8))",
    "open": "print(open('SECRET').read())",
    "builtins-open": "print(__builtins__.open('SECRET').read())",
    "io-open": "import io\nprint(io.open('SECRET').read())",
    "pathlib": "import pathlib\nprint(pathlib.Path('SECRET').read_text())",
    "torch-os": "print(torch.os.popen('cat SECRET').read())",
    "np-os": "print(np.os.listdir('/'))",
    "torch-serialization": "print(torch.serialization.load('SECRET'))",
    "hub-load": "torch.hub.load_state_dict_from_url('file://SECRET')",
    "gds": "torch.cuda.gds.GdsFile('CANARY', 0)",
    "np-fromregex": "print(np.fromregex('SECRET', '(.*)', [('x', 'U64')]))",
})

LISTING = _rows("listing", {
    "os-listdir": "import os\nprint(os.listdir('/'))",
    "torch-os-listdir": "print(torch.os.listdir('/'))",
    "np-lookfor": "np.lookfor('secret')",
    "np-info": "np.info('torch', toplevel=torch)",
    "glob": "import glob\nprint(glob.glob('/*'))",
    "dir-walk": "print(dir(torch)[:3])\nprint(torch.__file__)",
})

EXEC = _rows("exec", {
    "os-system": "import os\nos.system('touch CANARY')",
    "torch-os-system": "torch.os.system('touch CANARY')",
    "subprocess": "import subprocess\nsubprocess.run(['touch', 'CANARY'])",
    "collect-env": "from torch.utils import collect_env\ncollect_env.run('touch CANARY')",
    "torch-sys": "from torch import sys\nprint(sys.modules)",
    "exec": "exec(\"open('CANARY', 'w')\")",
    "eval": "eval(\"__import__('os').system('touch CANARY')\")",
    "compile": "compile('1', 'x', 'exec')",
    "jit-script": "torch.jit.script(lambda x: x)",
    "torch-compile": "torch.compile(lambda x: x)(torch.ones(1))",
    "cpp-extension": "torch.utils.cpp_extension.load_inline('x', 'int x;')",
    "ctypes": "import ctypes\nctypes.CDLL(None).system(b'touch CANARY')",
    "np-ctypeslib": "np.ctypeslib.load_library('libc', '/lib')",
    "set-default-type": "torch.set_default_tensor_type('os.system')",
    "ops-load": "torch.ops.load_library('/tmp/x.so')",
})

NETWORK = _rows("network", {
    "socket": "import socket\nsocket.create_connection(('127.0.0.1', 22))",
    "torch-socket": "print(torch.multiprocessing)",
    "urllib": "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:1')",
    "hub-url": "torch.hub.download_url_to_file('http://127.0.0.1:1/x', 'CANARY')",
    "distributed": "torch.distributed.init_process_group('gloo', init_method='tcp://127.0.0.1:1',"
                   " rank=0, world_size=1)",
    "rpc": "torch.distributed.rpc.init_rpc('x')",
    "np-datasource-url": "np.DataSource('CANARY').open('http://127.0.0.1:1/x')",
})

PROCESSES = _rows("processes", {
    "os-fork": "import os\nos.fork()",
    "torch-mp": "torch.multiprocessing.Process(target=print).start()",
    "dataloader-workers": "ds = torch.utils.data.TensorDataset(torch.ones(4, 1))\n"
                          "print(list(torch.utils.data.DataLoader(ds, num_workers=2)))",
    "threads": "import threading\nthreading.Thread(target=print).start()",
    "set-threads": "torch.set_num_threads(64)\nprint(torch.ones(10**6).sum())",
    "interop": "torch.set_num_interop_threads(64)",
    "fork-rng": "with torch.random.fork_rng():\n    print(torch.rand(1).shape)",
})

IPC = _rows("ipc", {
    "share-memory": "t = torch.ones(4)\nt.share_memory_()\nprint(t.is_shared())",
    "shm-manager": "import multiprocessing.shared_memory as s\n"
                   "s.SharedMemory(create=True, size=64)",
    "torch-mp-queue": "torch.multiprocessing.Queue().put(1)",
    "untyped-shared": "torch.UntypedStorage(8)._share_filename_cpu_()",
    "storage-shared": "torch.ones(2).untyped_storage().share_memory_()",
})

SIGNALS = _rows("signals", {
    "os-kill": "import os\nos.kill(1, 9)",
    "torch-os-kill": "torch.os.kill(torch.os.getppid(), 9)",
    "signal-alarm": "import signal\nsignal.alarm(0)",
    "signal-ignore": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n"
                     "    pass",
    "time-sleep": "import time\ntime.sleep(30)",
})

PROC = _rows("proc", {
    "proc-environ": "print(open('/proc/1/environ').read())",
    "np-proc": "print(np.loadtxt('/proc/self/environ', dtype=str, delimiter='\\0'))",
    "np-proc-mem": "print(np.fromfile('/proc/1/mem', count=8))",
    "torch-proc": "print(torch.from_file('/proc/1/environ', size=64, dtype=torch.uint8))",
    "detect-anomaly-paths": "torch.autograd.set_detect_anomaly(True)\nx = torch.ones(1, "
                            "requires_grad=True)\n(x * 2).sum().backward()\nprint(x.grad)",
    "print-torch": "print(torch)\nprint(np)",
    "repr-module": "print('%r' % torch.nn)",
    "format-walk": "print(super(np.str_, np.str_('{0.os.environ}')).format(torch))",
})

BOMBS = _rows("bombs", {
    "c-loop": "torch.ones(1).expand(2**62).sum()",
    "py-sum": "sum(range(10**13))",
    "while-true": "while True:\n    pass",
    "swallow-time": "while True:\n    try:\n        sum(range(10**6))\n    except BaseException:\n"
                    "        pass",
    "big-tensor": "torch.ones(10**5, 10**5)",
    "expand-contiguous": "torch.ones(1).expand(10**10).contiguous()",
    "repeat": "torch.ones(10**4).repeat(10**6)",
    "big-list": "x = [0] * 10**10",
    "big-string": "s = 'x' * 10**11",
    "big-int": "print(10**10**10)",
    "shift": "print(1 << 10**10)",
    "recursion": "def f(n):\n    return f(n + 1)\nf(0)",
    "nested-comprehension": "print(len([i for i in range(10**5) for j in range(10**5)]))",
    "deep-graph": "x = torch.ones(1, requires_grad=True)\ny = x\nfor _ in range(50000):\n"
                  "    y = y * 1\ny.backward()",
    "print-flood": "while True:\n    print('x' * 10**5)",
    "warnings-flood": "import warnings\nfor i in range(10**6):\n    warnings.warn(str(i))",
    "deep-nesting": "x = " + "[" * 5000 + "]" * 5000,
    "np-huge": "np.ones((10**6, 10**6))",
    "lone-surrogate": "print(chr(0xd800))",
    "huge-error": "raise ValueError('x' * 10**8)",
})

SPARSE_NEGATIVE = ("torch.sparse_coo_tensor(torch.tensor([[-5]]), torch.tensor([1.]), (2,))"
                   ".to_dense()")
CRASHES = [Hostile("sparse-negative", "native", SPARSE_NEGATIVE)] + [
    Hostile(key, "native", code, crash=True) for key, code in {
    "sparse-to-dense": "torch.sparse_coo_tensor(torch.tensor([[10**9]]), torch.tensor([1.]),"
                       " (2,)).to_dense()",
    "script-module": "torch.ScriptModule('x', None, False)",
    "as-strided": "print(torch.ones(2).as_strided((10**6,), (10**6,)).sum())",
    "np-stride": "print(np.lib.stride_tricks.as_strided(np.ones(1), (10**6,), (10**6,)).sum())",
    "set-storage": "x = torch.ones(1)\nx.set_(x.untyped_storage(), 10**9, (4,))\nprint(x)",
    "index-put": "x = torch.ones(2)\nx.index_put_((torch.tensor([10**9]),), torch.ones(1),"
                 " accumulate=True)",
    "embedding-bag": "torch.nn.functional.embedding_bag(torch.tensor([10**9]), torch.ones(2, 2),"
                     " torch.tensor([0]))",
}.items()]

HOSTILE: list[Hostile] = [*FILES, *LISTING, *EXEC, *NETWORK, *PROCESSES, *IPC, *SIGNALS,
                          *PROC, *BOMBS, *CRASHES]
