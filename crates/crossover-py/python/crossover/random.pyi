"""Random numbers: Philox4x32-10, NumPy's Generator methods, lazy results."""

from typing import Any, Sequence, overload

import numpy.typing as npt

from . import ndarray

_Size = int | Sequence[int]

class Generator:
    """Random numbers from a Philox4x32-10 counter-based generator. Results
    are lazy crossover arrays generated inside the kernels that use them;
    ``size=None`` returns one Python float. Same numbers for a seed on every
    device; not NumPy's PCG64 stream."""

    @property
    def seed(self) -> int:
        """The seed this generator was made with."""
    @overload
    def random(self, size: None = None, dtype: npt.DTypeLike = None) -> float: ...
    @overload
    def random(self, size: _Size, dtype: npt.DTypeLike = None) -> ndarray: ...
    def random(self, size: Any = None, dtype: npt.DTypeLike = None) -> Any:
        """Uniform values on [0, 1) (float64, or float32 with ``dtype``)."""
    def standard_normal(self, size: Any = None, dtype: npt.DTypeLike = None) -> Any:
        """Standard normal values."""
    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, dtype: npt.DTypeLike = None) -> Any:
        """Uniform values on [low, high)."""
    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, dtype: npt.DTypeLike = None) -> Any:
        """Normal values with mean ``loc`` and standard deviation ``scale``."""

def default_rng(seed: int | Generator | None = None) -> Generator:
    """A new Philox generator; ``seed=None`` draws a fresh seed."""
