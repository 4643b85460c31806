//! Reductions against float64 references: all axes, one axis, several
//! axes, keepdims, ddof, NaN rules, accuracy and stability.

use crate::common::*;
use crossover::{Array, DType, ReduceOp};

/// Compensated (Neumaier) sum: accurate to about one rounding, so the
/// reference is not itself the noisy side of the comparison.
fn ksum(it: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in it {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    s + c
}

/// The values of `x` (row-major `shape`) grouped by output position of a
/// reduction over `axes`, each group in row-major order.
fn group(x: &[f64], shape: &[usize], axes: &[usize]) -> Vec<Vec<f64>> {
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let kshape: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); kshape.iter().product()];
    let mut idx = vec![0usize; shape.len()];
    for &v in x {
        let k = kept.iter().fold(0, |acc, &a| acc * shape[a] + idx[a]);
        groups[k].push(v);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    groups
}

/// Reference reduction over `axes` of `x` (row-major `shape`).
pub(crate) fn reference(op: ReduceOp, x: &[f64], shape: &[usize], axes: &[usize]) -> Vec<f64> {
    reduce_groups(op, &group(x, shape, axes))
}

fn reduce_groups(op: ReduceOp, groups: &[Vec<f64>]) -> Vec<f64> {
    groups
        .iter()
        .map(|g| {
            let n = g.len() as f64;
            let mean = ksum(g.iter().copied()) / n;
            let var =
                |ddof: u32| ksum(g.iter().map(|v| (v - mean).powi(2))) / (n - ddof as f64).max(0.0);
            let first = |better: fn(f64, f64) -> bool| {
                let mut best = 0;
                for (i, &v) in g.iter().enumerate() {
                    if g[best].is_nan() {
                        break;
                    }
                    if v.is_nan() || better(v, g[best]) {
                        best = i;
                    }
                }
                best as f64
            };
            match op {
                ReduceOp::Sum => ksum(g.iter().copied()),
                ReduceOp::Mean => mean,
                ReduceOp::Var { ddof } => var(ddof),
                ReduceOp::Std { ddof } => var(ddof).sqrt(),
                ReduceOp::Min => g.iter().copied().fold(f64::INFINITY, |a, b| {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.min(b)
                    }
                }),
                ReduceOp::Max => g.iter().copied().fold(f64::NEG_INFINITY, |a, b| {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.max(b)
                    }
                }),
                ReduceOp::ArgMin => first(|a, b| a < b),
                ReduceOp::ArgMax => first(|a, b| a > b),
                ReduceOp::Prod => g.iter().product(),
            }
        })
        .collect()
}

const OPS: [ReduceOp; 8] = [
    ReduceOp::Sum,
    ReduceOp::Mean,
    ReduceOp::Var { ddof: 0 },
    ReduceOp::Std { ddof: 1 },
    ReduceOp::Min,
    ReduceOp::Max,
    ReduceOp::ArgMin,
    ReduceOp::ArgMax,
];

fn check(x: &Array, xs: &[f64], shape: &[usize], axes: &[usize], what: &str) {
    let dtype = x.dtype();
    let groups = group(xs, shape, axes);
    let abs_groups: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().map(|v| v.abs()).collect())
        .collect();
    for op in OPS {
        let arg = matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax);
        if arg && axes.len() > 1 && axes.len() != shape.len() {
            continue;
        }
        let ax: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
        for keepdims in [false, true] {
            if arg && keepdims {
                continue;
            }
            let got = x.reduce(op, Some(&ax), keepdims).unwrap();
            let want_shape: Vec<usize> = (0..shape.len())
                .filter_map(|i| {
                    if axes.contains(&i) {
                        keepdims.then_some(1)
                    } else {
                        Some(shape[i])
                    }
                })
                .collect();
            assert_eq!(got.shape(), &want_shape[..], "{what} {} shape", op.name());
            let want = reduce_groups(op, &groups);
            // Sums are judged against the sum of magnitudes (cancellation).
            let scale = match op {
                ReduceOp::Sum | ReduceOp::Mean => reduce_groups(op, &abs_groups),
                _ => want.iter().map(|v| v.abs()).collect(),
            };
            let exact = matches!(
                op,
                ReduceOp::ArgMin | ReduceOp::ArgMax | ReduceOp::Min | ReduceOp::Max
            );
            let got = got.to_vec_f64().unwrap();
            for i in 0..want.len() {
                // f32 results come from f64 accumulation (about 1 ulp); f64 sums
                // of thousands of terms drift by tens of ulp.
                let ulps = if dtype == DType::F32 { 8.0 } else { 64.0 };
                let tol = if exact {
                    0.0
                } else {
                    rtol(dtype, ulps) * scale[i]
                };
                assert!(
                    (got[i] - want[i]).abs() <= tol,
                    "{what} {} axes {axes:?} [{i}]: got {}, want {} (tol {tol:e})",
                    op.name(),
                    got[i],
                    want[i]
                );
            }
        }
    }
}

