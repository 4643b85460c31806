//! Dense linear algebra against float64 references: matmul (2-D, batched,
//! broadcast, transposed views, 1-D operands), solve, solve_spd, cholesky,
//! qr, inv, det, svd, svdvals, eigh, and their typed errors.

use crate::common::*;
use crossover::{linalg, Array, DType, Error, Generator, SliceArg};
use num_complex::Complex64;

fn randn(seed: u64, shape: &[usize], dtype: DType) -> Array {
    let a = Generator::new(seed).standard_normal(shape, dtype).unwrap();
    a.eval().unwrap();
    a
}

fn vals(a: &Array) -> Vec<f64> {
    a.cast(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// Naive row-major matmul in f64.
fn ref_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p];
            for j in 0..n {
                c[i * n + j] += x * b[p * n + j];
            }
        }
    }
    c
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut t = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            t[j * m + i] = a[i * n + j];
        }
    }
    t
}

fn norm(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn rel_err(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let d: Vec<f64> = got.iter().zip(want).map(|(a, b)| a - b).collect();
    norm(&d) / norm(want).max(1e-300)
}

fn tol(d: DType) -> f64 {
    match d {
        DType::F32 | DType::C64 => 1e-4,
        _ => 1e-11,
    }
}

#[test]
fn matmul_matches_reference_on_edge_sizes() {
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for (m, k, n) in [
                (1, 1, 1),
                (7, 5, 3),
                (1, 7, 1),
                (33, 1, 17),
                (65, 129, 31),
                (130, 70, 257),
            ] {
                let a = randn(m as u64 * 31 + k as u64, &[m, k], dtype);
                let b = randn(n as u64 * 17 + 5, &[k, n], dtype);
                let c = a.matmul(&b).unwrap();
                assert_eq!(c.shape(), &[m, n]);
                assert_eq!(c.dtype(), dtype);
                let want = ref_matmul(&vals(&a), &vals(&b), m, k, n);
                let e = rel_err(&vals(&c), &want);
                assert!(e < tol(dtype), "{dtype} {m}x{k}x{n}: rel err {e}");
            }
        }
    });
}

#[test]
fn matmul_row_blocks_match_reference() {
    // Single products between 64^3 and 512^3 multiply-adds run as row
    // blocks on the calling thread and the pool: sizes around the block
    // edges, non-square, and with a transposed operand.
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for (m, k, n) in [
                (64, 64, 64),
                (65, 63, 129),
                (100, 100, 100),
                (129, 17, 200),
                (257, 96, 15),
                (31, 512, 300),
                (384, 129, 65),
            ] {
                let a = randn(m as u64 + 7, &[m, k], dtype);
                let bt = randn(n as u64 + 11, &[n, k], dtype);
                let b = bt.transpose().unwrap();
                let want = ref_matmul(&vals(&a), &vals(&b), m, k, n);
                let e = rel_err(&vals(&a.matmul(&b).unwrap()), &want);
                assert!(
                    e < tol(dtype),
                    "{dtype} {m}x{k}x{n} (b transposed): rel err {e}"
                );
                let bc = randn(n as u64 + 13, &[k, n], dtype);
                let want = ref_matmul(&vals(&a), &vals(&bc), m, k, n);
                let e = rel_err(&vals(&a.matmul(&bc).unwrap()), &want);
                assert!(e < tol(dtype), "{dtype} {m}x{k}x{n}: rel err {e}");
            }
        }
    });
}

#[test]
fn matmul_large_odd_sizes() {
    on_every_engine(|_e| {
        // Crosses faer's blocking and threading thresholds.
        for (m, k, n) in [(1023, 257, 129), (129, 1025, 7)] {
            let a = randn(1, &[m, k], DType::F64);
            let b = randn(2, &[k, n], DType::F64);
            let want = ref_matmul(&vals(&a), &vals(&b), m, k, n);
            let e = rel_err(&vals(&a.matmul(&b).unwrap()), &want);
            assert!(e < 1e-12, "{m}x{k}x{n}: {e}");
            let a32 = a.cast(DType::F32).unwrap();
            let b32 = b.cast(DType::F32).unwrap();
            let e = rel_err(&vals(&a32.matmul(&b32).unwrap()), &want);
            assert!(e < 1e-5, "f32 {m}x{k}x{n}: {e}");
        }
    });
}

