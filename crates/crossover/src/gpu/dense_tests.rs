//! Unit tests of `dense_plan.rs`.
use super::*;

/// Where element (i, j) of output `o` of a 2 x 3 batch entry lives.
fn at(u: &Unpack, i: usize, j: usize) -> usize {
    i * u.rs + j * u.cs
}

fn unpack(m: &Mapping, i: usize) -> Unpack {
    match m.outs[i] {
        Out::Unpack(u) => u,
        Out::Det => panic!("a determinant"),
    }
}

#[test]
fn solves_factor_a_transposed_and_transpose_only_several_columns() {
    let m = mapping(Kind::Solve, 5, 5, 3);
    assert!(m.a_row_major, "getrf on M = A^T: a plain copy of A");
    assert_eq!(
        m.call,
        DenseCall::Lu {
            solve: true,
            transpose: true
        }
    );
    assert_eq!((m.b, m.pivots), (BFrom::Input, true));
    let x = unpack(&m, 0);
    assert!(!x.as_is(), "X (5 x 3) comes back column-major");
    // X(i, j) column-major with leading dimension n = 5.
    assert_eq!(at(&x, 2, 1), 2 + 5);
    assert!(
        unpack(&mapping(Kind::Solve, 5, 5, 1), 0).as_is(),
        "one column is the same either way"
    );
    let spd = mapping(Kind::SolveSpd, 4, 4, 1);
    assert_eq!(
        spd.call,
        DenseCall::Cholesky {
            upper: false,
            solve: true
        },
        "M's lower triangle is A's upper one, which the CPU reads"
    );
}

#[test]
fn inverse_and_cholesky_come_out_row_major() {
    let inv = mapping(Kind::Inv, 4, 4, 0);
    assert_eq!(inv.b, BFrom::Identity);
    assert!(unpack(&inv, 0).as_is(), "inv(A^T) column-major is inv(A)");
    let ch = mapping(Kind::Cholesky, 4, 4, 0);
    assert_eq!(
        ch.call,
        DenseCall::Cholesky {
            upper: true,
            solve: false
        }
    );
    let l = unpack(&ch, 0);
    assert_eq!((l.tri, l.rs, l.cs), (Tri::Lower, 4, 1));
    assert!(!l.as_is(), "the other triangle is zeroed by a copy");
    assert_eq!(mapping(Kind::Det, 3, 3, 0).outs, vec![Out::Det]);
}

#[test]
fn svd_packs_so_the_solver_sees_rows_at_least_columns() {
    // Wide and square: A^T is tall; U and V^T need no copy.
    for (m, n) in [(3, 7), (4, 4)] {
        let s = mapping(Kind::Svd, m, n, 0);
        assert!(s.a_row_major && s.m >= s.n, "{m}x{n}");
        assert_eq!((s.m, s.n), (n, m));
        assert!(s
            .outs
            .iter()
            .all(|o| matches!(o, Out::Unpack(u) if u.as_is())));
        assert_eq!((s.u, s.vt, s.values), (n * m, m * m, m));
    }
    // Tall: A itself, U and V^T transposed back.
    let s = mapping(Kind::Svd, 7, 3, 0);
    assert!(!s.a_row_major);
    assert_eq!((s.m, s.n), (7, 3));
    let (u, vt) = (unpack(&s, 0), unpack(&s, 2));
    assert_eq!((u.rows, u.cols, u.rs, u.cs), (7, 3, 1, 7));
    assert_eq!((vt.rows, vt.cols, vt.rs, vt.cs), (3, 3, 1, 3));
    assert!(unpack(&s, 1).as_is(), "singular values as they are");
    let v = mapping(Kind::SvdVals, 7, 3, 0);
    assert_eq!((v.u, v.vt, v.outs.len()), (0, 0, 1));
    assert_eq!(v.call, DenseCall::Svd { vectors: false });
}

