"""tensor._C against the header: the ctypes declarations must be src/api.h's.

A row of _C's table that disagrees with the C declaration is silent memory corruption
(a double passed where the function reads an int64_t, a struct one field short), so
this reads src/api.h and compares, for every function the package declares: the name,
the number of arguments, each argument's type and the result's (as _C's letter codes,
and as the ctypes types the letters stand for); the function pointer types of callbacks;
the enum values _C and the package copy; and the field layout of every ctypes Structure
in _C. It also checks that every `lib.tn_*` the package calls is declared in _C.

Nothing here is skipped: without src/api.h (the package outside its repository) the
tests fail.

Run:  make lib/libtensor.so && python3 -m pytest -q bindings/python/tests/test_bindings_match_header.py
"""
import ctypes
import os
import re
import sys
from ctypes import (POINTER, c_bool, c_char_p, c_double, c_float, c_int, c_int32, c_int64, c_size_t, c_uint32,
                    c_uint64, c_uint8, c_void_p)

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.join(HERE, "..")
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
API_H = os.path.join(REPO, "src", "api.h")
sys.path.insert(0, PKG_ROOT)
import tensor  # noqa: E402,F401
from tensor import _C  # noqa: E402
from tensor.nn import functional as _F  # noqa: E402


# --------------------------------------------------------------------------- reading api.h
def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _close_paren(text, i):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced parentheses in " + text)


FUNC_PTR = re.compile(r"^(.*?)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)$", re.S)


class CType:
    """A parameter, result or field type: text as written ("const int64_t *"), or a
    function pointer (ret, params)."""

    def __init__(self, text, fn=None):
        self.text, self.fn = " ".join(text.split()), fn

    def __repr__(self):
        if self.fn:
            return "%s (*)(%s)" % (self.fn[0], ", ".join(map(repr, self.fn[1])))
        return self.text


def _param(text):
    """(name, CType) of one parameter or field declaration."""
    text = " ".join(text.split())
    m = FUNC_PTR.match(text)
    if m:
        params = [] if m.group(3).strip() in ("", "void") else [_param(p)[1] for p in _split_top(m.group(3))]
        return m.group(2), CType(text, (_param(m.group(1) + " _")[1], params))
    m = re.match(r"^(.*?)\b(\w+)\s*\[([^\]]*)\]$", text)     # const int64_t stride[2]: a pointer
    if m:
        ct = CType(m.group(1) + " *")
        n = m.group(3).strip()
        n = _ARRAY_DEFINES.get(n, n)   # double v[TN_LIST_MAX]
        ct.array_len = int(n) if n.isdigit() else None   # a struct field's array
        return m.group(2), ct
    m = re.match(r"^(.*?[\s*])(\w+)$", text)
    if not m or m.group(2) in ("int", "double", "bool", "void", "char", "size_t", "int64_t"):
        raise ValueError("api.h: a parameter without a name: %r" % text)
    return m.group(2), CType(m.group(1))


_ARRAY_DEFINES = {}   # the header's integer #defines, for array lengths written as a macro


