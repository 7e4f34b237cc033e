"""tensor.utils.c_extension: layers written in C, loaded from Python with no wrapper code.

PyTorch's ``torch.utils.cpp_extension.load`` / ``load_inline`` for tensor.h. The sources
are compiled with the system compiler against ``tensor.h`` (declarations only) and linked
to the very library the package has loaded, so an extension shares its allocator, autograd
engine and error state: tensors cross without copies, ops an extension runs are recorded
on the same graph, and an error it records is raised as the package raises its own.

The Python binding is derived from the C declarations. Every non-static function of the
sources whose types are all in this table becomes a function of the returned module (or
only those named in ``functions=``):

    C parameter                               Python argument
    tn_tensor *x   (const tn_tensor *x)       a Tensor (None passes NULL)
    tn_tensor *const *xs, int n               a list of Tensors (the count is implied)
    tn_tensor *out[K]   (the last parameter)  nothing: the function returns K Tensors
    int / long / int64_t / size_t ...         an int
    double / float                            a float
    bool                                      a bool
    const char *                              a str

    C result                                  Python result
    tn_tensor *                               a Tensor (NULL: the recorded error is raised)
    int with tn_tensor *out[K]                a tuple of K Tensors (-1: the error is raised)
    int / int64_t / double / bool / void      the value (an error recorded meanwhile is raised)

Each call runs inside a C scope (tn_scope_begin/tn_scope_end), so the temporaries an
extension makes are released and it needs no bookkeeping of its own; the returned tensors
are new references the package owns. A function built from library ops is differentiable
as it stands; one with a hand-written backward uses ``tn_custom_op`` (C) or a Python
``autograd.Function`` around a C forward and backward (``examples/extension``).

Builds are cached in ``build_directory`` (default ``$TENSOR_EXTENSIONS_DIR`` or
``~/.cache/tensor_extensions/<name>``) under a hash of the sources, flags, compiler,
header and library: a second call or a second process loads the cached build; a lock
file keeps two processes from building at once. ``.cu`` sources are compiled with nvcc.
"""
import ctypes
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types

from .. import _C
from .._core import Tensor, _raise, _tp

