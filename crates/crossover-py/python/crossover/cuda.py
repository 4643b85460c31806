"""CuPy's ``cupy.cuda`` names that portable code calls:
``crossover.cuda.Stream.null.synchronize()`` and
``crossover.cuda.Device().synchronize()`` wait for queued work, like
``crossover.synchronize()``.

crossover computes lazily and every read of a value waits for the work that
makes it, so there is no queued work to wait for: these return at once.
Timing code that calls them around a computation should read a value
(``float(x.sum())`` or ``x.eval()``) to make the computation happen.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Stream", "Device", "synchronize", "is_available"]


def synchronize() -> None:
    """Waits for queued device work: a no-op (crossover queues none; reads
    wait for the values they need)."""


class Stream:
    """A stand-in for ``cupy.cuda.Stream``: ``Stream.null`` and
    ``Stream()`` synchronize at once and work as context managers."""

    null: "Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False) -> None:
        self.is_null = null

    def synchronize(self) -> None:
        synchronize()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "<crossover.cuda.Stream (lazy evaluation: nothing to synchronize)>"


Stream.null = Stream(null=True)


class Device:
    """A stand-in for ``cupy.cuda.Device``: ``Device().synchronize()``
    returns at once; ``with Device(0):`` does nothing (``crossover.set_device``
    picks where work runs)."""

    def __init__(self, device: int | None = None) -> None:
        self.id = 0 if device is None else int(device)

    def synchronize(self) -> None:
        synchronize()

    def use(self) -> None:
        return None

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def is_available() -> bool:
    """Whether the engine sees a GPU device (``crossover.info()``)."""
    from . import info

    devices = info().get("devices", [])
    return any("gpu" in str(d).lower() or "cuda" in str(d).lower() for d in devices)
