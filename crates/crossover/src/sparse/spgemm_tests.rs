//! The CPU kernel against a per-row reference that sums in the same order
//! (bit for bit) and a dense float64 product (within rounding), for every
//! task split, on both row paths (bitmap scan and sorted list).

use super::*;
use crate::dtype::DType;
use crate::sparse::Values;
use std::collections::BTreeMap;

/// A random matrix with values in (-1, 1), signs from a hash of the
/// position (so sums cancel sometimes).
fn signed(m: usize, n: usize, density: f64, seed: u64) -> Csr {
    let r = Csr::random(m, n, density, seed, DType::F64).unwrap();
    let Values::F64(v) = r.values() else {
        unreachable!()
    };
    let v: Vec<f64> = v
        .iter()
        .enumerate()
        .map(|(p, &x)| {
            let h = (p as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63;
            if h == 1 {
                -x
            } else {
                x
            }
        })
        .collect();
    let idx = r.indices().iter().map(|&j| j as usize).collect();
    Csr::from_parts(m, n, r.indptr().to_vec(), idx, v).unwrap()
}

/// `c`'s values as f64.
fn values_f64(c: &Csr) -> Vec<f64> {
    match c.values() {
        Values::F32(v) => v.iter().map(|&x| x as f64).collect(),
        Values::F64(v) => v.clone(),
    }
}

/// Each row summed in the kernel's order (a's entries, then b's), exact
/// zeros dropped: the kernel's bits.
fn ordered_reference<T: SparseValue>(a: &CsrData, av: &[T], b: &CsrData, bv: &[T]) -> Csr {
    let mut indptr = vec![0usize];
    let (mut indices, mut values) = (Vec::new(), Vec::new());
    for i in 0..a.nrows {
        let mut row: BTreeMap<u32, T> = BTreeMap::new();
        let (p0, p1) = (a.indptr[i], a.indptr[i + 1]);
        for (&k, &x) in a.indices[p0..p1].iter().zip(&av[p0..p1]) {
            let (q0, q1) = (b.indptr[k as usize], b.indptr[k as usize + 1]);
            for (&j, &y) in b.indices[q0..q1].iter().zip(&bv[q0..q1]) {
                *row.entry(j).or_default() += x * y;
            }
        }
        for (j, v) in row {
            if v != T::default() {
                indices.push(j);
                values.push(v);
            }
        }
        indptr.push(indices.len());
    }
    Csr::new_unchecked(a.nrows, b.ncols, indptr, indices, T::wrap(values))
}

/// The dense float64 product of `a` and `b`.
fn dense_reference(a: &Csr, b: &Csr) -> Vec<f64> {
    let (m, n) = (a.nrows(), b.ncols());
    let (av, bv) = (values_f64(a), values_f64(b));
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        let (p0, p1) = (a.indptr()[i], a.indptr()[i + 1]);
        for (&k, &x) in a.indices()[p0..p1].iter().zip(&av[p0..p1]) {
            let (q0, q1) = (b.indptr()[k as usize], b.indptr()[k as usize + 1]);
            for (&j, &y) in b.indices()[q0..q1].iter().zip(&bv[q0..q1]) {
                c[i * n + j as usize] += x * y;
            }
        }
    }
    c
}

fn check_canonical(c: &Csr) {
    let (p, idx) = (c.indptr(), c.indices());
    assert_eq!(p.len(), c.nrows() + 1);
    assert_eq!(p[c.nrows()], c.nnz());
    assert_eq!(c.values().len(), c.nnz());
    for i in 0..c.nrows() {
        let row = &idx[p[i]..p[i + 1]];
        assert!(row.windows(2).all(|w| w[0] < w[1]), "row {i} sorted");
        assert!(row.iter().all(|&j| (j as usize) < c.ncols()));
    }
}