#[test]
fn qr_and_eigh_transpose_their_factors() {
    let q = mapping(Kind::Qr, 6, 4, 0);
    assert!(!q.a_row_major);
    assert_eq!(q.b, BFrom::Scratch);
    let (qq, r) = (unpack(&q, 0), unpack(&q, 1));
    assert_eq!((qq.rows, qq.cols, qq.rs, qq.cs, qq.per), (6, 4, 1, 6, 24));
    assert_eq!((r.rows, r.cols, r.tri), (4, 4, Tri::Upper));
    let wide = unpack(&mapping(Kind::Qr, 3, 5, 0), 1);
    assert_eq!((wide.rows, wide.cols, wide.rs, wide.cs), (3, 5, 1, 3));
    let e = mapping(Kind::Eigh, 5, 5, 0);
    assert_eq!(e.call, DenseCall::Eigh { upper: true });
    assert!(unpack(&e, 0).as_is());
    assert_eq!(at(&unpack(&e, 1), 1, 2), 1 + 2 * 5, "eigenvector columns");
}

#[test]
fn info_maps_to_the_cpus_typed_errors() {
    let msg = |k, i| match info_error(k, i) {
        Some(Error::Numerical { op, msg }) => format!("{op}: {msg}"),
        other => format!("{other:?}"),
    };
    assert_eq!(
        msg(Kind::Solve, 3),
        "solve: matrix is singular (zero pivot at index 2)"
    );
    assert_eq!(
        msg(Kind::Inv, 1),
        "inv: matrix is singular (zero pivot at index 0)"
    );
    assert_eq!(
        msg(Kind::Cholesky, 2),
        "cholesky: matrix is not positive definite (the leading minor of order 2 is not positive)"
    );
    assert!(msg(Kind::SolveSpd, 1).starts_with("solve_spd: matrix is not positive definite"));
    assert_eq!(msg(Kind::Svd, 4), "svd: the SVD iteration did not converge");
    assert_eq!(
        msg(Kind::Eigh, 1),
        "eigh: the eigenvalue iteration did not converge"
    );
    assert!(info_error(Kind::Det, 2).is_none(), "det of singular is 0");
    assert!(info_error(Kind::Qr, 1).is_none());
    assert!(info_error(Kind::Solve, 0).is_none());
    assert!(matches!(
        info_error(Kind::Solve, -4),
        Some(Error::Internal { .. })
    ));
}

#[test]
fn det_sign_follows_the_row_swaps() {
    // No swaps; one swap (row 1 with 2); two swaps.
    assert_eq!(det_from_lu(&[2.0, 3.0, 4.0], &[1, 2, 3], 1.0), 24.0);
    assert_eq!(det_from_lu(&[2.0, 3.0, 4.0], &[1, 3, 3], 1.0), -24.0);
    assert_eq!(det_from_lu(&[2.0, 3.0, 4.0], &[2, 3, 3], 1.0), 24.0);
    // A zero pivot: 0, not the NaN of 0 * (0/0) after it.
    let d = det_from_lu(&[2.0f32, 0.0, f32::NAN], &[1, 2, 3], 1.0);
    assert_eq!(d, 0.0);
    assert_eq!(det_from_lu::<f64>(&[], &[], 1.0), 1.0, "0 x 0");
}

#[test]
fn only_solve_spd_and_eigh_pack_conjugated_and_inv_solves_n_columns() {
    for kind in [
        Kind::Solve,
        Kind::SolveSpd,
        Kind::Cholesky,
        Kind::Qr,
        Kind::Inv,
        Kind::Det,
        Kind::Svd,
        Kind::SvdVals,
        Kind::Eigh,
    ] {
        let m = mapping(kind, 4, 4, 2);
        assert_eq!(
            m.conj_a,
            matches!(kind, Kind::SolveSpd | Kind::Eigh),
            "{kind:?}: the solver sees A^H only where a Hermitian triangle is read as the CPU reads it"
        );
        assert!(m.conj_a <= m.a_row_major, "a conjugated pack is row-major");
    }
    // The identity's n columns are the right-hand sides the solver sees.
    assert_eq!(mapping(Kind::Inv, 6, 6, 0).k, 6);
    assert_eq!(mapping(Kind::Solve, 6, 6, 3).k, 3);
}
