//! Complex elementwise math (complex64/complex128): arithmetic, abs, conj,
//! real, imag, promotion from real arrays and scalars, fusion with
//! library outputs, and the typed errors for what is not defined.

use crate::common::*;
use crossover::fft::{self, Norm};
use crossover::{Array, DType, Error, Generator};
use num_complex::{Complex32, Complex64};

fn zrand(seed: u64, n: usize) -> Vec<Complex64> {
    let mut g = Generator::new(seed);
    let re = g
        .standard_normal(&[n], DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let im = g
        .standard_normal(&[n], DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    re.into_iter()
        .zip(im)
        .map(|(r, i)| Complex64::new(r, i))
        .collect()
}

fn close(a: Complex64, b: Complex64, tol: f64) -> bool {
    (a - b).norm() <= tol * (1.0 + b.norm())
}

#[test]
fn complex128_arithmetic_matches_num_complex() {
    on_every_engine_lenient(|_e| {
        // 5000 points: several chunks, parallel.
        let n = 5000;
        let (x, y) = (zrand(1, n), zrand(2, n));
        let (a, b) = (
            Array::from_vec(x.clone(), &[n]).unwrap(),
            Array::from_vec(y.clone(), &[n]).unwrap(),
        );
        type Reference = Box<dyn Fn(Complex64, Complex64) -> Complex64>;
        let cases: Vec<(Array, Reference)> = vec![
            (a.add(&b).unwrap(), Box::new(|p, q| p + q)),
            (a.sub(&b).unwrap(), Box::new(|p, q| p - q)),
            (a.mul(&b).unwrap(), Box::new(|p, q| p * q)),
            (a.div(&b).unwrap(), Box::new(|p, q| p / q)),
            (
                a.mul(&b).unwrap().add(a.conj().unwrap()).unwrap(),
                Box::new(|p, q| p * q + p.conj()),
            ),
            (
                a.exp().unwrap().mul(b.sqrt().unwrap()).unwrap(),
                Box::new(|p, q| p.exp() * q.sqrt()),
            ),
            (
                a.neg().unwrap().square().unwrap(),
                Box::new(|p, _| (-p) * (-p)),
            ),
        ];
        for (k, (arr, f)) in cases.into_iter().enumerate() {
            assert_eq!(arr.dtype(), DType::C128);
            let got = arr.to_vec::<Complex64>().unwrap();
            for i in 0..n {
                assert!(
                    close(got[i], f(x[i], y[i]), 1e-14),
                    "case {k} at {i}: {} vs {}",
                    got[i],
                    f(x[i], y[i])
                );
            }
        }
        // abs, real, imag give float64.
        for (arr, f) in [
            (
                a.abs().unwrap(),
                (|p: Complex64| p.norm()) as fn(Complex64) -> f64,
            ),
            (a.real().unwrap(), |p| p.re),
            (a.imag().unwrap(), |p| p.im),
        ] {
            assert_eq!(arr.dtype(), DType::F64);
            let got = arr.to_vec::<f64>().unwrap();
            assert!(got
                .iter()
                .zip(&x)
                .all(|(&g, &p)| (g - f(p)).abs() <= 1e-15 * (1.0 + f(p).abs())));
        }
        // Comparisons for equality.
        let eq = a.eq_(&a).unwrap().to_vec::<bool>().unwrap();
        assert!(eq.iter().all(|&e| e));
        let ne = a.ne(&b).unwrap().to_vec::<bool>().unwrap();
        assert!(ne.iter().all(|&e| e));
    });
}

#[test]
fn complex64_rounds_to_single_precision() {
    on_every_engine_lenient(|_e| {
        let n = 3000;
        let x: Vec<Complex32> = zrand(3, n)
            .into_iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect();
        let y: Vec<Complex32> = zrand(4, n)
            .into_iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect();
        let a = Array::from_vec(x.clone(), &[30, 100]).unwrap();
        let b = Array::from_vec(y.clone(), &[30, 100]).unwrap();
        let c = a.mul(&b).unwrap().add(&a).unwrap();
        assert_eq!(c.dtype(), DType::C64);
        let got = c.to_vec::<Complex32>().unwrap();
        for i in 0..n {
            let want = x[i] * y[i] + x[i];
            assert!((got[i] - want).norm() <= 1e-6 * (1.0 + want.norm()), "{i}");
        }
        let r = a.abs().unwrap();
        assert_eq!(r.dtype(), DType::F32);
        // Transposed view of complex input.
        let t = a
            .transpose()
            .unwrap()
            .real()
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(t[1], x[100].re);
    });
}

#[test]
fn promotion_from_real_arrays_and_scalars() {
    on_every_engine_lenient(|_e| {
        let z = Array::from_vec(
            vec![Complex32::new(1.0, 2.0), Complex32::new(-3.0, 0.5)],
            &[2],
        )
        .unwrap();
        let f32s = Array::from_vec(vec![2.0f32, 4.0], &[2]).unwrap();
        let f64s = Array::from_vec(vec![2.0f64, 4.0], &[2]).unwrap();
        let ints = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
        assert_eq!(z.mul(&f32s).unwrap().dtype(), DType::C64);
        assert_eq!(z.mul(&f64s).unwrap().dtype(), DType::C128);
        assert_eq!(z.add(&ints).unwrap().dtype(), DType::C128);
        let w = z.mul(2.5).unwrap();
        assert_eq!(w.dtype(), DType::C64, "weak scalars keep complex64");
        assert_eq!(
            w.to_vec::<Complex32>().unwrap(),
            vec![Complex32::new(2.5, 5.0), Complex32::new(-7.5, 1.25)]
        );
        let v = z.add(&f64s).unwrap().to_vec::<Complex64>().unwrap();
        assert_eq!(v, vec![Complex64::new(3.0, 2.0), Complex64::new(1.0, 0.5)]);
        // Cast real -> complex; real arrays' conj/real/imag.
        let c = f32s
            .cast(DType::C128)
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap();
        assert_eq!(c[1], Complex64::new(4.0, 0.0));
        assert_eq!(
            f32s.conj().unwrap().to_vec::<f32>().unwrap(),
            vec![2.0, 4.0]
        );
        assert_eq!(
            f32s.imag().unwrap().to_vec::<f32>().unwrap(),
            vec![0.0, 0.0]
        );
        // where with complex branches.
        let cond = Array::from_vec(vec![true, false], &[2]).unwrap();
        let sel = Array::where_(&cond, &z, 0.0)
            .unwrap()
            .to_vec::<Complex32>()
            .unwrap();
        assert_eq!(
            sel,
            vec![Complex32::new(1.0, 2.0), Complex32::new(0.0, 0.0)]
        );
        // Zeros and full of a complex dtype.
        let zeros = Array::zeros(&[3], DType::C128)
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap();
        assert_eq!(zeros, vec![Complex64::new(0.0, 0.0); 3]);
    });
}

#[test]
fn complex_results_feed_reductions_and_fft() {
    on_every_engine_lenient(|_e| {
        // |fft(x)|^2 summed = n * sum(x^2) (Parseval), in one fused reduction.
        let n = 4096;
        let x = Generator::new(5).standard_normal(&[n], DType::F64).unwrap();
        x.eval().unwrap();
        let spec = fft::fft(&x, None, -1, Norm::Backward).unwrap();
        let power = spec
            .abs()
            .unwrap()
            .square()
            .unwrap()
            .sum(None, false)
            .unwrap();
        let energy: f64 = x.to_vec::<f64>().unwrap().iter().map(|v| v * v).sum();
        let p = power.item().unwrap();
        assert!(
            (p - n as f64 * energy).abs() < 1e-9 * p,
            "{p} vs {}",
            n as f64 * energy
        );
        // Mean of the real part along an axis.
        let z = Array::from_vec(zrand(6, 600), &[20, 30]).unwrap();
        let m = z
            .real()
            .unwrap()
            .mean(Some(&[1]), false)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let zv = z.to_vec::<Complex64>().unwrap();
        let want: f64 = zv[..30].iter().map(|c| c.re).sum::<f64>() / 30.0;
        assert!((m[0] - want).abs() < 1e-14);
        // A complex elementwise chain between two FFTs.
        let y = fft::ifft(
            &spec.mul(2.0).unwrap().conj().unwrap(),
            None,
            -1,
            Norm::Backward,
        )
        .unwrap();
        let yv = y.to_vec::<Complex64>().unwrap();
        let xv = x.to_vec::<f64>().unwrap();
        // ifft(conj(2 fft(x))) = 2 x[-k] for real x.
        for k in [0usize, 1, 100, n - 1] {
            assert!((yv[k].re - 2.0 * xv[(n - k) % n]).abs() < 1e-10 && yv[k].im.abs() < 1e-10);
        }
    });
}

#[test]
fn undefined_complex_ops_are_typed_errors() {
    on_every_engine_lenient(|_e| {
        let z = Array::from_vec(vec![Complex64::new(1.0, 2.0)], &[1]).unwrap();
        for r in [
            z.lt(&z),
            z.maximum(&z),
            z.floor(),
            z.logical_not(),
            z.cast(DType::F64),
        ] {
            assert!(matches!(r, Err(Error::DType { .. })), "{r:?}");
        }
        assert!(matches!(z.sum(None, false), Err(Error::DType { .. })));
    });
}
