"""``@jit`` on functions with Python loops: loops become fused array work.

When a jitted function contains ``for`` loops, its source is read (``ast``)
and each outermost loop is replaced by a call that runs the loop once,
symbolically, as crossover array operations (``_loopexec``): reductions for
accumulators, ``where`` for branches, slices for element reads, one write of
all elements for ``out[i] = ...``. The rest of the function runs as before,
so the whole function is traced, fused, placed and cached like any ``@jit``
function.

What the translator does not take (``break``, a value carried between
iterations, unknown calls, Python objects...) makes the function run as
plain Python (or Numba, ``fallback="numba"``), with a ``FallbackWarning``
naming the line and the construct, once per function. The decision is
static where the source decides it, else per argument signature (an index
that would wrap around for these shapes, say).
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import textwrap
import threading
import types
import warnings
from typing import Any, Callable

import numpy as np

from . import _crossover as _C
from ._jit import Jitted, _positional_key, _signature
from ._loopexec import LoopInfo, Runner, Top, describe
from ._loopvals import Untranslatable

#: NumPy constructors whose result is a new array a loop may write into.
_FRESH = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
          "copy", "array"}
_LOOP_STMTS = (ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Pass)
_NO_EXPRS = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr,
             ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)
_recording = threading.local()


class _ParamRef:
    """Marks a returned argument array (the caller gets its own array back)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _walk(node: ast.AST):
    """``ast.walk`` that does not enter nested functions, lambdas or classes."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))


def _outer_loops(body: list[ast.stmt]) -> list[ast.For]:
    """The ``for`` statements not inside another one (nor in a nested
    function or class), in source order."""
    found: list[ast.For] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.For):
                found.append(child)
            elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                visit(child)

    for st in body:
        if isinstance(st, ast.For):
            found.append(st)
        elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            visit(st)
    return found


def _scan_loop(loop: ast.For, infos: dict[int, LoopInfo]) -> None:
    """Checks a loop's statements and records what each (nested) loop binds
    and writes; raises ``Untranslatable`` for a construct outside the forms."""
    def check(stmts: list[ast.stmt]) -> None:
        for st in stmts:
            if not isinstance(st, _LOOP_STMTS) and not (
                    isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
                raise Untranslatable(describe(st), st.lineno)
            for n in _walk(st):
                if isinstance(n, _NO_EXPRS):
                    raise Untranslatable(f"`{ast.unparse(n)}` inside a loop", st.lineno)
            if isinstance(st, ast.For):
                if st.orelse:
                    raise Untranslatable("`for ... else`", st.lineno)
                _scan_loop(st, infos)
            elif isinstance(st, ast.If):
                check(st.body)
                check(st.orelse)

    check(loop.body)
    assigned = {n.id for n in _walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    written: dict[str, set[str]] = {}
    for n in _walk(loop):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            if not isinstance(n.value, ast.Name):
                raise Untranslatable(f"a write to `{ast.unparse(n)}` (only `name[index] = ...`)", n.lineno)
            written.setdefault(n.value.id, set()).add(ast.dump(n.slice))
    for name, forms in written.items():
        if len(forms) > 1:
            raise Untranslatable(f"`{name}` is written at two different indices in one loop", loop.lineno)
        if name in assigned:
            raise Untranslatable(f"`{name}` is both rebound and written element-wise in the loop", loop.lineno)
    infos[id(loop)] = LoopInfo(assigned, written)


def _alias_before(func: ast.FunctionDef, name: str, line: int) -> ast.AST | None:
    """A use of the array ``name`` before ``line`` that could keep a second
    reference to it (anything but indexing it, an attribute such as
    ``.shape``, or ``len()``)."""
    for parent in _walk(func):
        for child in ast.iter_child_nodes(parent):
            if not (isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load)
                    and child.lineno < line):
                continue
            if isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is child:
                continue
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
                continue
            return parent
    return None


def _fresh_array(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in _FRESH


class Plan:
    """The static translation of one function (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], func: ast.FunctionDef, line0: int) -> None:
        self.fn = fn
        self.line0 = line0
        self.infos: dict[int, LoopInfo] = {}
        self.loops = _outer_loops(func.body)
        self.rejection: str | None = None
        self.params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
        self.written_params: list[str] = []
        self.shared: list[set[str]] = []
        self.generated: Callable[..., Any] | None = None
        try:
            self._check(func)
        except Untranslatable as e:
            self.rejection = f"line {(e.line or func.lineno) + line0}: {e.what}"
            return
        self.generated = self._generate(func)

    def _check(self, func: ast.FunctionDef) -> None:
        for n in _walk(func):
            if isinstance(n, (ast.While, ast.AsyncFor)):
                raise Untranslatable("a `while` loop" if isinstance(n, ast.While) else "`async for`", n.lineno)
            if isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)):
                raise Untranslatable(describe(n) if not isinstance(n, (ast.Yield, ast.YieldFrom))
                                     else "`yield`", n.lineno)
        for loop in self.loops:
            _scan_loop(loop, self.infos)
        # Every binding of every name: the assigned value for `name = value`,
        # else the binding node (a loop target, `with ... as name`...).
        stores: dict[str, list[ast.AST]] = {}
        direct: set[int] = set()
        for n in _walk(func):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        stores.setdefault(t.id, []).append(n.value)
                        direct.add(id(t))
        for n in _walk(func):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in direct:
                stores.setdefault(n.id, []).append(n)
        for loop in self.loops:
            info = self.infos[id(loop)]
            for name in info.written:
                binds = stores.get(name, [])
                if name in self.params:
                    if binds:
                        raise Untranslatable(f"a write into the argument `{name}`, which the function "
                                             "also rebinds", loop.lineno)
                    if name not in self.written_params:
                        self.written_params.append(name)
                elif not binds or not all(_fresh_array(b) for b in binds):
                    raise Untranslatable(f"a write into `{name}`, which is neither an argument nor a new "
                                         "array (np.empty_like, np.zeros, ...)", loop.lineno)
            for name in info.written:
                alias = _alias_before(func, name, loop.lineno)
                if alias is not None:
                    raise Untranslatable(f"`{ast.unparse(alias)}` refers to the array `{name}` before the "
                                         "loop writes it (an alias would not see the writes)", alias.lineno)
            # Names the loop binds that code after it reads, outside other
            # loops that bind them again (a reused `i`): Python would show
            # their last-iteration values there.
            later = [n for n in _walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                     and n.id in info.assigned and n.lineno > loop.end_lineno]
            rebound = {id(n) for other in self.loops if other is not loop for n in ast.walk(other)
                       if isinstance(n, ast.Name) and n.id in self.infos[id(other)].assigned}
            self.shared.append({n.id for n in later if id(n) not in rebound})

    def _generate(self, func: ast.FunctionDef) -> Callable[..., Any]:
        func = copy.deepcopy(func)
        loops = _outer_loops(func.body)
        replacements = {id(loop): k for k, loop in enumerate(loops)}

        class Rewrite(ast.NodeTransformer):
            def visit_For(self, node: ast.For) -> Any:
                k = replacements[id(node)]
                info_names = sorted(infos[k].assigned | set(infos[k].written))
                src = f"__xo_u = __xo_run({k}, locals())\n" + "".join(
                    f"if {n!r} in __xo_u: {n} = __xo_u[{n!r}]\n" for n in info_names)
                stmts = ast.parse(src).body
                for s in stmts:
                    ast.copy_location(s, node)
                return stmts

            def visit_Return(self, node: ast.Return) -> Any:
                value = node.value or ast.Constant(None)
                new = ast.parse("return __xo_pack(None, locals())").body[0]
                new.value.args[0] = self.visit(value)
                return ast.copy_location(new, node)

            def visit_FunctionDef(self, node: Any) -> Any:
                return node  # nested functions run as written

            visit_AsyncFunctionDef = visit_FunctionDef
            visit_Lambda = visit_FunctionDef
            visit_ClassDef = visit_FunctionDef

        infos = [self.infos[id(loop)] for loop in self.loops]
        rw = Rewrite()
        func.body = [s for st in func.body for s in _as_list(rw.visit(st))]
        func.body.append(ast.parse("return __xo_pack(None, locals())").body[0])
        func.decorator_list = []
        func.returns = None
        args = func.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                a.annotation = None
        args.defaults = [ast.Constant(None) for _ in args.defaults]
        args.kw_defaults = [None if d is None else ast.Constant(None) for d in args.kw_defaults]
        free = list(self.fn.__code__.co_freevars)
        maker = ast.FunctionDef(
            name="__xo_maker",
            args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in ["__xo_run", "__xo_pack", *free]],
                               kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[func, ast.Return(ast.Name(func.name, ast.Load()))], decorator_list=[], returns=None)
        module = ast.fix_missing_locations(ast.Module(body=[maker], type_ignores=[]))
        ast.increment_lineno(module, self.line0)
        filename = inspect.getsourcefile(self.fn) or "<crossover loop>"
        scratch: dict[str, Any] = {}
        exec(compile(module, filename, "exec"), scratch)  # noqa: S102 - the user's own function, rewritten
        inner = next(c for c in scratch["__xo_maker"].__code__.co_consts
                     if isinstance(c, types.CodeType) and c.co_name == func.name)
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
        cells["__xo_run"] = types.CellType(self.run)
        cells["__xo_pack"] = types.CellType(self.pack)
        g = types.FunctionType(inner, self.fn.__globals__, self.fn.__name__, self.fn.__defaults__,
                               tuple(cells[n] for n in inner.co_freevars))
        g.__kwdefaults__ = self.fn.__kwdefaults__
        g.__qualname__ = self.fn.__qualname__
        g.__module__ = self.fn.__module__
        return g

    # ---- called by the generated function ----------------------------------

    def run(self, k: int, local_vars: dict[str, Any]) -> dict[str, Any]:
        """Runs outermost loop ``k`` on the function's current values."""
        loop = self.loops[k]
        closure = {n: c.cell_contents for n, c in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ())
                   if _cell_set(c)}
        top = Top([local_vars, closure, self.fn.__globals__, builtins.__dict__])
        runner = Runner(self.infos, self.line0)
        try:
            ran = runner.run_loop(loop, top)
        except Untranslatable as e:
            e.line = (e.line or loop.lineno) + self.line0
            raise
        except (_C.CrossoverError, ValueError, TypeError, IndexError, ArithmeticError) as e:
            raise Untranslatable(f"the loop's array operations raise {type(e).__name__}: {e}",
                                 loop.lineno + self.line0) from None
        if ran:
            for name in sorted(self.shared[k] - set(top.updates)):
                raise Untranslatable(f"`{name}` is used outside the loop, where Python sees its value from "
                                     "the last iteration", loop.lineno + self.line0)
        notes = getattr(_recording, "notes", None)
        if notes is not None:
            notes.extend(runner.notes or [f"line {loop.lineno + self.line0}: the loop runs no iteration"])
        return top.updates

    def pack(self, value: Any, local_vars: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
        """The function's result and the final values of written arguments."""
        finals = tuple(local_vars[p] for p in self.written_params)

        def mark(v: Any) -> Any:
            for p, f in zip(self.written_params, finals):
                if v is f:
                    return _ParamRef(p)
            return v

        if type(value) in (tuple, list):
            value = type(value)(mark(v) for v in value)
        else:
            value = mark(value)
        return value, finals


def _as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


def _cell_set(c: Any) -> bool:
    try:
        c.cell_contents
    except ValueError:
        return False
    return True


def make_plan(fn: Callable[..., Any]) -> Plan | None:
    """The loop translation of ``fn``, or None when it has no loops (or its
    source cannot be read: it is then jitted as it is)."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != fn.__name__:
        return None
    func = tree.body[0]
    if not any(isinstance(n, (ast.For, ast.While, ast.AsyncFor)) for n in _walk(func)):
        return None
    return Plan(fn, func, fn.__code__.co_firstlineno - 1)


#: The written-back arguments of a function whose loops write none (shared,
#: read only).
_NONE_BOUND: dict[str, Any] = {}


class LoopJitted(Jitted):
    """A ``@jit`` function whose loops are translated (module docstring)."""

    def __init__(self, fn: Callable[..., Any], lazy: bool, fallback: str, plan: Plan) -> None:
        super().__init__(plan.generated or fn, lazy)
        self._original = fn
        self._plan = plan
        self._fallback = fallback
        self._numba: Any = None
        self._refused: dict[Any, str] = {}
        self._warned = False
        #: Why the last call ran as plain Python (None when it was translated).
        self.fallback_reason: str | None = plan.rejection
        # Translated, writing into no argument: a replay is the tape's value.
        self._plain_replay = plan.rejection is None and not plan.written_params

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _C._tracing():
            return self._original(*args, **kwargs)  # inside another trace: it records the loop as written
        if self._plain_replay and not kwargs:
            # A replayed call that writes into no argument: the tape's value
            # straight back (the checks below were most of a small call).
            found = _positional_key(args)
            entry = self._cache.get(found[0]) if found is not None else None
            if entry is not None and entry[0] is not None:
                value = entry[1](_C._replay(entry[0], found[1], self._lazy))[0]
                if self.fallback_reason is not None:
                    self.fallback_reason = None
                if type(value) is np.ndarray and value.ndim == 0 and not self._lazy:
                    return value[()]  # a scalar, as the loop gives it
                return self._result(value, _NONE_BOUND)
        if self._plan.rejection is not None:
            return self._fall_back(self._plan.rejection, args, kwargs)
        signature = _signature(args, kwargs)
        key = signature[0]
        # (Each test below skips work a replayed call does not need: hashing
        # the key twice, binding arguments when nothing is written back.)
        why = self._refused.get(key) if self._refused and key is not None else None
        bound = self._written_arguments(args, kwargs) if why is None and self._plan.written_params else _NONE_BOUND
        if isinstance(bound, str):
            why = bound
        if why is not None:
            return self._fall_back(why, args, kwargs)
        try:
            value, finals = self._call(args, kwargs, signature)
        except Untranslatable as e:
            why = f"line {e.line}: {e.what}"
            if key is not None:
                self._refused[key] = why
            return self._fall_back(why, args, kwargs)
        if finals:
            for name, final in zip(self._plan.written_params, finals):
                np.copyto(bound[name], np.asarray(final), casting="unsafe")
        if self.fallback_reason is not None:
            self.fallback_reason = None
        return self._result(value, bound)

    def _written_arguments(self, args: tuple, kwargs: dict) -> dict[str, Any] | str:
        """The NumPy arrays the loops write into, or why they cannot be."""
        if not self._plan.written_params:
            return {}
        try:
            ba = inspect.signature(self._original).bind(*args, **kwargs)
        except TypeError:
            return {}  # the call itself is wrong: the generated function raises the same error
        ba.apply_defaults()
        out: dict[str, Any] = {}
        arrays = [v for v in ba.arguments.values() if isinstance(v, np.ndarray)]
        for name in self._plan.written_params:
            a = ba.arguments.get(name)
            if not isinstance(a, np.ndarray) or not a.flags.writeable:
                return f"the loop writes into the argument `{name}`, which is not a writeable NumPy array"
            if any(b is not a and np.shares_memory(a, b) for b in arrays):
                return f"the argument `{name}`, which the loop writes into, shares memory with another argument"
            out[name] = a
        return out

    def _result(self, value: Any, bound: dict[str, Any]) -> Any:
        if type(value) in (tuple, list):
            return type(value)(self._fix(v, bound) for v in value)
        return self._fix(value, bound)

    def _fix(self, v: Any, bound: dict[str, Any]) -> Any:
        """One returned value as the Python loop gives it."""
        if isinstance(v, np.ndarray):
            return v[()] if v.ndim == 0 and not self._lazy else v  # a scalar
        if isinstance(v, _ParamRef):
            return bound[v.name]
        return v

    def _fall_back(self, why: str, args: tuple, kwargs: dict) -> Any:
        self.fallback_reason = why
        runner = self._original
        via = "plain Python"
        if self._fallback == "numba":
            if self._numba is None:
                try:
                    import numba

                    self._numba = numba.njit(self._original)
                except ImportError:
                    self._numba = False
            if self._numba:
                runner, via = self._numba, "Numba"
            else:
                via = "plain Python (Numba is not installed)"
        if not self._warned:
            self._warned = True
            warnings.warn(f"crossover.jit: {self._original.__qualname__}: {why}: not translated, so the "
                          f"function runs as {via} (warned once per function)", _C.FallbackWarning,
                          stacklevel=3)
        if runner is not self._original:
            try:
                return runner(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - Numba could not compile it: Python can run it
                if type(e).__module__.startswith("numba"):
                    return self._original(*args, **kwargs)
                raise
        return self._original(*args, **kwargs)

    def explain(self, args: tuple, kwargs: dict, run: bool) -> "LoopExplanation":
        """``crossover.explain`` of this function: the loops' translations
        beside the kernels."""
        if self._plan.rejection is not None:
            return LoopExplanation(_C._explain([], run), [f"not translated: {self._plan.rejection}"])
        from ._jit import _flatten

        _, inputs, rebuild = _signature(args, kwargs)
        a, k = rebuild(_C._to_inputs(inputs, False))
        _recording.notes = notes = []
        try:
            out = self._fn(*a, **k)
        except Untranslatable as e:
            return LoopExplanation(_C._explain([], run), notes + [f"not translated: line {e.line}: {e.what}"])
        finally:
            _recording.notes = None
        return LoopExplanation(_C._explain(_flatten(out)[0], run), notes)


class LoopExplanation:
    """``crossover.explain`` of a function with translated loops: the
    expression each loop became (``translation``), then the kernels (every
    attribute of ``crossover.Explanation`` is available)."""

    def __init__(self, explanation: Any, translation: list[str]) -> None:
        self.explanation = explanation
        self.translation = translation

    def __getattr__(self, name: str) -> Any:
        return getattr(self.explanation, name)

    def __len__(self) -> int:
        return len(self.explanation)

    def __str__(self) -> str:
        lines = ["loop translation:"] + [f"  {t}" for t in self.translation]
        return "\n".join(lines) + "\n" + str(self.explanation)

    __repr__ = __str__