#[test]
fn every_reduction_over_every_axis_set() {
    on_every_engine(|_e| {
        // Trailing (inner runs), leading (column-wise), middle (permuted) axes,
        // with sizes that cross chunk edges.
        let shapes: [&[usize]; 4] = [&[5, 3000], &[2100, 700], &[3, 5, 7, 11], &[4, 65_600]];
        for (si, shape) in shapes.iter().enumerate() {
            for dtype in [DType::F32, DType::F64] {
                let (x, xs) = array(shape, dtype, 40 + si as u64, -10.0, 10.0);
                let nd = shape.len();
                let mut axis_sets: Vec<Vec<usize>> = (0..nd).map(|a| vec![a]).collect();
                axis_sets.push((0..nd).collect());
                if nd > 2 {
                    axis_sets.push(vec![1, 2]);
                    axis_sets.push(vec![0, 2]);
                    axis_sets.push(vec![0, 3]);
                }
                for axes in axis_sets {
                    check(&x, &xs, shape, &axes, &format!("{dtype} {shape:?}"));
                }
            }
        }
    });
}

/// Products over all axes, the last axis (inner mode) and the leading axis
/// (outer mode), on sizes crossing chunk and task edges; values near 1 keep
/// the products finite. Integers wrap in int64 like NumPy's.
#[test]
fn products_match_f64_and_integers_wrap() {
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for (k, shape) in [&[2049][..], &[3, 4097], &[131_073], &[700, 5]]
                .into_iter()
                .enumerate()
            {
                let (x, xs) = array(shape, dtype, 40 + k as u64, 0.97, 1.03);
                for axes in [vec![], vec![shape.len() - 1], vec![0]] {
                    let ax: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                    let all: Vec<usize> = (0..shape.len()).collect();
                    let (got, want) = if axes.is_empty() {
                        (
                            x.prod(None, false),
                            reference(ReduceOp::Prod, &xs, shape, &all),
                        )
                    } else {
                        (
                            x.prod(Some(&ax), false),
                            reference(ReduceOp::Prod, &xs, shape, &axes),
                        )
                    };
                    let got = got.unwrap();
                    assert_eq!(got.dtype(), dtype);
                    // Products in f64 (one rounding per factor), rounded once.
                    let tol = rtol(dtype, 2.0) + 1e-11;
                    let what = format!("prod {dtype} {shape:?} axes {axes:?}");
                    assert_close(&got.to_vec_f64().unwrap(), &want, tol, 0.0, &what);
                }
            }
        }
        // int32 products wrap in int64; bool products are all().
        let (x, xs) = array(&[5, 300], DType::I32, 9, -4.0, 5.0);
        let p = x.prod(Some(&[1]), false).unwrap();
        assert_eq!(p.dtype(), DType::I64);
        let want: Vec<i64> = xs
            .chunks(300)
            .map(|r| r.iter().fold(1i64, |a, &v| a.wrapping_mul(v as i64)))
            .collect();
        assert_eq!(p.to_vec::<i64>().unwrap(), want);
        let (b, bs) = array(&[4, 9], DType::Bool, 10, 0.0, 1.0);
        let want: Vec<i64> = bs
            .chunks(9)
            .map(|r| r.iter().all(|&v| v != 0.0) as i64)
            .collect();
        assert_eq!(
            b.prod(Some(&[1]), false).unwrap().to_vec::<i64>().unwrap(),
            want
        );
        // The empty product is 1, and a product fuses with its chain.
        let (e, _) = array(&[0, 3], DType::F64, 11, 0.0, 1.0);
        assert_eq!(
            e.prod(Some(&[0]), false).unwrap().to_vec_f64().unwrap(),
            vec![1.0; 3]
        );
        let (y, ys) = array(&[1000], DType::F64, 12, 0.5, 1.5);
        let fused = y.mul(2.0).unwrap().prod(None, false).unwrap();
        assert_eq!(
            crossover::lower(std::slice::from_ref(&fused))
                .unwrap()
                .len(),
            1
        );
        let want: f64 = ys.iter().map(|v| v * 2.0).product();
        assert_close(&[fused.item().unwrap()], &[want], 1e-12, 0.0, "fused prod");
    });
}

