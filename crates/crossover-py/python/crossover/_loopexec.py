"""Runs one Python ``for`` loop as crossover array operations.

The loop body runs once, symbolically (values in ``_loopvals``): the loop
index is an ``arange`` over the range, element reads are (shifted) slices,
``if``/``else`` become ``where``, accumulator updates collect a per-element
*contribution* that one reduction folds at the end of the loop, and element
writes collect the values (and the mask of iterations that wrote) that
replace the written positions. A nested loop adds a loop axis.

Everything the translation cannot reproduce exactly raises
``Untranslatable`` (the function then runs as plain Python): see
``docs/python.md`` for the forms and what falls back.
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any

import numpy as np

from . import _crossover as _C
from ._loopvals import (BINOPS, COMPARES, Untranslatable, Val, apply_proto, binop, call, cast,
                        dtype_of, elementwise, index_divmod, lift, logical, proto_of, pymax, select, truth)

#: Accumulator kinds by update form: how contributions combine and reduce.
_SUM, _PROD, _PYMAX, _PYMIN, _NPMAX, _NPMIN = "sum", "prod", "max", "min", "np.maximum", "np.minimum"


class LoopInfo:
    """What a static scan found in one ``for`` statement (recursively)."""

    def __init__(self, assigned: set[str], written: dict[str, set[str]]) -> None:
        #: Names bound anywhere in the loop (targets, assignments, updates).
        self.assigned = assigned
        #: Arrays written in the loop, with the ``ast.dump`` of each index.
        self.written = written


class Top:
    """The function's scope at the loop: its locals, closure, globals."""

    depth = 0

    def __init__(self, scopes: list[dict[str, Any]]) -> None:
        self.scopes = scopes
        #: Names the loop rebinds (accumulators and written arrays).
        self.updates: dict[str, Any] = {}

    def get(self, name: str) -> Val:
        if name in self.updates:
            v = self.updates[name]
        else:
            for s in self.scopes:
                if name in s:
                    v = s[name]
                    break
            else:
                raise Untranslatable(f"name `{name}` is not defined")
        erank = v.ndim if isinstance(v, (np.ndarray, _C.ndarray)) else 0
        return Val(v, proto_of(v), name, 0, erank)


class Scope:
    """One loop body (``depth`` loop axes), or a branch of one."""

    def __init__(self, parent: Any, depth: int, info: LoopInfo, shape: tuple[int, ...],
                 ranges: dict[int, range]) -> None:
        self.parent = parent
        self.depth = depth
        self.info = info
        self.shape = shape
        self.ranges = ranges
        self.vars: dict[str, Val] = {}
        self.unset: set[str] = set()
        #: Accumulators updated in this body: name -> [kind, contribution, proto].
        self.acc: dict[str, list[Any]] = {}
        #: Element writes: (array name, index dump) -> [key, value, mask or None].
        self.writes: dict[tuple[str, str], list[Any]] = {}

    def fork(self) -> "Scope":
        s = Scope(self.parent, self.depth, self.info, self.shape, self.ranges)
        s.vars, s.unset = dict(self.vars), set(self.unset)
        s.acc = {k: list(v) for k, v in self.acc.items()}
        s.writes = {k: list(v) for k, v in self.writes.items()}
        return s

    def get(self, name: str) -> Val:
        s: Any = self
        while isinstance(s, Scope):
            if name in s.vars:
                return s.vars[name]
            if name in s.unset:
                raise Untranslatable(f"`{name}` is assigned in one branch only (it keeps an earlier "
                                     "iteration's value in the others)")
            if name in s.info.assigned:
                raise Untranslatable(f"`{name}` is read before it is assigned in the loop body "
                                     "(a value carried between iterations)")
            s = s.parent
        return s.get(name)

    def written_by(self, name: str) -> set[str] | None:
        s: Any = self
        while isinstance(s, Scope):
            if name in s.info.written:
                return s.info.written[name]
            s = s.parent
        return None


