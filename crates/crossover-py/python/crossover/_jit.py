"""``@jit`` and ``explain``: plain NumPy functions run as one fused graph.

A jitted function's array arguments are wrapped as crossover arrays, so every
NumPy call inside records into one lazy graph; the outputs are computed
together (fused and placed as a whole) and returned as NumPy arrays (or as
lazy crossover arrays with ``@jit(lazy=True)``).

The first call with given argument shapes and dtypes (and values of the
non-array arguments) *traces* the function; the recorded engine calls (a
tape) are cached and replayed by later calls without running Python.

Python control flow on array values (``if x.sum() > 0``, ``float(x)``,
``np.asarray(x)``, a NumPy fallback) forces evaluation at that point; such a
function still runs fused between those points, but its trace cannot be
replayed, so Python runs on every call (``last_reason`` says why).
Values captured from the enclosing scope (Python numbers, NumPy scalars,
lists) are baked into the cached trace, as in JAX; NumPy *arrays* captured
from the enclosing scope disable caching (they may change between calls).
"""

from __future__ import annotations

import functools
import operator
import threading
from typing import Any, Callable

import numpy as np

from . import _crossover as _C

#: Signatures cached per function (the oldest is dropped beyond this).
CACHE_SIZE = 64


_ARRAY_TYPES = (np.ndarray, _C.ndarray, np.generic)


def _signature(args: tuple, kwargs: dict):
    """(cache key or None, array arguments, rebuild(arrays) -> (args, kwargs))."""
    if not kwargs:
        found = _positional_key(args)
        if found is not None:
            return found[0], found[1], functools.partial(_rebuild_positional, args)
    return _signature_with_keywords(args, kwargs)


def _positional_key(args: tuple) -> tuple[tuple, list[Any]] | None:
    """(cache key, array arguments) of a call with positional arguments only
    (the common call: one pass, no closure), or None when one is unhashable."""
    # Keys here are 2-tuples per argument, those with keywords 4-tuples, so
    # the two kinds never collide. A zero or NaN float is keyed by its bits
    # (`hex`): 0.0 and -0.0 compare equal but are different constants to
    # bake in, and NaN never equals itself (it would trace on every call).
    key: list[Any] = []
    arrays: list[Any] = []
    for value in args:
        if isinstance(value, _ARRAY_TYPES):
            arrays.append(value)
            # Their own shape and dtype (np.shape and np.dtype(...) cost a
            # microsecond per call; a dtype hashes in 40 ns, its `.str` is
            # built anew in 150).
            key.append((value.shape, value.dtype))
        elif type(value) is float:
            key.append((float, value) if value == value and value != 0.0 else (float, value.hex()))
        else:
            try:
                hash(value)
            except TypeError:
                return None
            key.append((type(value), value))
    return tuple(key), arrays


def _rebuild_positional(args: tuple, xs: list[Any]) -> tuple[tuple, dict]:
    """`args` with its array arguments replaced by `xs`, in order."""
    it = iter(xs)
    return tuple(next(it) if isinstance(v, _ARRAY_TYPES) else v for v in args), {}


def _signature_with_keywords(args: tuple, kwargs: dict):
    """`_signature` of a call with keyword arguments (or unhashable values)."""
    key: list[Any] | None = []
    arrays: list[Any] = []
    where: list[tuple[bool, Any]] = []
    items = enumerate(args) if not kwargs else [*enumerate(args), *sorted(kwargs.items())]
    for pos, value in items:
        if isinstance(value, _ARRAY_TYPES):
            arrays.append(value)
            where.append((isinstance(pos, str), pos))
            if key is not None:
                key.append((pos, "a", value.shape, value.dtype.str))
        elif key is not None:
            try:
                hash(value)
                key.append((pos, "v", type(value), value.hex() if type(value) is float else value))
            except TypeError:
                key = None

    def rebuild(xs: list[Any]) -> tuple[tuple, dict]:
        a = list(args)
        k = dict(kwargs)
        for (is_kw, pos), x in zip(where, xs):
            if is_kw:
                k[pos] = x
            else:
                a[pos] = x
        return tuple(a), k

    return (tuple(key) if key is not None else None), arrays, rebuild


