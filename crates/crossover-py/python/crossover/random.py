"""Random numbers: ``default_rng(seed)`` returns a Philox4x32-10 generator
with NumPy's ``Generator`` methods (``random``, ``standard_normal``,
``uniform``, ``normal``; an extra ``dtype=`` picks float32 or float64).

Results are lazy crossover arrays, generated inside the fused kernel that
uses them. The numbers are the same for a seed on every device, but they are
not NumPy's PCG64 stream.
"""

from ._crossover import Generator, default_rng

__all__ = ["Generator", "default_rng"]
