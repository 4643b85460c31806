//! Compiled graphs (a graph's fused kernels run again on new inputs):
//! on an engine with only the CPU, the same bits as the general path on
//! every new input; declined (nothing run) where the inputs are not what
//! the graph was captured with, or where a GPU could take the kernel.

use crate::common::*;
use crossover::compiled::CompiledGraph;
use crossover::shape::Layout;
use crossover::{Array, DType};
use std::sync::Arc;

/// `sum(where(x > 0.5, x * y, -x))`, pending.
fn conditional_sum(x: &Array, y: &Array) -> Array {
    let mask = x.gt(0.5).unwrap();
    Array::where_(&mask, x.mul(y).unwrap(), x.neg().unwrap())
        .unwrap()
        .sum(None, false)
        .unwrap()
}

/// The float64 reference of [`conditional_sum`].
fn conditional_sum_ref(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| if a > 0.5 { a * b } else { -a })
        .sum()
}

/// Whether `e` runs compiled graphs (only the CPU can run anything there).
/// A graph captured with one array given as both inputs.
fn captured_reading_twice(x: &Array) -> CompiledGraph {
    CompiledGraph::capture(
        &[x.clone(), x.clone()],
        &[],
        &[x.sub(x).unwrap().sum(None, false).unwrap()],
    )
    .unwrap()
}

fn runs_compiled(e: &TestEngine) -> bool {
    e.name == "cpu"
}

#[test]
fn runs_give_the_general_paths_bits_on_new_inputs() {
    on_every_engine_lenient(|e| {
        for dtype in [DType::F32, DType::F64] {
            for n in [7, 2049, 65_537] {
                let (x, _) = array(&[n], dtype, 1, 0.0, 1.0);
                let (y, _) = array(&[n], dtype, 2, -2.0, 2.0);
                let c = CompiledGraph::capture(
                    &[x.clone(), y.clone()],
                    &[],
                    &[conditional_sum(&x, &y)],
                )
                .expect("fused kernels");
                assert_eq!(c.points(), n);
                for seed in 3..6 {
                    let (x2, vx) = array(&[n], dtype, seed, 0.0, 1.0);
                    let (y2, vy) = array(&[n], dtype, seed + 10, -2.0, 2.0);
                    let general = conditional_sum(&x2, &y2).to_vec_f64().unwrap();
                    let run = c.run(&[x2, y2]).unwrap();
                    if !runs_compiled(e) {
                        assert!(run.is_none(), "{}: ran beside a GPU", e.name);
                        continue;
                    }
                    let out = run.expect("same dtypes and layouts");
                    assert_eq!(out.len(), 1);
                    assert_eq!(out[0].dtype(), dtype);
                    let got = out[0].to_vec_f64().unwrap();
                    assert_eq!(got[0].to_bits(), general[0].to_bits(), "{dtype} n={n}");
                    let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
                    assert_close(
                        &got,
                        &[conditional_sum_ref(&vx, &vy)],
                        rtol,
                        1e-9,
                        "compiled",
                    );
                }
            }
        }
    });
}

#[test]
fn several_outputs_come_back_in_the_requested_order() {
    on_every_engine_lenient(|e| {
        let n = 4099;
        let (x, _) = array(&[n], DType::F64, 7, -1.0, 1.0);
        let y = x.mul(3.0).unwrap().add(1.0).unwrap();
        let z = x.abs().unwrap();
        let c =
            CompiledGraph::capture(std::slice::from_ref(&x), &[], &[z, y]).expect("fused kernels");
        let (x2, v) = array(&[n], DType::F64, 8, -1.0, 1.0);
        let Some(out) = c.run(&[x2]).unwrap() else {
            assert!(!runs_compiled(e));
            return;
        };
        let abs: Vec<f64> = v.iter().map(|a| a.abs()).collect();
        let lin: Vec<f64> = v.iter().map(|a| a * 3.0 + 1.0).collect();
        assert_close(&out[0].to_vec_f64().unwrap(), &abs, 0.0, 0.0, "abs");
        assert_close(&out[1].to_vec_f64().unwrap(), &lin, 1e-15, 0.0, "3x + 1");
    });
}

#[test]
fn inputs_unlike_the_captured_ones_are_declined() {
    let cpu = engines()
        .into_iter()
        .find(runs_compiled)
        .expect("a CPU engine");
    cpu.run(|| {
        let n = 3001;
        let (x, _) = array(&[n], DType::F64, 1, 0.0, 1.0);
        let (y, _) = array(&[n], DType::F64, 2, 0.0, 1.0);
        let c = CompiledGraph::capture(&[x.clone(), y.clone()], &[], &[conditional_sum(&x, &y)])
            .unwrap();
        assert!(c.run(&[x.clone(), y.clone()]).unwrap().is_some());
        // Another dtype, a strided layout, a pending input, a missing input.
        let (x32, _) = array(&[n], DType::F32, 3, 0.0, 1.0);
        let (wide, _) = array(&[2 * n], DType::F64, 4, 0.0, 1.0);
        let buffer = wide.eval().and_then(|_| wide.to_vec::<f64>()).unwrap();
        let strided = Array::from_shared(
            Arc::new(crossover::buffer::Buffer::from_elements(&buffer).unwrap()),
            Layout {
                shape: vec![n],
                strides: vec![2],
                offset: 1,
            },
        )
        .unwrap();
        let pending = x.mul(2.0).unwrap();
        for inputs in [
            vec![x32, y.clone()],
            vec![strided, y.clone()],
            vec![pending, y.clone()],
            vec![x.clone()],
        ] {
            assert!(c.run(&inputs).unwrap().is_none());
        }
        // Captured with one array read twice, run with two: declined (the
        // kernel reads a shared input once).
        let twice = captured_reading_twice(&x);
        assert!(twice.run(&[x.clone(), x.clone()]).unwrap().is_some());
        assert!(twice.run(&[x.clone(), y.clone()]).unwrap().is_none());
    });
}