def _identity(kind: str, proto: Any) -> Any:
    if kind == _SUM:
        return 0
    if kind == _PROD:
        return 1
    dt = dtype_of(proto)
    low = kind in (_PYMAX, _NPMAX)
    if dt.kind == "f":
        return -np.inf if low else np.inf
    if dt.kind == "b":
        return not low
    if dt.kind in "iu":
        return int(np.iinfo(dt).min if low else np.iinfo(dt).max)
    raise Untranslatable(f"a {dt} max/min accumulator")


def _combine(kind: str, a: Val, b: Val) -> Val:
    """Two contributions of one iteration (or two partial results) combined."""
    if kind == _SUM:
        return binop("+", operator.add, a, b)
    if kind == _PROD:
        return binop("*", operator.mul, a, b)
    if kind in (_PYMAX, _PYMIN):
        return pymax(a, b, kind == _PYMAX)
    name = "maximum" if kind == _NPMAX else "minimum"
    return elementwise(lambda p, q: _C.ufunc(name, p, q), getattr(np, name), [a, b],
                       f"np.{name}({a.text}, {b.text})")


class Runner:
    """Runs the ``for`` statements of one function symbolically."""

    def __init__(self, infos: dict[int, LoopInfo], line0: int) -> None:
        self.infos = infos
        self.line0 = line0
        self.notes: list[str] = []

    # ---- statements --------------------------------------------------------

    def run_loop(self, node: ast.For, parent: Any) -> bool:
        """One ``for`` statement in ``parent`` (``Top`` or a loop ``Scope``);
        whether it runs any iteration."""
        if node.orelse:
            raise Untranslatable("`for ... else`", node.lineno)
        level = parent.depth
        shape = parent.shape if isinstance(parent, Scope) else ()
        ranges = dict(parent.ranges) if isinstance(parent, Scope) else {}
        binds, n = self._iteration(node, parent, level)
        if n == 0:
            return False  # Python runs no iteration: nothing changes
        for _, _, r in binds:
            if r is not None:
                ranges[level] = r
        body = Scope(parent, level + 1, self.infos[id(node)], shape + (n,), ranges)
        for name, val, _ in binds:
            body.vars[name] = val
        self.run_block(node.body, body)
        self._finish(node, body, parent)
        return True

    def _iteration(self, node: ast.For, parent: Any, level: int) -> tuple[list[Any], int]:
        """The loop targets' values: [(name, Val, range)], and the trip count."""
        it, target = node.iter, node.target
        fn = self.eval(it.func, parent).v if isinstance(it, ast.Call) else None
        if fn is builtins.range:
            if not isinstance(target, ast.Name) or it.keywords:
                raise Untranslatable("a `for` target other than one name", node.lineno)
            args = [self.eval(a, parent) for a in it.args]
            if any(a.varying for a in args):
                raise Untranslatable("a range that depends on an outer loop's index", node.lineno)
            try:
                r = range(*(a.v for a in args))
            except TypeError as e:
                raise Untranslatable(f"`range(...)`: {e}", node.lineno) from None
            return [(target.id, self._index(r, level), r)], len(r)
        if fn is builtins.enumerate:
            if len(it.args) != 1 or it.keywords or not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                                                        and all(isinstance(e, ast.Name) for e in target.elts)):
                raise Untranslatable("an `enumerate` other than `for i, v in enumerate(x)`", node.lineno)
            v, n = self._rows(self.eval(it.args[0], parent), level, node)
            r = range(n)
            return [(target.elts[0].id, self._index(r, level), r), (target.elts[1].id, v, None)], n
        if not isinstance(target, ast.Name):
            raise Untranslatable("a `for` target other than one name", node.lineno)
        v, n = self._rows(self.eval(it, parent), level, node)
        return [(target.id, v, None)], n

    @staticmethod
    def _index(r: range, level: int) -> Val:
        v = _C.arange(r.start, r.stop, r.step) if len(r) else None
        if v is not None:
            v = v.reshape((1,) * level + (len(r),))
        return Val(v, 1, f"arange({r.start}, {r.stop}, {r.step})", level + 1, 0, idx=(level, 0))

    @staticmethod
    def _rows(x: Val, level: int, node: ast.AST) -> tuple[Val, int]:
        """``for v in x``: ``x``'s first axis becomes loop axis ``level``."""
        if x.varying:
            if x.erank == 0:
                raise Untranslatable(f"iterating over the element `{x.text}`", node.lineno)
            v = lift(x, level)
            return Val(v, x.proto, x.text, level + 1, x.erank - 1), int(v.shape[level])
        a = x.v
        if isinstance(a, np.ndarray):
            a = _C.asarray(a)
        if not isinstance(a, _C.ndarray) or a.ndim == 0:
            raise Untranslatable(f"iterating over `{x.text}`, which is not an array "
                                 f"({type(x.v).__name__})", node.lineno)
        n = int(a.shape[0])
        v = a.reshape((1,) * level + tuple(a.shape)) if level else a
        return Val(v, np.dtype(a.dtype).type(1), x.text, level + 1, a.ndim - 1), n

    def run_block(self, stmts: list[ast.stmt], scope: Scope) -> None:
        for st in stmts:
            try:
                self.run_stmt(st, scope)
            except Untranslatable as e:
                if e.line is None:
                    e.line = st.lineno
                raise

    def run_stmt(self, st: ast.stmt, scope: Scope) -> None:
        if isinstance(st, ast.Assign):
            if len(st.targets) != 1:
                raise Untranslatable("a chained assignment")
            self._assign(st.targets[0], st.value, scope)
        elif isinstance(st, ast.AugAssign):
            self._augassign(st, scope)
        elif isinstance(st, ast.If):
            self._if(st, scope)
        elif isinstance(st, ast.For):
            self.run_loop(st, scope)
        elif isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
            return
        else:
            raise Untranslatable(describe(st))

    def _assign(self, target: ast.expr, value: ast.expr, scope: Scope) -> None:
        if isinstance(target, ast.Subscript):
            self._write(target, self.eval(value, scope), scope)
            return
        if not isinstance(target, ast.Name):
            raise Untranslatable("an assignment to something other than a name or an element")
        name = target.id
        update = self._update_form(name, value, scope)
        if update is not None:
            self._accumulate(scope, name, *update)
            return
        if name in scope.acc:
            raise Untranslatable(f"`{name}` is both updated and reassigned in the loop")
        scope.vars[name] = self.eval(value, scope)
        scope.unset.discard(name)

    def _update_form(self, name: str, value: ast.expr, scope: Scope) -> tuple[str, Val, int] | None:
        """``acc = max(acc, e)``, ``acc = acc + e``...: (kind, e, sign), when
        ``acc`` is not a value of this iteration."""
        if name in scope.vars:
            return None
        def is_acc(e: ast.expr) -> bool:
            return isinstance(e, ast.Name) and e.id == name
        if isinstance(value, ast.BinOp) and is_acc(value.left) and type(value.op) in (ast.Add, ast.Sub, ast.Mult):
            kind = _PROD if isinstance(value.op, ast.Mult) else _SUM
            return kind, self.eval(value.right, scope), -1 if isinstance(value.op, ast.Sub) else 1
        if isinstance(value, ast.Call) and len(value.args) == 2 and not value.keywords \
                and any(is_acc(a) for a in value.args):
            fn = self.eval(value.func, scope).v
            kinds = {id(builtins.max): _PYMAX, id(builtins.min): _PYMIN,
                     id(np.maximum): _NPMAX, id(np.minimum): _NPMIN}
            kind = kinds.get(id(fn))
            if kind is None:
                return None
            other = value.args[1] if is_acc(value.args[0]) else value.args[0]
            e = self.eval(other, scope)
            if kind in (_PYMAX, _PYMIN) and is_acc(value.args[1]) and dtype_of(e.proto).kind in "fc":
                raise Untranslatable(f"`{kind}(value, {name})` on floats (Python keeps a NaN only in this "
                                     f"order; write `{kind}({name}, value)`)")
            return kind, e, 1
        return None

    def _augassign(self, st: ast.AugAssign, scope: Scope) -> None:
        if isinstance(st.target, ast.Subscript):
            sym, fn = BINOPS.get(type(st.op), (None, None))
            if sym is None:
                raise Untranslatable(f"`{type(st.op).__name__}=` on an element")
            cur = self.eval(st.target, scope)
            self._write(st.target, binop(sym, fn, cur, self.eval(st.value, scope)), scope)
            return
        if not isinstance(st.target, ast.Name):
            raise Untranslatable("an update of something other than a name or an element")
        name = st.target.id
        if name in scope.vars:
            sym, fn = BINOPS.get(type(st.op), (None, None))
            if sym is None:
                raise Untranslatable(f"the operator of `{name} {type(st.op).__name__}=`")
            scope.vars[name] = binop(sym, fn, scope.vars[name], self.eval(st.value, scope))
            return
        kinds = {ast.Add: (_SUM, 1), ast.Sub: (_SUM, -1), ast.Mult: (_PROD, 1)}
        if type(st.op) not in kinds:
            raise Untranslatable(f"an accumulator updated with `{ast.unparse(st.op) or type(st.op).__name__}=` "
                                 "(only +=, -=, *=, max and min reduce)")
        kind, sign = kinds[type(st.op)]
        self._accumulate(scope, name, kind, self.eval(st.value, scope), sign)

    def _accumulate(self, scope: Scope, name: str, kind: str, e: Val, sign: int) -> None:
        if e.proto is None:
            raise Untranslatable(f"`{name}` accumulates `{e.text}`, which is not a number")
        if kind == _PROD and type(e.proto) is int:
            raise Untranslatable(f"`{name} *= ...` on Python integers (unbounded in Python, 64-bit here)")
        if kind in (_PYMAX, _PYMIN) and dtype_of(e.proto).kind == "f":
            # Python's max(acc, nan) keeps acc: NaN elements never win.
            e = select(binop("!=", operator.ne, e, e), Val(_identity(kind, e.proto), e.proto, ""), e, e.text)
        if sign < 0:
            e = elementwise(operator.neg, operator.neg, [e], f"-{e.text}")
        entry = scope.acc.get(name)
        if entry is None:
            scope.acc[name] = [kind, e, [e.proto]]
            return
        if entry[0] != kind:
            raise Untranslatable(f"`{name}` is updated in two ways ({entry[0]} and {kind})")
        entry[1] = _combine(kind, entry[1], e) if entry[1] is not None else e
        entry[2].append(e.proto)

    def _if(self, st: ast.If, scope: Scope) -> None:
        c = truth(self.eval(st.test, scope))
        if not c.varying:
            self.run_block(st.body if c.v else st.orelse, scope)
            return
        then, other = scope.fork(), scope.fork()
        self.run_block(st.body, then)
        self.run_block(st.orelse, other)
        for name in set(then.vars) | set(other.vars):
            a, b = then.vars.get(name), other.vars.get(name)
            if a is b:
                scope.vars[name] = a
            elif a is not None and b is not None:
                scope.vars[name] = select(c, a, b)
            else:
                scope.vars.pop(name, None)
                scope.unset.add(name)
        for name in set(then.acc) | set(other.acc):
            ea, eb = then.acc.get(name), other.acc.get(name)
            kind = (ea or eb)[0]
            if ea is not None and eb is not None and ea[0] != eb[0]:
                raise Untranslatable(f"`{name}` is updated in two ways ({ea[0]} and {eb[0]})")
            protos = (ea[2] if ea else []) + (eb[2] if eb else [])
            ident = Val(_identity(kind, protos[0]), protos[0], "0" if kind == _SUM else "1")
            va = ea[1] if ea else ident
            vb = eb[1] if eb else ident
            scope.acc[name] = [kind, va if va is vb else select(c, va, vb), protos]
        for key in set(then.writes) | set(other.writes):
            wa, wb = then.writes.get(key), other.writes.get(key)
            if wa is not None and wb is not None and wa[1] is wb[1] and wa[2] is wb[2]:
                continue  # written before the branch, not in it
            yes = Val(True, True, "True")
            if wa is not None and wb is not None:
                mask = None if wa[2] is None and wb[2] is None else select(c, wa[2] or yes, wb[2] or yes)
                scope.writes[key] = [wa[0], select(c, wa[1], wb[1]), mask]
            elif wa is not None:
                mask = c if wa[2] is None else logical("and", [c, wa[2]])
                scope.writes[key] = [wa[0], wa[1], mask]
            else:
                nc = elementwise(lambda v: _C.ufunc("logical_not", v), operator.not_, [c], f"not {c.text}",
                                 proto=True)
                mask = nc if wb[2] is None else logical("and", [nc, wb[2]])
                scope.writes[key] = [wb[0], wb[1], mask]

    # ---- element reads and writes ------------------------------------------

    def _key(self, node: ast.Subscript, scope: Any, arr: Any, write: bool) -> tuple[tuple, list[int]]:
        """The NumPy index of the elements the loop reads or writes, and the
        loop level of each indexed axis (-1 for a constant index)."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > arr.ndim:
            raise Untranslatable(f"`{ast.unparse(node)}` indexes more axes than the array has")
        key: list[Any] = []
        levels: list[int] = []
        for axis, item in enumerate(items):
            if isinstance(item, ast.Slice):
                raise Untranslatable(f"the slice in `{ast.unparse(node)}`")
            v = self.eval(item, scope)
            size = int(arr.shape[axis])
            if v.idx is not None:
                level, off = v.idx
                r = scope.ranges.get(level) if isinstance(scope, Scope) else None
                if r is None or level in levels:
                    raise Untranslatable(f"the index `{ast.unparse(item)}`")
                first, last = r[0] + off, r[-1] + off
                lo, hi = min(first, last), max(first, last)
                if lo < 0 or hi >= size:
                    what = "wraps around to the end (a negative index)" if lo < 0 and lo >= -size \
                        else "is out of bounds (IndexError)"
                    raise Untranslatable(f"`{ast.unparse(node)}` {what} at some iteration")
                stop = last + r.step
                key.append(slice(first, stop if stop >= 0 else None, r.step))
                levels.append(level)
            elif not v.varying and isinstance(v.v, (int, np.integer)) and not isinstance(v.v, (bool, np.bool_)):
                if not -size <= int(v.v) < size:
                    raise Untranslatable(f"`{ast.unparse(node)}` is out of bounds (IndexError)")
                if write:
                    raise Untranslatable(f"a write to the fixed element `{ast.unparse(node)}`")
                key.append(int(v.v))
                levels.append(-1)
            else:
                raise Untranslatable(f"the index `{ast.unparse(item)}` (only the loop index plus or "
                                     "minus a constant, or a constant)")
        return tuple(key), levels

    def _subscript(self, node: ast.Subscript, scope: Any) -> Val:
        base = self.eval(node.value, scope)
        if base.varying:
            raise Untranslatable(f"indexing the element `{base.text}`")
        arr = base.v
        if not isinstance(arr, (np.ndarray, _C.ndarray)):
            if isinstance(arr, (list, tuple, dict)):
                idx = self.eval(node.slice, scope)
                if not idx.varying:
                    return elementwise(operator.getitem, operator.getitem, [base, idx], ast.unparse(node))
            raise Untranslatable(f"indexing `{base.text}`, a Python {type(arr).__name__}")
        if isinstance(node.value, ast.Name) and isinstance(scope, Scope):
            forms = scope.written_by(node.value.id)
            if forms is not None:
                dump = ast.dump(node.slice)
                if dump not in forms:
                    raise Untranslatable(f"`{ast.unparse(node)}` reads an element the loop writes at another "
                                         "index (a value carried between iterations)")
                hit = self._pending(scope, (node.value.id, dump))
                if hit is not None:
                    return hit
        key, levels = self._key(node, scope, arr, write=False)
        if isinstance(arr, np.ndarray):
            arr = _C.asarray(arr)
        v = arr[key]
        loop_levels = [lv for lv in levels if lv >= 0]
        text = f"{base.text}[{', '.join(_slice_text(k) for k in key)}]"
        proto = np.dtype(arr.dtype).type(1)
        if not loop_levels:
            return Val(v, proto, text, 0, v.ndim)
        depth = scope.depth
        order = sorted(range(len(loop_levels)), key=lambda k: loop_levels[k])
        erank = v.ndim - len(loop_levels)
        if order != list(range(len(order))):
            v = _C.transpose(v, order + list(range(len(order), v.ndim)))
        shape = list(v.shape)
        full = [1] * depth
        for k, lv in enumerate(sorted(loop_levels)):
            full[lv] = shape[k]
        v = v.reshape(tuple(full) + tuple(shape[len(loop_levels):]))
        return Val(v, proto, text, depth, erank)

    @staticmethod
    def _pending(scope: Scope, key: tuple[str, str]) -> Val | None:
        """The element this iteration already wrote (read back after a write)."""
        s: Any = scope
        while isinstance(s, Scope):
            w = s.writes.get(key)
            if w is not None:
                if w[2] is not None:
                    raise Untranslatable("a read of an element written under a condition earlier "
                                         "in the iteration")
                return w[1]
            s = s.parent
        return None

    def _write(self, target: ast.Subscript, val: Val, scope: Scope) -> None:
        if not isinstance(target.value, ast.Name):
            raise Untranslatable(f"a write to `{ast.unparse(target)}` (only `name[index] = ...`)")
        base = scope.get(target.value.id) if isinstance(scope, Scope) else None
        arr = base.v if base is not None else None
        if not isinstance(arr, (np.ndarray, _C.ndarray)):
            raise Untranslatable(f"a write into `{target.value.id}`, which is not an array")
        key, levels = self._key(target, scope, arr, write=True)
        if levels != list(range(scope.depth)):
            raise Untranslatable(f"`{ast.unparse(target)}` does not write one element per iteration "
                                 "(index every loop in order: `out[i, j]`)")
        if val.proto is None:
            raise Untranslatable(f"writing `{val.text}`, which is not a number")
        scope.writes[(target.value.id, ast.dump(target.slice))] = [key, val, None]

    # ---- end of a loop -----------------------------------------------------

    def _finish(self, node: ast.For, body: Scope, parent: Any) -> None:
        axis = body.depth - 1
        for name, (kind, contrib, protos) in body.acc.items():
            init = _home_value(parent, name)
            if init.proto is None:
                raise Untranslatable(f"the accumulator `{name}` starts as {type(init.v).__name__}, not a number")
            proto = init.proto
            for _ in range(2):  # the type the accumulator settles on in Python
                for p in protos:
                    proto = apply_proto(_ACC_OPS[kind], proto, p, default=proto)
            if contrib.varying and dtype_of(proto).kind in "fc" and np.dtype(contrib.v.dtype).kind in "biu":
                # Python adds each integer element to a float: no int64 wrap of the total.
                contrib = Val(cast(contrib.v, proto), proto, contrib.text, contrib.depth, contrib.erank)
            full = body.shape + tuple(lift(contrib, body.depth).shape[body.depth:]) if contrib.varying \
                else body.shape
            red = self._reduce(kind, contrib, body, axis, full)
            if isinstance(parent, Scope) and name not in parent.vars:
                if name in parent.unset:
                    raise Untranslatable(f"`{name}` is assigned in one branch only")
                parent.acc.setdefault(name, [kind, None, []])
                if parent.acc[name][0] != kind:
                    raise Untranslatable(f"`{name}` is updated in two ways")
                prev = parent.acc[name][1]
                parent.acc[name][1] = red if prev is None else _combine(kind, prev, red)
                parent.acc[name][2].extend(protos)
                continue
            if isinstance(red.v, _C.ndarray):
                red = Val(cast(red.v, proto), proto, red.text, red.depth, red.erank)
            out = _combine(kind, init, red)
            out.text = _final_text(kind, name, red)
            if isinstance(out.v, _C.ndarray):
                out = Val(cast(out.v, proto), proto, out.text, out.depth, out.erank)
            if isinstance(parent, Scope):
                parent.vars[name] = out
            else:
                parent.updates[name] = out.v
                self.notes.append(f"line {node.lineno + self.line0}: {name} = {out.text}")
        for key, (index, val, mask) in body.writes.items():
            if isinstance(parent, Scope):
                if key in parent.writes:
                    raise Untranslatable(f"`{key[0]}` is written both inside and outside a nested loop")
                parent.writes[key] = [index, val, mask]
                continue
            self._apply(parent, key[0], index, val, mask, body, node)

    def _reduce(self, kind: str, contrib: Val, body: Scope, axis: int, full: tuple[int, ...]) -> Val:
        n = body.shape[axis]
        if not contrib.varying:
            repeat = {_SUM: lambda v: v * n, _PROD: lambda v: v ** n}.get(kind, lambda v: v)
            return elementwise(repeat, repeat, [contrib], f"{kind}({contrib.text} over {n})")
        v = _C.broadcast_to(lift(contrib, body.depth), full)
        method = {_SUM: "sum", _PROD: "prod", _PYMAX: "max", _NPMAX: "max", _PYMIN: "min", _NPMIN: "min"}[kind]
        r = getattr(v, method)(axis=axis)
        return Val(r, contrib.proto, contrib.text, body.depth - 1, contrib.erank)

    def _apply(self, top: Top, name: str, key: tuple, val: Val, mask: Val | None, body: Scope,
               node: ast.For) -> None:
        arr = top.get(name).v
        old_view = (_C.asarray(arr) if isinstance(arr, np.ndarray) else arr)[key]
        shape = tuple(old_view.shape)
        proto = np.dtype(arr.dtype).type(1)
        if mask is not None:
            old = Val(old_view, proto, f"{name}[...]", len(key), len(shape) - len(key))
            val = select(mask, val, old)
        depth = len(key)
        if not val.varying and not isinstance(val.v, (np.ndarray, _C.ndarray)):
            v = _C.asarray(np.asarray(val.v, dtype=arr.dtype))
        else:
            if val.erank > len(shape) - depth:
                raise Untranslatable(f"`{name}[...] = {val.text}`: the value has more axes than the element")
            v = lift(val, depth, len(shape) - depth)
            if not isinstance(v, _C.ndarray):
                v = _C.asarray(v)
        v = _C.broadcast_to(v, shape)
        if np.dtype(v.dtype) != np.dtype(arr.dtype):
            v = v.astype(arr.dtype)
        text = f"{name}[{', '.join(_slice_text(k) for k in key)}] = {val.text}"
        self.notes.append(f"line {node.lineno + self.line0}: {text}")
        full = all(k == slice(0, n, 1) for k, n in zip(key, arr.shape))
        flip = all(k in (slice(0, n, 1), slice(n - 1, None, -1)) for k, n in zip(key, arr.shape))
        if full:
            top.updates[name] = v
        elif flip:
            top.updates[name] = v[tuple(slice(None, None, k.step) for k in key)]
        else:
            host = np.array(arr)  # a partial write: NumPy places the computed values
            host[key] = np.asarray(v)
            top.updates[name] = _C._adopt(host)

    # ---- expressions -------------------------------------------------------

    def eval(self, node: ast.expr, scope: Any) -> Val:
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (str, bytes)):
                return Val(node.value, None, repr(node.value))
            return Val(node.value, proto_of(node.value), repr(node.value))
        if isinstance(node, ast.Name):
            return scope.get(node.id)
        if isinstance(node, ast.BinOp):
            sym, fn = BINOPS.get(type(node.op), (None, None))
            if sym is None:
                raise Untranslatable(f"the operator in `{ast.unparse(node)}`")
            left, right = self.eval(node.left, scope), self.eval(node.right, scope)
            if sym in ("%", "//") and left.idx is not None and isinstance(scope, Scope):
                r = scope.ranges.get(left.idx[0])
                if r is not None:
                    bound = max(abs(r.start), abs(r.stop)) + abs(left.idx[1])
                    out = index_divmod(sym, left, right, bound)
                    if out is not None:
                        return out
            return binop(sym, fn, left, right)
        if isinstance(node, ast.UnaryOp):
            x = self.eval(node.operand, scope)
            if isinstance(node.op, ast.Not):
                t = truth(x)
                return elementwise(lambda v: _C.ufunc("logical_not", v), operator.not_, [t],
                                   f"not {t.text}", proto=True)
            if isinstance(node.op, ast.USub):
                return elementwise(operator.neg, operator.neg, [x], f"-{x.text}")
            if isinstance(node.op, ast.UAdd):
                return x
            raise Untranslatable(f"the operator in `{ast.unparse(node)}`")
        if isinstance(node, ast.Compare):
            out = None
            left = self.eval(node.left, scope)
            for op, right_node in zip(node.ops, node.comparators):
                sym, fn = COMPARES.get(type(op), (None, None))
                if sym is None:
                    raise Untranslatable(f"the comparison in `{ast.unparse(node)}`")
                right = self.eval(right_node, scope)
                c = binop(sym, fn, left, right)
                out = c if out is None else logical("and", [out, c])
                left = right
            return out
        if isinstance(node, ast.BoolOp):
            xs = [self.eval(v, scope) for v in node.values]
            if not all(isinstance(x.proto, (bool, np.bool_)) for x in xs):
                if not any(x.varying for x in xs):
                    r = xs[0].v
                    for x in xs[1:]:
                        r = (r and x.v) if isinstance(node.op, ast.And) else (r or x.v)
                    return Val(r, proto_of(r), ast.unparse(node))
                raise Untranslatable(f"`and`/`or` on values that are not booleans in `{ast.unparse(node)}`")
            return logical("and" if isinstance(node.op, ast.And) else "or", xs)
        if isinstance(node, ast.IfExp):
            return select(truth(self.eval(node.test, scope)), self.eval(node.body, scope),
                          self.eval(node.orelse, scope))
        if isinstance(node, ast.Subscript):
            return self._subscript(node, scope)
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value, scope)
            if base.varying:
                raise Untranslatable(f"the attribute `{ast.unparse(node)}` of an element")
            try:
                v = getattr(base.v, node.attr)
            except AttributeError as e:
                raise Untranslatable(str(e)) from None
            erank = v.ndim if isinstance(v, (np.ndarray, _C.ndarray)) else 0
            return Val(v, proto_of(v), ast.unparse(node), 0, erank)
        if isinstance(node, ast.Call):
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise Untranslatable(f"the call `{ast.unparse(node)}` (keyword or starred arguments)")
            fn = self.eval(node.func, scope)
            if fn.varying:
                raise Untranslatable(f"calling the element `{fn.text}`")
            return call(fn.v, [self.eval(a, scope) for a in node.args], ast.unparse(node.func))
        raise Untranslatable(f"the expression `{ast.unparse(node)}`")


def _home_value(scope: Any, name: str) -> Val:
    """An accumulator's value before the loop: from the innermost enclosing
    body that assigned it, else from the function."""
    while isinstance(scope, Scope):
        if name in scope.vars:
            return scope.vars[name]
        scope = scope.parent
    return scope.get(name)


_ACC_OPS = {_SUM: operator.add, _PROD: operator.mul, _PYMAX: builtins.max, _PYMIN: builtins.min,
            _NPMAX: np.maximum, _NPMIN: np.minimum}


def _final_text(kind: str, name: str, red: Val) -> str:
    if kind == _SUM:
        return f"{name} + sum({red.text})"
    if kind == _PROD:
        return f"{name} * prod({red.text})"
    return f"{kind}({name}, {'max' if 'max' in kind else 'min'}({red.text}))"


def _slice_text(k: Any) -> str:
    if not isinstance(k, slice):
        return str(k)
    start = "" if k.start is None else str(k.start)
    stop = "" if k.stop is None else str(k.stop)
    return f"{start}:{stop}" if k.step == 1 else f"{start}:{stop}:{k.step}"


def describe(st: ast.AST) -> str:
    """A statement the translator does not take, in the user's words."""
    names = {ast.Break: "`break`", ast.Continue: "`continue`", ast.While: "a `while` loop",
             ast.Return: "`return` inside a loop", ast.Try: "`try`", ast.With: "`with`",
             ast.Raise: "`raise`", ast.Assert: "`assert`", ast.Global: "`global`",
             ast.Nonlocal: "`nonlocal`", ast.Delete: "`del`", ast.FunctionDef: "a nested `def`",
             ast.Import: "`import`", ast.ImportFrom: "`import`"}
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        return f"the call `{ast.unparse(st.value)}` (a statement with effects)"
    if isinstance(st, ast.Expr) and isinstance(st.value, (ast.Yield, ast.YieldFrom)):
        return "`yield`"
    return names.get(type(st), f"the statement `{ast.unparse(st).splitlines()[0]}`")