#[test]
fn matmul_reads_transposed_and_sliced_views() {
    on_every_engine(|_e| {
        let (m, k, n) = (37, 23, 41);
        let at = randn(3, &[k, m], DType::F64); // a = at^T
        let b = randn(4, &[k, n], DType::F64);
        let a = at.transpose().unwrap();
        let want = ref_matmul(&transpose(&vals(&at), k, m), &vals(&b), m, k, n);
        let c = a.matmul(&b).unwrap();
        assert!(rel_err(&vals(&c), &want) < 1e-12);
        // Transposed right operand and a reversed-step slice.
        let bt = randn(5, &[n, k], DType::F32);
        let c = a
            .cast(DType::F32)
            .unwrap()
            .matmul(&bt.transpose().unwrap())
            .unwrap();
        let want = ref_matmul(
            &transpose(&vals(&at), k, m),
            &transpose(&vals(&bt), n, k),
            m,
            k,
            n,
        );
        assert!(rel_err(&vals(&c), &want) < 1e-5);
        let big = randn(6, &[20, 30], DType::F64);
        let s = big
            .slice(&[
                SliceArg::Range {
                    start: None,
                    stop: None,
                    step: -2,
                },
                SliceArg::range(3, 13),
            ])
            .unwrap(); // (10, 10), negative row stride
        let sv = vals(&s);
        let c = s.matmul(&s).unwrap();
        assert!(rel_err(&vals(&c), &ref_matmul(&sv, &sv, 10, 10, 10)) < 1e-12);
    });
}

#[test]
fn matmul_batched_broadcasting() {
    on_every_engine(|_e| {
        // (2, 1, 4, 3) @ (5, 3, 6) -> (2, 5, 4, 6)
        let a = randn(7, &[2, 1, 4, 3], DType::F64);
        let b = randn(8, &[5, 3, 6], DType::F64);
        let c = a.matmul(&b).unwrap();
        assert_eq!(c.shape(), &[2, 5, 4, 6]);
        let (av, bv, cv) = (vals(&a), vals(&b), vals(&c));
        for i in 0..2 {
            for j in 0..5 {
                let want = ref_matmul(
                    &av[i * 12..(i + 1) * 12],
                    &bv[j * 18..(j + 1) * 18],
                    4,
                    3,
                    6,
                );
                let off = (i * 5 + j) * 24;
                assert!(rel_err(&cv[off..off + 24], &want) < 1e-12, "batch {i},{j}");
            }
        }
        // A 2-D operand broadcasts against a batch.
        let w = randn(9, &[3, 2], DType::F64);
        let c = b
            .permute(&[0, 2, 1])
            .unwrap()
            .matmul(&randn(10, &[3, 2], DType::F64))
            .unwrap();
        assert_eq!(c.shape(), &[5, 6, 2]);
        let _ = w;
        // Many small matrices (parallel over the batch).
        let a = randn(11, &[300, 3, 3], DType::F32);
        let b = randn(12, &[300, 3, 3], DType::F32);
        let cv = vals(&a.matmul(&b).unwrap());
        let (av, bv) = (vals(&a), vals(&b));
        for i in [0, 1, 150, 299] {
            let want = ref_matmul(&av[i * 9..i * 9 + 9], &bv[i * 9..i * 9 + 9], 3, 3, 3);
            assert!(rel_err(&cv[i * 9..i * 9 + 9], &want) < 1e-5);
        }
    });
}