class _NotFlat(Exception):
    pass


def _flatten(obj: Any) -> tuple[list[Any], Any, bool]:
    """Crossover arrays in a result, a description to rebuild it, and
    whether the rest of the result may be reused across calls."""
    leaves: list[Any] = []
    reusable = True

    def rec(o: Any) -> Any:
        nonlocal reusable
        if isinstance(o, _C.ndarray):
            leaves.append(o)
            return ("a", len(leaves) - 1)
        if type(o) in (tuple, list):
            return (type(o), [rec(x) for x in o])
        if isinstance(o, tuple) and hasattr(o, "_fields"):
            return ("n", type(o), [rec(x) for x in o])
        if type(o) is dict:
            return (dict, [(k, rec(v)) for k, v in o.items()])
        if isinstance(o, np.ndarray):
            reusable = False  # a mutable NumPy array: never hand out the same one twice
        return ("c", o)

    return leaves, rec(obj), reusable


def _unflatten(tree: Any, outs: list[Any]) -> Any:
    return _unflattener(tree)(outs)


def _unflattener(tree: Any) -> Callable[[list[Any]], Any]:
    """`_unflatten(tree, .)` as a function built once per cached trace, so a
    replay does not walk the tree again. A leaf is an `itemgetter` and a
    part without arrays (a loop's empty tuple of written arguments) is built
    once: each lambda layer cost about 0.1 us of a small jitted call."""
    tag = tree[0]
    if tag == "a":
        return operator.itemgetter(tree[1])
    if tag == "c":
        c = tree[1]
        return lambda outs: c
    if tag is tuple and not tree[1]:
        return lambda outs: ()
    if tag == "n":
        t, subs = tree[1], [_unflattener(x) for x in tree[2]]
        return lambda outs: t(*[f(outs) for f in subs])
    if tag is dict:
        items = [(k, _unflattener(x)) for k, x in tree[1]]
        return lambda outs: {k: f(outs) for k, f in items}
    subs = [_unflattener(x) for x in tree[1]]
    if tag is tuple and len(subs) == 2:
        f0, f1 = subs
        if tree[1][1][0] is tuple and not tree[1][1][1]:
            return lambda outs: (f0(outs), ())
        return lambda outs: (f0(outs), f1(outs))
    return lambda outs: tag([f(outs) for f in subs])