__all__ = ["load", "load_inline", "include_paths", "get_default_build_root"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def include_paths(cuda=False):
    """The folders to pass with -I so that ``#include "tensor.h"`` finds the package's header
    (``cuda`` is accepted for PyTorch's signature; the header serves both)."""
    del cuda
    env = os.environ.get("TENSOR_INCLUDE")
    for d in ([env] if env else []) + [os.path.join(_PKG, "include"), os.path.normpath(os.path.join(_PKG, "..", "..", ".."))]:
        if os.path.isfile(os.path.join(d, "tensor.h")):
            return [d]
    raise RuntimeError("tensor.utils.c_extension: tensor.h not found (looked in $TENSOR_INCLUDE, "
                       f"{os.path.join(_PKG, 'include')} and the repository root); set TENSOR_INCLUDE to its folder")


def get_default_build_root():
    """Where builds are cached: $TENSOR_EXTENSIONS_DIR, else ~/.cache/tensor_extensions."""
    return os.environ.get("TENSOR_EXTENSIONS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tensor_extensions")


# --------------------------------------------------------------------------- declarations
_INTS = {"int", "long", "long int", "long long", "long long int", "short", "unsigned", "unsigned int",
         "unsigned long", "unsigned long long", "int64_t", "int32_t", "uint32_t", "uint64_t", "int16_t",
         "int8_t", "uint8_t", "size_t", "ptrdiff_t", "intptr_t", "signed char", "unsigned char", "char"}
_CTYPES = {"int": ctypes.c_int, "long": ctypes.c_long, "long int": ctypes.c_long, "long long": ctypes.c_longlong,
           "long long int": ctypes.c_longlong, "short": ctypes.c_short, "unsigned": ctypes.c_uint,
           "unsigned int": ctypes.c_uint, "unsigned long": ctypes.c_ulong, "unsigned long long": ctypes.c_ulonglong,
           "int64_t": ctypes.c_int64, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
           "uint64_t": ctypes.c_uint64, "int16_t": ctypes.c_int16, "int8_t": ctypes.c_int8, "uint8_t": ctypes.c_uint8,
           "size_t": ctypes.c_size_t, "ptrdiff_t": ctypes.c_ssize_t, "intptr_t": ctypes.c_ssize_t,
           "signed char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte, "char": ctypes.c_char,
           "double": ctypes.c_double, "float": ctypes.c_float, "bool": ctypes.c_bool, "_Bool": ctypes.c_bool}
_QUALIFIERS = re.compile(r"\b(const|volatile|restrict|__restrict|__restrict__|struct|extern|inline|"
                         r"TNDEF|TN_EXPORT|EXPORT)\b")
_DEF = re.compile(r"(?:^|[;{}])\s*((?:[A-Za-z_][\w]*[\s*]+)+?)([A-Za-z_]\w*)\s*\(([^()]*)\)\s*\{", re.S)


def _strip_comments(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)           # strings can hold braces
    src = re.sub(r'\bextern\s*""', " ", src)                    # C++'s extern "C" (block or prefix)
    return re.sub(r"^\s*#[^\n]*(?:\\\n[^\n]*)*", " ", src, flags=re.M)


def _type(text):
    """('tensor'|'tensors'|'int'|'float'|'bool'|'str'|'void', pointer depth, array size) of a
    C type text with the parameter name removed; None when it has no mapping."""
    t = _QUALIFIERS.sub(" ", text)
    stars = t.count("*")
    base = " ".join(t.replace("*", " ").split())
    if base in ("tn_tensor",):
        return ("tensor", stars)
    if stars == 1 and base == "char":
        return ("str", 1)
    if stars:
        return None
    if base == "void":
        return ("void", 0)
    if base in ("bool", "_Bool"):
        return ("bool", 0)
    if base in ("double", "float"):
        return ("float", 0)
    if base in _INTS:
        return ("int", 0)
    return None


def _param(text):
    """A parameter declaration -> (kind, ctype name, array size or None, name)."""
    text = text.strip()
    array = None
    m = re.search(r"\[\s*(\d*)\s*\]\s*$", text)
    if m:
        array = int(m.group(1)) if m.group(1) else 0
        text = text[:m.start()]
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*$", text, re.S)
    if not m or not _QUALIFIERS.sub(" ", m.group(1)).strip(" *\t\n"):
        return None                                             # no name, or no type
    head = m.group(1) + ("*" if array is not None else "")      # T x[K] is a T *
    base = " ".join(_QUALIFIERS.sub(" ", head).replace("*", " ").split())
    return _type(head), base, array, m.group(2)


class _Signature:
    """How one C function is called: the Python arguments it takes and what it returns."""

    def __init__(self, name, ret, ret_base, params):
        self.name, self.ret, self.ret_base, self.params = name, ret, ret_base, params
        self.outputs = 0                     # K of a trailing tn_tensor *out[K]
        self.argtypes, self.py = [], []      # ctypes argtypes; Python arguments (kind, name)
        i = 0
        while i < len(params):
            ty, base, array, pname = params[i]
            kind, stars = ty
            if kind == "tensor" and stars == 1 and array is None:
                self.argtypes.append(ctypes.c_void_p)
                self.py.append(("tensor", pname))
            elif kind == "tensor" and array and i == len(params) - 1:
                self.outputs = array
                self.argtypes.append(ctypes.POINTER(ctypes.c_void_p))
            elif kind == "tensor" and stars == 2 and i + 1 < len(params) and params[i + 1][0] == ("int", 0):
                self.argtypes += [ctypes.POINTER(ctypes.c_void_p), _CTYPES[params[i + 1][1]]]
                self.py.append(("tensors", pname))
                i += 1
            elif kind in ("int", "float", "bool") and stars == 0 and array is None:
                self.argtypes.append(_CTYPES[base])
                self.py.append((kind, pname))
            elif kind == "str":
                self.argtypes.append(ctypes.c_char_p)
                self.py.append(("str", pname))
            else:
                raise TypeError(f"parameter '{pname}' has no Python mapping")
            i += 1
        if self.outputs and ret[0] != "int":
            raise TypeError("a function with a tn_tensor *out[K] parameter must return int (0, or -1 on error)")
        if ret[0] == "tensor" and ret[1] != 1 or ret[0] == "str":
            raise TypeError("its result has no Python mapping")
        self.restype = (ctypes.c_void_p if ret[0] == "tensor" else None if ret[0] == "void" else _CTYPES[ret_base])

    def doc(self):
        args = ", ".join(n + ("" if k == "tensor" else ": " + {"tensors": "list[Tensor]", "int": "int", "float": "float",
                                                                "bool": "bool", "str": "str"}[k]) for k, n in self.py)
        res = ("tuple of %d Tensors" % self.outputs if self.outputs else
               {"tensor": "Tensor", "void": "None", "int": "int", "float": "float", "bool": "bool"}[self.ret[0]])
        return f"{self.name}({args}) -> {res}"


def _declarations(sources_text):
    """{name: (return type, its base name, params)} of the non-static function definitions."""
    out = {}
    for m in _DEF.finditer(_strip_comments(sources_text)):
        head, name, params = m.group(1), m.group(2), m.group(3)
        if re.search(r"\bstatic\b", head) or name in ("if", "for", "while", "switch", "return", "sizeof"):
            continue
        ret = _type(head)
        ret_base = " ".join(_QUALIFIERS.sub(" ", head).replace("*", " ").split())
        plist = [] if params.strip() in ("", "void") else [_param(p) for p in params.split(",")]
        out[name] = (ret, ret_base, plist)
    return out


# --------------------------------------------------------------------------- calling
def _as_tensor(v, fn, arg):
    if v is None:
        return None
    return _tp(v, fn, arg)


def _bind(cfn, sig):
    cfn.restype, cfn.argtypes = sig.restype, sig.argtypes
    lib, name = _C.lib, sig.name

    def call(*args, **kwargs):
        if len(args) > len(sig.py):
            raise TypeError(f"{name}() takes {len(sig.py)} arguments but {len(args)} were given")
        values = list(args)
        for kind, pname in sig.py[len(args):]:
            if pname not in kwargs:
                raise TypeError(f"{name}() missing required argument '{pname}'")
            values.append(kwargs.pop(pname))
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        c, keep = [], []
        for (kind, pname), v in zip(sig.py, values):
            if kind == "tensor":
                c.append(_as_tensor(v, name, pname))
            elif kind == "tensors":
                v = list(v)
                arr = (ctypes.c_void_p * max(len(v), 1))(*[_as_tensor(t, name, pname) for t in v])
                keep.append(arr)
                c += [arr, len(v)]
            elif kind == "str":
                if not isinstance(v, str):
                    raise TypeError(f"{name}(): argument '{pname}' must be str, not {type(v).__name__}")
                c.append(v.encode())
            elif kind == "bool":
                c.append(bool(v))
            elif kind == "int":
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError(f"{name}(): argument '{pname}' must be int, not {type(v).__name__}")
                c.append(v)
            else:
                c.append(float(v))
        outs = (ctypes.c_void_p * sig.outputs)() if sig.outputs else None
        if outs is not None:
            c.append(outs)
        lib.tn_clear_error()
        lib.tn_scope_begin()           # the extension's temporaries go with this scope
        try:
            r = cfn(*c)
            kept = [lib.tn_retain(p) for p in outs if p] if outs is not None else None
            if sig.ret[0] == "tensor" and r:
                lib.tn_retain(r)
        finally:
            lib.tn_scope_end()
        if outs is not None:
            if r < 0 or len(kept) < sig.outputs:
                for p in kept:
                    lib.tn_release(p)
                if r >= 0:
                    raise RuntimeError(f"{name}() returned {r} but left {sig.outputs - len(kept)} of its "
                                       f"{sig.outputs} outputs NULL")
                _raise()
            return tuple(_adopt(p) for p in kept)
        if sig.ret[0] == "tensor":
            if not r:
                _raise()
            return _adopt(r)
        if lib.tn_last_error():
            _raise()
        return r

    call.__name__ = call.__qualname__ = name
    call.__doc__ = sig.doc()
    return call


def _adopt(ptr):
    t = object.__new__(Tensor)
    t._ptr = ptr
    return t


# --------------------------------------------------------------------------- building
def _compilers():
    return os.environ.get("CC", "cc"), os.environ.get("CXX", "c++"), os.environ.get("NVCC", "nvcc")


def _digest(name, sources, cflags, ldflags, includes, cuda_cflags):
    h = hashlib.sha256()
    for part in [name, sys.platform, _C.path, repr(_compilers()), repr(cflags), repr(ldflags), repr(includes),
                 repr(cuda_cflags)]:
        h.update(part.encode() + b"\0")
    for path in list(sources) + [os.path.join(include_paths()[0], "tensor.h")]:
        with open(path, "rb") as f:
            h.update(f.read() + b"\0")
    st = os.stat(_C.path)
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _run(cmd, name, verbose):
    if verbose:
        print("tensor.utils.c_extension:", " ".join(shlex.quote(c) for c in cmd), flush=True)
    # compilers run without this process's preloads (a sanitizer runtime preloaded into
    # the interpreter must not be preloaded into nvcc or cc)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    except FileNotFoundError:
        raise RuntimeError(f"Error building extension '{name}': compiler not found: {cmd[0]} "
                           "(install one, e.g. Debian's build-essential, or set CC / CXX / NVCC)") from None
    if verbose and p.stdout:
        print(p.stdout, end="", flush=True)
    if p.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}':\n{' '.join(cmd)}\n{p.stdout}")


