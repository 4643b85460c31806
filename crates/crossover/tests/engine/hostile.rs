//! Hostile but ordinary inputs (issue 19): sizes that overflow or cannot
//! fit, NumPy 2 semantics the engine must match, stopping long work.

use crate::common::*;
use crossover::{linalg, Array, BinaryOp, DType, DeviceKind, Error, ErrorKind, Generator, Scalar};
use std::time::{Duration, Instant};

#[test]
fn shapes_whose_bytes_overflow_are_too_big() {
    // 2^32 x 2^32 elements wrapped to a size of 0 (then a segfault on read).
    for shape in [vec![1usize << 32, 1 << 32], vec![1 << 62, 4]] {
        let e = Array::ones(&shape, DType::F64).unwrap_err();
        assert!(matches!(e, Error::TooBig { .. }), "{e}");
        assert_eq!(e.kind(), ErrorKind::Value);
        assert!(e.to_string().contains("array is too big"), "{e}");
    }
    // Broadcasting and views check too.
    let one = Array::ones(&[1], DType::F64).unwrap();
    assert!(matches!(
        one.broadcast_to(&[1 << 62, 4]),
        Err(Error::TooBig { .. })
    ));
    assert!(matches!(
        Array::placeholder(&[1 << 33, 1], DType::F64)
            .unwrap()
            .mul(Array::placeholder(&[1, 1 << 33], DType::F64).unwrap()),
        Err(Error::TooBig { .. })
    ));
    // A zero dim makes an empty array, but not an overflowing product.
    assert_eq!(Array::zeros(&[0, 1 << 40], DType::F64).unwrap().numel(), 0);
    assert!(Array::zeros(&[0, 1 << 62, 1 << 62], DType::F64).is_err());
}

#[test]
fn work_that_cannot_fit_in_memory_is_refused_up_front() {
    // NumPy: MemoryError: Unable to allocate 7.28 TiB. A constant is
    // refused when made, like np.ones.
    let e = Array::ones(&[1_000_000, 1_000_000], DType::F64).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    assert_eq!(e.kind(), ErrorKind::Memory);
    assert!(e.to_string().contains("7.28 TiB"), "{e}");
    // Other lazy arrays record fine and are refused before any kernel runs
    // (their reduction would run for minutes).
    let big = Generator::new(0)
        .uniform(&[1_000_000, 1_000_000], DType::F64)
        .unwrap();
    let s = big.sum(Some(&[0]), false).unwrap();
    let start = Instant::now();
    let e = s.eval().unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    // Planning alone never allocates, whatever the size.
    assert!(big.mul(2.0).unwrap().explain().is_ok());
    // Views do not allocate (as in NumPy): a broadcast constant may be huge,
    // and so may the scalar operands the engine makes for it.
    let v = Array::ones(&[1], DType::F32)
        .unwrap()
        .broadcast_to(&[1 << 40])
        .unwrap();
    assert_eq!(v.numel(), 1 << 40);
    assert!(v.mul(2.0).is_ok());
}

#[test]
fn det_of_singular_matrices_is_zero() {
    for (data, n) in [
        (vec![1.0f64; 9], 3),
        (vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0], 3),
        (vec![1.0, 2.0, 2.0, 4.0], 2),
    ] {
        let a = Array::from_vec(data, &[n, n]).unwrap();
        assert_eq!(linalg::det(&a).unwrap().item().unwrap(), 0.0);
    }
    let a = Array::from_vec(vec![2.0f32, 1.0, 1.0, 3.0], &[2, 2]).unwrap();
    assert!((linalg::det(&a).unwrap().item().unwrap() - 5.0).abs() < 1e-5);
}

