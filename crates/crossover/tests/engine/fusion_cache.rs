//! The fusion cache (kernels reused for graphs of the same structure): each
//! test repeats one structure with something `fuse` depends on changed, so
//! a key missing that thing hands back the wrong kernels and a wrong value.
//! Every engine runs each body on one thread, so one thread's cache serves
//! the CPU and the GPU engines alike.

use crate::common::*;
use crossover::{Array, DType, DeviceKind, SliceArg};

fn seq(n: usize, scale: f64) -> Vec<f64> {
    (0..n).map(|i| i as f64 * scale - 1.5).collect()
}

/// `(a + b) * 2` for the given inputs, computed.
fn add_twice(a: &Array, b: &Array) -> Vec<f64> {
    a.add(b).unwrap().mul(2.0).unwrap().to_vec_f64().unwrap()
}

#[test]
fn same_ops_other_shapes_and_dtypes() {
    on_every_engine(|_e| {
        for shape in [&[5usize][..], &[7], &[2, 3], &[3, 2], &[1], &[0]] {
            for dtype in [DType::F32, DType::F64, DType::I64, DType::I32] {
                let n: usize = shape.iter().product();
                let (va, vb) = (seq(n, 1.0), seq(n, 0.25));
                let a = Array::from_vec(va.clone(), shape)
                    .unwrap()
                    .cast(dtype)
                    .unwrap();
                let b = Array::from_vec(vb.clone(), shape)
                    .unwrap()
                    .cast(dtype)
                    .unwrap();
                a.eval().unwrap();
                b.eval().unwrap();
                let want: Vec<f64> = match dtype {
                    DType::F32 => va
                        .iter()
                        .zip(&vb)
                        .map(|(x, y)| ((*x as f32 + *y as f32) * 2.0) as f64)
                        .collect(),
                    DType::F64 => va.iter().zip(&vb).map(|(x, y)| (x + y) * 2.0).collect(),
                    _ => va
                        .iter()
                        .zip(&vb)
                        .map(|(x, y)| ((*x as i64 + *y as i64) * 2) as f64)
                        .collect(),
                };
                assert_eq!(add_twice(&a, &b), want, "{shape:?} {dtype}");
            }
        }
    });
}

#[test]
fn same_ops_other_strides_offsets_and_broadcasts() {
    on_every_engine(|_e| {
        let v = seq(12, 1.0);
        let base = Array::from_vec(v.clone(), &[3, 4]).unwrap();
        let other = Array::from_vec(seq(12, 0.5), &[3, 4]).unwrap();
        let w = other.to_vec_f64().unwrap();
        // Contiguous, then transposed (same shape [4, 3] both times).
        let t = base.transpose().unwrap();
        let c = Array::from_vec(seq(12, 2.0), &[4, 3]).unwrap();
        let o = other.transpose().unwrap();
        let vc = c.to_vec_f64().unwrap();
        let ot = o.to_vec_f64().unwrap();
        let want_c: Vec<f64> = vc.iter().zip(&ot).map(|(x, y)| (x + y) * 2.0).collect();
        assert_eq!(add_twice(&c, &o), want_c);
        let tv = t.to_vec_f64().unwrap();
        let want_t: Vec<f64> = tv.iter().zip(&ot).map(|(x, y)| (x + y) * 2.0).collect();
        assert_eq!(add_twice(&t, &o), want_t);
        // Slices of the same shape at other offsets and steps.
        let row = |start: isize, step: isize| {
            base.reshape(&[12])
                .unwrap()
                .slice(&[SliceArg::Range {
                    start: Some(start),
                    stop: None,
                    step,
                }])
                .unwrap()
                .slice(&[SliceArg::Range {
                    start: None,
                    stop: Some(4),
                    step: 1,
                }])
                .unwrap()
        };
        let four = Array::from_vec(seq(4, 3.0), &[4]).unwrap();
        let f = four.to_vec_f64().unwrap();
        for (start, step) in [(0, 1), (1, 1), (0, 2), (2, 3), (11, -2)] {
            let s = row(start, step);
            let sv: Vec<f64> = (0..4)
                .map(|i| v[(start + i as isize * step) as usize])
                .collect();
            let want: Vec<f64> = sv.iter().zip(&f).map(|(x, y)| (x + y) * 2.0).collect();
            assert_eq!(add_twice(&s, &four), want, "start {start} step {step}");
        }
        // A broadcast input where a full one was before.
        let full = Array::from_vec(seq(12, 1.0), &[3, 4]).unwrap();
        assert_eq!(
            add_twice(&full, &other),
            v.iter()
                .zip(&w)
                .map(|(x, y)| (x + y) * 2.0)
                .collect::<Vec<_>>()
        );
        let bc = four.broadcast_to(&[3, 4]).unwrap();
        let want: Vec<f64> = (0..12).map(|i| (f[i % 4] + w[i]) * 2.0).collect();
        assert_eq!(add_twice(&bc, &other), want);
    });
}