class Header:
    def __init__(self, path):
        with open(path) as f:
            self.text = f.read()
        self.code = _strip_comments(self.text)
        _ARRAY_DEFINES.update(re.findall(r"^#define\s+(\w+)\s+(\d+)\s*$", self.code, re.M))
        # declarations are read with the macro definitions taken out (TN__KW_STRUCT's template
        # and the keyword macros look like declarations to these patterns)
        no_macros = re.sub(r"^#define(?:[^\n]*\\\n)*[^\n]*", "", self.code, flags=re.M)
        self.functions = {}     # name -> (CType result, [CType params], variadic)
        for m in re.finditer(r"^TNDEF\s+(.*?);", no_macros, re.M | re.S):
            decl = " ".join(m.group(1).split())
            name = re.search(r"(\w+)\s*\(", decl)
            open_ = name.end() - 1
            close = _close_paren(decl, open_)
            params = _split_top(decl[open_ + 1:close])
            variadic = bool(params) and params[-1] == "..."
            if variadic:
                params = params[:-1]
            if params == ["void"]:
                params = []
            self.functions[name.group(1)] = (CType(decl[:name.start()]), [_param(p)[1] for p in params], variadic)
        self.fn_typedefs = {}   # tn_hook_fn -> (ret, params)
        for m in re.finditer(r"typedef\s+([^;]*?\(\s*\*\s*(\w+)\s*\)\s*\([^;]*\))\s*;", no_macros):
            self.fn_typedefs[m.group(2)] = _param(m.group(1))[1].fn
        self.enums = {}         # enum type -> {constant: value}
        for m in re.finditer(r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", self.code, re.S):
            self.enums[m.group(3)] = self._enum_values(m.group(2))
        self.structs = {}       # struct type -> [(field, CType)]
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", no_macros, re.S):
            fields = []
            for decl in m.group(2).split(";"):
                decl = " ".join(decl.split())
                if not decl:
                    continue
                if FUNC_PTR.match(decl):
                    fields.append(_param(decl))
                    continue
                # `size_t a, b` / `T *p, *q`: the base type, then each declarator with its stars
                items = _split_top(decl)
                m0 = re.match(r"^(.*?)((?:\*\s*)*\w+(?:\[[^\]]*\])?)$", items[0])
                base = m0.group(1).strip()
                for d in [m0.group(2)] + items[1:]:
                    fields.append(_param(base + " " + d))
            self.structs[m.group(3)] = fields
        # keyword-argument structs: TN__KW_STRUCT(T) declares T's members from its list
        # TN_FIELDS_T(X) of X(type, name, default, words) rows, each type's declaration
        # given by TN__KW_C_<type>(name)
        decl_of = dict(re.findall(r"^#define\s+TN__KW_C_(\w+)\(n\)\s+(.*?)\s*$", self.code, re.M))
        for name in re.findall(r"\bTN__KW_STRUCT\((\w+)\)\s*;", no_macros):
            lst = re.search(r"#define\s+TN_FIELDS_%s\(X\)((?:[^\n]*\\\n)*[^\n]*)" % name, self.code)
            assert lst, f"no list TN_FIELDS_{name}"
            fields = []
            for kind, field in re.findall(r"\bX\(\s*(\w+)\s*,\s*(\w+)\s*,", lst.group(1)):
                fields.append(_param(re.sub(r"\bstruct\s+", "", re.sub(r"\bn\b", field, decl_of[kind]))))   # struct tn_tensor, tn_generator, ...
            self.structs[name] = fields
        self.defines = dict(re.findall(r"^#define\s+(\w+)\s+(\S[^\n]*?)\s*$", self.code, re.M))

    def _enum_values(self, body):
        values, nxt = {}, 0
        for item in _split_top(body):
            m = re.match(r"^(\w+)\((\w+)\)(.*)$", item.strip())    # X-macro list: TN_UNARY_OPS(TN__ENUM_ENTRY) TN_NUM_...
            names = []
            if m:
                lst = re.search(r"#define\s+%s\(X\)((?:[^\n]*\\\n)*[^\n]*)" % m.group(1), self.code)
                names = re.findall(r"\bX\((\w+)\)", lst.group(1)) + m.group(3).split()
            else:
                names = [item.strip()]
            for nm in names:
                name, _, val = nm.partition("=")
                if val.strip():
                    nxt = int(val.strip(), 0)
                values[name.strip()] = nxt
                nxt += 1
        return values


@pytest.fixture(scope="module")
def header():
    assert os.path.exists(API_H), "src/api.h not found at %s: these tests need the repository" % API_H
    return Header(API_H)


# --------------------------------------------------------------------------- C types -> letters
SCALAR = {"int": ("i", c_int), "int64_t": ("l", c_int64), "uint64_t": ("u", c_uint64), "double": ("d", c_double),
          "bool": ("b", c_bool), "size_t": ("z", c_size_t), "float": ("f", c_float), "uint16_t": ("h", ctypes.c_uint16)}
BY_VALUE = {"tn_memory_stats": "M", "tn_cuda_stats": "N", "tn_autograd_opts": "O", "tn_loss_opts": "Q",
            "tn_print_options": "R", "tn_searchsorted_fn_opts": "J", "tn_cov_fn_opts": "V", "tn_diff_fn_opts": "U",
            "tn_trapezoid_fn_opts": "B", "tn_affine_norm_fn_opts": "I", "tn_histogram_fn_opts": "w",
            "tn_histogramdd_fn_opts": "y", "tn_batch_norm_fn_opts": "bn", "tn_instance_norm_fn_opts": "in",
            "tn_sdpa_fn_opts": "sd", "tn_mha_forward_opts": "mh", "tn_encoder_layer_forward_opts": "el",
            "tn_decoder_layer_forward_opts": "dl", "tn_normal_fill_opts": "fn", "tn_uniform_fill_opts": "fu",
            "tn_exponential_fill_opts": "fe", "tn_generator_fill_opts": "fg", "tn_cauchy_fill_opts": "fc",
            "tn_log_normal_fill_opts": "fl", "tn_random_fill_opts": "fr", "tn_init_uniform_fn_opts": "ju",
            "tn_init_normal_fn_opts": "jn", "tn_init_xavier_fn_opts": "jx", "tn_init_kaiming_fn_opts": "jk",
            "tn_init_trunc_normal_fn_opts": "jt", "tn_init_sparse_fn_opts": "js"}
POINTEE = {"int64_t": ("L", c_int64), "double": ("P", c_double), "size_t": ("S", c_size_t)}
FIELD_SCALAR = {"int": c_int, "int64_t": c_int64, "uint64_t": c_uint64, "double": c_double, "bool": c_bool,
                "size_t": c_size_t, "float": c_float, "int32_t": c_int32, "uint32_t": c_uint32, "uint8_t": c_uint8}


def _norm(t):
    """'const int64_t *' -> ('int64_t', 1, const_pointee); 'tn_tensor *const *' -> ('tn_tensor', 2, False)."""
    t = t.text
    const_pointee = bool(re.match(r"^const\s+\w+\s*\*", t))
    t = re.sub(r"\bconst\b", "", t)
    stars = t.count("*")
    base = t.replace("*", " ").split()
    assert len(base) == 1, "unexpected C type %r" % t
    return base[0], stars, const_pointee


def _fn_ctypes(header, proto):
    """(restype, argtypes) a CFUNCTYPE needs for the C prototype."""
    ret, params = proto
    return (None if ret.text == "void" else _ctype(header, ret, result=True),
            tuple(_ctype(header, p) for p in params))


def _ctype(header, t, result=False):
    """The ctypes type a C type is passed as (what the letter must stand for)."""
    if t.fn:
        return ("fn",) + _fn_ctypes(header, t.fn)
    base, stars, const_pointee = _norm(t)
    if stars == 0:
        if base in SCALAR:
            return SCALAR[base][1]
        if base in header.enums:
            return c_int
        if base in header.fn_typedefs:
            return ("fn",) + _fn_ctypes(header, header.fn_typedefs[base])
        if base in header.structs:
            return getattr(_C, base)
        raise AssertionError("no ctypes type for C type %r" % t.text)
    if stars >= 2:
        return POINTER(c_void_p)
    if base == "char":
        # a string in; a string out the caller does not free is const; char * results are freed (tn_string_free)
        return c_char_p if const_pointee else c_void_p
    if base in POINTEE:
        return POINTER(POINTEE[base][1])
    if base == "tn_generator":
        return POINTER(_C.tn_generator)
    return c_void_p


def _letter(header, t):
    """The letter _C's table must use for a C type (None for a callback: any letter whose
    CFUNCTYPE has the prototype)."""
    if t.fn:
        return None
    base, stars, const_pointee = _norm(t)
    if stars == 0:
        if base == "void":
            return "v"
        if base in SCALAR:
            return SCALAR[base][0]
        if base in header.enums:
            return "D"
        if base in BY_VALUE:
            return BY_VALUE[base]
        if base in header.fn_typedefs:
            return None
        raise AssertionError("no letter for C type %r" % t.text)
    if stars >= 2:
        return "A"
    if base == "tn_tensor":
        return "T"
    if base == "char":
        return "s" if const_pointee else "p"
    if base in POINTEE:
        return POINTEE[base][0]
    if base == "tn_generator":
        return "G"
    return "p"


def _same_ctype(a, b):
    if isinstance(a, tuple):          # ("fn", restype, argtypes)
        return (isinstance(b, type) and issubclass(b, ctypes._CFuncPtr) and b._restype_ == a[1]
                and tuple(b._argtypes_) == a[2])
    return a is b


def _callback_letters(header, proto):
    want = ("fn",) + _fn_ctypes(header, proto)
    return sorted(k for k, v in _C._TYPES.items() if _same_ctype(want, v))


# --------------------------------------------------------------------------- the tests
def test_every_row_matches_its_declaration(header):
    """Name, argument count, argument and result letters, for every declared function."""
    assert _C.signatures, "tensor._C declares no functions"
    errors = []
    for name, letters in sorted(_C.signatures.items()):
        if name not in header.functions:
            errors.append("%s: not declared in src/api.h" % name)
            continue
        ret, params, variadic = header.functions[name]
        codes = letters.split()
        if variadic:
            errors.append("%s: variadic in C; ctypes cannot declare it" % name)
        if len(codes) - 1 != len(params):
            errors.append("%s: %d arguments in _C (%s), %d in api.h (%s)"
                          % (name, len(codes) - 1, " ".join(codes[1:]), len(params), ", ".join(map(repr, params))))
            continue
        for k, (code, t) in enumerate(zip(codes, [ret] + params)):
            what = "result" if k == 0 else "argument %d" % k
            want = _letter(header, t)
            if want is None:                   # a callback: the letter's CFUNCTYPE must have the prototype
                ok = _callback_letters(header, t.fn if t.fn else header.fn_typedefs[_norm(t)[0]])
                if code not in ok:
                    errors.append("%s: %s is %r: letter %r, expected one of %s (a CFUNCTYPE with that prototype)"
                                  % (name, what, t, code, ok or "none: add one to _C._TYPES"))
            elif code != want:
                errors.append("%s: %s is %r: letter %r, expected %r" % (name, what, t, code, want))
    assert not errors, "_C's table disagrees with src/api.h:\n  " + "\n  ".join(errors)


def test_letters_stand_for_the_right_ctypes(header):
    """What each letter means in _C._TYPES, checked on the C types that use it, and what
    ctypes was told for every function (restype, argtypes)."""
    errors = []
    for name, letters in sorted(_C.signatures.items()):
        if name not in header.functions:
            continue
        ret, params, _ = header.functions[name]
        codes = letters.split()
        if len(codes) - 1 != len(params):
            continue
        for k, (code, t) in enumerate(zip(codes, [ret] + params)):
            if k == 0 and t.text == "void":
                if _C._TYPES[code] is not None:
                    errors.append("%s: void result as %r" % (name, _C._TYPES[code]))
                continue
            want = _ctype(header, t, result=(k == 0))
            if not _same_ctype(want, _C._TYPES[code]):
                errors.append("%s: %s %r needs %r; letter %r is %r"
                              % (name, "result" if k == 0 else "argument %d" % k, t, want, code, _C._TYPES[code]))
        fn = getattr(_C.lib, name)
        if fn.restype is not _C._TYPES[codes[0]] or list(fn.argtypes) != [_C._TYPES[c] for c in codes[1:]]:
            errors.append("%s: ctypes was told %r %r, the table says %r" % (name, fn.restype, fn.argtypes, letters))
    assert not errors, "\n  ".join(["ctypes types disagree with src/api.h:"] + errors)


def test_no_optional_rows():
    """The package and the library ship together: every row is mandatory (an import on an
    older library fails), and nothing asks whether a symbol is there."""
    assert not hasattr(_C, "has")
    for table in ("_SIGNATURES", "_NN_SIGNATURES", "_OPTIM_SIGNATURES", "_RNN_SIGNATURES"):
        for line in getattr(_C, table).strip().splitlines():
            assert not line.startswith("?"), "%s: optional row %r" % (table, line)
    for line in _C._SIGNATURES.strip().splitlines():
        assert line.split()[0] in _C.signatures


def _package_sources():
    for folder, _, files in os.walk(os.path.join(PKG_ROOT, "tensor")):
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(folder, f)


def test_package_calls_only_declared_functions():
    """A `lib.tn_x(...)` without a row would run with ctypes' defaults (int arguments and
    result): every function the package names is in the table."""
    used = {}
    for path in _package_sources():
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"\blib\.(tn_\w+)|getattr\(\s*(?:_C\.)?lib\s*,\s*[\"'](tn_\w+)[\"']", text):
            used.setdefault(m.group(1) or m.group(2), os.path.relpath(path, PKG_ROOT))
    assert used, "no lib.tn_* call found in the package: the scan is broken"
    missing = sorted("%s (%s)" % (n, p) for n, p in used.items() if n not in _C.signatures)
    assert not missing, "called but not declared in _C: " + ", ".join(missing)


