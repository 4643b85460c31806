//! Complex functions with C99's special values (Annex G), as NumPy returns
//! them through the C library: infinities and NaNs in either part, signed
//! zeros, and the finite inputs where num-complex's textbook formulas
//! overflow into NaN (`tanh(1000)`, `cosh(800)`, `sqrt` of huge values).
//! Finite inputs elsewhere keep the formulas of [`super::complex`].
//!
//! The odd and conjugate-symmetric functions are written for the first
//! quadrant and take the signs back from the input (`copysign`), as the
//! standard's tables are given for it.

use num_complex::Complex64;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

fn finite(z: Complex64) -> bool {
    z.re.is_finite() && z.im.is_finite()
}

/// `i * z`.
fn times_i(z: Complex64) -> Complex64 {
    c(-z.im, z.re)
}

/// `-i * z`.
fn times_minus_i(z: Complex64) -> Complex64 {
    c(z.im, -z.re)
}

/// `sinh(z)`.
pub(super) fn sinh(z: Complex64) -> Complex64 {
    let (x, y) = (z.re, z.im);
    if finite(z) {
        if y == 0.0 {
            return c(x.sinh(), y);
        }
        return c(x.sinh() * y.cos(), x.cosh() * y.sin());
    }
    if x == 0.0 {
        return c(x, NAN); // sinh(±0 + i inf or i NaN) = ±0 + i NaN
    }
    if y == 0.0 {
        return c(x, y); // ±inf or NaN, with the zero kept
    }
    if x.is_infinite() {
        if y.is_finite() {
            return c(x * y.cos(), INF * y.sin());
        }
        // C99 leaves the sign of the infinity open; glibc (and so NumPy)
        // returns +inf.
        return c(INF, NAN);
    }
    c(NAN, NAN)
}

/// `cosh(z)`.
pub(super) fn cosh(z: Complex64) -> Complex64 {
    let (x, y) = (z.re, z.im);
    if finite(z) {
        if y == 0.0 {
            return c(x.cosh(), x.signum() * y);
        }
        return c(x.cosh() * y.cos(), x.sinh() * y.sin());
    }
    if x == 0.0 {
        return c(NAN, 0.0); // cosh(±0 + i inf or i NaN) = NaN ± i0
    }
    if y == 0.0 {
        return c(x.abs(), if x.is_nan() { y } else { x.signum() * y });
    }
    if x.is_infinite() {
        if y.is_finite() {
            return c(INF * y.cos(), x * y.sin());
        }
        return c(INF, NAN);
    }
    c(NAN, NAN)
}

/// `tanh(z)`, by Kahan's formula for finite inputs (no inf/inf at large
/// real parts).
pub(super) fn tanh(z: Complex64) -> Complex64 {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(NAN, if y == 0.0 { y } else { NAN });
    }
    if x.is_infinite() {
        let im = if y.is_finite() { (2.0 * y).sin() } else { 1.0 };
        return c(x.signum(), 0.0f64.copysign(im));
    }
    if !y.is_finite() {
        return c(if x == 0.0 { x } else { NAN }, NAN);
    }
    if x.abs() > 22.0 {
        // tanh(x) is ±1 to double precision; the imaginary part underflows.
        let e = (-2.0 * x.abs()).exp();
        return c(x.signum(), 4.0 * y.sin() * y.cos() * e);
    }
    let t = y.tan();
    let beta = 1.0 + t * t;
    let s = x.sinh();
    let rho = (1.0 + s * s).sqrt();
    let denom = 1.0 + beta * s * s;
    c(beta * rho * s / denom, t / denom)
}

/// `sin(z) = -i sinh(i z)`.
pub(super) fn sin(z: Complex64) -> Complex64 {
    if z.im.is_infinite() && !z.re.is_finite() {
        return c(NAN, INF); // the sign C99 leaves open, as glibc's csin
    }
    times_minus_i(sinh(times_i(z)))
}