#[test]
fn matmul_vectors_follow_numpy() {
    on_every_engine(|_e| {
        let a = randn(13, &[4, 3], DType::F64);
        let v = randn(14, &[3], DType::F64);
        let u = randn(15, &[4], DType::F64);
        assert_eq!(a.matmul(&v).unwrap().shape(), &[4]);
        assert_eq!(u.matmul(&a).unwrap().shape(), &[3]);
        let dot = v.matmul(&v).unwrap();
        assert_eq!(dot.shape(), &[] as &[usize]);
        let vv = vals(&v);
        let want: f64 = vv.iter().map(|x| x * x).sum();
        assert!((dot.item().unwrap() - want).abs() < 1e-12);
        let av = vals(&a);
        let want = ref_matmul(&av, &vv, 4, 3, 1);
        assert!(rel_err(&vals(&a.matmul(&v).unwrap()), &want) < 1e-12);
        // Stack @ vector.
        let s = randn(16, &[2, 4, 3], DType::F64);
        assert_eq!(s.matmul(&v).unwrap().shape(), &[2, 4]);
        // Mixed dtypes promote; integers compute in float64.
        let i = Array::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
        let f = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[2, 2]).unwrap();
        let c = i.matmul(&f).unwrap();
        assert_eq!(c.dtype(), DType::F64);
        assert_eq!(c.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    });
}

#[test]
fn matmul_feeds_fusion_and_empty_inner() {
    on_every_engine(|_e| {
        let a = randn(17, &[8, 5], DType::F64);
        let b = randn(18, &[5, 6], DType::F64);
        let s = a
            .matmul(&b)
            .unwrap()
            .mul(2.0)
            .unwrap()
            .sum(None, false)
            .unwrap();
        let want: f64 = ref_matmul(&vals(&a), &vals(&b), 8, 5, 6)
            .iter()
            .sum::<f64>()
            * 2.0;
        assert!((s.item().unwrap() - want).abs() < 1e-10);
        let kernels = crossover::lower(&[a.matmul(&b).unwrap().sum(None, false).unwrap()]).unwrap();
        assert_eq!(kernels.len(), 2, "matmul kernel + sum kernel");
        let z = Array::from_vec(Vec::<f32>::new(), &[3, 0]).unwrap();
        let w = Array::from_vec(Vec::<f32>::new(), &[0, 4]).unwrap();
        assert_eq!(
            z.matmul(&w).unwrap().to_vec::<f32>().unwrap(),
            vec![0.0; 12]
        );
    });
}

#[test]
fn matmul_complex() {
    on_every_engine_lenient(|_e| {
        let re = randn(19, &[6, 6], DType::F64);
        let im = randn(20, &[6, 6], DType::F64);
        let (rv, iv) = (vals(&re), vals(&im));
        let z: Vec<Complex64> = rv
            .iter()
            .zip(&iv)
            .map(|(&r, &i)| Complex64::new(r, i))
            .collect();
        let a = Array::from_vec(z.clone(), &[6, 6]).unwrap();
        let c = a.matmul(&a).unwrap().to_vec::<Complex64>().unwrap();
        for i in 0..6 {
            for j in 0..6 {
                let want: Complex64 = (0..6).map(|p| z[i * 6 + p] * z[p * 6 + j]).sum();
                assert!((c[i * 6 + j] - want).norm() < 1e-12);
            }
        }
    });
}

#[test]
fn matmul_errors() {
    on_every_engine_lenient(|_e| {
        let a = randn(21, &[3, 4], DType::F32);
        let b = randn(22, &[5, 2], DType::F32);
        let e = a.matmul(&b).unwrap_err();
        assert!(matches!(e, Error::Shape { op: "matmul", .. }), "{e}");
        assert!(e.to_string().contains("inner dimensions"), "{e}");
        let s = Array::scalar(1.0, DType::F32).unwrap();
        assert!(matches!(
            a.matmul(&s),
            Err(Error::Shape { op: "matmul", .. })
        ));
        let x = randn(23, &[2, 3, 4], DType::F32);
        let y = randn(24, &[3, 4, 2], DType::F32);
        assert!(matches!(
            x.matmul(&y),
            Err(Error::Broadcast { op: "matmul", .. })
        ));
        // Bool products are NumPy's bool matmul now (see hostile.rs); complex
        // times bool promotes.
    });
}

// ---- factorisations ------------------------------------------------------