#[test]
fn integer_and_bool_reductions_use_numpy_dtypes() {
    on_every_engine(|_e| {
        let (x, xs) = array(&[3, 4097], DType::I32, 7, -100.0, 100.0);
        let s = x.sum(Some(&[1]), false).unwrap();
        assert_eq!(s.dtype(), DType::I64);
        assert_eq!(
            s.to_vec_f64().unwrap(),
            reference(ReduceOp::Sum, &xs, &[3, 4097], &[1])
        );
        let m = x.mean(None, false).unwrap();
        assert_eq!(m.dtype(), DType::F64);
        assert!((m.item().unwrap() - xs.iter().sum::<f64>() / xs.len() as f64).abs() < 1e-12);
        assert_eq!(x.max(None, false).unwrap().dtype(), DType::I32);
        assert_eq!(
            x.argmax(None).unwrap().item().unwrap(),
            reference(ReduceOp::ArgMax, &xs, &[3, 4097], &[0, 1])[0]
        );
        let (b, bs) = array(&[10_001], DType::Bool, 8, 0.0, 1.0);
        assert_eq!(
            b.sum(None, false).unwrap().to_vec::<i64>().unwrap()[0] as f64,
            bs.iter().sum::<f64>()
        );
        let frac = b.mean(None, false).unwrap();
        assert_eq!(frac.dtype(), DType::F64);
        assert!((frac.item().unwrap() - bs.iter().sum::<f64>() / 10_001.0).abs() < 1e-15);
    });
}

#[test]
fn nans_propagate_and_argmax_finds_the_first() {
    on_every_engine(|_e| {
        let x = Array::from_vec(vec![1.0f32, 5.0, f32::NAN, 5.0, f32::NAN, -2.0], &[6]).unwrap();
        assert!(x.max(None, false).unwrap().item().unwrap().is_nan());
        assert!(x.min(None, false).unwrap().item().unwrap().is_nan());
        assert_eq!(x.argmax(None).unwrap().item().unwrap(), 2.0);
        assert_eq!(x.argmin(None).unwrap().item().unwrap(), 2.0);
        let y = Array::from_vec(vec![3.0f64, 7.0, 7.0, -1.0, -1.0], &[5]).unwrap();
        assert_eq!(
            y.argmax(None).unwrap().item().unwrap(),
            1.0,
            "ties: first occurrence"
        );
        assert_eq!(y.argmin(None).unwrap().item().unwrap(), 3.0);
        // Ties and NaNs inside long rows, in and across 16-lane blocks and
        // the 2048-point chunks.
        for (tie, later, nan) in [(37, 4000, 4099), (2047, 2048, 2049), (15, 16, 4999)] {
            let mut v: Vec<f64> = values(5000, tie as u64, -1.0, 1.0);
            v[tie] = 9.0;
            v[later] = 9.0;
            v[tie + 1] = -9.0;
            let a = Array::from_vec(v.clone(), &[5000]).unwrap();
            assert_eq!(a.argmax(None).unwrap().item().unwrap(), tie as f64);
            assert_eq!(a.argmin(None).unwrap().item().unwrap(), (tie + 1) as f64);
            v[nan] = f64::NAN;
            v[nan - 1] = f64::NAN;
            let a = Array::from_vec(v, &[5000]).unwrap();
            assert_eq!(a.argmax(None).unwrap().item().unwrap(), (nan - 1) as f64);
            assert_eq!(a.argmin(None).unwrap().item().unwrap(), (nan - 1) as f64);
        }
        // NaN in a column-wise (outer) reduction.
        let mut v = vec![1.0f64; 3 * 1000];
        v[1000 + 17] = f64::NAN;
        let m = Array::from_vec(v, &[3, 1000])
            .unwrap()
            .max(Some(&[0]), false)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert!(m[17].is_nan() && m[16] == 1.0);
    });
}