#[test]
fn integer_matmul_keeps_the_dtype_and_wraps() {
    let a = Array::from_vec(vec![1i64, 2, 3, 4], &[2, 2]).unwrap();
    let p = a.matmul(&a).unwrap();
    assert_eq!(p.dtype(), DType::I64);
    assert_eq!(p.to_vec::<i64>().unwrap(), vec![7, 10, 15, 22]);
    // Transposed operand, int32 wrapping like NumPy.
    let b = Array::from_vec(vec![i32::MAX, 1, 2, 3], &[2, 2]).unwrap();
    let q = b.transpose().unwrap().matmul(&b).unwrap();
    assert_eq!(q.dtype(), DType::I32);
    let (m, x) = (i32::MAX, 2i32);
    let want = vec![
        m.wrapping_mul(m).wrapping_add(x * x),
        m.wrapping_add(x * 3),
        m.wrapping_add(x * 3),
        1 + 9,
    ];
    assert_eq!(q.to_vec::<i32>().unwrap(), want);
    // Bool is logical or of ands; a vector operand drops its axis.
    let t = Array::from_vec(vec![true, false, false, false], &[2, 2]).unwrap();
    let v = Array::from_vec(vec![false, true], &[2]).unwrap();
    assert_eq!(
        t.matmul(&v).unwrap().to_vec::<bool>().unwrap(),
        vec![false, false]
    );
    let v = Array::from_vec(vec![true, true], &[2]).unwrap();
    assert_eq!(
        t.matmul(&v).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );
    // Larger than one task, on the pool, against a plain loop.
    let n = 97;
    let data: Vec<i64> = (0..n * n).map(|i| (i as i64 * 7919) % 23 - 11).collect();
    let a = Array::from_vec(data.clone(), &[n, n]).unwrap();
    let got = a.matmul(&a).unwrap().to_vec::<i64>().unwrap();
    for i in (0..n).step_by(13) {
        for j in (0..n).step_by(7) {
            let want: i64 = (0..n).map(|p| data[i * n + p] * data[p * n + j]).sum();
            assert_eq!(got[i * n + j], want);
        }
    }
}

#[test]
fn python_ints_out_of_range_for_int32_are_refused_not_wrapped() {
    // NEP 50: int32_arr * 2**40 is an OverflowError, not [0, 0].
    let a = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
    let e = a.mul(Scalar::Int(1 << 40)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    assert!(e.to_string().contains("out of bounds for int32"), "{e}");
    assert!(Array::full(&[3], Scalar::Int(1 << 40), DType::I32).is_err());
    // Comparisons are exact instead (NumPy 2 gives the right answer).
    let lt = a.lt(Scalar::Int(1 << 40)).unwrap();
    assert_eq!(lt.to_vec::<bool>().unwrap(), vec![true, true]);
    let eq = Array::binary(BinaryOp::Eq, &a, Scalar::Int(-(1 << 40))).unwrap();
    assert_eq!(eq.to_vec::<bool>().unwrap(), vec![false, false]);
    // In range is fine, also for int64.
    assert_eq!(
        a.mul(Scalar::Int(3)).unwrap().to_vec::<i32>().unwrap(),
        vec![3, 6]
    );
}

#[test]
fn integers_to_negative_integer_powers_are_errors() {
    let a = Array::from_vec(vec![2i64, 3], &[2]).unwrap();
    let e = a.pow(Scalar::Int(-1)).unwrap_err();
    assert!(e.to_string().contains("negative integer powers"), "{e}");
    // Array exponents are checked when computed.
    let e = a
        .pow(Array::from_vec(vec![1i64, -1], &[2]).unwrap())
        .unwrap()
        .eval()
        .unwrap_err();
    assert!(e.to_string().contains("negative integer powers"), "{e}");
    let ok = a
        .pow(Array::from_vec(vec![3i64, 0], &[2]).unwrap())
        .unwrap();
    assert_eq!(ok.to_vec::<i64>().unwrap(), vec![8, 1]);
    // Floats take any power.
    let f = Array::from_vec(vec![2.0f64], &[1]).unwrap();
    assert_eq!(f.pow(Scalar::Int(-1)).unwrap().item().unwrap(), 0.5);
}

#[test]
fn logical_operators_in_expressions_need_bools() {
    let a = Array::from_vec(vec![1.0f64, 0.0], &[2]).unwrap();
    let vars = [("a", &a), ("b", &a)];
    for src in ["a & b", "a | b", "~a"] {
        let e = crossover::evaluate(src, &vars).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Type, "{src}: {e}");
    }
    let r = crossover::evaluate("(a > 0) & (b < 1)", &vars).unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), vec![false, false]);
    let r = crossover::evaluate("0 < a < 2", &vars).unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), vec![true, false]);
}

#[test]
fn sparse_random_too_big_for_memory_is_an_error_not_an_abort() {
    let e = crossover::sparse::Csr::random(1_000_000_000, 1_000_000_000, 0.5, 0, DType::F64)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Memory, "{e}");
}

