"""Values of a translated loop body and the element operations on them.

A loop body is run once, symbolically: every name it computes holds a
``Val``, either *uniform* (the same in every iteration: a Python or NumPy
scalar, a 0-d crossover array, or any loop-invariant object) or *varying*
(a lazy crossover array whose leading ``depth`` axes are the loop axes of
the nest, sized 1 where the value does not depend on that loop, followed by
``erank`` element axes, which are non-zero for rows of N-D arrays).

Each value also carries a *proto*: a scalar ``1`` of the type the element
has in the plain Python loop (``1.0`` for a Python float, ``np.float32(1)``
for an element of a float32 array). Types follow the Python loop: an
operation's result type is the operation applied to the protos, so NEP 50's
rules for mixing Python and NumPy scalars hold, and the vector result is
cast where the engine's array rules differ (an int32 element plus a Python
int stays int32; ``math.sin`` of a float32 element is a Python float).
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from typing import Any

import numpy as np

from . import _crossover as _C


class Untranslatable(Exception):
    """A construct the loop translator does not take (the function then runs
    as plain Python); ``line`` is the source line, when known."""

    def __init__(self, what: str, line: int | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.line = line


class Val:
    """One value of the loop body: see the module docstring."""

    __slots__ = ("v", "proto", "text", "depth", "erank", "idx")

    def __init__(self, v: Any, proto: Any, text: str, depth: int = 0, erank: int = 0,
                 idx: tuple[int, int] | None = None) -> None:
        self.v = v
        self.proto = proto
        self.text = text
        self.depth = depth
        self.erank = erank
        #: (loop level, offset) when the value is a loop index plus a constant.
        self.idx = idx

    @property
    def varying(self) -> bool:
        return self.depth > 0


def proto_of(obj: Any) -> Any:
    """A scalar 1 of the type ``obj`` has as a loop element, or None when
    ``obj`` is not a number."""
    if isinstance(obj, (bool, np.bool_)):
        return type(obj)(True)
    if isinstance(obj, (int, float, complex, np.number)):
        return type(obj)(1)
    if isinstance(obj, (_C.ndarray, np.ndarray)) and np.dtype(obj.dtype).kind in "biufc":
        return np.dtype(obj.dtype).type(1)
    return None


def dtype_of(proto: Any) -> np.dtype:
    """The array dtype that holds values of the proto's type (Python ints:
    int64, as Python's unbounded ints cannot be stored)."""
    if isinstance(proto, bool):
        return np.dtype(np.bool_)
    if isinstance(proto, int):
        return np.dtype(np.int64)
    if isinstance(proto, float):
        return np.dtype(np.float64)
    if isinstance(proto, complex):
        return np.dtype(np.complex128)
    return np.dtype(type(proto))


def apply_proto(fn: Any, *protos: Any, default: Any = 1.0) -> Any:
    """The type ``fn`` gives in the Python loop, as a proto (``default`` when
    the sample call raises, e.g. ``math.acosh`` outside its domain)."""
    try:
        with np.errstate(all="ignore"):
            r = fn(*protos)
    except (ArithmeticError, ValueError, TypeError):
        return default
    p = proto_of(r)
    return default if p is None else p


def lift(x: Val, depth: int, erank: int | None = None) -> Any:
    """``x``'s array with ``depth`` loop axes and ``erank`` element axes
    (size-1 axes inserted where it has fewer); uniform values as they are."""
    if not x.varying:
        if not x.erank or erank is None:
            return x.v
        # A loop-invariant array beside rows: NumPy broadcasting per iteration.
        a = x.v if isinstance(x.v, _C.ndarray) else _C.asarray(np.asarray(x.v))
        return a.reshape((1,) * depth + (1,) * (erank - x.erank) + tuple(a.shape))
    erank = x.erank if erank is None else erank
    if x.depth == depth and x.erank == erank:
        return x.v
    shape = tuple(x.v.shape)
    new = shape[: x.depth] + (1,) * (depth - x.depth) + (1,) * (erank - x.erank) + shape[x.depth:]
    return x.v.reshape(new)


def align(*xs: Val) -> tuple[list[Any], int, int]:
    """Arrays of ``xs`` lifted to a common depth and element rank."""
    depth = max(x.depth for x in xs)
    erank = max((x.erank for x in xs if x.varying), default=0)
    if any(not x.varying and x.erank and not isinstance(x.v, (np.ndarray, _C.ndarray)) for x in xs):
        raise Untranslatable("a Python sequence in an element expression")
    erank = max([erank] + [x.erank for x in xs if not x.varying and depth])
    return [lift(x, depth, erank) for x in xs], depth, erank


def cast(v: Any, proto: Any) -> Any:
    """A varying array cast to the dtype of ``proto`` (the loop's type)."""
    want = dtype_of(proto)
    return v if np.dtype(v.dtype) == want else v.astype(want)