/// A well-conditioned random matrix: random + n * I.
fn well_conditioned(seed: u64, n: usize, dtype: DType) -> Array {
    let r = randn(seed, &[n, n], DType::F64);
    let mut v = vals(&r);
    for i in 0..n {
        v[i * n + i] += n as f64;
    }
    Array::from_vec(v, &[n, n]).unwrap().cast(dtype).unwrap()
}

/// A random SPD matrix: R R^T + n I.
fn spd(seed: u64, n: usize, dtype: DType) -> Array {
    let r = randn(seed, &[n, n], DType::F64);
    let rv = vals(&r);
    let mut v = ref_matmul(&rv, &transpose(&rv, n, n), n, n, n);
    for i in 0..n {
        v[i * n + i] += n as f64;
    }
    Array::from_vec(v, &[n, n]).unwrap().cast(dtype).unwrap()
}

#[test]
fn solve_and_inv_residuals() {
    on_every_engine_lenient(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for n in [1usize, 7, 64, 129] {
                let a = well_conditioned(n as u64, n, dtype);
                let b = randn(100 + n as u64, &[n], dtype);
                let x = linalg::solve(&a, &b).unwrap();
                assert_eq!(x.shape(), &[n]);
                let ax = ref_matmul(&vals(&a), &vals(&x), n, n, 1);
                assert!(
                    rel_err(&ax, &vals(&b)) < tol(dtype) * 10.0,
                    "{dtype} solve n={n}"
                );
                // Multiple right-hand sides, through a transposed view of a.
                let bm = randn(200 + n as u64, &[n, 3], dtype);
                let at = a.transpose().unwrap();
                let x = linalg::solve(&at, &bm).unwrap();
                let atv = transpose(&vals(&a), n, n);
                let ax = ref_matmul(&atv, &vals(&x), n, n, 3);
                assert!(
                    rel_err(&ax, &vals(&bm)) < tol(dtype) * 10.0,
                    "{dtype} solve^T n={n}"
                );
                // inv: A inv(A) = I.
                let ai = linalg::inv(&a).unwrap();
                let prod = ref_matmul(&vals(&a), &vals(&ai), n, n, n);
                let mut eye = vec![0.0; n * n];
                (0..n).for_each(|i| eye[i * n + i] = 1.0);
                assert!(
                    rel_err(&prod, &eye) < tol(dtype) * 10.0,
                    "{dtype} inv n={n}"
                );
                // SPD solve.
                let s = spd(300 + n as u64, n, dtype);
                let x = linalg::solve_spd(&s, &b).unwrap();
                let sx = ref_matmul(&vals(&s), &vals(&x), n, n, 1);
                assert!(
                    rel_err(&sx, &vals(&b)) < tol(dtype) * 10.0,
                    "{dtype} solve_spd n={n}"
                );
            }
        }
    });
}

#[test]
fn solve_batched() {
    on_every_engine_lenient(|_e| {
        let a = randn(30, &[4, 5, 5], DType::F64)
            .add(
                Array::from_vec(
                    {
                        let mut e = vec![0.0; 25];
                        (0..5).for_each(|i| e[i * 6] = 5.0);
                        e
                    },
                    &[5, 5],
                )
                .unwrap(),
            )
            .unwrap();
        let b = randn(31, &[5, 2], DType::F64); // broadcast over the batch
        let x = linalg::solve(&a, &b).unwrap();
        assert_eq!(x.shape(), &[4, 5, 2]);
        let (av, xv, bv) = (vals(&a), vals(&x), vals(&b));
        for i in 0..4 {
            let ax = ref_matmul(&av[i * 25..i * 25 + 25], &xv[i * 10..i * 10 + 10], 5, 5, 2);
            assert!(rel_err(&ax, &bv) < 1e-12);
        }
    });
}