def test_functions_fetched_at_import_are_declared():
    """Every function the package's modules fetched from the library while importing
    (ctypes caches each in the CDLL's __dict__) has a row; the scan above sees the calls
    written as lib.tn_x, this sees names the package computes (getattr(lib, "tn_" + name))."""
    import importlib
    import pkgutil
    for mod in pkgutil.walk_packages([os.path.join(PKG_ROOT, "tensor")], "tensor."):
        importlib.import_module(mod.name)
    fetched = sorted(n for n in vars(_C.lib) if n.startswith("tn_"))
    assert len(fetched) > 300
    missing = [n for n in fetched if n not in _C.signatures]
    assert not missing, "fetched from the library without a row in _C: " + ", ".join(missing)


def test_family_lists_are_declared(header):
    """The name lists _ops.py builds methods from: each name is a declared C function."""
    for name in _C.UNARY + _C.BINARY + _C.MATMUL:
        assert "tn_" + name in header.functions, name
    for name in _C.UNARY_INPLACE + _C.BINARY_INPLACE:
        assert "tn_" + name + "_" in header.functions, name + "_"
    for name in _C.BINARY_SCALAR:
        assert "tn_%s_scalar" % name in header.functions, name


def test_enum_values(header):
    """Enum values the package copies: dtypes and devices (_C), reductions (nn.functional)."""
    dtypes = header.enums["tn_dtype"]
    for cname, value in dtypes.items():
        if cname.startswith("TN_NUM_"):
            continue
        assert getattr(_C, cname[3:]) == value, "_C.%s is %r, api.h's %s is %d" % (cname[3:], getattr(_C, cname[3:]), cname, value)
    for cname, value in header.enums["tn_device"].items():
        if not cname.startswith("TN_NUM_"):
            assert getattr(_C, cname[3:]) == value, cname
    red = {c[len("TN_REDUCTION_"):].lower(): v for c, v in header.enums["tn_reduction"].items()}
    assert _F._REDUCTIONS == red, "nn.functional._REDUCTIONS %r, api.h's tn_reduction %r" % (_F._REDUCTIONS, red)
    assert _C.MAX_DIMS == _C.lib.tn_max_dims() >= int(header.defines["TN_MAX_DIMS"])   # the library's value (an option)
    # the dtype objects carry the codes
    for d in (tensor.float32, tensor.float64, tensor.int32, tensor.int64, tensor.uint8, tensor.bool,
              tensor.float16, tensor.bfloat16):
        assert d._code == dtypes["TN_" + {"float32": "F32", "float64": "F64", "int32": "I32", "int64": "I64",
                                           "uint8": "U8", "bool": "BOOL", "float16": "F16",
                                           "bfloat16": "BF16"}[d.name]], d