/// Every split gives the ordered reference's bits; the float64 dense
/// product agrees within `tol` (relative to the sum of magnitudes, 1).
fn check_all_splits(a: &Csr, b: &Csr, tol: f64, what: &str) {
    let (ad, bd) = (&a.data, &b.data);
    let counts = RowCounts::of(ad, bd);
    let run = |tasks| match (&ad.values, &bd.values) {
        (Values::F32(av), Values::F32(bv)) => spgemm_tasks(ad, av, bd, bv, &counts, tasks),
        (Values::F64(av), Values::F64(bv)) => spgemm_tasks(ad, av, bd, bv, &counts, tasks),
        _ => unreachable!(),
    };
    let want = match (&ad.values, &bd.values) {
        (Values::F32(av), Values::F32(bv)) => ordered_reference(ad, av, bd, bv),
        (Values::F64(av), Values::F64(bv)) => ordered_reference(ad, av, bd, bv),
        _ => unreachable!(),
    };
    let one = run(1);
    check_canonical(&one);
    assert_eq!(one.indptr(), want.indptr(), "{what}: row pointers");
    assert_eq!(one.indices(), want.indices(), "{what}: columns");
    let bits = |c: &Csr| -> Vec<u64> { values_f64(c).iter().map(|x| x.to_bits()).collect() };
    assert_eq!(bits(&one), bits(&want), "{what}: values");
    for tasks in [2, 3, 7, 64, ad.nrows + 5] {
        let got = run(tasks);
        assert_eq!(got, one, "{what}: {tasks} tasks");
    }
    assert_eq!(spgemm_cpu_any(a, b, &counts), one, "{what}: default split");
    // Against the dense float64 product: every stored entry, and zero
    // where nothing is stored.
    let dense = dense_reference(a, b);
    let n = b.ncols();
    let mut seen = vec![false; dense.len()];
    let v = values_f64(&one);
    for i in 0..one.nrows() {
        let (p0, p1) = (one.indptr()[i], one.indptr()[i + 1]);
        for (&j, &x) in one.indices()[p0..p1].iter().zip(&v[p0..p1]) {
            let at = i * n + j as usize;
            seen[at] = true;
            assert!((x - dense[at]).abs() <= tol, "{what}: ({i}, {at})");
        }
    }
    for (at, &d) in dense.iter().enumerate() {
        assert!(seen[at] || d.abs() <= tol, "{what}: missing entry {at}");
    }
}

fn spgemm_cpu_any(a: &Csr, b: &Csr, counts: &RowCounts) -> Csr {
    let (ad, bd) = (&a.data, &b.data);
    match (&ad.values, &bd.values) {
        (Values::F32(av), Values::F32(bv)) => spgemm_cpu(ad, av, bd, bv, counts),
        (Values::F64(av), Values::F64(bv)) => spgemm_cpu(ad, av, bd, bv, counts),
        _ => unreachable!(),
    }
}

#[test]
fn every_split_gives_the_ordered_bits_on_both_row_paths() {
    // (m, k, n, density): widths around bitmap words (1, 63, 64, 65, 130),
    // sparse rows of wide products (the sorted-list path), dense rows (the
    // bitmap path), rectangular shapes, rows without entries.
    let cases = [
        (1, 1, 1, 1.0),
        (9, 5, 63, 0.3),
        (64, 64, 64, 0.05),
        (65, 30, 65, 0.2),
        (130, 40, 130, 0.1),
        (300, 200, 5000, 0.003),
        (257, 100, 9, 0.03),
        (700, 500, 700, 0.01),
        (3, 1000, 7, 0.05),
        (200, 200, 200, 0.3),
    ];
    for (m, k, n, density) in cases {
        let a = signed(m, k, density, (m * 31 + k) as u64);
        let b = signed(k, n, density, (k * 17 + n) as u64);
        // Terms are below 1 in magnitude: float64 sums within 1e-12.
        check_all_splits(&a, &b, 1e-12, &format!("f64 {m}x{k}x{n}"));
        let (a, b) = (a.astype(DType::F32).unwrap(), b.astype(DType::F32).unwrap());
        // float32: at most a few hundred terms, each rounding by 2^-24.
        check_all_splits(&a, &b, 1e-4, &format!("f32 {m}x{k}x{n}"));
    }
}

