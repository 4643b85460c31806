"""Dask arrays whose chunks are crossover arrays (``pip install crossover[dask]``).

Dask splits the array into chunks and schedules one task per chunk on its
workers (threads, processes, or a ``dask.distributed`` cluster); crossover
does the work inside each chunk, the way CuPy-backed Dask arrays work:

* Dask's blockwise operations, elementwise ufuncs, reductions and
  ``da.matmul``/``@`` call NumPy functions on the chunks; on crossover chunks
  those calls reach crossover through the NumPy protocols
  (``__array_ufunc__``, ``__array_function__``) and record lazy work.
* A chunk stays lazy from task to task on the same worker, so consecutive
  elementwise operations (and the reduction that ends them) run as one fused
  crossover kernel when the chunk's value is needed: when it is sent to
  another worker or the client, joined by ``concatenate``, or read.

Entry points: ``from_array`` (NumPy, crossover or Dask array -> Dask array
of crossover chunks), ``to_numpy`` / ``compute`` (back to NumPy),
``materialize`` (compute the chunks in place before ``persist``),
``explain`` (``crossover.explain`` of one chunk's task, on its worker),
``CrossoverPlugin`` / ``worker_info`` (worker setup and what each worker's
engine sees). Importing this module registers crossover with Dask's
dispatch tables (``concatenate``, ``tensordot``, ``sizeof``, tokenizing and,
with ``distributed`` installed, zero-copy serialization).
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Sequence

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.array.dispatch import concatenate_lookup, tensordot_lookup
    from dask.base import normalize_token
    from dask.sizeof import sizeof
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "crossover.dask needs Dask: pip install 'crossover[dask]' "
        "(installs dask[array] and distributed)"
    ) from e

from . import _crossover as _C
from ._numpy import concatenate, tensordot

__all__ = [
    "CrossoverPlugin",
    "compute",
    "explain",
    "from_array",
    "materialize",
    "meta",
    "optimize",
    "to_numpy",
    "worker_info",
]

ndarray = _C.ndarray


def meta(dtype: Any, ndim: int) -> ndarray:
    """The ``meta`` of a Dask array of crossover chunks: an empty crossover
    array of that dtype and number of dimensions."""
    return _C.zeros((0,) * ndim, dtype=np.dtype(dtype))


# ---- chunk functions (module level so that workers unpickle them by name) -----


def _to_crossover(block: Any) -> ndarray:
    if isinstance(block, ndarray):
        return block
    return _C.asarray(np.asarray(block))


def _to_host(block: Any) -> np.ndarray:
    if isinstance(block, ndarray):
        return block.numpy()
    return np.asarray(block)


def _evaluated(block: Any) -> Any:
    return block.eval() if isinstance(block, ndarray) else block


# ---- conversions ------------------------------------------------------------


def from_array(
    x: Any,
    chunks: Any = "auto",
    *,
    name: str | None = None,
    inline_array: bool = False,
) -> da.Array:
    """A Dask array whose chunks are crossover arrays.

    ``x`` is a NumPy array (or anything ``np.asarray`` takes), a crossover
    array (computed here if pending), or a Dask array (its chunks are
    converted on the workers; ``chunks`` rechunks it first unless
    ``"auto"``). ``chunks`` is anything ``dask.array.from_array`` takes.
    The result's ``_meta`` is an empty crossover array, so Dask knows the
    chunk type without computing anything.
    """
    if isinstance(x, da.Array):
        if not (isinstance(chunks, str) and chunks == "auto"):
            x = x.rechunk(chunks)
        if isinstance(x._meta, ndarray):
            return x
        return x.map_blocks(
            _to_crossover,
            dtype=x.dtype,
            meta=meta(x.dtype, x.ndim),
            name=name or f"crossover-from-dask-{x.name}",
        )
    if isinstance(x, ndarray):
        x = x.numpy()  # zero-copy, read-only view of the computed value
    x = np.asarray(x)
    if x.dtype.kind in "OUSV" or x.dtype.kind == "M" or x.dtype.kind == "m":
        raise TypeError(f"crossover.dask.from_array: dtype {x.dtype} is not supported")
    host = da.from_array(x, chunks=chunks, name=name, inline_array=inline_array)
    return host.map_blocks(_to_crossover, dtype=x.dtype, meta=meta(x.dtype, x.ndim))


def to_numpy(x: da.Array) -> da.Array:
    """The same Dask array with NumPy chunks (lazy; each chunk's crossover
    work runs, then its value is handed to NumPy without a copy)."""
    return x.map_blocks(_to_host, dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype))


def compute(*arrays: Any, **kwargs: Any) -> Any:
    """Like ``dask.compute`` with NumPy results: Dask arrays of crossover
    chunks are gathered as NumPy arrays. One array gives one result, several
    give a tuple. ``kwargs`` go to ``dask.compute`` (``scheduler=`` ...)."""
    conv = [to_numpy(a) if isinstance(a, da.Array) else a for a in arrays]
    out = dask.compute(*conv, **kwargs)
    out = tuple(o.numpy() if isinstance(o, ndarray) else o for o in out)
    return out[0] if len(out) == 1 else out


def materialize(x: da.Array) -> da.Array:
    """Chunks computed in place (``.eval()`` on each crossover chunk): use
    before ``persist()`` so workers hold values rather than pending work."""
    return x.map_blocks(_evaluated, dtype=x.dtype, meta=x._meta)


# ---- graph optimization: a chunk read by several tasks is computed once -------


def optimize(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    """Dask's array optimization, then: a task whose result is read by two
    or more tasks computes its crossover value before handing it on.

    A crossover chunk passed from task to task stays lazy, so a chain is
    fused with whatever reads it. When several tasks read the same chunk
    (``y.sum()``, ``y.max()`` and ``y.std()`` of one ``y``), each would run
    the chain again; computing it once where it is made is the engine's own
    rule for a value shared by kernels, lifted to Dask's graph. Installed as
    Dask's ``array_optimize`` when this module is imported, unless one is
    set already; other chunk types pass through untouched.
    """
    from collections import Counter

    from dask._task_spec import Task, convert_legacy_graph
    from dask.array.optimization import optimize as dask_optimize
    from dask.utils import ensure_dict

    dsk = convert_legacy_graph(ensure_dict(dask_optimize(dsk, keys, **kwargs)))
    readers = Counter(dep for node in dsk.values() for dep in node.dependencies)
    return {
        k: Task(k, _evaluated, node) if readers[k] > 1 and isinstance(node, Task) else node
        for k, node in dsk.items()
    }


if dask.config.get("array_optimize", None) is None:
    dask.config.set({"array_optimize": optimize})


# ---- explain one chunk's task ------------------------------------------------


def _explain_chunk(block: Any, run: bool) -> str:
    import socket

    head = (
        f"chunk {getattr(block, 'shape', '?')} {getattr(block, 'dtype', '?')} "
        f"on {socket.gethostname()} pid {os.getpid()}"
    )
    if not isinstance(block, ndarray):
        return f"{head}: a {type(block).__name__} chunk, not crossover work"
    info = _C.info()
    head += f" ({info.get('simd', '?')}, {info.get('threads', '?')} engine threads)"
    return f"{head}\n{_C._explain([block], run)}"


def explain(x: da.Array, block_id: Sequence[int] | None = None, *, run: bool = True, **kwargs: Any) -> str:
    """``crossover.explain`` of one chunk of ``x`` (default: the first),
    computed where Dask runs the chunk's task (a worker of the active
    ``distributed.Client``, else locally). The chunk's upstream tasks run as
    usual; its pending crossover work is then explained (kernels, fused ops,
    bytes, flops, and with ``run`` measured times). Returns the text."""
    if block_id is None:
        block_id = (0,) * x.ndim
    block = x.blocks[tuple(block_id)]
    (d,) = block.to_delayed().ravel()
    return dask.delayed(_explain_chunk, pure=False)(d, run).compute(**kwargs)


# ---- workers -----------------------------------------------------------------


def _worker_info() -> dict[str, Any]:
    import socket

    d = dict(_C.info())
    d["numpy"] = np.__version__
    d["pid"] = os.getpid()
    d["host"] = socket.gethostname()
    d["device_policy"] = _C.get_device()
    d["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    d["CROSSOVER_NUM_THREADS"] = os.environ.get("CROSSOVER_NUM_THREADS")
    d["CROSSOVER_PROFILE"] = os.environ.get("CROSSOVER_PROFILE")
    return d


def worker_info(client: Any) -> dict[str, dict[str, Any]]:
    """What the engine sees on each worker of a ``distributed.Client``:
    version, SIMD level, engine threads, devices, device policy, pid and the
    ``CUDA_VISIBLE_DEVICES`` / ``CROSSOVER_NUM_THREADS`` it was started with."""
    return client.run(_worker_info)


try:  # WorkerPlugin is in distributed; the plugin is only useful with it
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover
    _WorkerPlugin = object  # type: ignore[misc,assignment]


class CrossoverPlugin(_WorkerPlugin):  # type: ignore[misc,valid-type]
    """A ``distributed`` worker plugin: starts crossover's engine on each
    worker when it joins and sets its device policy (``"auto"``, ``"cpu"``,
    ``"gpu"``) and, if given, its fallback mode (``"raise"`` makes any
    NumPy fallback inside a chunk task an error). Register it with ``client.register_plugin(CrossoverPlugin())``.

    Each worker process runs its own engine, which sees that process's
    machine: its CPU and SIMD level, ``CROSSOVER_NUM_THREADS`` (set it per
    worker to cores / workers on the host), and the GPU that
    ``CUDA_VISIBLE_DEVICES`` leaves it. The engine info of the worker is
    kept on ``worker.crossover_info`` (``worker_info(client)`` gathers it).
    """

    name = "crossover"

    def __init__(self, device: str = "auto", fallback: str | None = None):
        self.device = device
        self.fallback = fallback

    def setup(self, worker: Any) -> None:  # pragma: no cover - runs on workers
        from ._numpy import set_fallback

        _C.set_device(self.device)
        if self.fallback is not None:
            set_fallback(self.fallback)
        worker.crossover_info = _worker_info()


# ---- registrations with Dask -------------------------------------------------


concatenate_lookup.register(ndarray, concatenate)
tensordot_lookup.register(ndarray, tensordot)


@sizeof.register(ndarray)
def _sizeof(x: ndarray) -> int:
    return int(x.nbytes)


@normalize_token.register(ndarray)
def _tokenize(x: ndarray) -> Any:
    # Ready values hash by content; pending work would have to run to be
    # hashed, so it gets a fresh token (never wrongly shared, never cached).
    if x.size == 0:
        return ("crossover.ndarray", str(x.dtype), tuple(x.shape))
    if x.is_ready:
        return ("crossover.ndarray", normalize_token(x.numpy()))
    return ("crossover.ndarray-pending", uuid.uuid4().hex)


def _register_serialization() -> None:
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
        from distributed.protocol.numpy import (
            deserialize_numpy_ndarray,
            serialize_numpy_ndarray,
        )
    except ImportError:  # pragma: no cover - dask without distributed
        return

    @dask_serialize.register(ndarray)
    def _serialize(x: ndarray) -> tuple[dict, list]:
        return serialize_numpy_ndarray(x.numpy())  # computes; no copy

    @dask_deserialize.register(ndarray)
    def _deserialize(header: dict, frames: list) -> ndarray:
        host = deserialize_numpy_ndarray(header, frames)
        if host.flags.owndata and host.flags.writeable and host.flags.c_contiguous:
            return _C._adopt(host)
        return _C.asarray(host)


_register_serialization()