def _cuda_lib_dirs(nvcc, tmp):
    """Where this nvcc's CUDA runtime lives, as nvcc itself would link it (its LIBRARIES line
    under --dryrun): toolkits put libcudart in lib64/, targets/<arch>/lib/ or a distro path."""
    p = subprocess.run([nvcc, "--dryrun", "-shared", "--cudart", "shared", "-o", os.path.join(tmp, "probe.so"),
                        os.path.join(tmp, "probe.o")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dirs = []
    for line in p.stdout.splitlines():
        if "LIBRARIES=" in line:
            dirs += [os.path.normpath(d.strip('"')[2:]) for d in line.split("LIBRARIES=", 1)[1].split()
                     if d.strip('"').startswith("-L")]
    if not dirs:                        # older nvcc without the line: the runtime next to it
        root = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(nvcc) or nvcc)))
        dirs = [os.path.join(root, "lib64")]
    return dirs


def _build(name, sources, cflags, ldflags, includes, cuda_cflags, out, verbose):
    cc, cxx, nvcc = _compilers()
    inc = [f"-I{d}" for d in includes + include_paths()]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out)) as tmp:
        objs, cpp, cu = [], False, False
        for i, src in enumerate(sources):
            obj = os.path.join(tmp, f"{i}_{os.path.basename(src)}.o")
            ext = os.path.splitext(src)[1].lower()
            if ext == ".cu":
                cu = True
                cmd = [nvcc, "-std=c++17", "-O2", "-Xcompiler", "-fPIC", "-DTENSOR_NO_IMPLEMENTATION"] + inc + \
                      cuda_cflags + ["-c", src, "-o", obj]
            elif ext in (".cpp", ".cc", ".cxx", ".c++"):
                cpp = True
                cmd = [cxx, "-std=c++17", "-O2", "-fPIC", "-DTENSOR_NO_IMPLEMENTATION"] + inc + cflags + ["-c", src, "-o", obj]
            else:
                cmd = [cc, "-std=c11", "-O2", "-fPIC", "-DTENSOR_NO_IMPLEMENTATION"] + inc + cflags + ["-c", src, "-o", obj]
            _run(cmd, name, verbose)
            objs.append(obj)
        libdir = os.path.dirname(os.path.abspath(_C.path))
        cuda_libs = []
        if cu:
            dirs = _cuda_lib_dirs(nvcc, tmp)
            cuda_libs = [f"-L{d}" for d in dirs] + [f"-Wl,-rpath,{d}" for d in dirs if "stubs" not in d] + ["-lcudart"]
        tmp_out = os.path.join(tmp, "ext.so")
        # linked to the loaded library itself: the loader finds it already loaded (by its
        # soname or path), so the extension shares its one instance
        _run([cxx if cpp or cu else cc, "-shared", "-o", tmp_out] + objs +
             [os.path.abspath(_C.path), f"-Wl,-rpath,{libdir}"] + ldflags + cuda_libs + ["-lm"], name, verbose)
        os.replace(tmp_out, out)       # atomic: a concurrent reader sees the old or the new build


