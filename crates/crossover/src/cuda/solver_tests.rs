//! Unit tests of `solver.rs`.
use super::*;

#[test]
fn each_call_is_its_lapack_steps() {
    let lu = |solve| DenseCall::Lu {
        solve,
        transpose: false,
    };
    assert_eq!(steps(lu(false)), vec![Step::Getrf], "det");
    assert_eq!(steps(lu(true)), vec![Step::Getrf, Step::Getrs]);
    let ch = |solve| DenseCall::Cholesky { upper: true, solve };
    assert_eq!(steps(ch(false)), vec![Step::Potrf]);
    assert_eq!(steps(ch(true)), vec![Step::Potrf, Step::Potrs]);
    assert_eq!(
        steps(DenseCall::Qr),
        vec![Step::Geqrf, Step::CopyFactor, Step::Orgqr],
        "R is copied out before orgqr overwrites it with Q"
    );
    assert_eq!(steps(DenseCall::Svd { vectors: false }), vec![Step::Gesvd]);
}

#[test]
fn buffers_hold_one_block_per_matrix() {
    let s = strides(
        DenseCall::Lu {
            solve: true,
            transpose: true,
        },
        4,
        4,
        3,
    );
    assert_eq!((s.a, s.b, s.pivots), (16, 12, 4));
    let det = strides(
        DenseCall::Lu {
            solve: false,
            transpose: false,
        },
        4,
        4,
        0,
    );
    assert_eq!((det.b, det.pivots), (0, 4));
    let svd = strides(DenseCall::Svd { vectors: true }, 7, 3, 0);
    assert_eq!((svd.a, svd.values, svd.u, svd.vt), (21, 3, 21, 9));
    let vals = strides(DenseCall::Svd { vectors: false }, 7, 3, 0);
    assert_eq!((vals.u, vals.vt), (0, 0));
    let qr = strides(DenseCall::Qr, 3, 5, 0);
    assert_eq!((qr.a, qr.b), (15, 15));
    let e = strides(DenseCall::Eigh { upper: true }, 5, 5, 0);
    assert_eq!((e.a, e.values), (25, 5));
}

#[test]
fn finiteness_checks_cover_long_buffers_in_c_int_pieces() {
    assert_eq!(chunks(0, 10), vec![]);
    assert_eq!(chunks(10, 10), vec![(0, 10)]);
    assert_eq!(chunks(25, 10), vec![(0, 10), (10, 10), (20, 5)]);
    let big = c_int::MAX as usize;
    assert_eq!(chunks(big + 1, big), vec![(0, big), (big, 1)]);
}

#[test]
fn the_factorisations_info_wins_over_the_solves() {
    // Matrix 0 fine, 1 singular at pivot 2 (getrs then reports 0), 2 a
    // rejected argument in the second step.
    assert_eq!(combine_info(&[0, 2, 0], &[0, 0, -3]), vec![0, 2, -3]);
}

/// The tables' element types have crossover's layouts: a complex element
/// is an interleaved (re, im) pair of its real type, in cuSOLVER's and
/// cuBLAS's declarations alike.
#[test]
fn element_types_have_crossovers_layouts() {
    fn sizes<T: Lapack>() -> (usize, usize, usize) {
        (
            std::mem::size_of::<T>(),
            std::mem::size_of::<T::Real>(),
            std::mem::size_of::<T::Blas>(),
        )
    }
    assert_eq!(sizes::<f32>(), (DType::F32.size(), 4, 4));
    assert_eq!(sizes::<f64>(), (DType::F64.size(), 8, 8));
    assert_eq!(sizes::<sol::cuComplex>(), (DType::C64.size(), 4, 8));
    assert_eq!(sizes::<sol::cuDoubleComplex>(), (DType::C128.size(), 8, 16));
}