class Jitted:
    """A function compiled by ``crossover.jit`` (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], lazy: bool) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._lazy = lazy
        self._cache: dict[Any, tuple[Any, Any]] = {}
        self._lock = threading.Lock()
        #: How many times Python ran the function to trace it.
        self.traces = 0
        #: Why the last trace could not be cached (None if it was).
        self.last_reason: str | None = None

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def cache_size(self) -> int:
        """Number of cached signatures."""
        return len(self._cache)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _C._tracing():
            # Called from a function being traced: inline it.
            return self._fn(*args, **kwargs)
        if not kwargs:
            found = _positional_key(args)
            if found is not None:
                # A replayed call goes straight to the tape (each layer
                # below cost a fraction of a microsecond of a small call).
                entry = self._cache.get(found[0])
                if entry is not None and entry[0] is not None:
                    return entry[1](_C._replay(entry[0], found[1], self._lazy))
                return self._call(args, kwargs, (*found, functools.partial(_rebuild_positional, args)))
        return self._call(args, kwargs, _signature(args, kwargs))

    def _call(self, args: tuple, kwargs: dict, signature: tuple) -> Any:
        """Runs the function on `args`, whose `_signature` is `signature`."""
        key, arrays, rebuild = signature
        entry = self._cache.get(key) if key is not None else None
        if entry is not None and entry[0] is not None:
            tape, build = entry
            return build(_C._replay(tape, arrays, self._lazy))
        xs = _C._to_inputs(arrays, self._lazy)
        a, k = rebuild(xs)
        if entry is not None:
            # Known not to be replayable: run Python, lazily fused between reads.
            return self._finish(self._fn(*a, **k), None)
        _C._trace_begin(xs)
        try:
            result = self._fn(*a, **k)
        except BaseException:
            _C._trace_abort()
            raise
        leaves, tree, reusable = _flatten(result)
        tape = _C._trace_end(leaves)
        self.traces += 1
        if not reusable and not isinstance(tape, str):
            tape = "the function returns NumPy arrays it made itself"
        if isinstance(tape, str):
            self.last_reason = tape
            if key is not None:
                self._remember(key, (None, tape))
            return self._finish(result, (leaves, tree))
        self.last_reason = None
        if key is not None:
            self._remember(key, (tape, _unflattener(tree)))
        return _unflatten(tree, _C._replay(tape, xs, self._lazy))

    def _remember(self, key: Any, entry: tuple[Any, Any]) -> None:
        with self._lock:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = entry

    def _finish(self, result: Any, flat: tuple[list[Any], Any] | None) -> Any:
        leaves, tree = flat if flat is not None else _flatten(result)[:2]
        if self._lazy or not leaves:
            return result
        return _unflatten(tree, _C._materialize(leaves))


def jit(fn: Callable[..., Any] | None = None, *, lazy: bool = False, fallback: str = "python") -> Any:
    """Decorates a plain NumPy function so that it runs as one fused graph.

    Array arguments (NumPy arrays, NumPy scalars, crossover arrays) are
    wrapped so every NumPy call inside records into one lazy graph; results
    come back as NumPy arrays (``lazy=True``: lazy crossover arrays). Traces
    are cached by argument shapes, dtypes and non-array argument values.
    Python control flow on array values forces evaluation there and disables
    the trace cache for that function (see ``crossover._jit``).

    NumPy inputs are read in place during the call (``lazy=True`` copies them,
    as the lazy results outlive the call).

    Python ``for`` loops over array elements are translated into the same
    fused array operations (``crossover._loops``; the forms are listed in
    docs/python.md). A loop outside those forms makes the function run as
    plain Python, or through ``numba.njit`` with ``fallback="numba"``, with a
    ``FallbackWarning`` naming the line and the construct.
    """
    if fallback not in ("python", "numba"):
        raise ValueError(f"fallback must be 'python' or 'numba', not {fallback!r}")
    if fn is None:
        return functools.partial(jit, lazy=lazy, fallback=fallback)
    from ._loops import LoopJitted, make_plan

    plan = make_plan(fn)
    if plan is not None:
        return LoopJitted(fn, lazy, fallback, plan)
    return Jitted(fn, lazy)


def explain(target: Any, *args: Any, run: bool = True, **kwargs: Any) -> Any:
    """What crossover does to compute something: the kernels, the ops fused
    into each, why each result is written to memory, bytes and flops, and
    (``run=True``, the default) the measured time of each kernel.

    ``target`` is a crossover array, a list of them, or a function (plain or
    ``@jit``) called with ``*args, **kwargs``. Running computes the arrays.
    """
    if isinstance(target, _C.ndarray):
        arrays = [target]
    elif isinstance(target, (list, tuple)) and all(isinstance(t, _C.ndarray) for t in target):
        arrays = list(target)
    elif hasattr(target, "_plan") and isinstance(target, Jitted):
        return target.explain(args, kwargs, run)  # a function with translated loops
    elif callable(target):
        fn = target._fn if isinstance(target, Jitted) else target
        _, inputs, rebuild = _signature(args, kwargs)
        a, k = rebuild(_C._to_inputs(inputs, False))
        arrays = _flatten(fn(*a, **k))[0]
    else:
        raise TypeError(
            "explain() takes a crossover array, a list of them, or a function and its arguments"
        )
    return _C._explain(arrays, run)