#[test]
fn constants_are_bound_and_other_ready_arrays_refused() {
    let cpu = engines()
        .into_iter()
        .find(runs_compiled)
        .expect("a CPU engine");
    cpu.run(|| {
        let n = 2049;
        let (x, vx) = array(&[n], DType::F64, 1, -1.0, 1.0);
        let (w, vw) = array(&[n], DType::F64, 2, -1.0, 1.0);
        w.eval().unwrap();
        let y = x.mul(&w).unwrap().max(None, false).unwrap();
        // `w` is neither an input nor a constant: its value could change.
        assert!(
            CompiledGraph::capture(std::slice::from_ref(&x), &[], std::slice::from_ref(&y))
                .is_none()
        );
        let c = CompiledGraph::capture(std::slice::from_ref(&x), std::slice::from_ref(&w), &[y])
            .unwrap();
        let (x2, vx2) = array(&[n], DType::F64, 3, -1.0, 1.0);
        for (a, v) in [(x.clone(), vx), (x2, vx2)] {
            let out = c.run(&[a]).unwrap().unwrap();
            let want = v
                .iter()
                .zip(&vw)
                .map(|(p, q)| p * q)
                .fold(f64::MIN, f64::max);
            assert_eq!(out[0].to_vec_f64().unwrap(), vec![want]);
        }
        // An output already computed (the input itself) is no graph.
        assert!(
            CompiledGraph::capture(std::slice::from_ref(&x), &[], std::slice::from_ref(&x))
                .is_none()
        );
    });
}

