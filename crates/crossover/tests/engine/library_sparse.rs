//! Sparse CSR matrices against dense float64 results: construction,
//! to_dense, transpose, sums, sparse @ sparse, sparse @ dense/vector, and
//! the typed errors for malformed input.

use crate::common::*;
use crossover::sparse::{Csr, Values};
use crossover::{Array, DType, Error, Generator};

fn dense_of(a: &Csr) -> Vec<f64> {
    a.to_dense().unwrap().to_vec_f64().unwrap()
}

fn ref_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p];
            if x != 0.0 {
                for j in 0..n {
                    c[i * n + j] += x * b[p * n + j];
                }
            }
        }
    }
    c
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn check_canonical(a: &Csr) {
    let (p, idx) = (a.indptr(), a.indices());
    assert_eq!(p.len(), a.nrows() + 1);
    assert_eq!(p[a.nrows()], a.nnz());
    for i in 0..a.nrows() {
        let row = &idx[p[i]..p[i + 1]];
        assert!(
            row.windows(2).all(|w| w[0] < w[1]),
            "row {i} sorted and unique"
        );
        assert!(row.iter().all(|&j| (j as usize) < a.ncols()));
    }
}

#[test]
fn triplets_sum_duplicates_and_round_trip() {
    on_every_engine_lenient(|_e| {
        let a = Csr::from_triplets(
            3,
            4,
            &[2, 0, 2, 0, 1],
            &[1, 3, 1, 0, 2],
            &[1.0f64, 2.0, 3.0, 4.0, 5.0],
        )
        .unwrap();
        check_canonical(&a);
        assert_eq!(a.nnz(), 4);
        assert_eq!(
            dense_of(&a),
            vec![4.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, 0.0, 0.0, 4.0, 0.0, 0.0]
        );
        let d = a.to_dense().unwrap();
        assert_eq!(Csr::from_dense(&d).unwrap(), a);
        // Transpose twice is the identity; once matches the dense transpose.
        let t = a.transpose();
        check_canonical(&t);
        assert_eq!(t.shape(), [4, 3]);
        assert_eq!(dense_of(&t), d.transpose().unwrap().to_vec_f64().unwrap());
        assert_eq!(t.transpose(), a);
    });
}

#[test]
fn random_matches_density_and_is_reproducible() {
    on_every_engine_lenient(|_e| {
        for (m, n, density) in [(1, 1, 1.0), (7, 13, 0.3), (1023, 1025, 0.01), (50, 40, 0.0)] {
            let a = Csr::random(m, n, density, 42, DType::F64).unwrap();
            check_canonical(&a);
            assert_eq!(a.nnz(), (density * (m * n) as f64).round() as usize);
            assert_eq!(a, Csr::random(m, n, density, 42, DType::F64).unwrap());
            if let Values::F64(v) = a.values() {
                assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)));
            }
        }
        let a = Csr::random(100, 100, 0.05, 1, DType::F32).unwrap();
        let b = Csr::random(100, 100, 0.05, 2, DType::F32).unwrap();
        assert_ne!(a, b, "different seeds differ");
        assert_eq!(a.dtype(), DType::F32);
    });
}

#[test]
fn sums_along_axes() {
    on_every_engine_lenient(|_e| {
        let a = Csr::random(37, 23, 0.2, 3, DType::F64).unwrap();
        let d = dense_of(&a);
        let total: f64 = d.iter().sum();
        assert!((a.sum(None).unwrap().item().unwrap() - total).abs() < 1e-12);
        let cols = a.sum(Some(0)).unwrap().to_vec::<f64>().unwrap();
        let rows = a.sum(Some(1)).unwrap().to_vec::<f64>().unwrap();
        for j in 0..23 {
            let want: f64 = (0..37).map(|i| d[i * 23 + j]).sum();
            assert!((cols[j] - want).abs() < 1e-12);
        }
        for i in 0..37 {
            let want: f64 = d[i * 23..(i + 1) * 23].iter().sum();
            assert!((rows[i] - want).abs() < 1e-12);
        }
        assert!(matches!(a.sum(Some(2)), Err(Error::Axis { .. })));
    });
}

#[test]
fn spgemm_matches_dense() {
    on_every_engine_lenient(|_e| {
        for (m, k, n, density) in [
            (1, 1, 1, 1.0),
            (7, 5, 9, 0.4),
            (300, 257, 129, 0.05),
            (129, 1025, 200, 0.02),
        ] {
            let a = Csr::random(m, k, density, 10 + m as u64, DType::F64).unwrap();
            let b = Csr::random(k, n, density, 20 + n as u64, DType::F64).unwrap();
            let c = a.matmul(&b).unwrap();
            check_canonical(&c);
            assert_eq!(c.shape(), [m, n]);
            let want = ref_matmul(&dense_of(&a), &dense_of(&b), m, k, n);
            assert!(max_abs_diff(&dense_of(&c), &want) < 1e-12, "{m}x{k}x{n}");
            // No stored zeros (SciPy drops exact zeros too).
            let Values::F64(v) = c.values() else { panic!() };
            assert!(v.iter().all(|&x| x != 0.0));
        }
        // Dense rows (scan path) and f32 with mixed dtypes.
        let a = Csr::random(64, 64, 0.5, 5, DType::F32).unwrap();
        let b = Csr::random(64, 64, 0.5, 6, DType::F64).unwrap();
        let c = a.matmul(&b).unwrap();
        assert_eq!(c.dtype(), DType::F64);
        let want = ref_matmul(&dense_of(&a), &dense_of(&b), 64, 64, 64);
        assert!(max_abs_diff(&dense_of(&c), &want) < 1e-12);
        let c32 = a.matmul(&a).unwrap();
        assert_eq!(c32.dtype(), DType::F32);
        let want = ref_matmul(&dense_of(&a), &dense_of(&a), 64, 64, 64);
        assert!(max_abs_diff(&dense_of(&c32), &want) < 1e-4);
    });
}