def _structures():
    return sorted((n, v) for n, v in vars(_C).items()
                  if isinstance(v, type) and issubclass(v, ctypes.Structure) and v is not ctypes.Structure)


# Structures _C passes by pointer to C that reads only the C fields: trailing zeroed room
# (named _reserved) is allowed there, so that a field the C side adds reads as zero.
ROOM_ALLOWED = {"tn_module_type"}


def test_structure_layouts(header):
    """Every ctypes Structure in _C has its C struct's fields: names, order and types."""
    structs = _structures()
    assert {n for n, _ in structs} >= {"tn_memory_stats", "tn_generator", "tn_autograd_opts", "tn_loss_opts", "tn_cuda_stats"}
    errors = []
    for name, cls in structs:
        if name not in header.structs:
            errors.append("%s: no such struct in api.h" % name)
            continue
        c_fields = header.structs[name]
        py_fields = list(cls._fields_)
        if name in ROOM_ALLOWED and len(py_fields) > len(c_fields) and all(f[0].startswith("_reserved") for f in py_fields[len(c_fields):]):
            py_fields = py_fields[:len(c_fields)]
        if [f[0] for f in py_fields] != [f[0] for f in c_fields]:
            errors.append("%s: fields %s in _C, %s in api.h" % (name, [f[0] for f in py_fields], [f[0] for f in c_fields]))
            continue
        for (fname, pytype), (_, ct) in zip(py_fields, c_fields):
            if ct.fn:   # a function pointer field: a CFUNCTYPE of its prototype, or void *
                if pytype is c_void_p or _same_ctype(("fn",) + _fn_ctypes(header, ct.fn), pytype):
                    continue
                errors.append("%s.%s: %r for %r" % (name, fname, pytype, ct))
                continue
            base, stars, const_pointee = _norm(ct)
            if stars == 1 and getattr(ct, "array_len", None) and FIELD_SCALAR.get(base):
                want = FIELD_SCALAR[base] * ct.array_len      # uint32_t mt[624]: an inline array
            elif stars == 0 and base in header.structs and isinstance(getattr(_C, base, None), type):
                want = getattr(_C, base)                              # a struct member (tn_doubles): checked on its own
            elif stars == 0:
                want = FIELD_SCALAR.get(base) or (c_int if base in header.enums else None)
            elif base == "char":
                want = c_char_p if const_pointee else POINTER(ctypes.c_char)
            elif base == "tn_generator":
                want = POINTER(_C.tn_generator)                       # a generator field, as the "G" argument
            else:
                want = c_void_p
            if want is None or pytype is not want:
                errors.append("%s.%s: %r in _C, %r (%r) in api.h" % (name, fname, pytype, ct, want))
    assert not errors, "\n  ".join(["Structures disagree with api.h:"] + errors)


