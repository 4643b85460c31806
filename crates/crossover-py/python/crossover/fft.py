"""Fast Fourier transforms on crossover arrays, like ``numpy.fft`` (any
size, float32 stays complex64/float32, float64 gives complex128/float64,
``norm`` in ``"backward"``, ``"ortho"``, ``"forward"``). Plans are cached;
2-D transforms use all cores.
"""

from __future__ import annotations

from typing import Any

from . import _crossover as _C

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2"]


def _axes_ok(axes: Any) -> None:
    if tuple(axes) not in ((-2, -1),):
        raise ValueError(f"2-D transforms run over the last two axes only (axes=(-2, -1)), not {axes}")


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return _C.fft1("fft", a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return _C.fft1("ifft", a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return _C.fft1("rfft", a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    return _C.fft1("irfft", a, n, axis, norm)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    _axes_ok(axes)
    return _C.fft2("fft2", a, s, norm)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    _axes_ok(axes)
    return _C.fft2("ifft2", a, s, norm)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    _axes_ok(axes)
    return _C.fft2("rfft2", a, s, norm)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None) -> Any:
    _axes_ok(axes)
    return _C.fft2("irfft2", a, None if s is None else tuple(s), norm)


for _f in (fft, ifft, rfft, irfft, fft2, ifft2, rfft2, irfft2):
    _f.__doc__ = f"Like ``numpy.fft.{_f.__name__}``; returns a crossover array."