#[test]
fn det_matches_reference() {
    on_every_engine_lenient(|_e| {
        let a = Array::from_vec(
            vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0],
            &[3, 3],
        )
        .unwrap();
        assert!((linalg::det(&a).unwrap().item().unwrap() + 3.0).abs() < 1e-12);
        // det(A) of a triangular matrix with a permutation.
        let p = Array::from_vec(vec![0.0f32, 2.0, 3.0, 0.0], &[2, 2]).unwrap();
        assert!((linalg::det(&p).unwrap().item().unwrap() + 6.0).abs() < 1e-6);
        // Singular: 0, no error.
        let s = Array::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(linalg::det(&s).unwrap().item().unwrap(), 0.0);
        // Batched: det of the product is the product of dets.
        let x = randn(32, &[3, 7, 7], DType::F64);
        let d = vals(&linalg::det(&x).unwrap());
        let xx = x.matmul(&x).unwrap();
        let dd = vals(&linalg::det(&xx).unwrap());
        for i in 0..3 {
            assert!((dd[i] - d[i] * d[i]).abs() < 1e-9 * dd[i].abs().max(1.0));
        }
    });
}

/// A determinant past float32's range is +-inf as NumPy's (which works in
/// double and rounds once), complex64 included: its own arithmetic would
/// give NaN parts (seen on the CPU and on an H200, 2026-11-26).
#[test]
fn float32_and_complex64_determinants_past_the_range_are_infinite_as_numpy() {
    on_every_engine_lenient(|_e| {
        let n = 33;
        // 33 I with the first entry negative: -(33^33), about -1.3e50.
        let mut v = vec![0.0f64; n * n];
        for i in 0..n {
            v[i * n + i] = if i == 0 { -33.0 } else { 33.0 };
        }
        let a = Array::from_vec(v, &[n, n]).unwrap();
        let f = linalg::det(&a.cast(DType::F32).unwrap()).unwrap();
        assert_eq!(f.to_vec_f64().unwrap(), vec![f64::NEG_INFINITY]);
        // (1 + i) 33 I: (33 (1 + i))^33 = 33^33 2^16.5 e^(i 33 pi/4), whose
        // parts are +-inf in complex64 with the signs of cos and sin.
        let mut cv = vec![Complex64::new(0.0, 0.0); n * n];
        for i in 0..n {
            cv[i * n + i] = Complex64::new(33.0, 33.0);
        }
        let c = Array::from_vec(cv, &[n, n])
            .unwrap()
            .cast(DType::C64)
            .unwrap();
        let z = linalg::det(&c).unwrap().cast(DType::C128).unwrap();
        let z = z.to_vec::<Complex64>().unwrap();
        let angle = 33.0 * std::f64::consts::FRAC_PI_4;
        assert_eq!(z.len(), 1);
        assert_eq!(z[0].re, f64::INFINITY.copysign(angle.cos()), "{}", z[0]);
        assert_eq!(z[0].im, f64::INFINITY.copysign(angle.sin()), "{}", z[0]);
        // In range, complex128 is unchanged: the exact 33^33 2^16.5 phase.
        let w = linalg::det(&c.cast(DType::C128).unwrap()).unwrap();
        let w = w.to_vec::<Complex64>().unwrap()[0];
        let want = Complex64::from_polar(33f64.powi(33) * 2f64.powf(16.5), angle);
        assert!((w - want).norm() <= 1e-12 * want.norm(), "{w} vs {want}");
    });
}

#[test]
fn cholesky_reconstructs() {
    on_every_engine_lenient(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for n in [1usize, 7, 100] {
                let a = spd(400 + n as u64, n, dtype);
                let l = linalg::cholesky(&a).unwrap();
                let lv = vals(&l);
                for i in 0..n {
                    for j in i + 1..n {
                        assert_eq!(lv[i * n + j], 0.0, "upper triangle is zero");
                    }
                }
                let llt = ref_matmul(&lv, &transpose(&lv, n, n), n, n, n);
                assert!(rel_err(&llt, &vals(&a)) < tol(dtype), "{dtype} n={n}");
            }
        }
    });
}

fn check_orthonormal_columns(q: &[f64], m: usize, r: usize, t: f64) {
    let qtq = ref_matmul(&transpose(q, m, r), q, r, m, r);
    let mut eye = vec![0.0; r * r];
    (0..r).for_each(|i| eye[i * r + i] = 1.0);
    let e = rel_err(&qtq, &eye);
    assert!(e < t, "orthogonality {e}");
}