def _wrap_text(x: Val) -> str:
    t = x.text
    return t if t.replace("_", "").replace(".", "").isalnum() or t.endswith(("]", ")")) else f"({t})"


def elementwise(fn: Any, pyfn: Any, xs: list[Val], text: str, proto: Any = None) -> Val:
    """``fn`` applied to the values (``pyfn`` on uniform values, exactly as
    Python would run it); the result typed like the Python loop's."""
    if proto is None:
        proto = apply_proto(pyfn, *(x.proto for x in xs))
    if not any(x.varying for x in xs):
        try:
            r = pyfn(*(x.v for x in xs))
        except Exception as e:  # noqa: BLE001 - Python raises here: let Python run it
            raise Untranslatable(f"`{text}` raises {type(e).__name__} in Python") from None
        return Val(r, proto_of(r), text, 0, r.ndim if isinstance(r, (np.ndarray, _C.ndarray)) else 0)
    arrays, depth, erank = align(*xs)
    try:
        with np.errstate(all="ignore"):
            out = fn(*arrays)
    except (_C.CrossoverError, TypeError, ValueError, OverflowError) as e:
        raise Untranslatable(f"`{text}`: {e}") from None
    if not isinstance(out, _C.ndarray):
        raise Untranslatable(f"`{text}` does not give an array")
    return Val(cast(out, proto), proto, text, depth, erank)


BINOPS: dict[type, tuple[str, Any]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}

COMPARES: dict[type, tuple[str, Any]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}


def binop(sym: str, fn: Any, a: Val, b: Val) -> Val:
    """``a <sym> b`` with the loop's types (index offsets kept for ``i + 1``)."""
    python_numbers = type(a.proto) in (int, float, bool) and type(b.proto) in (int, float, bool)
    if sym in ("/", "//", "%") and python_numbers and (b.varying or (b.v == 0 and a.varying)):
        # Python numbers raise ZeroDivisionError where NumPy's give inf/0.
        raise Untranslatable(f"`{sym}` between Python numbers (Python raises on division by zero)")
    text = f"{_wrap_text(a)} {sym} {_wrap_text(b)}"
    out = elementwise(fn, fn, [a, b], text)
    if sym in ("+", "-") and a.idx is not None and not b.varying and type(b.v) is int:
        out.idx = (a.idx[0], a.idx[1] + b.v if sym == "+" else a.idx[1] - b.v)
    elif sym == "+" and b.idx is not None and not a.varying and type(a.v) is int:
        out.idx = (b.idx[0], b.idx[1] + a.v)
    return out


def index_divmod(sym: str, i: Val, b: Val, bound: int) -> Val | None:
    """``i % b`` / ``i // b`` for a loop index ``i`` (|i| <= ``bound``) and a
    constant int ``b``, in engine ops: floor(i / b) is exact in float64 while
    |i| < 2**52. None when that does not hold (NumPy then computes it)."""
    if b.varying or type(b.v) is not int or b.v == 0 or abs(b.v) >= 2**52 or bound >= 2**52:
        return None
    q = _C.ufunc("floor", _C.ufunc("divide", i.v, b.v))
    v = q if sym == "//" else _C.ufunc("subtract", i.v, _C.ufunc("multiply", q, b.v))
    return Val(v.astype(np.int64), 1, f"{_wrap_text(i)} {sym} {b.text}", i.depth, i.erank)


def truth(x: Val) -> Val:
    """``bool(x)`` per element (NaN is true, as in Python)."""
    if x.erank:
        raise Untranslatable(f"the truth of the array `{x.text}` (ambiguous in Python)")
    if x.proto is None:
        raise Untranslatable(f"the truth of `{x.text}` (not a number)")
    if isinstance(x.proto, (bool, np.bool_)):
        return x
    if not x.varying:
        return Val(bool(x.v), True, x.text)
    return elementwise(operator.ne, operator.ne, [x, Val(0, 0, "0")], f"bool({x.text})", proto=True)


def logical(kind: str, xs: list[Val]) -> Val:
    """``and`` / ``or`` over truth values (both sides are computed: reads
    that Python would skip are bounds-checked like any other)."""
    name = "logical_and" if kind == "and" else "logical_or"
    out = xs[0]
    for x in xs[1:]:
        out = elementwise(lambda p, q, n=name: _C.ufunc(n, p, q),
                          (lambda p, q: p and q) if kind == "and" else (lambda p, q: p or q),
                          [out, x], f"{_wrap_text(out)} {kind} {_wrap_text(x)}", proto=True)
    return out