def load(name, sources, extra_cflags=None, extra_ldflags=None, extra_include_paths=None, build_directory=None,
         verbose=False, with_cuda=None, functions=None, extra_cuda_cflags=None, is_python_module=True):
    """Compile C/C++/CUDA sources against tensor.h (cached), load them into this process and
    return a module with a Python function for each of their public C functions."""
    del with_cuda, is_python_module
    if isinstance(sources, str):
        sources = [sources]
    if not sources:
        raise ValueError("load(): sources must name at least one file")
    if not re.match(r"^[A-Za-z_]\w*$", name):
        raise ValueError(f"load(): the extension name {name!r} must be a valid identifier")
    sources = [os.path.abspath(s) for s in sources]
    for s in sources:
        if not os.path.isfile(s):
            raise FileNotFoundError(f"load(): source file not found: {s}")
    cflags, ldflags = list(extra_cflags or []), list(extra_ldflags or [])
    includes, cuda_cflags = [os.path.abspath(p) for p in (extra_include_paths or [])], list(extra_cuda_cflags or [])
    folder = build_directory or os.path.join(get_default_build_root(), name)
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, f"{name}_{_digest(name, sources, cflags, ldflags, includes, cuda_cflags)}.so")
    with open(os.path.join(folder, f"{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)           # one builder at a time; the others then find its build
        try:
            built = not os.path.exists(out)
            if built:
                _build(name, sources, cflags, ldflags, includes, cuda_cflags, out, verbose)
            elif verbose:
                print(f"tensor.utils.c_extension: using the cached build {out}", flush=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    text = ""
    for s in sources:
        with open(s, encoding="utf-8", errors="replace") as f:
            text += f.read() + "\n;\n"
    return _module(name, out, _declarations(text), functions, built)


def _symbol(handle, so, fname):
    """The C function fname of the loaded extension; a C++ function without extern "C" by
    its mangled name (found with nm, read back with c++filt)."""
    try:
        return getattr(handle, fname)
    except AttributeError:
        pass
    try:
        names = subprocess.run(["nm", "-D", "--defined-only", so], stdout=subprocess.PIPE, text=True).stdout.split()
        mangled = [n for n in names if n.startswith("_Z") and str(len(fname)) + fname in n]
        plain = subprocess.run(["c++filt"] + mangled, stdout=subprocess.PIPE, text=True).stdout.splitlines()
    except FileNotFoundError:
        mangled, plain = [], []
    hits = [m for m, p in zip(mangled, plain) if p.startswith(fname + "(")]
    if len(hits) != 1:
        raise AttributeError(f"extension: {fname} is not an exported symbol of {so}"
                             + (" (overloaded C++ functions cannot be bound: give them extern \"C\" names)" if hits else ""))
    return getattr(handle, hits[0])


def _module(name, so, decls, functions, built):
    handle = ctypes.CDLL(so)
    mod = types.ModuleType(name, f"C extension '{name}' built from tensor.h sources ({so})")
    mod.__file__ = so
    mod._rebuilt = built
    wanted = functions
    if isinstance(functions, str):
        wanted = [functions]
    docs = functions if isinstance(functions, dict) else {}
    for fname in (list(wanted) if wanted is not None else list(decls)):
        if fname not in decls:
            raise AttributeError(f"extension '{name}': no public C function named '{fname}' in its sources "
                                 "(a static function is not exported)")
        ret, ret_base, params = decls[fname]
        try:
            if ret is None or any(p is None or p[0] is None for p in params):
                raise TypeError("a parameter or its result has no Python mapping")
            sig = _Signature(fname, ret, ret_base, params)
        except TypeError as e:
            if wanted is not None:
                raise TypeError(f"extension '{name}': cannot bind {fname}(): {e}") from None
            continue                   # not a Python-callable function (a callback, a helper)
        fn = _bind(_symbol(handle, so, fname), sig)
        if docs.get(fname):
            fn.__doc__ = docs[fname] + "\n\n" + sig.doc()
        setattr(mod, fname, fn)
    return mod


def load_inline(name, c_sources=None, functions=None, extra_cflags=None, extra_ldflags=None,
                extra_include_paths=None, build_directory=None, verbose=False, cuda_sources=None,
                cpp_sources=None, with_cuda=None, extra_cuda_cflags=None, is_python_module=True):
    """load() of sources given as strings: ``c_sources`` (C), ``cpp_sources`` (C++),
    ``cuda_sources`` (CUDA); each a string or a list of strings. ``#include "tensor.h"`` is
    prepended when a source does not include it."""
    del with_cuda, is_python_module
    folder = build_directory or os.path.join(get_default_build_root(), name)
    os.makedirs(folder, exist_ok=True)
    files = []
    for kind, ext in ((c_sources, ".c"), (cpp_sources, ".cpp"), (cuda_sources, ".cu")):
        if kind is None:
            continue
        text = "\n".join([kind] if isinstance(kind, str) else kind)
        if not re.search(r'#\s*include\s*[<"]tensor\.h[>"]', text):
            text = '#include "tensor.h"\n' + text
        path = os.path.join(folder, f"main{ext}")
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=ext) as f:
                f.write(text)
            os.replace(f.name, path)
        files.append(path)
    if not files:
        raise ValueError("load_inline(): give c_sources, cpp_sources or cuda_sources")
    return load(name, files, extra_cflags=extra_cflags, extra_ldflags=extra_ldflags,
                extra_include_paths=extra_include_paths, build_directory=folder, verbose=verbose,
                functions=functions, extra_cuda_cflags=extra_cuda_cflags)