#[test]
fn qr_reconstructs() {
    on_every_engine_lenient(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for (m, n) in [(1, 1), (7, 7), (50, 20), (20, 50), (129, 65)] {
                let a = randn(500 + m as u64, &[m, n], dtype);
                let (q, r) = linalg::qr(&a).unwrap();
                let k = m.min(n);
                assert_eq!(q.shape(), &[m, k]);
                assert_eq!(r.shape(), &[k, n]);
                let (qv, rv) = (vals(&q), vals(&r));
                for i in 0..k {
                    for j in 0..i.min(n) {
                        assert_eq!(rv[i * n + j], 0.0);
                    }
                }
                assert!(rel_err(&ref_matmul(&qv, &rv, m, k, n), &vals(&a)) < tol(dtype));
                check_orthonormal_columns(&qv, m, k, tol(dtype));
            }
        }
    });
}

#[test]
fn svd_reconstructs() {
    on_every_engine_lenient(|_e| {
        for dtype in [DType::F32, DType::F64] {
            // 45..=100 columns: the bidiagonal divide-and-conquer from 32 (faer
            // splits from 128 by default); 129: the split at every level.
            for (m, n) in [
                (1, 1),
                (7, 7),
                (60, 25),
                (25, 60),
                (70, 45),
                (100, 100),
                (130, 129),
            ] {
                let a = randn(600 + m as u64 + n as u64, &[m, n], dtype);
                let (u, s, vt) = linalg::svd(&a).unwrap();
                let k = m.min(n);
                assert_eq!(
                    (u.shape(), s.shape(), vt.shape()),
                    (&[m, k][..], &[k][..], &[k, n][..])
                );
                assert_eq!(s.dtype(), dtype);
                let (uv, sv, vtv) = (vals(&u), vals(&s), vals(&vt));
                assert!(sv.windows(2).all(|w| w[0] >= w[1]) && sv.iter().all(|&x| x >= 0.0));
                let mut us = uv.clone();
                for i in 0..m {
                    for j in 0..k {
                        us[i * k + j] *= sv[j];
                    }
                }
                let back = ref_matmul(&us, &vtv, m, k, n);
                assert!(rel_err(&back, &vals(&a)) < tol(dtype), "{dtype} {m}x{n}");
                check_orthonormal_columns(&uv, m, k, tol(dtype));
                check_orthonormal_columns(&transpose(&vtv, k, n), n, k, tol(dtype));
                let sv2 = vals(&linalg::svdvals(&a).unwrap());
                assert!(rel_err(&sv2, &sv) < tol(dtype));
            }
        }
        // Transposed view input.
        let a = randn(700, &[9, 5], DType::F64);
        let s1 = vals(&linalg::svdvals(&a).unwrap());
        let s2 = vals(&linalg::svdvals(&a.transpose().unwrap()).unwrap());
        assert!(rel_err(&s1, &s2) < 1e-12);
    });
}

#[test]
fn eigh_reconstructs() {
    on_every_engine_lenient(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for n in [1usize, 7, 90] {
                let a = spd(800 + n as u64, n, dtype).sub(n as f64 * 1.5).unwrap(); // indefinite
                let (w, v) = linalg::eigh(&a).unwrap();
                let (wv, vv) = (vals(&w), vals(&v));
                assert!(wv.windows(2).all(|p| p[0] <= p[1]));
                let av = ref_matmul(&vals(&a), &vv, n, n, n);
                let mut vw = vv.clone();
                for i in 0..n {
                    for j in 0..n {
                        vw[i * n + j] *= wv[j];
                    }
                }
                assert!(rel_err(&av, &vw) < tol(dtype) * 10.0, "{dtype} n={n}");
                check_orthonormal_columns(&vv, n, n, tol(dtype));
            }
        }
    });
}