/// `exp(z)` where num-complex's `exp(x) * cis(y)` makes `inf * 0 = NaN`
/// (`None` elsewhere).
pub(super) fn exp_special(z: Complex64) -> Option<Complex64> {
    let (x, y) = (z.re, z.im);
    if y == 0.0 && !x.is_nan() {
        Some(c(x.exp(), y))
    } else if x == f64::NEG_INFINITY && y.is_infinite() {
        Some(c(0.0, 0.0f64.copysign(y)))
    } else {
        None
    }
}

/// `cos(z) = cosh(i z)`.
pub(super) fn cos(z: Complex64) -> Complex64 {
    cosh(times_i(z))
}

/// `tan(z) = -i tanh(i z)`.
pub(super) fn tan(z: Complex64) -> Complex64 {
    times_minus_i(tanh(times_i(z)))
}

/// `sqrt(z)`, the principal root, scaled so huge parts do not overflow.
pub(super) fn sqrt(z: Complex64) -> Complex64 {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return c(INF, y);
    }
    if x.is_nan() {
        return c(NAN, NAN);
    }
    if x.is_infinite() {
        if y.is_nan() {
            return if x > 0.0 { c(x, NAN) } else { c(NAN, INF) };
        }
        return if x > 0.0 {
            c(x, 0.0f64.copysign(y))
        } else {
            c(0.0, INF.copysign(y))
        };
    }
    if y.is_nan() {
        return c(NAN, NAN);
    }
    if x == 0.0 && y == 0.0 {
        return c(0.0, y);
    }
    // Scale by 4^k so |x| + hypot(x, y) cannot overflow or lose
    // subnormal digits; the root scales by 2^k.
    let big = x.abs().max(y.abs());
    let (scale, unscale) = if big > 1e300 {
        (0.25, 2.0)
    } else if big < 1e-300 {
        (4.0f64.powi(100), 0.5f64.powi(100))
    } else {
        (1.0, 1.0)
    };
    let (sx, sy) = (x * scale, y * scale);
    let t = ((sx.abs() + sx.hypot(sy)) / 2.0).sqrt();
    if sx >= 0.0 {
        c(t * unscale, sy / (2.0 * t) * unscale)
    } else {
        c(sy.abs() / (2.0 * t) * unscale, t.copysign(sy) * unscale)
    }
}

/// `expm1(z)` for non-finite `z` and a zero imaginary part (`None`
/// otherwise): `exp(z) - 1` by C99's `cexp` table.
pub(super) fn expm1_special(z: Complex64) -> Option<Complex64> {
    let (x, y) = (z.re, z.im);
    Some(if y == 0.0 && !x.is_nan() {
        c(x.exp_m1(), y)
    } else if finite(z) {
        return None;
    } else if x.is_nan() {
        c(NAN, if y == 0.0 { y } else { NAN })
    } else if x == f64::INFINITY {
        if y.is_finite() {
            c(INF * y.cos(), INF * y.sin())
        } else {
            c(INF, NAN)
        }
    } else if x == f64::NEG_INFINITY {
        c(
            -1.0,
            if y.is_finite() {
                0.0f64.copysign(y.sin())
            } else {
                0.0
            },
        )
    } else {
        c(NAN, NAN) // finite x, infinite or NaN y
    })
}

/// `1 - z`, `1 + z`, `z - 1` and `z + 1` part by part, so the imaginary
/// part keeps its signed zero (Kahan: the branch cuts depend on it).
fn one_minus(z: Complex64) -> Complex64 {
    c(1.0 - z.re, -z.im)
}
fn one_plus(z: Complex64) -> Complex64 {
    c(1.0 + z.re, z.im)
}
fn minus_one(z: Complex64) -> Complex64 {
    c(z.re - 1.0, z.im)
}

/// `acos(z)` by Kahan's formula ("Branch cuts for complex elementary
/// functions", 1987): accurate at every magnitude, where the logarithm
/// form cancels (|z| of 1e7 and more, or a negative real part).
pub(super) fn acos(z: Complex64) -> Complex64 {
    if let Some(w) = acos_special(z) {
        return w;
    }
    let (s1, s2) = (sqrt(one_minus(z)), sqrt(one_plus(z)));
    c(2.0 * s1.re.atan2(s2.re), libm::asinh((s2.conj() * s1).im))
}