#[test]
fn cancellation_zeros_and_nan_follow_the_ordered_sums() {
    // Row 0 cancels (x - x), row 1 is empty, -0.0 is not stored (0 + -0.0
    // is +0.0), NaN is.
    let a = Csr::from_parts(
        5,
        3,
        vec![0, 2, 2, 4, 4, 6],
        vec![0, 1, 0, 2, 0, 2],
        vec![1.0f64, 1.0, 0.0, 2.0, -0.0, 3.0],
    )
    .unwrap();
    // 200 columns: the bitmap path; 5000: the sorted list.
    for n in [200, 5000] {
        let b = Csr::from_parts(
            3,
            n,
            vec![0, 2, 4, 6],
            vec![0, n - 1, 0, n - 1, 1, 2],
            vec![0.5f64, 2.0, -0.5, -2.0, f64::NAN, 4.0],
        )
        .unwrap();
        let counts = RowCounts::of(&a.data, &b.data);
        let (Values::F64(av), Values::F64(bv)) = (&a.data.values, &b.data.values) else {
            unreachable!()
        };
        for tasks in [1, 2, 5] {
            let c = spgemm_tasks(&a.data, av, &b.data, bv, &counts, tasks);
            assert_eq!(c.indptr(), &[0, 0, 0, 2, 2, 4], "{n}: {tasks} tasks");
            assert_eq!(c.indices(), &[1, 2, 1, 2]);
            let v = values_f64(&c);
            assert!(v[0].is_nan() && v[1] == 8.0 && v[2].is_nan() && v[3] == 12.0);
        }
    }
}

#[test]
fn empty_operands_give_empty_products() {
    for (m, k, n) in [(0, 5, 3), (5, 0, 3), (4, 6, 0), (0, 0, 0), (3, 3, 3)] {
        let a = Csr::from_parts(m, k, vec![0; m + 1], vec![], Vec::<f32>::new()).unwrap();
        let b = signed(k, n, 0.5, 9).astype(DType::F32).unwrap();
        let counts = RowCounts::of(&a.data, &b.data);
        let (Values::F32(av), Values::F32(bv)) = (&a.data.values, &b.data.values) else {
            unreachable!()
        };
        for tasks in [1, 4] {
            let c = spgemm_tasks(&a.data, av, &b.data, bv, &counts, tasks);
            assert_eq!((c.shape(), c.nnz()), ([m, n], 0), "{m}x{k}x{n}");
            assert_eq!(c.indptr(), vec![0; m + 1].as_slice());
        }
    }
}

#[test]
fn a_panic_drops_the_thread_scratch_and_dtypes_share_the_slot() {
    let dirty = std::panic::catch_unwind(|| {
        with_scratch::<f64, ()>(100, |s| {
            s.vals[3] = 1.0;
            s.bits[0] = 8;
            panic!("inside a row");
        })
    });
    assert!(dirty.is_err());
    with_scratch::<f64, ()>(100, |s| {
        assert!(s.vals.iter().all(|&v| v == 0.0) && s.bits.iter().all(|&w| w == 0));
    });
    // A float32 product after a float64 one on the same thread, and back.
    let a = signed(40, 50, 0.2, 3);
    let b = signed(50, 70, 0.2, 4);
    check_all_splits(&a, &b, 1e-12, "f64 first");
    let (a32, b32) = (a.astype(DType::F32).unwrap(), b.astype(DType::F32).unwrap());
    check_all_splits(&a32, &b32, 1e-4, "then f32");
    check_all_splits(&a, &b, 1e-12, "f64 again");
}