#[test]
fn same_ops_other_scalars_and_aliasing() {
    on_every_engine(|_e| {
        let x = Array::from_vec(seq(6, 1.0), &[6]).unwrap();
        let y = Array::from_vec(seq(6, -1.0), &[6]).unwrap();
        let (vx, vy) = (x.to_vec_f64().unwrap(), y.to_vec_f64().unwrap());
        for k in [1.0, 2.0, -0.0, 0.5] {
            let got = x.add(k).unwrap().to_vec_f64().unwrap();
            assert_eq!(got, vx.iter().map(|v| v + k).collect::<Vec<_>>(), "{k}");
        }
        // x + x reads one input; x + y two: not the same kernels.
        let twice = x.add(&x).unwrap().to_vec_f64().unwrap();
        assert_eq!(twice, vx.iter().map(|v| v + v).collect::<Vec<_>>());
        let sum = x.add(&y).unwrap().to_vec_f64().unwrap();
        assert_eq!(
            sum,
            vx.iter().zip(&vy).map(|(a, b)| a + b).collect::<Vec<_>>()
        );
        let twice = y.add(&y).unwrap().to_vec_f64().unwrap();
        assert_eq!(twice, vy.iter().map(|v| v + v).collect::<Vec<_>>());
        // A shared intermediate requested too, then not.
        let m = x.mul(&y).unwrap();
        let r = m.add(1.0).unwrap();
        Array::eval_all(&[m.clone(), r.clone()]).unwrap();
        let vm: Vec<f64> = vx.iter().zip(&vy).map(|(a, b)| a * b).collect();
        assert_eq!(m.to_vec_f64().unwrap(), vm);
        assert_eq!(
            r.to_vec_f64().unwrap(),
            vm.iter().map(|v| v + 1.0).collect::<Vec<_>>()
        );
        let r = x.mul(&y).unwrap().add(1.0).unwrap();
        assert_eq!(
            r.to_vec_f64().unwrap(),
            vm.iter().map(|v| v + 1.0).collect::<Vec<_>>()
        );
    });
}

#[test]
fn same_reduction_other_axes_and_shapes() {
    on_every_engine(|_e| {
        let v = seq(24, 1.0);
        let a = Array::from_vec(v.clone(), &[2, 3, 4]).unwrap();
        let b = Array::from_vec(v.clone(), &[4, 3, 2]).unwrap();
        let total: f64 = v.iter().map(|x| x * 3.0).sum();
        for arr in [&a, &b] {
            let s = arr.mul(3.0).unwrap().sum(None, false).unwrap();
            assert!((s.to_vec_f64().unwrap()[0] - total).abs() < 1e-9);
        }
        for axis in [0isize, 1, 2] {
            let s = a.mul(3.0).unwrap().sum(Some(&[axis]), false).unwrap();
            let got = s.to_vec_f64().unwrap();
            let mut want = vec![0.0; 24 / [2, 3, 4][axis as usize]];
            for i in 0..2 {
                for j in 0..3 {
                    for k in 0..4 {
                        let x = v[i * 12 + j * 4 + k] * 3.0;
                        let o = match axis {
                            0 => j * 4 + k,
                            1 => i * 4 + k,
                            _ => i * 3 + j,
                        };
                        want[o] += x;
                    }
                }
            }
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "axis {axis}: {got:?} {want:?}");
            }
        }
    });
}

/// A graph the cache knows as one kernel is bound straight from its
/// template when only the CPU runs (no `Kernel` made): each repeat must read
/// its own inputs (new values, a pending view of a new ready base) and
/// write its own outputs, on sizes around the interpreter's chunk.
#[test]
fn one_kernel_graphs_repeat_with_their_own_inputs() {
    on_every_engine(|e| {
        for &n in &EDGE_SIZES[..5] {
            for repeat in 0..3 {
                let shift = 0.25 + repeat as f64;
                let v: Vec<f64> = (0..2 * n)
                    .map(|i| (i as f64 * 0.731 + shift).sin() * 4.0)
                    .collect();
                let base = Array::from_vec(v.clone(), &[n, 2]).unwrap();
                base.eval().unwrap();
                // [2, n], a view of the ready base: resolved, not copied.
                let t = base.transpose().unwrap();
                let want: Vec<f64> = (0..2 * n)
                    .map(|k| {
                        let x = v[(k % n) * 2 + k / n];
                        x * x + shift
                    })
                    .collect();
                let before = e.engine.kernels_run(DeviceKind::Cpu);
                let sq = t.mul(&t).unwrap().add(shift).unwrap();
                sq.eval().unwrap();
                if e.name == "cpu" {
                    assert_eq!(e.engine.kernels_run(DeviceKind::Cpu), before + 1, "n {n}");
                }
                // (A GPU compiler may contract `x * x + shift` into one
                // rounding: a tolerance, not bits.)
                close(&sq.to_vec_f64().unwrap(), &want, n);
                // A reduction closing the chain, the chain requested too.
                let sq = t.mul(&t).unwrap().add(shift).unwrap();
                let total = sq.sum(None, false).unwrap();
                Array::eval_all(&[sq.clone(), total.clone()]).unwrap();
                close(&sq.to_vec_f64().unwrap(), &want, n);
                let expected: f64 = want.iter().sum();
                let got = total.to_vec_f64().unwrap()[0];
                assert!(
                    (got - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                    "n {n}: {got} vs {expected}"
                );
            }
        }
    });
}

fn close(got: &[f64], want: &[f64], n: usize) {
    assert_eq!(got.len(), want.len(), "n {n}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-14 * w.abs().max(1.0),
            "n {n} [{k}]: {g} vs {w}"
        );
    }
}