def test_callback_types(header):
    """The CFUNCTYPEs _C exports have the prototypes of the C callback types they stand for."""
    pairs = {"HOOK": "tn_hook_fn", "ERROR_HANDLER": "tn_error_handler", "CUSTOM_FORWARD": "tn_custom_forward",
             "CUSTOM_BACKWARD": "tn_custom_backward", "GRADCHECK_FN": "tn_gradcheck_fn", "CLOSURE": "tn_closure"}
    for py, c in pairs.items():
        assert _same_ctype(("fn",) + _fn_ctypes(header, header.fn_typedefs[c]), getattr(_C, py)), (py, c)
    inline = {"DELETER": ("tn_from_blob", 5), "LR_LAMBDA": ("tn_lr_scheduler_lambda", 1)}
    for py, (fn, k) in inline.items():
        t = header.functions[fn][1][k]
        assert t.fn, (fn, k, t)
        assert _same_ctype(("fn",) + _fn_ctypes(header, t.fn), getattr(_C, py)), (py, fn)


def test_the_parser_sees_the_header(header):
    """Guards against a parser that silently reads nothing."""
    assert len(header.functions) > 400
    assert header.functions["tn_from_blob"][1][5].fn
    assert [repr(p) for p in header.functions["tn_from_blob"][1][1:4:2]] == ["const int64_t *"] * 2
    assert [f for f, _ in header.structs["tn_conv_opts"]][:3] == ["stride", "padding", "dilation"]
    assert header.enums["tn_dtype"]["TN_BF16"] == 7 and header.enums["tn_reduction"]["TN_REDUCTION_BATCHMEAN"] == 3
    assert header.enums["tn_unary_op"]["NEG"] == 0
    assert [f for f, _ in header.structs["tn_cuda_stats"]][:3] == ["allocated", "reserved", "peak_allocated"]
    assert "tn_hook_fn" in header.fn_typedefs and header.functions["tn_error"][2]