#[test]
fn f32_sum_of_100m_uniforms_is_accurate() {
    on_every_engine(|_e| {
        // A naive running f32 sum is 66% off here; the engine must be within
        // 1e-6 of the exact value.
        let mut rng = crossover::Generator::new(99);
        let x = rng.uniform(&[100_000_000], DType::F32).unwrap();
        x.eval().unwrap();
        let exact: f64 = x.to_vec::<f32>().unwrap().iter().map(|&v| v as f64).sum();
        let got = x.sum(None, false).unwrap().item().unwrap();
        assert!(((got - exact) / exact).abs() < 1e-6, "sum {got} vs {exact}");
        let mean = x.mean(None, false).unwrap().item().unwrap();
        assert!(((mean - exact / 1e8) / (exact / 1e8)).abs() < 1e-6);
    });
}

#[test]
fn variance_is_stable_for_data_with_a_large_mean() {
    on_every_engine(|_e| {
        let (noise, ns) = array(&[1_000_003], DType::F64, 77, 0.0, 1.0);
        let x = noise.add(1e8).unwrap();
        let xs: Vec<f64> = ns.iter().map(|v| v + 1e8).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let want = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        let got = x.var(None, false, 0).unwrap().item().unwrap();
        assert!(((got - want) / want).abs() < 1e-6, "var {got} vs {want}");
        // f32 data offset by 1e4 (f32 has 7 digits): still accurate.
        let (y, ys) = array(&[3, 100_000], DType::F32, 78, 1e4, 1e4 + 1.0);
        let s = y.std(Some(&[1]), false, 1).unwrap().to_vec_f64().unwrap();
        assert_close(
            &s,
            &reference(ReduceOp::Std { ddof: 1 }, &ys, &[3, 100_000], &[1]),
            1e-5,
            0.0,
            "std f32 offset",
        );
    });
}

#[test]
fn ddof_beyond_the_count_gives_inf_or_nan_like_numpy() {
    on_every_engine(|_e| {
        let x = Array::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        assert!(x.var(None, false, 2).unwrap().item().unwrap().is_infinite());
        let one = Array::from_vec(vec![1.0f64], &[1]).unwrap();
        assert!(one.var(None, false, 1).unwrap().item().unwrap().is_nan());
    });
}

#[test]
fn reductions_of_views_and_fused_chains() {
    on_every_engine(|_e| {
        let (a, xa) = array(&[300, 500], DType::F64, 90, -1.0, 1.0);
        // Sum over a transposed view: same numbers, other order.
        let t = a.transpose().unwrap();
        let got = t.sum(Some(&[1]), false).unwrap().to_vec_f64().unwrap();
        assert_close(
            &got,
            &reference(ReduceOp::Sum, &xa, &[300, 500], &[0]),
            1e-12,
            1e-12,
            "sum of a.T",
        );
        // std(a*b + 1) in one kernel that writes only the result.
        let (b, xb) = array(&[300, 500], DType::F64, 91, -1.0, 1.0);
        let s = a
            .mul(&b)
            .unwrap()
            .add(1.0)
            .unwrap()
            .std(Some(&[0]), false, 0)
            .unwrap();
        let ks = crossover::lower(std::slice::from_ref(&s)).unwrap();
        assert_eq!(ks.len(), 1, "the reduction swallows its chain");
        let prod: Vec<f64> = xa.iter().zip(&xb).map(|(p, q)| p * q + 1.0).collect();
        assert_close(
            &s.to_vec_f64().unwrap(),
            &reference(ReduceOp::Std { ddof: 0 }, &prod, &[300, 500], &[0]),
            1e-10,
            1e-12,
            "std(a*b+1)",
        );
    });
}