/// `asin(z)` by Kahan's formula.
pub(super) fn asin(z: Complex64) -> Complex64 {
    if let Some(w) = asin_special(z) {
        return w;
    }
    let (s1, s2) = (sqrt(one_minus(z)), sqrt(one_plus(z)));
    c(z.re.atan2((s1 * s2).re), libm::asinh((s1.conj() * s2).im))
}

/// `acosh(z)` by Kahan's formula.
pub(super) fn acosh(z: Complex64) -> Complex64 {
    if let Some(w) = acosh_special(z) {
        return w;
    }
    let (s1, s2) = (sqrt(minus_one(z)), sqrt(one_plus(z)));
    c(libm::asinh((s1.conj() * s2).re), 2.0 * s1.im.atan2(s2.re))
}

/// `asinh(z) = -i asin(i z)`.
pub(super) fn asinh(z: Complex64) -> Complex64 {
    times_minus_i(asin(times_i(z)))
}

/// Puts back the signs of an odd, conjugate-symmetric function computed
/// on `(|x|, |y|)`.
fn odd_signs(w: Complex64, z: Complex64) -> Complex64 {
    c(w.re.copysign(z.re), w.im.copysign(z.im))
}

/// `asinh(z)` for non-finite `z` (`None` for finite ones).
pub(super) fn asinh_special(z: Complex64) -> Option<Complex64> {
    if finite(z) {
        return None;
    }
    let (x, y) = (z.re.abs(), z.im.abs());
    let w = if x.is_nan() {
        if y.is_infinite() {
            c(INF, NAN)
        } else if y == 0.0 {
            c(NAN, 0.0)
        } else {
            c(NAN, NAN)
        }
    } else if x.is_infinite() {
        if y.is_nan() {
            c(INF, NAN)
        } else if y.is_infinite() {
            c(INF, FRAC_PI_4)
        } else {
            c(INF, 0.0)
        }
    } else if y.is_infinite() {
        c(INF, FRAC_PI_2)
    } else {
        c(NAN, NAN) // finite x, NaN y
    };
    Some(odd_signs(w, z))
}

/// `asin(z) = -i asinh(i z)` for non-finite `z`.
pub(super) fn asin_special(z: Complex64) -> Option<Complex64> {
    asinh_special(times_i(z)).map(times_minus_i)
}

/// `atanh(z)` for the inputs of C99's table (non-finite parts, and ±1).
pub(super) fn atanh_special(z: Complex64) -> Option<Complex64> {
    let (x, y) = (z.re.abs(), z.im.abs());
    let w = if finite(z) {
        if x == 1.0 && y == 0.0 {
            c(INF, 0.0)
        } else {
            return None;
        }
    } else if x.is_nan() {
        if y.is_infinite() {
            c(0.0, FRAC_PI_2)
        } else {
            c(NAN, NAN)
        }
    } else if x.is_infinite() {
        c(0.0, if y.is_nan() { NAN } else { FRAC_PI_2 })
    } else if y.is_infinite() {
        c(0.0, FRAC_PI_2)
    } else if x == 0.0 {
        c(0.0, NAN) // ±0 + i NaN
    } else {
        c(NAN, NAN)
    };
    Some(odd_signs(w, z))
}

/// `atanh(z)`: C99's table, then `log1p` and `atan2` forms that keep
/// the tiny real part near the imaginary axis at large |z| and the sign
/// of a zero on the branch cuts (the logarithm form loses both).
pub(super) fn atanh(z: Complex64) -> Complex64 {
    if let Some(w) = atanh_special(z) {
        return w;
    }
    let (x, y) = (z.re, z.im);
    let h = x.hypot(y);
    if h > 1e150 {
        // atanh(z) = 1/z + O(1/z^3) in the real part; ±pi/2 beside it.
        return c((x / h) / h, FRAC_PI_2.copysign(y));
    }
    let one_minus_x = 1.0 - x;
    c(
        (4.0 * x / (one_minus_x * one_minus_x + y * y)).ln_1p() / 4.0,
        (2.0 * y).atan2(one_minus_x * (1.0 + x) - y * y) / 2.0,
    )
}