#[test]
fn factorisation_errors_are_typed() {
    on_every_engine_lenient(|_e| {
        let singular = Array::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        let b = Array::from_vec(vec![1.0f64, 1.0], &[2]).unwrap();
        let e = linalg::solve(&singular, &b).unwrap().eval().unwrap_err();
        assert!(matches!(e, Error::Numerical { op: "solve", .. }), "{e}");
        assert!(e.to_string().contains("singular"), "{e}");
        let e = linalg::inv(&singular).unwrap().eval().unwrap_err();
        assert!(matches!(e, Error::Numerical { op: "inv", .. }), "{e}");
        // Not positive definite.
        let indef = Array::from_vec(vec![1.0f64, 2.0, 2.0, 1.0], &[2, 2]).unwrap();
        let e = linalg::solve_spd(&indef, &b).unwrap().eval().unwrap_err();
        assert!(
            matches!(
                e,
                Error::Numerical {
                    op: "solve_spd",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("positive definite"), "{e}");
        let e = linalg::cholesky(&indef).unwrap().eval().unwrap_err();
        assert!(matches!(e, Error::Numerical { op: "cholesky", .. }), "{e}");
        // Non-finite input to each factorisation.
        let nan = Array::from_vec(vec![1.0f64, f64::NAN, 0.0, 1.0], &[2, 2]).unwrap();
        let inf = Array::from_vec(vec![1.0f32, 0.0, f32::INFINITY, 1.0], &[2, 2]).unwrap();
        for m in [&nan, &inf] {
            let outs: Vec<Array> = vec![
                linalg::solve(m, &b).unwrap(),
                linalg::solve_spd(m, &b).unwrap(),
                linalg::cholesky(m).unwrap(),
                linalg::inv(m).unwrap(),
                linalg::det(m).unwrap(),
                linalg::qr(m).unwrap().0,
                linalg::svd(m).unwrap().1,
                linalg::svdvals(m).unwrap(),
                linalg::eigh(m).unwrap().0,
            ];
            for o in outs {
                let e = o.eval().unwrap_err();
                assert!(matches!(e, Error::Numerical { .. }), "{e}");
                assert!(e.to_string().contains("NaN or infinity"), "{e}");
            }
        }
        // Non-finite right-hand side.
        let bn = Array::from_vec(vec![1.0f64, f64::NAN], &[2]).unwrap();
        assert!(matches!(
            linalg::solve(&indef, &bn).unwrap().eval(),
            Err(Error::Numerical { .. })
        ));
        // Shapes.
        let rect = randn(900, &[3, 4], DType::F64);
        assert!(matches!(
            linalg::solve(&rect, &b),
            Err(Error::Shape { op: "solve", .. })
        ));
        assert!(matches!(
            linalg::inv(&rect),
            Err(Error::Shape { op: "inv", .. })
        ));
        assert!(matches!(
            linalg::eigh(&rect),
            Err(Error::Shape { op: "eigh", .. })
        ));
        assert!(matches!(linalg::cholesky(&rect), Err(Error::Shape { .. })));
        assert!(matches!(linalg::det(&rect), Err(Error::Shape { .. })));
        let v = randn(901, &[3], DType::F64);
        assert!(matches!(
            linalg::svd(&v),
            Err(Error::Shape { op: "svd", .. })
        ));
        assert!(matches!(linalg::qr(&v), Err(Error::Shape { op: "qr", .. })));
        let b3 = randn(902, &[3], DType::F64);
        let sq = randn(903, &[2, 2], DType::F64);
        let e = linalg::solve(&sq, &b3).unwrap_err();
        assert!(matches!(e, Error::Shape { op: "solve", .. }), "{e}");
    });
}

/// An n x n complex128 matrix from real and imaginary parts (row-major).
fn complex_square(re: &[f64], im: &[f64], n: usize) -> (Array, Vec<Complex64>) {
    let z: Vec<Complex64> = re
        .iter()
        .zip(im)
        .map(|(&r, &i)| Complex64::new(r, i))
        .collect();
    (Array::from_vec(z.clone(), &[n, n]).unwrap(), z)
}

/// `svd(a)` of the n x n complex128 `z`: singular values sorted and
/// non-negative, and U diag(s) Vt within `tol` of every element.
fn assert_complex_svd_reconstructs(a: &Array, z: &[Complex64], n: usize, tol: f64) {
    let (u, s, vt) = linalg::svd(a).unwrap();
    assert_eq!(s.dtype(), DType::F64);
    let (u, s, vt) = (
        u.to_vec::<Complex64>().unwrap(),
        s.to_vec::<f64>().unwrap(),
        vt.to_vec::<Complex64>().unwrap(),
    );
    assert!(s.windows(2).all(|w| w[0] >= w[1]) && s[n - 1] >= 0.0);
    for i in 0..n {
        for j in 0..n {
            let back: Complex64 = (0..n).map(|p| u[i * n + p] * s[p] * vt[p * n + j]).sum();
            assert!((back - z[i * n + j]).norm() < tol, "[{i},{j}]");
        }
    }
}

/// A complex128 SVD wide enough for the bidiagonal divide-and-conquer (from
/// 32 columns): U diag(s) Vt gives A back, s sorted and non-negative.
#[test]
fn complex_svd_in_divide_and_conquer_reconstructs() {
    on_every_engine_lenient(|_e| {
        let n = 48;
        let re = vals(&randn(960, &[n, n], DType::F64));
        let im = vals(&randn(961, &[n, n], DType::F64));
        let (a, z) = complex_square(&re, &im, n);
        let scale: f64 = z.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert_complex_svd_reconstructs(&a, &z, n, 1e-12 * n as f64 * scale);
    });
}

#[test]
fn complex_solve_and_svd() {
    on_every_engine_lenient(|_e| {
        let n = 6;
        let re = vals(&well_conditioned(950, n, DType::F64));
        let im = vals(&randn(951, &[n, n], DType::F64));
        let (a, z) = complex_square(&re, &im, n);
        let bz: Vec<Complex64> = (0..n).map(|i| Complex64::new(i as f64, 1.0)).collect();
        let b = Array::from_vec(bz.clone(), &[n]).unwrap();
        let x = linalg::solve(&a, &b)
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap();
        for i in 0..n {
            let ax: Complex64 = (0..n).map(|j| z[i * n + j] * x[j]).sum();
            assert!((ax - bz[i]).norm() < 1e-10);
        }
        // Hermitian positive definite: A^H A + I.
        let mut h = vec![Complex64::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..n {
                h[i * n + j] = (0..n).map(|p| z[p * n + i].conj() * z[p * n + j]).sum();
            }
            h[i * n + i] += 1.0;
        }
        let ha = Array::from_vec(h.clone(), &[n, n]).unwrap();
        let x = linalg::solve_spd(&ha, &b)
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap();
        for i in 0..n {
            let ax: Complex64 = (0..n).map(|j| h[i * n + j] * x[j]).sum();
            assert!((ax - bz[i]).norm() < 1e-9, "{i}: {ax} vs {}", bz[i]);
        }
        let l = linalg::cholesky(&ha)
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap();
        for i in 0..n {
            for j in 0..n {
                let llh: Complex64 = (0..n).map(|p| l[i * n + p] * l[j * n + p].conj()).sum();
                assert!((llh - h[i * n + j]).norm() < 1e-9);
            }
        }
        let (w, v) = linalg::eigh(&ha).unwrap();
        assert_eq!(w.dtype(), DType::F64);
        let (w, v) = (w.to_vec::<f64>().unwrap(), v.to_vec::<Complex64>().unwrap());
        for i in 0..n {
            for j in 0..n {
                let av: Complex64 = (0..n).map(|p| h[i * n + p] * v[p * n + j]).sum();
                assert!((av - v[i * n + j] * w[j]).norm() < 1e-8);
            }
        }
        assert_complex_svd_reconstructs(&a, &z, n, 1e-9);
        let d = linalg::det(&a).unwrap().to_vec::<Complex64>().unwrap()[0];
        let d2 = linalg::det(&a.matmul(&a).unwrap())
            .unwrap()
            .to_vec::<Complex64>()
            .unwrap()[0];
        assert!((d * d - d2).norm() < 1e-8 * d2.norm());
    });
}