#[test]
fn spmm_and_spmv_match_dense() {
    on_every_engine(|_e| {
        for (m, k, n) in [(1, 1, 1), (7, 13, 3), (1023, 257, 5), (200, 1025, 1)] {
            let a = Csr::random(m, k, 0.05, 30 + m as u64, DType::F64).unwrap();
            let x = Generator::new(31)
                .standard_normal(&[k, n], DType::F64)
                .unwrap();
            let y = a.matmul_dense(&x).unwrap();
            assert_eq!(y.shape(), &[m, n]);
            let want = ref_matmul(&dense_of(&a), &x.to_vec::<f64>().unwrap(), m, k, n);
            assert!(max_abs_diff(&y.to_vec::<f64>().unwrap(), &want) < 1e-12);
            // A vector.
            let v = Generator::new(32)
                .standard_normal(&[k], DType::F64)
                .unwrap();
            let y = a.matmul_dense(&v).unwrap();
            assert_eq!(y.shape(), &[m]);
            let want = ref_matmul(&dense_of(&a), &v.to_vec::<f64>().unwrap(), m, k, 1);
            assert!(max_abs_diff(&y.to_vec::<f64>().unwrap(), &want) < 1e-12);
        }
        // A transposed dense view, f32, and the result feeding fusion.
        let a = Csr::random(40, 30, 0.2, 33, DType::F32).unwrap();
        let xt = Generator::new(34)
            .standard_normal(&[6, 30], DType::F32)
            .unwrap();
        let x = xt.transpose().unwrap();
        let y = a.matmul_dense(&x).unwrap();
        assert_eq!(y.dtype(), DType::F32);
        let xv = x.to_vec_f64().unwrap();
        let want = ref_matmul(&dense_of(&a), &xv, 40, 30, 6);
        assert!(max_abs_diff(&y.to_vec_f64().unwrap(), &want) < 1e-4);
        let s = y
            .mul(2.0)
            .unwrap()
            .sum(None, false)
            .unwrap()
            .item()
            .unwrap();
        assert!((s - 2.0 * want.iter().sum::<f64>()).abs() < 1e-2);
    });
}

#[test]
fn malformed_csr_is_a_typed_error() {
    on_every_engine_lenient(|_e| {
        let bad = [
            // Unsorted column indices.
            Csr::from_parts(1, 4, vec![0, 2], vec![3, 1], vec![1.0f64, 2.0]),
            // Duplicate column index.
            Csr::from_parts(1, 4, vec![0, 2], vec![1, 1], vec![1.0f64, 2.0]),
            // Out of range.
            Csr::from_parts(2, 3, vec![0, 1, 2], vec![0, 3], vec![1.0f64, 2.0]),
            // indptr of the wrong length, not starting at 0, decreasing, wrong end.
            Csr::from_parts(2, 3, vec![0, 2], vec![0, 1], vec![1.0f64, 2.0]),
            Csr::from_parts(2, 3, vec![1, 1, 2], vec![0, 1], vec![1.0f64, 2.0]),
            Csr::from_parts(2, 3, vec![0, 2, 1], vec![0, 1], vec![1.0f64, 2.0]),
            Csr::from_parts(2, 3, vec![0, 1, 1], vec![0, 1], vec![1.0f64, 2.0]),
            // Values and indices differ.
            Csr::from_parts(1, 3, vec![0, 2], vec![0, 1], vec![1.0f64]),
            // Triplets out of range or of different lengths.
            Csr::from_triplets(2, 2, &[0, 2], &[0, 0], &[1.0f64, 1.0]),
            Csr::from_triplets(2, 2, &[0], &[0, 1], &[1.0f64]),
        ];
        for (i, r) in bad.into_iter().enumerate() {
            match r {
                Err(Error::InvalidArgument { op, msg }) => {
                    assert!(op == "csr" && !msg.is_empty(), "{i}")
                }
                other => panic!("case {i}: expected a typed error, got {other:?}"),
            }
        }
        let e = Csr::from_parts(1, 4, vec![0, 2], vec![3, 1], vec![1.0f64, 2.0]).unwrap_err();
        assert!(e.to_string().contains("not sorted"), "{e}");
        let e = Csr::from_parts(2, 3, vec![0, 1, 2], vec![0, 3], vec![1.0f64, 2.0]).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(matches!(
            Csr::random(3, 3, 1.5, 0, DType::F64),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            Csr::random(3, 3, 0.5, 0, DType::I32),
            Err(Error::DType { .. })
        ));
        // Shape mismatches in products.
        let a = Csr::random(4, 5, 0.5, 1, DType::F64).unwrap();
        let b = Csr::random(4, 5, 0.5, 2, DType::F64).unwrap();
        assert!(matches!(
            a.matmul(&b),
            Err(Error::Shape {
                op: "sparse_matmul",
                ..
            })
        ));
        let x = Array::from_vec(vec![1.0f64; 4], &[4]).unwrap();
        assert!(matches!(a.matmul_dense(&x), Err(Error::Shape { .. })));
        let x3 = Array::from_vec(vec![1.0f64; 5], &[5, 1, 1]).unwrap();
        assert!(matches!(a.matmul_dense(&x3), Err(Error::Shape { .. })));
        assert!(matches!(Csr::from_dense(&x), Err(Error::Shape { .. })));
    });
}
