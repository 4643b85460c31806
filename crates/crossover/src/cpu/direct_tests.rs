//! The direct path gives the fused interpreter's bits, and runs where it
//! should: every elementwise op, every dtype it takes, on sizes around the
//! interpreter's chunk, offset and broadcast operands and constants.

use crate::device::{DeviceKind, Policy};
use crate::direct::run_direct;
use crate::dtype::{DType, Scalar};
use crate::engine::with_current;
use crate::op::{BinaryOp, Op, ReduceOp, UnaryOp};
use crate::shape::SliceArg;
use crate::{Array, Result};

/// Values with every edge a kernel meets: signs, zeros, NaN, infinities,
/// huge and tiny, among pseudo-random ones.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        1e30,
        -1e-30,
        3.0,
    ];
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if i % 7 == 3 {
                edges[(s % edges.len() as u64) as usize]
            } else {
                ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.3) * 40.0
            }
        })
        .collect()
}

fn input(n: usize, seed: u64, dtype: DType) -> Array {
    let mut v = values(n, seed);
    if !dtype.is_float() {
        // Integers: finite, in range, some negative (u64 wraps them).
        v.iter_mut().for_each(|x| {
            *x = if x.is_finite() {
                x.clamp(-1e3, 1e3).trunc()
            } else {
                2.0
            }
        });
    }
    let a = Array::from_vec(v, &[n]).unwrap().cast(dtype).unwrap();
    a.eval().unwrap();
    a
}

/// Runs `fast` through the direct path and `slow` (the same op) through the
/// fused one; returns whether the direct path ran, after checking that both
/// give the same bits, or both fail with the same message.
fn same_bits(fast: &Array, slow: &Array) -> bool {
    let direct = match with_current(|e| run_direct(e, fast)) {
        // Declined (nothing ran): the usual evaluation.
        Ok(false) => fast.eval().map(|()| false),
        other => other,
    };
    let fused = slow.eval_with(Policy::Force(DeviceKind::Cpu));
    let ran = match (&direct, &fused) {
        (Ok(ran), Ok(())) => *ran,
        (Err(d), Err(f)) => {
            assert_eq!(d.to_string(), f.to_string());
            return direct_ran_before_failing(fast);
        }
        _ => panic!(
            "direct {direct:?} against fused {fused:?} for {}",
            fast.op_name()
        ),
    };
    let (f, s) = (fast.value().unwrap(), slow.value().unwrap());
    let bytes = |v: &crate::array::Value| {
        let size = v.buffer.dtype().size();
        v.buffer.host_bytes()[v.layout.offset * size..(v.layout.offset + v.layout.numel()) * size]
            .to_vec()
    };
    assert_eq!(f.layout.shape, s.layout.shape);
    assert!(
        bytes(&f) == bytes(&s),
        "{} on {}: bits differ",
        fast.op_name(),
        fast.dtype()
    );
    ran
}

/// Whether a failed evaluation came from the direct path (it leaves the
/// array pending either way: ask it again).
fn direct_ran_before_failing(fast: &Array) -> bool {
    with_current(|e| run_direct(e, fast)).is_err()
}

/// Whether `out` is one op straight on `operands` (what the direct path takes).
fn reads_only(out: &Array, operands: &[&Array]) -> bool {
    matches!(out.op(), Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. })
        && out.pending_inputs().is_some_and(|ins| {
            ins.iter()
                .all(|i| operands.iter().any(|o| o.id() == i.id()))
        })
}

const DTYPES: [DType; 6] = [
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U64,
    DType::Bool,
];

#[test]
fn every_op_gives_the_fused_bits_and_runs_directly_on_computed_inputs() -> Result<()> {
    let mut direct_runs = 0;
    // 70,001 points split into tasks (32,768 points, fewer for heavy ops).
    for n in [1, 7, 2047, 2049, 5003, 70_001] {
        for dtype in DTYPES {
            let (a, b) = (input(n, 1, dtype), input(n, 2, dtype));
            for op in UnaryOp::ALL {
                let (Ok(fast), Ok(slow)) = (a.unary(op), a.unary(op)) else {
                    continue;
                };
                let expected = reads_only(&fast, &[&a]);
                assert_eq!(same_bits(&fast, &slow), expected, "{op:?} {dtype} n={n}");
                direct_runs += expected as usize;
            }
            for op in BinaryOp::ALL {
                let (Ok(fast), Ok(slow)) = (Array::binary(op, &a, &b), Array::binary(op, &a, &b))
                else {
                    continue;
                };
                let expected = reads_only(&fast, &[&a, &b]);
                assert_eq!(same_bits(&fast, &slow), expected, "{op:?} {dtype} n={n}");
                direct_runs += expected as usize;
            }
        }
    }
    // At least every binary op on f32 and f64, at every size.
    assert!(direct_runs >= 6 * 2 * BinaryOp::ALL.len(), "{direct_runs}");
    Ok(())
}

