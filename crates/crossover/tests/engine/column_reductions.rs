//! Leading-axis (column-wise) reductions, the CPU's outer mode: column
//! blocks as wide as whole rows or 2,048 columns, rows taken eight at a
//! time with each column's running value in a register. Shapes cross the
//! row groups (8), the rows of one call (64), the row blocks (128+ rows,
//! at most 32 blocks) and the column blocks (2,048 and 8,192 columns).

use crate::common::*;
use crate::reductions::reference;
use crossover::{Array, DType, DeviceKind, ReduceOp};

/// (rows, cols): whole-row blocks with enough row blocks for every thread,
/// a block edge, wide rows with one row block, short rows, rows longer
/// than the widest whole-row block, and a few rows.
const SHAPES: [(usize, usize); 7] = [
    (1031, 4096),
    (600, 2049),
    (2050, 300),
    (9, 70_001),
    (4097, 3),
    (700, 8193),
    (13, 40),
];

/// Kept columns from which the CPU reduces a leading axis in the outer mode
/// (fuse.rs' `OUTER_MIN_KEPT`).
const OUTER_MIN_KEPT: usize = 64;

/// The CPU's float sum of each column, bit for bit: within each row block
/// (the fixed task grid), the rows added one after another in float64,
/// then the row blocks' sums added in order. Grouping rows or widening the
/// column blocks must not change a bit of it.
fn row_block_sums(xs: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let blocks = if cols.div_ceil(2048) >= 8 {
        1
    } else {
        (rows / 128).clamp(1, 32)
    };
    let per = rows.div_ceil(blocks).max(1);
    (0..cols)
        .map(|j| {
            let mut total: Option<f64> = None;
            for r0 in (0..rows).step_by(per) {
                let s = (r0..(r0 + per).min(rows)).fold(0.0, |a, r| a + xs[r * cols + j]);
                total = Some(total.map_or(s, |t| t + s));
            }
            total.unwrap_or(0.0)
        })
        .collect()
}

#[test]
fn column_sums_are_the_row_block_sums_bit_for_bit() {
    on_every_engine(|e| {
        for (k, &(rows, cols)) in SHAPES.iter().enumerate() {
            for dtype in [DType::F32, DType::F64] {
                let (x, xs) = array(&[rows, cols], dtype, 300 + k as u64, -3.0, 5.0);
                let got = x.sum(Some(&[0]), false).unwrap().to_vec_f64().unwrap();
                let exact = row_block_sums(&xs, rows, cols);
                let what = format!("sum(axis=0) {dtype} {rows}x{cols}");
                // Fewer than 64 columns (fuse.rs' OUTER_MIN_KEPT) take the
                // inner mode over transposed reads, whose sums are lane sums.
                if e.name == "cpu" && cols >= OUTER_MIN_KEPT {
                    // Rounded once to the dtype, as the CPU stores it.
                    let want: Vec<f64> = match dtype {
                        DType::F32 => exact.iter().map(|&v| v as f32 as f64).collect(),
                        _ => exact,
                    };
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.to_bits() == w.to_bits());
                    assert!(same, "{what}: not the row-block sums bit for bit");
                } else {
                    let tol = rtol(dtype, 8.0) * 5.0 * rows as f64;
                    assert_close(&got, &exact, 0.0, tol, &what);
                }
                let mean = x.mean(Some(&[0]), false).unwrap().to_vec_f64().unwrap();
                let want = reference(ReduceOp::Mean, &xs, &[rows, cols], &[0]);
                assert_close(
                    &mean,
                    &want,
                    0.0,
                    rtol(dtype, 8.0) * 5.0,
                    &format!("mean {what}"),
                );
            }
        }
    });
}

#[test]
fn column_extremes_find_the_first_nan_and_the_first_tie() {
    on_every_engine(|_e| {
        for (k, &(rows, cols)) in SHAPES.iter().enumerate() {
            // Whole numbers in [-20, 20): many ties inside and across the
            // row groups; NaNs in the first row, inside a group (two in one
            // column, the first must win) and in the last row.
            let mut xs: Vec<f64> = values(rows * cols, 400 + k as u64, -20.0, 20.0)
                .iter()
                .map(|v| v.floor())
                .collect();
            let last = cols - 1;
            xs[last] = f64::NAN;
            if rows > 14 {
                xs[11 * cols] = f64::NAN;
                xs[13 * cols] = f64::NAN;
                xs[(rows - 1) * cols + cols / 2] = f64::NAN;
                // A column whose extremes are first reached inside a group.
                let j = cols / 3;
                xs[5 * cols + j] = 99.0;
                xs[6 * cols + j] = 99.0;
                xs[10 * cols + j] = -99.0;
            }
            for dtype in [DType::F32, DType::F64] {
                let x = matrix(&xs, dtype, rows, cols);
                for op in [
                    ReduceOp::Max,
                    ReduceOp::Min,
                    ReduceOp::ArgMax,
                    ReduceOp::ArgMin,
                ] {
                    let got = match op {
                        ReduceOp::ArgMax => x.argmax(Some(0)),
                        ReduceOp::ArgMin => x.argmin(Some(0)),
                        _ => x.reduce(op, Some(&[0]), false),
                    }
                    .unwrap()
                    .to_vec_f64()
                    .unwrap();
                    let want = reference(op, &xs, &[rows, cols], &[0]);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
                    assert!(same, "{op:?} axis 0 {dtype} {rows}x{cols}");
                }
            }
        }
    });
}

