"""Fits the float64 arcsin polynomial of crates/crossover/src/cpu/math64_asin512.rs.

P(z) = (asin(sqrt z) - sqrt z) / (z sqrt z) on z in [0, 1/4] (z = x^2 for
|x| < 1/2, (1 - |x|)/2 above), degree 12: least squares in relative error
on 200 Chebyshev nodes at 200 bits (mpmath), coefficients rounded to
float64. Prints the Rust constant; the worst relative error of the rounded
polynomial (checked at 2,001 points) goes to stderr as a power of two
(about 2^-52.9; the term s z P(z) is at most 1/20 of the result, so this
adds at most 2^-57 to it).

    python3 scripts/fit_asin_f64.py   # needs mpmath (pip install mpmath)
"""

import sys

import mpmath as mp

mp.mp.prec = 200
DEGREE = 12
HI = mp.mpf(1) / 4


def target(z):
    if z == 0:
        return mp.mpf(1) / 6
    s = mp.sqrt(z)
    return (mp.asin(s) - s) / (z * s)


def main() -> None:
    n = 200
    zs = [HI / 2 + HI / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    ys = [target(z) for z in zs]
    a = mp.matrix(n, DEGREE + 1)
    b = mp.matrix(n, 1)
    for i, (z, y) in enumerate(zip(zs, ys)):
        for j in range(DEGREE + 1):
            a[i, j] = z**j / y
        b[i] = 1
    c = mp.lu_solve(a.T * a, a.T * b)
    coefs = [float(c[j]) for j in range(DEGREE + 1)]
    worst = mp.mpf(0)
    for k in range(2001):
        z = HI * k / 2000
        p = mp.mpf(0)
        for v in reversed(coefs):
            p = p * z + v
        worst = max(worst, abs(p / target(z) - 1))
    print(f"worst relative error 2^{float(mp.log(worst, 2)):.1f}", file=sys.stderr)
    body = ",\n".join(f"    {v!r}" for v in reversed(coefs))
    print(f"pub(super) const ASIN_P: [f64; {DEGREE + 1}] = [\n{body},\n];")


if __name__ == "__main__":
    main()
