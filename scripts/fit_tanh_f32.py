"""Fits the float32 tanh tables of crates/crossover/src/cpu/math32_tanh512.rs.

tanh(a) on each of 32 half-binades [2^-12 * 2^(i/2)...) (the interval is
picked by a's exponent and first fraction bit) as a degree-6 polynomial in
r = a - lo: least squares in relative error on 600 Chebyshev nodes (close
to minimax at this degree), in the scaled variable r / width (the widths
are powers of two, so scaling back is exact), with the coefficients
rounded to float32 one at a time from c0 and the higher ones refitted to
absorb each rounding. Prints the Rust tables; worst relative error of the
rounded polynomials (in f64) in units of 2^-24 goes to stderr.

    python3 scripts/fit_tanh_f32.py > /tmp/tables.rs
"""

import sys

import numpy as np

DEGREE = 6
# Past 9.1 float32 tanh rounds to 1: the kernel clamps there, and the last
# fitted interval [8, 12) is fitted up to 9.25.
CLAMP_FIT = 9.25


def fit(lo: float, hi: float) -> list[float]:
    k = np.arange(600)
    t = np.cos(np.pi * (k + 0.5) / 600)
    a = (lo + hi) / 2 + (hi - lo) / 2 * t
    y = np.tanh(a)
    r = a - lo
    w = 1 / y
    width = hi - lo
    v = np.vander(r / width, DEGREE + 1, increasing=True)
    coefs: list[float] = []
    for j in range(DEGREE + 1):
        rest = y - sum(c * r**i for i, c in enumerate(coefs))
        d, *_ = np.linalg.lstsq(v[:, j:] * w[:, None], rest * w, rcond=None)
        coefs.append(float(np.float32(d[0] / width**j)))
    return coefs


def literal(v: float) -> str:
    s = repr(float(np.float32(v)))
    return s if ("e" in s or "." in s) else s + ".0"


def main() -> None:
    rows = []
    for e in range(-12, 4):
        for h in range(2):
            lo = 2.0**e * (1 + h / 2)
            hi = 2.0**e * (1 + (h + 1) / 2)
            rows.append((lo, hi, fit(lo, min(hi, CLAMP_FIT)) if lo < CLAMP_FIT else None))
    # [12, 16) is never reached (|x| is clamped at 9.1): a copy of [8, 12).
    rows[-1] = rows[-2]
    worst = 0.0
    for lo, hi, c in rows[:-1]:
        a = np.linspace(lo, min(hi, CLAMP_FIT), 5001)
        p = sum(np.float64(ck) * (a - lo) ** k for k, ck in enumerate(c))
        worst = max(worst, float(np.max(np.abs(p - np.tanh(a)) / np.tanh(a))) / 2**-24)
    print(f"worst relative error {worst:.3f} x 2^-24", file=sys.stderr)
    print("/// Start of each interval.")
    print("const TANH_LO: [f32; 32] = [")
    print("    " + ", ".join(literal(lo) for lo, _, _ in rows) + ",")
    print("];")
    print("/// Row k: the coefficient of r^k of each interval.")
    print("const TANH_C: [[f32; 32]; 7] = [")
    for k in range(DEGREE + 1):
        print("    [" + ", ".join(literal(c[k]) for _, _, c in rows) + "],")
    print("];")


if __name__ == "__main__":
    main()