#[test]
fn constants_offsets_and_broadcast_elements_run_directly() -> Result<()> {
    for dtype in [DType::F32, DType::F64, DType::I64] {
        let whole = input(3001, 3, dtype);
        // A contiguous view starting at element 1000: its values sit at an offset.
        let tail = whole.slice(&[SliceArg::Range {
            start: Some(1000),
            stop: None,
            step: 1,
        }])?;
        assert!(tail.is_ready());
        let one = input(1, 4, dtype).broadcast_to(&[2001])?;
        assert!(one.is_ready());
        // A Python float would promote integers to float64 (a cast: not direct).
        let c = if dtype.is_float() {
            Scalar::Float(2.5)
        } else {
            Scalar::Int(2)
        };
        for op in [
            BinaryOp::Add,
            BinaryOp::Mul,
            BinaryOp::Maximum,
            BinaryOp::Lt,
        ] {
            let cases: [(Array, Array); 3] = [
                (Array::binary(op, &tail, c)?, Array::binary(op, &tail, c)?),
                (Array::binary(op, 3, &tail)?, Array::binary(op, 3, &tail)?),
                (
                    Array::binary(op, &tail, &one)?,
                    Array::binary(op, &tail, &one)?,
                ),
            ];
            for (fast, slow) in cases {
                assert!(
                    same_bits(&fast, &slow),
                    "{op:?} on {dtype} did not run directly"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn pending_inputs_take_the_fused_path_large_work_runs_directly() -> Result<()> {
    let a = input(1000, 5, DType::F32);
    let chained = a.mul(&a)?.add(1.0)?;
    assert!(
        !with_current(|e| run_direct(e, &chained))?,
        "an input is pending"
    );
    // Work for several threads runs directly, split as the fused path
    // splits it, with the fused bits.
    let big = input(1 << 20, 6, DType::F32);
    assert!(same_bits(&big.add(&big)?, &big.add(&big)?));
    assert!(same_bits(&big.sum(None, false)?, &big.sum(None, false)?));
    Ok(())
}

#[test]
fn integer_powers_with_negative_exponents_fail_as_in_the_interpreter() -> Result<()> {
    let base = input(100, 7, DType::I64);
    let exp = Array::from_vec(
        (0..100).map(|i| 2 - i as i64 % 5).collect::<Vec<_>>(),
        &[100],
    )?;
    let fast = Array::binary(BinaryOp::Pow, &base, &exp)?;
    let err = with_current(|e| run_direct(e, &fast)).unwrap_err();
    assert!(err.to_string().contains("negative integer powers"), "{err}");
    // Split into tasks: one negative exponent in the last task is enough.
    let n = 100_000;
    let base = input(n, 8, DType::I64);
    let exp = Array::from_vec(
        (0..n)
            .map(|i| if i == n - 3 { -1 } else { 2 })
            .collect::<Vec<i64>>(),
        &[n],
    )?;
    let fast = Array::binary(BinaryOp::Pow, &base, &exp)?;
    let err = with_current(|e| run_direct(e, &fast)).unwrap_err();
    assert!(err.to_string().contains("negative integer powers"), "{err}");
    Ok(())
}

const REDUCTIONS: [ReduceOp; 10] = [
    ReduceOp::Sum,
    ReduceOp::Mean,
    ReduceOp::Var { ddof: 0 },
    ReduceOp::Std { ddof: 1 },
    ReduceOp::Min,
    ReduceOp::Max,
    ReduceOp::ArgMin,
    ReduceOp::ArgMax,
    ReduceOp::Prod,
    ReduceOp::Var { ddof: 5 },
];

#[test]
fn reductions_over_trailing_axes_give_the_fused_bits() -> Result<()> {
    let mut direct_runs = 0;
    // Whole arrays, and rows of matrices (the last axis, or both).
    // The last two are work for several threads (the reduction's task
    // grid split across the pool).
    let cases: [(&[usize], Option<&[isize]>); 8] = [
        (&[1], None),
        (&[1000], None),
        (&[2049], None),
        (&[9001], None),
        (&[37, 129], Some(&[1])),
        (&[3, 5, 401], Some(&[1, 2])),
        (&[200_003], None),
        (&[3, 70_001], Some(&[1])),
    ];
    for dtype in DTYPES {
        for (shape, axes) in cases {
            let n = shape.iter().product();
            let x = input(n, 8, dtype)
                .reshape(&shape.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
            assert!(x.is_ready());
            for op in REDUCTIONS {
                for keepdims in [false, true] {
                    let (Ok(fast), Ok(slow)) =
                        (x.reduce(op, axes, keepdims), x.reduce(op, axes, keepdims))
                    else {
                        continue;
                    };
                    let expected = reads_only(&fast, &[&x]);
                    assert_eq!(
                        same_bits(&fast, &slow),
                        expected,
                        "{op:?} {dtype} {shape:?}"
                    );
                    direct_runs += expected as usize;
                }
            }
        }
    }
    // At least every reduction of f32 and f64 at every shape.
    assert!(direct_runs >= 2 * 8 * 2 * REDUCTIONS.len(), "{direct_runs}");
    Ok(())
}

#[test]
fn leading_axes_and_views_take_the_fused_path() -> Result<()> {
    let x = input(60 * 70, 9, DType::F32).reshape(&[60, 70])?;
    for fast in [
        x.sum(Some(&[0]), false)?,
        x.transpose()?.sum(Some(&[1]), false)?,
    ] {
        assert!(!with_current(|e| run_direct(e, &fast))?);
    }
    Ok(())
}

#[test]
fn library_calls_on_computed_inputs_give_the_fused_bits() -> Result<()> {
    for dtype in [DType::F32, DType::F64] {
        let a = input(37 * 29, 10, dtype).reshape(&[37, 29])?;
        let b = input(29 * 41, 11, dtype).reshape(&[29, 41])?;
        let square = input(33 * 33, 12, dtype).reshape(&[33, 33])?;
        let rhs = input(33, 13, dtype);
        let cases: [(Array, Array); 4] = [
            (a.matmul(&b)?, a.matmul(&b)?),
            // A transposed (strided) view as an operand.
            (
                b.transpose()?.matmul(&a.transpose()?)?,
                b.transpose()?.matmul(&a.transpose()?)?,
            ),
            (a.cumsum(Some(1))?, a.cumsum(Some(1))?),
            (
                crate::linalg::solve(&square, &rhs)?,
                crate::linalg::solve(&square, &rhs)?,
            ),
        ];
        let mut direct_runs = 0;
        for (fast, slow) in cases {
            // Some results are views of the call's output (a transposed
            // scan): those take the general path, with the same bits.
            let expected = matches!(fast.op(), Op::Library { .. });
            assert_eq!(same_bits(&fast, &slow), expected, "{}", fast.op_name());
            direct_runs += expected as usize;
        }
        assert!(direct_runs >= 2, "{direct_runs}"); // Outputs of one call: the first runs it, the others read its results.
        let (u, s, vt) = crate::linalg::svd(&square)?;
        let (u2, s2, vt2) = crate::linalg::svd(&square)?;
        assert!(same_bits(&s, &s2));
        assert!(same_bits(&u, &u2) && same_bits(&vt, &vt2));
    }
    // A pending input: the general path.
    let a = input(16, 14, DType::F64).reshape(&[4, 4])?;
    let pending = a.add(1.0)?.matmul(&a)?;
    assert!(!with_current(|e| run_direct(e, &pending))?);
    Ok(())
}

/// One op waiting only for reductions (`total + s`, `s / n`, `max - min`):
/// the reductions run first and the op on the direct path, with the fused
/// path's bits; an op that also waits for elementwise work keeps the
/// general path (splitting it off would cost a pass over memory).
#[test]
fn ops_on_pending_reductions_give_the_fused_bits() -> Result<()> {
    use crate::direct::pending_reductions;
    for (dtype, n) in [(DType::F32, 4099), (DType::F64, 10_000), (DType::F64, 1)] {
        let make = |seed: u64| -> Result<Vec<Array>> {
            // Finite values: a NaN would make every sum NaN.
            let v = values(n, seed);
            let v = v.into_iter().map(|v| if v.is_finite() { v } else { 0.75 });
            let x = Array::from_vec(v.collect(), &[n])?.cast(dtype)?;
            x.eval()?;
            let sq = x.mul(&x)?.sum(None, false)?;
            Ok(vec![
                sq.add(0.25)?,
                x.sum(None, false)?.div(n as f64)?,
                x.max(None, false)?.sub(&x.min(None, false)?)?,
                x.sum(None, false)?.unary(UnaryOp::Sqrt)?,
            ])
        };
        for (fast, slow) in make(21)?.into_iter().zip(make(21)?) {
            let waits = pending_reductions(&fast).map(|r| r.len());
            assert!(
                matches!(waits, Some(1 | 2)),
                "{}: {waits:?}",
                fast.op_name()
            );
            fast.eval()?;
            slow.eval_with(Policy::Force(DeviceKind::Cpu))?;
            assert_eq!(
                fast.to_vec_f64()?
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
                slow.to_vec_f64()?
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
                "{} {dtype} n = {n}",
                fast.op_name()
            );
        }
    }
    let x = input(300, 22, DType::F64);
    let mixed = x.mul(2.0)?.add(&x.sum(None, false)?)?;
    assert!(pending_reductions(&mixed).is_none());
    assert!(pending_reductions(&x.sum(None, false)?).is_none());
    Ok(())
}