def select(c: Val, a: Val, b: Val, text: str | None = None) -> Val:
    """``a if c else b`` per element (Python's conditional expression)."""
    if not c.varying:
        return a if c.v else b
    if type(a.proto) is type(b.proto):
        proto = a.proto
    else:
        proto = apply_proto(operator.add, a.proto, b.proto)
    text = text or f"where({c.text}, {a.text}, {b.text})"
    return elementwise(_C.where, None, [c, a, b], text, proto=proto)


def pymax(a: Val, b: Val, is_max: bool) -> Val:
    """Python's ``max(a, b)`` / ``min(a, b)``: ``b`` where ``b > a`` (``b <
    a``), else ``a`` -- so a NaN second argument is never taken."""
    sym = ">" if is_max else "<"
    c = binop(sym, operator.gt if is_max else operator.lt, b, a)
    return select(c, b, a, f"{'max' if is_max else 'min'}({a.text}, {b.text})")


#: Engine ufuncs by the Python functions that name them (math.*, np.*, crossover.*).
def _function_table() -> dict[int, tuple[str, Any, str]]:
    import crossover as xo

    table: dict[int, tuple[str, Any, str]] = {}
    for name in _C.info()["ufuncs"]:
        for mod in (np, xo):
            f = getattr(mod, name, None)
            if f is not None:
                table[id(f)] = (name, f, f"{mod.__name__.split('.')[0]}.{name}")
    for alias, name in (("abs", "absolute"), ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                        ("asinh", "arcsinh"), ("acosh", "arccosh"), ("atanh", "arctanh"),
                        ("atan2", "arctan2"), ("pow", "power")):
        for mod in (np, xo):
            f = getattr(mod, alias, None)
            if f is not None:
                table[id(f)] = (name, f, f"{mod.__name__.split('.')[0]}.{alias}")
    for name in ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "log1p", "expm1", "log10", "log2",
                 "sinh", "cosh", "hypot", "exp2"):
        if hasattr(math, name):
            table[id(getattr(math, name))] = (name, getattr(math, name), f"math.{name}")
    for alias, name in (("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("asinh", "arcsinh"),
                        ("acosh", "arccosh"), ("atanh", "arctanh"), ("atan2", "arctan2"),
                        ("fabs", "absolute"), ("pow", "power")):
        table[id(getattr(math, alias))] = (name, getattr(math, alias), f"math.{alias}")
    return table


_FUNCS: dict[int, tuple[str, Any, str]] | None = None


def call(fn: Any, args: list[Val], fname: str) -> Val:
    """A call in the loop body: builtins and engine functions become element
    operations; anything else is not translated."""
    global _FUNCS
    if fn is builtins.abs:
        fn = np.abs if args and args[0].varying else fn
    if fn is builtins.abs or fn is builtins.len:
        if any(a.varying for a in args):
            raise Untranslatable(f"`{fname}` of an element")
        return elementwise(fn, fn, args, f"{fname}({', '.join(a.text for a in args)})")
    if fn in (builtins.max, builtins.min) and len(args) >= 2:
        out = args[0]
        for a in args[1:]:
            out = pymax(out, a, fn is builtins.max)
        return out
    if fn is builtins.float and len(args) == 1:
        return _convert(args[0], 1.0, "float")
    if fn is builtins.int and len(args) == 1:
        if not isinstance(args[0].proto, (int, np.integer, np.bool_)):
            raise Untranslatable("`int()` of a float element (Python truncates, and raises on NaN/inf)")
        return _convert(args[0], 1, "int")
    if fn is builtins.bool and len(args) == 1:
        return truth(args[0])
    if fn in (np.where,) and len(args) == 3:
        return elementwise(_C.where, np.where, args, f"np.where({', '.join(a.text for a in args)})",
                           proto=apply_proto(np.where, *(a.proto for a in args)))
    if fn is np.isnan and len(args) == 1:
        x = args[0]
        return elementwise(lambda v: v != v, np.isnan, [x], f"np.isnan({x.text})", proto=np.bool_(True))
    if _FUNCS is None:
        _FUNCS = _function_table()
    entry = _FUNCS.get(id(fn))
    if entry is None or entry[1] is not fn:
        raise Untranslatable(f"call to `{fname}`, which the translator does not know")
    name, pyfn, label = entry
    proto = apply_proto(pyfn, *(a.proto for a in args),
                        default=1.0 if label.startswith("math.") else np.float64(1))
    return elementwise(lambda *v: _C.ufunc(name, *v), pyfn, args,
                       f"{label}({', '.join(a.text for a in args)})", proto=proto)


def _convert(x: Val, proto: Any, label: str) -> Val:
    if not x.varying:
        return elementwise(type(proto), type(proto), [x], f"{label}({x.text})")
    return Val(cast(x.v, proto), proto, f"{label}({x.text})", x.depth, x.erank)