#[test]
fn oversized_profiles_are_refused() {
    let dir = std::env::temp_dir().join(format!("xo-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("big.json");
    std::fs::write(
        &p,
        vec![b' '; crossover::cost::profile::MAX_PROFILE_BYTES + 10],
    )
    .unwrap();
    let e = crossover::Profile::load(&p, true).unwrap_err();
    assert!(e.to_string().contains("not a profile"), "{e}");
    if std::path::Path::new("/dev/zero").exists() {
        let e = crossover::Profile::load(std::path::Path::new("/dev/zero"), true).unwrap_err();
        assert!(e.to_string().contains("not a profile"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sparse_products_too_big_for_memory_are_errors_not_aborts() {
    // A column of ones times a row of ones: 2^40 nonzeros (12 TiB).
    let n = 1 << 20;
    let idx: Vec<usize> = (0..n).collect();
    let zeros = vec![0usize; n];
    let ones = vec![1.0f64; n];
    let a = crossover::sparse::Csr::from_triplets(n, 1, &idx, &zeros, &ones).unwrap();
    let b = crossover::sparse::Csr::from_triplets(1, n, &zeros, &idx, &ones).unwrap();
    let e = a.matmul(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Memory, "{e}");
    // Small products still run.
    let c = crossover::sparse::Csr::from_triplets(2, 1, &[0, 1], &[0, 0], &[1.0f64, 2.0]).unwrap();
    let d = crossover::sparse::Csr::from_triplets(1, 2, &[0, 0], &[0, 1], &[3.0f64, 4.0]).unwrap();
    assert_eq!(c.matmul(&d).unwrap().nnz(), 4);
}

/// Integer powers with exponents read from arrays run on every device,
/// GPUs included (their kernels report a negative exponent through a flag
/// the host turns into NumPy's error); elementwise and inside a reduction,
/// on sizes around the CPU's chunk and a GPU's work-group.
#[test]
fn integer_powers_with_array_exponents_run_everywhere_and_refuse_negative_ones() {
    on_every_engine(|e| {
        for dtype in [DType::I32, DType::I64] {
            for n in [1usize, 255, 2049, 5000] {
                let b: Vec<i64> = (0..n).map(|i| (i as i64 % 11) - 5).collect();
                let x: Vec<i64> = (0..n).map(|i| (i as i64 * 7) % 6).collect();
                let want: Vec<i64> = b
                    .iter()
                    .zip(&x)
                    .map(|(&b, &x)| match dtype {
                        DType::I32 => (b as i32).wrapping_pow(x as u32) as i64,
                        _ => b.wrapping_pow(x as u32),
                    })
                    .collect();
                let arr = |v: &[i64]| {
                    Array::from_vec(v.to_vec(), &[n])
                        .and_then(|a| a.cast(dtype))
                        .unwrap()
                };
                let (ba, xa) = (arr(&b), arr(&x));
                let p = Array::binary(BinaryOp::Pow, &ba, &xa).unwrap();
                let before = e.engine.kernels_run(DeviceKind::Gpu);
                p.eval().unwrap();
                if e.is_gpu_api() {
                    let ran = e.engine.kernels_run(DeviceKind::Gpu) - before;
                    assert!(ran > 0, "{}: the power ran on the CPU", e.name);
                }
                let got = p.cast(DType::I64).unwrap().to_vec::<i64>().unwrap();
                assert_eq!(got, want, "{} {dtype:?} n={n}", e.name);
                let s = p.sum(None, false).unwrap().item().unwrap();
                let want_sum = want.iter().fold(0i64, |a, &v| a.wrapping_add(v));
                assert_eq!(s, want_sum as f64, "{} {dtype:?} n={n}: sum", e.name);
                // One negative exponent, last: NumPy's error, not values.
                let mut neg = x.clone();
                neg[n - 1] = -1;
                let bad = Array::binary(BinaryOp::Pow, &ba, arr(&neg)).unwrap();
                let err = bad.eval().unwrap_err();
                assert!(
                    err.to_string().contains("negative integer powers"),
                    "{} {dtype:?} n={n}: {err}",
                    e.name
                );
                let err = bad.sum(None, false).unwrap().eval().unwrap_err();
                assert!(
                    err.to_string().contains("negative integer powers"),
                    "{} {dtype:?} n={n}: sum: {err}",
                    e.name
                );
            }
        }
    });
}