/// A `rows x cols` matrix of `xs` in `dtype` (float32 or float64), held
/// as values so that reductions read it in place.
fn matrix(xs: &[f64], dtype: DType, rows: usize, cols: usize) -> Array {
    match dtype {
        DType::F32 => Array::from_vec(xs.iter().map(|&v| v as f32).collect(), &[rows, cols]),
        _ => Array::from_vec(xs.to_vec(), &[rows, cols]),
    }
    .unwrap()
}

#[test]
fn column_extremes_of_signed_zeros_keep_the_first() {
    // -0.0 and 0.0 compare equal: the first of them in row order is the
    // extreme, as NumPy's loops give, wherever the row groups fall.
    let e = engines().into_iter().find(|e| e.name == "cpu").unwrap();
    e.run(|| {
        let (rows, cols) = (1030, 4096);
        let cases = [false, true].into_iter().flat_map(|neg| {
            [
                (DType::F32, true),
                (DType::F32, false),
                (DType::F64, true),
                (DType::F64, false),
            ]
            .map(|(dtype, max)| (neg, dtype, max))
        });
        for (first_negative, dtype, max) in cases {
            let zero = |neg: bool| if neg { -0.0f64 } else { 0.0 };
            // Everything else is below the zeros (max) or above them (min).
            let mut xs = vec![if max { -1.0f64 } else { 1.0 }; rows * cols];
            for r in [3usize, 4, 9, 700] {
                for j in 0..cols {
                    xs[r * cols + j] = zero(first_negative == (r == 3));
                }
            }
            let x = matrix(&xs, dtype, rows, cols);
            let m = if max {
                x.max(Some(&[0]), false)
            } else {
                x.min(Some(&[0]), false)
            };
            let m = m.unwrap().to_vec_f64().unwrap();
            let what = format!("max {max} {dtype} first negative {first_negative}");
            assert!(
                m.iter()
                    .all(|v| *v == 0.0 && v.is_sign_negative() == first_negative),
                "{what}"
            );
            let a = if max {
                x.argmax(Some(0))
            } else {
                x.argmin(Some(0))
            };
            let a = a.unwrap().to_vec::<i64>().unwrap();
            assert!(a.iter().all(|&i| i == 3), "{what}");
        }
    });
    assert_eq!(e.engine.kernels_run(DeviceKind::Gpu), 0);
}

#[test]
fn column_moments_are_accurate_with_a_large_mean() {
    on_every_engine(|_e| {
        for (k, &(rows, cols)) in SHAPES.iter().enumerate() {
            for (dtype, offset, tol) in [(DType::F64, 1e6, 1e-8), (DType::F32, 1e3, 2e-5)] {
                let (x, xs) = array(&[rows, cols], dtype, 500 + k as u64, offset, offset + 1.0);
                let what = format!("{dtype} {rows}x{cols} + {offset}");
                for ddof in [0u32, 1] {
                    let got = x
                        .var(Some(&[0]), false, ddof)
                        .unwrap()
                        .to_vec_f64()
                        .unwrap();
                    let want = reference(ReduceOp::Var { ddof }, &xs, &[rows, cols], &[0]);
                    if rows > ddof as usize {
                        assert_close(&got, &want, tol, 0.0, &format!("var ddof {ddof} {what}"));
                    }
                }
                // mean and std of one input share a kernel (sums and moments).
                let m = x.mean(Some(&[0]), false).unwrap();
                let s = x.std(Some(&[0]), false, 0).unwrap();
                let (m, s) = (m.to_vec_f64().unwrap(), s.to_vec_f64().unwrap());
                let want_m = reference(ReduceOp::Mean, &xs, &[rows, cols], &[0]);
                let want_s = reference(ReduceOp::Std { ddof: 0 }, &xs, &[rows, cols], &[0]);
                assert_close(&m, &want_m, rtol(dtype, 8.0), 0.0, &format!("mean {what}"));
                assert_close(&s, &want_s, tol, 0.0, &format!("std {what}"));
            }
        }
    });
}

#[test]
fn column_moments_and_extremes_in_one_kernel_match_references() {
    // std, argmin and max of one input reduce in one kernel: the first
    // row group sets the moments and folds the extremes its first row set.
    on_every_engine(|e| {
        for (k, &(rows, cols)) in SHAPES.iter().enumerate() {
            // All positive, then all negative: extremes left at a default
            // 0 would win one of the two.
            for (dtype, from, to) in [(DType::F32, 1.0, 3.0), (DType::F64, -3.0, -1.0)] {
                let (x, xs) = array(&[rows, cols], dtype, 700 + k as u64, from, to);
                let s = x.std(Some(&[0]), false, 1).unwrap();
                let lo = x.argmin(Some(0)).unwrap();
                let hi = x.max(Some(&[0]), false).unwrap();
                Array::eval_all(&[s.clone(), lo.clone(), hi.clone()]).unwrap();
                let what = format!("{} {dtype} {rows}x{cols} in [{from}, {to})", e.name);
                let shape = [rows, cols];
                let want_s = reference(ReduceOp::Std { ddof: 1 }, &xs, &shape, &[0]);
                let got_s = s.to_vec_f64().unwrap();
                if rows > 1 {
                    assert_close(
                        &got_s,
                        &want_s,
                        rtol(dtype, 64.0),
                        0.0,
                        &format!("std {what}"),
                    );
                }
                let want_lo = reference(ReduceOp::ArgMin, &xs, &shape, &[0]);
                assert_eq!(lo.to_vec_f64().unwrap(), want_lo, "argmin {what}");
                let want_hi = reference(ReduceOp::Max, &xs, &shape, &[0]);
                assert_eq!(hi.to_vec_f64().unwrap(), want_hi, "max {what}");
            }
        }
    });
}