/// Programs whose registers would overflow L1 at 2,048 points run in
/// shorter chunks (down to 512): sums, means, std and extremes of such
/// fused chains at sizes around those chunk edges and the task grid, rows
/// cut by chunks included, against float64 references.
#[test]
fn wide_programs_in_short_chunks_match_references() {
    on_every_engine(|_e| {
        for n in [511, 512, 513, 1_537, 70_001, 262_147] {
            let (x, xs) = array(&[n], DType::F64, 93, -1.0, 1.0);
            // where(x > 0.5, x*x, -x): 4 float64-wide registers plus x.
            let w =
                Array::where_(&x.gt(0.5).unwrap(), x.mul(&x).unwrap(), x.neg().unwrap()).unwrap();
            let ws: Vec<f64> = xs
                .iter()
                .map(|&v| if v > 0.5 { v * v } else { -v })
                .collect();
            let what = format!("where-sum n={n}");
            let abs: Vec<f64> = ws.iter().map(|v| v.abs()).collect();
            let tol = 64.0 * f64::EPSILON * ksum(abs.iter().copied());
            let got = w.sum(None, false).unwrap().to_vec_f64().unwrap()[0];
            let want = ksum(ws.iter().copied());
            assert!((got - want).abs() <= tol, "{what}: {got} vs {want}");
            let got = w.std(None, false, 0).unwrap().to_vec_f64().unwrap();
            let want = reference(ReduceOp::Std { ddof: 0 }, &ws, &[n], &[0]);
            assert_close(&got, &want, 1e-11, 1e-12, &what);
            let got = w.reduce(ReduceOp::ArgMax, None, false).unwrap();
            let want = reference(ReduceOp::ArgMax, &ws, &[n], &[0]);
            assert_eq!(got.to_vec_f64().unwrap(), want, "{what} argmax");
            // Rows of 1,000 cut by every chunk length: a row-wise mean.
            if n % 1_000 != 0 && n > 2_000 {
                let rows = n / 1_000;
                let m = w
                    .slice(&[crossover::SliceArg::range(0, (rows * 1_000) as isize)])
                    .unwrap()
                    .reshape(&[rows as isize, 1_000])
                    .unwrap()
                    .mean(Some(&[1]), false)
                    .unwrap();
                let want = reference(ReduceOp::Mean, &ws[..rows * 1_000], &[rows, 1_000], &[1]);
                assert_close(&m.to_vec_f64().unwrap(), &want, 1e-12, 1e-13, &what);
            }
        }
    });
}

