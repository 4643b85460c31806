"""NumPy's namespace under crossover: what each public name of ``numpy``,
``numpy.linalg``, ``numpy.fft`` and ``numpy.random`` becomes.

The routes, one per name:

* ``engine``: a crossover function that runs engine ops (``crossover.sin``,
  ``crossover.sum``, ``crossover.linalg.solve``).
* ``composed``: engine ops composed to give NumPy's values exactly
  (``clip`` is ``minimum(maximum(x, lo), hi)``; see ``_functions``).
* ``host``: values built on the host from shapes and Python data
  (``eye``, ``empty``), or joins of computed arrays (``concatenate``), copied
  in once; no NumPy work that the engine could do on crossover data.
* ``numpy``: NumPy runs it on host copies of the inputs and the results come
  back as crossover arrays, with a ``FallbackWarning`` once per function
  (``set_fallback``).
* ``object``: NumPy's own object: types and dtypes (``float32``),
  constants (``pi``, ``newaxis``), submodules, and utilities that do no
  array work (``finfo``, ``set_printoptions``).

``install`` fills a crossover module with the names it does not define
itself; ``table`` is what the docs print
(``python -m crossover._docs --markdown``) and the tests check.
Engine and composed functions still fall back for arguments they do not
take (``out=``, ``where=``...), naming the argument in the warning.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Callable

import numpy as np

from . import _numpy
from ._functions import COMPOSED, HOST

ROUTES = ("engine", "composed", "host", "numpy", "object")
NATIVE = ("engine", "composed", "host")

#: The NumPy modules mirrored, with the crossover module that holds each.
MODULES = ("numpy", "numpy.linalg", "numpy.fft", "numpy.random")

#: Callables that do no array work (dtype queries, print and error
#: settings, introspection): crossover exposes NumPy's own.
UTILITIES = frozenset(
    """base_repr binary_repr can_cast common_type format_float_positional
    format_float_scientific frompyfunc get_include get_printoptions getbufsize geterr
    geterrcall info isdtype isscalar issubdtype iterable min_scalar_type mintypecode
    printoptions promote_types result_type set_printoptions setbufsize seterr seterrcall
    show_config show_runtime test typename broadcast_shapes datetime_data
    nested_iters""".split()
)

_ROUTE_ATTR = "_crossover_route"


def public_names(np_module: types.ModuleType) -> list[str]:
    """The public names of a NumPy module: its ``__all__`` and, for the
    submodules, the other public attributes that are not modules
    (``numpy.random.test``...). Names that other libraries add to ``numpy``
    later (numexpr's ``numpy.expm1x``) are found by ``late_name``."""
    names = set(np_module.__all__)
    if np_module is not np:
        names |= {n for n in dir(np_module)
                  if not isinstance(getattr(np_module, n), types.ModuleType)}
    return sorted(n for n in names if not n.startswith("_"))


def _is_function(obj: Any) -> bool:
    return callable(obj) and not isinstance(obj, (type, types.ModuleType))


def _mark(f: Callable[..., Any], route: str, np_func: Any, qualname: str) -> Callable[..., Any]:
    f.__name__ = f.__qualname__ = qualname.rsplit(".", 1)[-1]
    f.__wrapped_numpy__ = np_func  # type: ignore[attr-defined]
    try:
        # The wrapper takes what NumPy's function takes: say so to inspect
        # (the Array API's signature checks read it).
        f.__signature__ = inspect.signature(np_func)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    setattr(f, _ROUTE_ATTR, route)
    return f


def routed(np_func: Any, qualname: str,
           check: Callable[[Any, str], Any] | None = None) -> Callable[..., Any]:
    """``np_func`` through the engine's binding in ``_numpy._IMPL``
    (``check`` as in ``through_numpy``)."""

    # `_numpy.dispatch` inlined: this wrapper is the whole Python cost of
    # `xo.sum(x)` and friends, paid on every call.
    impls, fallback_type = _numpy._IMPL, _numpy._Fallback
    ndarray = _numpy._C.ndarray
    name = _numpy.ONE_ARGUMENT_METHODS.get(np_func)
    # The method itself, looked up once (not by name on every call).
    method = getattr(ndarray, name) if name is not None else None

    def f(*args: Any, **kwargs: Any) -> Any:
        if method is not None and not kwargs and len(args) == 1 and type(args[0]) is ndarray:
            # The array's own method: an engine result, which `check`
            # (a fallback's dtype rule) would return unchanged.
            return method(args[0])
        if (impl := impls.get(np_func)) is None:
            r = _numpy.fallback(np_func, args, kwargs, why=None)
        else:
            try:
                r = impl(*args, **kwargs)
            except TypeError as e:
                r = _numpy.signature_fallback(e)
            if type(r) is fallback_type:
                r = _numpy.fallback(np_func, args, kwargs, why=r.why)
        return r if check is None else check(r, qualname)

    route = "composed" if np_func in COMPOSED else "host" if np_func in HOST else "engine"
    how = COMPOSED.get(np_func) or HOST.get(np_func) or "the engine's op"
    f.__doc__ = (
        f"Like ``{qualname}``, in crossover ({how}); returns crossover arrays. "
        "Arguments the engine does not take run in NumPy (a FallbackWarning).\n\n"
        f"NumPy's documentation:\n\n{getattr(np_func, '__doc__', '') or ''}"
    )
    return _mark(f, route, np_func, qualname)


def through_numpy(np_func: Any, qualname: str,
                  check: Callable[[Any, str], Any] | None = None) -> Callable[..., Any]:
    """``np_func`` run by NumPy on host copies of crossover inputs, results as
    crossover arrays, with a ``FallbackWarning`` once (``set_fallback``);
    ``check(result, qualname)`` vets the result (the Array API's dtype rule)."""

    def f(*args: Any, **kwargs: Any) -> Any:
        r = _numpy.fallback(np_func, args, kwargs, name=qualname)
        return r if check is None else check(r, qualname)

    f.__doc__ = (
        f"``{qualname}`` run by NumPy on host arrays (not in the engine yet: a "
        f"FallbackWarning once); returns crossover arrays.\n\n"
        f"NumPy's documentation:\n\n{getattr(np_func, '__doc__', '') or ''}"
    )
    return _mark(f, "numpy", np_func, qualname)


def install(target: types.ModuleType, np_module: types.ModuleType,
            numpy_route: Callable[[Any, str], Callable[..., Any]] = through_numpy) -> None:
    """Gives ``target`` every public name of ``np_module`` that it does not
    define: the engine's binding where ``_IMPL`` has one, else
    ``numpy_route`` (NumPy on host arrays), and NumPy's own object for
    types, constants, modules and utilities."""
    for name in public_names(np_module):
        if name in target.__dict__:
            continue
        obj = getattr(np_module, name)
        qualname = f"{np_module.__name__}.{name}"
        if not _is_function(obj) or name in UTILITIES:
            value = obj
        elif obj in _numpy._IMPL:
            value = routed(obj, qualname)
        else:
            value = numpy_route(obj, qualname)
        setattr(target, name, value)


def late_name(target: types.ModuleType, np_module: types.ModuleType, name: str) -> Any:
    """A public NumPy name that appeared after crossover was imported,
    routed as ``install`` would have (for the module's ``__getattr__``)."""
    if name.startswith("_") or not hasattr(np_module, name):
        raise AttributeError(f"module {target.__name__!r} has no attribute {name!r}")
    obj = getattr(np_module, name)
    qualname = f"{np_module.__name__}.{name}"
    if not _is_function(obj):
        return obj
    value = routed(obj, qualname) if obj in _numpy._IMPL else through_numpy(obj, qualname)
    setattr(target, name, value)
    return value


def route_of(target: types.ModuleType, np_module: types.ModuleType, name: str) -> str:
    """How ``target.name`` does what ``np_module.name`` does (see ``ROUTES``)."""
    np_obj = getattr(np_module, name)
    if name not in target.__dict__:
        raise AttributeError(f"crossover has no {np_module.__name__}.{name}")
    obj = target.__dict__[name]
    route = getattr(obj, _ROUTE_ATTR, None)
    if route is not None:
        return route
    if obj is np_obj or not _is_function(np_obj) or name in UTILITIES:
        return "object"
    if np_obj in COMPOSED:
        return "composed"
    if np_obj in HOST:
        return "host"
    return "engine"


def crossover_module(np_name: str) -> types.ModuleType:
    import crossover

    return crossover if np_name == "numpy" else getattr(crossover, np_name.split(".", 1)[1])


def table() -> dict[str, dict[str, str]]:
    """``{numpy module: {name: route}}`` for every public NumPy name."""
    out: dict[str, dict[str, str]] = {}
    for mod_name in MODULES:
        np_mod = sys.modules[mod_name]
        target = crossover_module(mod_name)
        out[mod_name] = {n: route_of(target, np_mod, n) for n in public_names(np_mod)}
    return out


def native_fraction(t: dict[str, dict[str, str]] | None = None) -> tuple[int, int]:
    """(native, functions): how many of NumPy's functions (not types,
    constants or utilities) run natively (engine, composed or host)."""
    t = table() if t is None else t
    routes = [r for mod in t.values() for r in mod.values() if r != "object"]
    return sum(r in NATIVE for r in routes), len(routes)


def markdown() -> str:
    """The docs' section on the namespace (docs/python.md holds a copy;
    a test checks that it is current)."""
    t = table()
    native, functions = native_fraction(t)
    strict = sum(r in ("engine", "composed") for mod in t.values() for r in mod.values())
    lines = [
        f"Generated by `python -m crossover._docs --markdown` with NumPy "
        f"{'.'.join(np.__version__.split('.')[:2])}.",
        "",
        f"**{native} of NumPy's {functions} public functions ({100 * native / functions:.0f}%) "
        f"run natively** ({strict} in engine ops, {native - strict} built on the host from "
        "shapes and Python data); the rest run in NumPy on host copies and return crossover "
        "arrays, with a `FallbackWarning` once per function. Types, dtypes, constants, "
        "submodules and utilities are NumPy's own objects.",
        "",
        "| module | engine | composed | host | numpy (fallback) | object |",
        "|---|---|---|---|---|---|",
    ]
    for mod_name, routes in t.items():
        counts = [sum(r == k for r in routes.values()) for k in ROUTES]
        lines.append(f"| `{mod_name}` | " + " | ".join(map(str, counts)) + " |")
    for mod_name, routes in t.items():
        lines += ["", f"### `{mod_name}`", ""]
        for kind in ROUTES[:-1]:
            names = sorted(n for n, r in routes.items() if r == kind)
            if names:
                lines.append(f"- **{kind}** ({len(names)}): " + ", ".join(f"`{n}`" for n in names))
    lines += ["", "Compositions (each gives NumPy's values):", "",
              "| function | how |", "|---|---|"]
    seen = {}
    for f, how in COMPOSED.items():
        seen.setdefault(how, []).append(f"`{f.__name__}`")
    for how, names in seen.items():
        lines.append(f"| {', '.join(names)} | {how.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


BEGIN = "<!-- begin namespace: generated by python -m crossover._docs --markdown -->"
END = "<!-- end namespace -->"


def main(argv: list[str]) -> int:
    if argv[1:] == ["--markdown"]:
        sys.stdout.write(markdown())
        return 0
    if len(argv) == 3 and argv[1] == "--update":
        path = argv[2]
        text = open(path, encoding="utf-8").read()
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(path, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n" + markdown() + END + tail)
        return 0
    sys.stderr.write("usage: python -m crossover._docs --markdown | --update docs/python.md\n")
    return 2