#[test]
fn kernels_reading_earlier_kernels_results_run_in_order() {
    on_every_engine_lenient(|e| {
        // Row means end a kernel; the centred sine reads them: two kernels.
        let centred = |m: &Array| {
            m.sub(m.mean(Some(&[1]), true).unwrap())
                .unwrap()
                .sin()
                .unwrap()
        };
        let shape = [4, 3001];
        let (m, _) = array(&shape, DType::F64, 5, -1.0, 1.0);
        let c = CompiledGraph::capture(std::slice::from_ref(&m), &[], &[centred(&m)])
            .expect("fused kernels");
        assert_eq!(c.kernels(), 2);
        for seed in 6..8 {
            let (m2, v) = array(&shape, DType::F64, seed, -1.0, 1.0);
            let general = centred(&m2).to_vec_f64().unwrap();
            let Some(out) = c.run(&[m2]).unwrap() else {
                assert!(!runs_compiled(e));
                continue;
            };
            let got = out[0].to_vec_f64().unwrap();
            assert!(got
                .iter()
                .zip(&general)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
            let want: Vec<f64> = v
                .chunks(shape[1])
                .flat_map(|row| {
                    let mean = row.iter().sum::<f64>() / row.len() as f64;
                    row.iter().map(move |a| (a - mean).sin())
                })
                .collect();
            assert_close(&got, &want, 1e-13, 1e-15, "centred sine");
        }
    });
}

#[test]
fn one_op_kernels_after_reductions_run_direct_with_the_general_paths_bits() {
    // Each case: a reduction's kernel, then a kernel of one op reading its
    // result (one point, or a run of `x` with the result repeated), which
    // the CPU runs on the direct path's loop; `direct` is that count.
    type Case = (&'static str, fn(&Array) -> Array, usize);
    let cases: [Case; 5] = [
        (
            "total + s",
            |x| x.sum(None, false).unwrap().add(0.25).unwrap(),
            1,
        ),
        (
            "x - mean",
            |x| x.sub(x.mean(None, true).unwrap()).unwrap(),
            1,
        ),
        (
            "max - min",
            |x| {
                let hi = x.max(None, false).unwrap();
                hi.sub(x.min(None, false).unwrap()).unwrap()
            },
            1,
        ),
        (
            "max > 0",
            |x| x.max(None, false).unwrap().gt(0.0).unwrap(),
            1,
        ),
        // Two ops after the reduction: the interpreter's kernel.
        (
            "sin(s) * 2",
            |x| x.sum(None, false).unwrap().sin().unwrap().mul(2.0).unwrap(),
            0,
        ),
    ];
    on_every_engine_lenient(|e| {
        for dtype in [DType::F32, DType::F64] {
            for n in [1, 7, 2049, 65_537] {
                for (name, f, direct) in cases {
                    let (x, _) = array(&[n], dtype, 1, -1.0, 1.0);
                    let c = CompiledGraph::capture(std::slice::from_ref(&x), &[], &[f(&x)])
                        .expect("fused kernels");
                    assert_eq!(c.kernels(), 2, "{name}");
                    assert_eq!(c.direct_kernels(), direct, "{name}");
                    let (x2, v) = array(&[n], dtype, 9, -1.0, 1.0);
                    let general = f(&x2).to_vec_f64().unwrap();
                    let Some(out) = c.run(&[x2]).unwrap() else {
                        assert!(!runs_compiled(e), "{}: declined", e.name);
                        continue;
                    };
                    let got = out[0].to_vec_f64().unwrap();
                    assert_eq!(got.len(), general.len(), "{name}");
                    for (a, b) in got.iter().zip(&general) {
                        assert_eq!(a.to_bits(), b.to_bits(), "{name} {dtype} n={n}");
                    }
                    // Against float64 references of the same inputs.
                    let sum: f64 = v.iter().sum();
                    let (lo, hi) = v
                        .iter()
                        .fold((f64::MAX, f64::MIN), |(l, h), &a| (l.min(a), h.max(a)));
                    let want: Vec<f64> = match name {
                        "total + s" => vec![sum + 0.25],
                        "x - mean" => v.iter().map(|a| a - sum / n as f64).collect(),
                        "max - min" => vec![hi - lo],
                        "max > 0" => vec![f64::from(u8::from(hi > 0.0))],
                        _ => vec![sum.sin() * 2.0],
                    };
                    let (rtol, atol) = if dtype == DType::F32 {
                        (1e-5, 1e-4)
                    } else {
                        (1e-12, 1e-9)
                    };
                    assert_close(&got, &want, rtol, atol, name);
                }
            }
        }
    });
}

#[test]
fn runs_on_values_give_the_array_runs_bits_and_decline_alike() {
    on_every_engine_lenient(|e| {
        for dtype in [DType::F32, DType::F64] {
            let n = 4103;
            let (x, _) = array(&[n], dtype, 21, 0.0, 1.0);
            let (y, _) = array(&[n], dtype, 22, -2.0, 2.0);
            let lin = x.mul(&y).unwrap().add(1.0).unwrap();
            // The same output twice, and a reduction: each comes back whole.
            let outputs = [lin.clone(), lin, conditional_sum(&x, &y)];
            let c = CompiledGraph::capture(&[x.clone(), y.clone()], &[], &outputs)
                .expect("fused kernels");
            let (x2, vx) = array(&[n], dtype, 23, 0.0, 1.0);
            let (y2, vy) = array(&[n], dtype, 24, -2.0, 2.0);
            let values = [x2.value().unwrap(), y2.value().unwrap()];
            let run = c.run_values(&values).unwrap();
            if !runs_compiled(e) {
                assert!(run.is_none(), "{}: ran beside a GPU", e.name);
                continue;
            }
            let got = run.expect("same dtypes and layouts");
            let arrays = c.run(&[x2.clone(), y2.clone()]).unwrap().unwrap();
            assert_eq!(got.len(), 3);
            for (v, a) in got.iter().zip(&arrays) {
                let mine = Array::from_shared(v.buffer.clone(), v.layout.clone()).unwrap();
                let (m, a) = (mine.to_vec_f64().unwrap(), a.to_vec_f64().unwrap());
                assert!(m.iter().zip(&a).all(|(p, q)| p.to_bits() == q.to_bits()));
            }
            let lin_ref: Vec<f64> = vx.iter().zip(&vy).map(|(a, b)| a * b + 1.0).collect();
            let rtol = if dtype == DType::F32 { 1e-6 } else { 1e-15 };
            let first = Array::from_shared(got[0].buffer.clone(), got[0].layout.clone()).unwrap();
            assert_close(
                &first.to_vec_f64().unwrap(),
                &lin_ref,
                rtol,
                1e-6,
                "x*y + 1",
            );
            // The reduction's result owns its buffer (handed over uncopied).
            assert!(Arc::strong_count(&got[2].buffer) == 1);
            // Another dtype, a strided layout, a missing input: declined.
            let other = if dtype == DType::F32 {
                DType::F64
            } else {
                DType::F32
            };
            let (x3, _) = array(&[n], other, 25, 0.0, 1.0);
            let mut strided = values[0].clone();
            strided.layout = Layout {
                shape: vec![n / 2],
                strides: vec![2],
                offset: 0,
            };
            for inputs in [
                vec![x3.value().unwrap(), values[1].clone()],
                vec![strided, values[1].clone()],
                vec![values[0].clone()],
            ] {
                assert!(c.run_values(&inputs).unwrap().is_none());
            }
            // Captured with one array read twice: values say nothing of
            // sharing, so they are declined.
            let twice = captured_reading_twice(&x);
            assert!(twice.run_values(&values).unwrap().is_none());
        }
    });
}