/// cumsum/cumprod along each axis and over the flattened array, of views
/// and fused chains, against sequential float64 references; integers wrap
/// in int64; bad axes and complex input are typed errors.
#[test]
fn scans_match_sequential_references() {
    on_every_engine(|_e| {
        let shape = [37, 5, 130];
        for dtype in [DType::F32, DType::F64] {
            let (x, xs) = array(&shape, dtype, 60, 0.98, 1.02);
            for prod in [false, true] {
                let step = |a: f64, v: f64| if prod { a * v } else { a + v };
                let start = if prod { 1.0 } else { 0.0 };
                // Flattened.
                let got = if prod {
                    x.cumprod(None)
                } else {
                    x.cumsum(None)
                }
                .unwrap();
                assert_eq!((got.shape(), got.dtype()), (&[xs.len()][..], dtype));
                let mut acc = start;
                let want: Vec<f64> = xs
                    .iter()
                    .map(|&v| {
                        acc = step(acc, v);
                        acc
                    })
                    .collect();
                let tol = rtol(dtype, 2.0) + 1e-12;
                assert_close(&got.to_vec_f64().unwrap(), &want, tol, 0.0, "flat scan");
                // Along each axis (negative spelling for the last).
                for (axis, spelled) in [(0usize, 0isize), (1, 1), (2, -1)] {
                    let got = if prod {
                        x.cumprod(Some(spelled))
                    } else {
                        x.cumsum(Some(spelled))
                    }
                    .unwrap();
                    let inner: usize = shape[axis + 1..].iter().product();
                    let n = shape[axis];
                    // Row-major order: the element one step back along the
                    // axis (i - inner) is already final.
                    let mut want = xs.clone();
                    for i in 0..xs.len() {
                        let k = (i / inner) % n;
                        want[i] = if k == 0 {
                            step(start, xs[i])
                        } else {
                            step(want[i - inner], xs[i])
                        };
                    }
                    let what = format!("scan {dtype} prod={prod} axis={spelled}");
                    assert_close(&got.to_vec_f64().unwrap(), &want, tol, 0.0, &what);
                }
            }
            // Of a fused chain read through a transposed view.
            let t = x.mul(2.0).unwrap().transpose().unwrap();
            let got = t.cumsum(Some(0)).unwrap();
            assert_eq!(got.shape(), &[130, 5, 37]);
            let first: Vec<f64> = got.to_vec_f64().unwrap()[..5 * 37].to_vec();
            let want: Vec<f64> = (0..5 * 37)
                .map(|j| {
                    let (b, c) = (j / 37, j % 37);
                    2.0 * xs[c * 5 * 130 + b * 130]
                })
                .collect();
            assert_close(&first, &want, rtol(dtype, 1.0), 0.0, "scan of a view");
        }
        let (i, is) = array(&[4, 100], DType::I32, 61, -4.0, 5.0);
        let got = i.cumprod(Some(1)).unwrap();
        assert_eq!(got.dtype(), DType::I64);
        let mut want = Vec::new();
        for row in is.chunks(100) {
            let mut acc = 1i64;
            for &v in row {
                acc = acc.wrapping_mul(v as i64);
                want.push(acc);
            }
        }
        assert_eq!(got.to_vec::<i64>().unwrap(), want);
        assert!(matches!(
            i.cumsum(Some(2)),
            Err(crossover::Error::Axis { .. })
        ));
        let z = Array::from_vec(vec![num_complex::Complex64::new(1.0, 1.0); 3], &[3]).unwrap();
        assert!(matches!(
            z.cumsum(None),
            Err(crossover::Error::DType { .. })
        ));
    });
}

#[test]
fn extremes_of_rows_longer_than_a_task_find_the_first_tie() {
    // Rows read straight from memory are scanned in whole-task segments
    // (65,536 points for extremes) with one index per lane: many ties (integers and
    // whole floats in [-50, 50)), rows longer than a task, rows cut by task
    // edges, and a NaN late in one row.
    on_every_engine(|_e| {
        for (shape, seed) in [
            ([1usize, 300_007usize], 3u64),
            ([3, 131_073], 4),
            ([5, 70_001], 5),
        ] {
            let n = shape[0] * shape[1];
            let ints: Vec<f64> = values(n, seed, -50.0, 50.0)
                .iter()
                .map(|x| x.floor())
                .collect();
            let mut with_nan = ints.clone();
            with_nan[n - 1000] = f64::NAN;
            let arrays = [
                (
                    Array::from_vec(ints.iter().map(|&x| x as i32).collect(), &shape).unwrap(),
                    &ints,
                ),
                (
                    Array::from_vec(ints.iter().map(|&x| x as f32).collect(), &shape).unwrap(),
                    &ints,
                ),
                (
                    Array::from_vec(with_nan.clone(), &shape).unwrap(),
                    &with_nan,
                ),
            ];
            for (x, xs) in arrays {
                for op in [
                    ReduceOp::ArgMax,
                    ReduceOp::ArgMin,
                    ReduceOp::Max,
                    ReduceOp::Min,
                ] {
                    for axis in [None, Some(1isize)] {
                        let got = match (op, axis) {
                            (ReduceOp::ArgMax, a) => x.argmax(a),
                            (ReduceOp::ArgMin, a) => x.argmin(a),
                            (ReduceOp::Max, a) => x.max(a.map(|_| &[1isize][..]), false),
                            (_, a) => x.min(a.map(|_| &[1isize][..]), false),
                        }
                        .unwrap()
                        .to_vec_f64()
                        .unwrap();
                        let axes: &[usize] = if axis.is_some() { &[1] } else { &[0, 1] };
                        let want = reference(op, xs, &shape, axes);
                        let same = got
                            .iter()
                            .zip(&want)
                            .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
                        assert!(
                            same,
                            "{op:?} axis {axis:?} of {shape:?} {:?}: {got:?} vs {want:?}",
                            x.dtype()
                        );
                    }
                }
            }
        }
    });
}