/// `atan(z) = -i atanh(i z)`.
pub(super) fn atan(z: Complex64) -> Complex64 {
    times_minus_i(atanh(times_i(z)))
}

/// `acosh(z)` for non-finite `z` (and ±0 + i NaN).
pub(super) fn acosh_special(z: Complex64) -> Option<Complex64> {
    let (x, y) = (z.re, z.im.abs());
    let w = if finite(z) {
        return None;
    } else if x.is_nan() {
        c(if y.is_infinite() { INF } else { NAN }, NAN)
    } else if x.is_infinite() {
        let im = if y.is_nan() {
            NAN
        } else if y.is_infinite() {
            if x > 0.0 {
                FRAC_PI_4
            } else {
                3.0 * FRAC_PI_4
            }
        } else if x > 0.0 {
            0.0
        } else {
            PI
        };
        c(INF, im)
    } else if y.is_infinite() {
        c(INF, FRAC_PI_2)
    } else if x == 0.0 {
        c(NAN, FRAC_PI_2) // ±0 + i NaN
    } else {
        c(NAN, NAN)
    };
    Some(c(w.re, w.im.copysign(z.im)))
}

/// `acos(z)` for non-finite `z` (and ±0 + i NaN).
pub(super) fn acos_special(z: Complex64) -> Option<Complex64> {
    let (x, y) = (z.re, z.im.abs());
    let w = if finite(z) {
        return None;
    } else if x.is_nan() {
        c(NAN, if y.is_infinite() { -INF } else { NAN })
    } else if x.is_infinite() {
        let re = if y.is_nan() {
            NAN
        } else if y.is_infinite() {
            if x > 0.0 {
                FRAC_PI_4
            } else {
                3.0 * FRAC_PI_4
            }
        } else if x > 0.0 {
            0.0
        } else {
            PI
        };
        c(re, -INF)
    } else if y.is_infinite() {
        c(FRAC_PI_2, -INF)
    } else if x == 0.0 {
        c(FRAC_PI_2, NAN) // ±0 + i NaN
    } else {
        c(NAN, NAN)
    };
    // acos(conj z) = conj(acos z); the table is for Im z >= +0.
    Some(c(w.re, if z.im.is_sign_negative() { -w.im } else { w.im }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
    }

    /// Values and signs of zero, from C99 Annex G's tables.
    #[test]
    fn annex_g_cases() {
        type Case = (fn(Complex64) -> Complex64, (f64, f64), (f64, f64));
        let cases: &[Case] = &[
            (sinh, (0.0, INF), (0.0, NAN)),
            (sinh, (INF, 0.0), (INF, 0.0)),
            (sinh, (NAN, 0.0), (NAN, 0.0)),
            (cosh, (INF, 0.0), (INF, 0.0)),
            (cosh, (0.0, NAN), (NAN, 0.0)),
            (tanh, (INF, 1.0), (1.0, 0.0)),
            (tanh, (INF, INF), (1.0, 0.0)),
            (tanh, (0.0, INF), (0.0, NAN)),
            (tanh, (NAN, 0.0), (NAN, 0.0)),
            (tanh, (1000.0, 1.0), (1.0, 0.0)),
            (tanh, (-1000.0, -1.0), (-1.0, -0.0)),
            (sqrt, (INF, 2.0), (INF, 0.0)),
            (sqrt, (-INF, NAN), (NAN, INF)),
            (sqrt, (-INF, -2.0), (0.0, -INF)),
            (sqrt, (NAN, INF), (INF, INF)),
            (sqrt, (-4.0, 0.0), (0.0, 2.0)),
            (sqrt, (-4.0, -0.0), (0.0, -2.0)),
        ];
        for &(f, (x, y), (re, im)) in cases {
            let w = f(c(x, y));
            assert!(
                same(w.re, re) && same(w.im, im),
                "({x}, {y}) -> {w}, want ({re}, {im})"
            );
        }
        for ((x, y), (re, im)) in [
            ((INF, 0.0), (INF, 0.0)),
            ((-INF, INF), (-1.0, 0.0)),
            ((-INF, NAN), (-1.0, 0.0)),
            ((NAN, -0.0), (NAN, -0.0)),
            ((-0.0, 0.0), (-0.0, 0.0)),
        ] {
            let w = expm1_special(c(x, y)).unwrap();
            assert!(same(w.re, re) && same(w.im, im), "expm1({x}, {y}) -> {w}");
        }
        let w = acos_special(c(-INF, INF)).unwrap();
        assert!(same(w.re, 3.0 * FRAC_PI_4) && same(w.im, -INF), "{w}");
        let w = acosh_special(c(-INF, -1.0)).unwrap();
        assert!(same(w.re, INF) && same(w.im, -PI), "{w}");
        let w = atanh_special(c(-1.0, 0.0)).unwrap();
        assert!(same(w.re, -INF) && same(w.im, 0.0), "{w}");
        let w = asinh_special(c(-2.0, -INF)).unwrap();
        assert!(same(w.re, -INF) && same(w.im, -FRAC_PI_2), "{w}");
        assert_eq!(atanh_special(c(0.5, 0.5)), None);
    }

    /// The finite formulas agree with num-complex's where those do not
    /// overflow.
    #[test]
    fn finite_inputs_match_the_textbook_formulas() {
        for &(x, y) in &[
            (0.3, -1.2),
            (-2.5, 0.7),
            (4.0, 3.0),
            (1e-8, 2.0),
            (-0.2, 1.5), // off the imaginary axis: atan's branch cut, where num-complex ignores -0
        ] {
            let z = c(x, y);
            for (got, want) in [
                (sinh(z), z.sinh()),
                (cosh(z), z.cosh()),
                (tanh(z), z.tanh()),
                (sin(z), z.sin()),
                (cos(z), z.cos()),
                (tan(z), z.tan()),
                (atanh(z), z.atanh()),
                (atan(z), z.atan()),
                (sqrt(z), z.sqrt()),
            ] {
                assert!(
                    (got - want).norm() <= 1e-14 * want.norm().max(1.0),
                    "{z}: {got} vs {want}"
                );
            }
        }
        // Where the logarithm forms cancel (references: glibc through NumPy).
        let close =
            |got: Complex64, re: f64, im: f64| (got - c(re, im)).norm() <= 1e-14 * c(re, im).norm();
        let w = acos(c(1.0, -78_252_592.0));
        assert!(close(w, 1.5707963140157672, 18.868599691996515), "{w}");
        let w = asinh(c(-67_108_864.0, 1.0));
        assert!(close(w, -18.714973875118524, 1.4901161193847655e-08), "{w}");
        let w = acosh(c(-2.0, -0.0));
        assert!(close(w, 1.3169578969248166, -PI), "{w}");
        let w = acos(c(2.0, 0.0));
        assert!(close(w, 0.0, -1.3169578969248166), "{w}");
        let w = asin(c(-10_000.0, 0.001));
        assert!(close(w, -1.570796226794896, 9.903487550036132), "{w}");
        let w = atan(c(0.0, -3.0));
        assert!(close(w, FRAC_PI_2, -0.34657359027997264), "{w}");
        let w = atanh(c(0.5, 1e8));
        assert!(close(w, 4.999999999999999e-17, 1.5707963167948966), "{w}");
        assert!((w.re - 4.999999999999999e-17).abs() < 1e-30, "{w}");
        let w = atanh(c(3.0, -0.0));
        assert!(close(w, 0.34657359027997264, -FRAC_PI_2), "{w}");
        let huge = sqrt(c(1e308, 1e308));
        assert!(huge.re.is_finite() && (huge * huge - c(1e308, 1e308)).norm() < 1e295);
    }
}
