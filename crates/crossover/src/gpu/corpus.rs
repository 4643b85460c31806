//! A corpus of every kernel family the GPU codegen makes: each unary and
//! binary op on each dtype, casts, `where`, arange/linspace, uniform and
//! normal draws, every reduction kind on every axis layout and dtype, the
//! dense and sparse matrix products of each float dtype, the scans and FFTs,
//! contiguous, strided, broadcast and sliced inputs of 1 to 8 dims, and
//! 32- and 64-bit index arithmetic. CI compiles all of it at once, as one
//! program per API (OpenCL on pocl, NVRTC for NVIDIA architectures), so a
//! kernel that would not build on some device fails a test here first.
//!
//! The inputs are placeholders: nothing is allocated, so the corpus can
//! hold shapes too large for memory (the 64-bit index variants).

use super::codegen::{prelude, Dialect, Features};
use super::plan_kernel;
use crate::array::scan::ScanKind;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::fuse::Kernel;
use crate::op::{BinaryOp, ReduceOp, UnaryOp};
use crate::rng::Generator;
use crate::shape::SliceArg;
use std::collections::BTreeMap;

/// The real dtypes GPU kernels compute in.
const DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

const REDUCTIONS: [ReduceOp; 9] = [
    ReduceOp::Sum,
    ReduceOp::Prod,
    ReduceOp::Mean,
    ReduceOp::Var { ddof: 0 },
    ReduceOp::Std { ddof: 1 },
    ReduceOp::Min,
    ReduceOp::Max,
    ReduceOp::ArgMin,
    ReduceOp::ArgMax,
];

fn input(shape: &[usize], dtype: DType) -> Result<Array> {
    Array::placeholder(shape, dtype)
}

/// The arrays whose kernels make up the corpus (invalid combinations, which
/// the array API refuses, are left out).
fn outputs() -> Vec<Array> {
    let mut out: Vec<Array> = Vec::new();
    let mut keep = |r: Result<Array>| {
        if let Ok(a) = r {
            out.push(a);
        }
    };
    let n = [1000usize];
    for d in DTYPES {
        let (x, y) = match (input(&n, d), input(&n, d)) {
            (Ok(x), Ok(y)) => (x, y),
            _ => continue,
        };
        for op in UnaryOp::ALL {
            keep(x.unary(op));
        }
        for op in BinaryOp::ALL {
            keep(Array::binary(op, &x, &y));
            keep(Array::binary(op, &x, 2i64)); // a constant operand
        }
        for to in DTYPES {
            keep(x.cast(to));
        }
        keep(input(&n, DType::Bool).and_then(|c| Array::where_(&c, &x, &y)));
        // Strided, broadcast and sliced inputs.
        keep(input(&[30, 40], d).and_then(|a| a.transpose()?.add(&input(&[40, 30], d)?)));
        keep(input(&[40], d).and_then(|r| input(&[30, 40], d)?.mul(&r)));
        keep(input(&[64, 64], d).and_then(|a| {
            a.slice(&[
                SliceArg::Range {
                    start: Some(1),
                    stop: None,
                    step: 3,
                },
                SliceArg::Range {
                    start: None,
                    stop: None,
                    step: -2,
                },
            ])?
            .add(1i64)
        }));
        // Reductions: every kind, all axes, inner, outer and several.
        let cube = input(&[20, 30, 40], d);
        for op in REDUCTIONS {
            for axes in [None, Some(&[2isize][..]), Some(&[0]), Some(&[0, 2])] {
                keep(
                    cube.as_ref()
                        .map_err(Clone::clone)
                        .and_then(|c| c.reduce(op, axes, false)),
                );
            }
        }
        // A reduction that swallows the chain feeding it.
        keep(x.mul(&y).and_then(|p| p.reduce(ReduceOp::Sum, None, false)));
    }
    for d in [DType::F32, DType::F64, DType::I64] {
        keep(Array::arange(0.0, 1000.0, 1.5, d));
    }
    for d in [DType::F32, DType::F64] {
        keep(Array::linspace(0.0, 1.0, 1001, true, d));
        let mut g = Generator::new(7);
        keep(g.uniform(&n, d));
        keep(g.normal(0.0, 1.0, &n, d));
        // Monte Carlo: random draws fused into their reduction.
        keep((|| {
            let (u, v) = (g.uniform(&n, d)?, g.uniform(&n, d)?);
            u.mul(&u)?
                .add(&v.mul(&v)?)?
                .le(1.0)?
                .reduce(ReduceOp::Sum, None, false)
        })());
    }
    // 1 to 8 dims, made strided by a permutation.
    for dims in 1..=8usize {
        let shape: Vec<usize> = (0..dims).map(|i| 2 + i % 3).collect();
        let axes: Vec<usize> = (0..dims).rev().collect();
        keep(input(&shape, DType::F32).and_then(|a| a.permute(&axes)?.mul(2.0)));
    }
    // 64-bit index arithmetic: more elements than a 32-bit index reaches.
    let big = [1usize << 17, 1 << 15];
    keep(input(&big, DType::F32).and_then(|a| a.mul(2.0)));
    keep(input(&big, DType::F32).and_then(|a| a.transpose()?.add(1.0)));
    keep(input(&big, DType::F32).and_then(|a| a.reduce(ReduceOp::Sum, Some(&[1]), false)));
    out
}

/// Every kernel of the corpus (several arrays may share a kernel variant).
///
/// # Errors
/// A lowering failure (a bug).
pub fn kernels() -> Result<Vec<Kernel>> {
    let mut all = Vec::new();
    for a in outputs() {
        all.extend(
            crate::lower(std::slice::from_ref(&a))?
                .into_iter()
                .filter(|k| !narrow_ints(k)),
        );
    }
    Ok(all)
}

/// Whether a kernel computes in a dtype GPU kernels decline (int8, int16
/// and the unsigned integers: such kernels run on the CPU), as bool powers
/// and squares do (int8, as NumPy).
fn narrow_ints(k: &Kernel) -> bool {
    k.outputs.iter().any(|o| o.dtype().is_cpu_only_int())
        || k.program()
            .is_some_and(|p| p.insts.iter().any(|i| i.dtype.is_cpu_only_int()))
}

/// The corpus as one source for `dialect` (prelude once, then every
/// distinct variant's body) and its entry points.
///
/// # Errors
/// A lowering failure (a bug).
pub fn source(dialect: Dialect) -> Result<(String, Vec<String>)> {
    let mut bodies: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for k in kernels()? {
        let (Some(launch), Some(program)) = (plan_kernel(&k, 1024), k.program()) else {
            continue; // library calls have no generated code
        };
        let r = launch.variant.render(program);
        bodies.entry(r.id).or_insert((r.body, r.entries));
    }
    // The core's matrix products (library kernels with generated code).
    for d in [DType::F32, DType::F64] {
        for v in [
            super::codegen::Variant::gemm(d),
            super::codegen::Variant::spmm(d),
            super::codegen::Variant::spgemm(d),
            super::codegen::Variant::matcopy(d, false),
        ] {
            let r = v.render(&crate::expr::ir::Program::default());
            bodies.entry(r.id).or_insert((r.body, r.entries));
        }
    }
    // Integer (wrapping), bool (or of ands) and complex matrix products.
    for d in [DType::I32, DType::I64, DType::Bool, DType::C64, DType::C128] {
        let r = super::codegen::Variant::gemm(d).render(&crate::expr::ir::Program::default());
        bodies.entry(r.id).or_insert((r.body, r.entries));
    }
    // Complex matrix copies (complex dense solvers), plain and conjugating.
    for d in [DType::C64, DType::C128] {
        for conj in [false, true] {
            let v = super::codegen::Variant::matcopy(d, conj);
            let r = v.render(&crate::expr::ir::Program::default());
            bodies.entry(r.id).or_insert((r.body, r.entries));
        }
    }
    // The core's FFT steps (Bluestein's kernels among them): each precision,
    // real and complex input, 1-3 dims.
    for d in [DType::F32, DType::F64] {
        for complex in [false, true] {
            for rank in 1..4 {
                let v = super::codegen::Variant::fft(d, complex, rank);
                let r = v.render(&crate::expr::ir::Program::default());
                bodies.entry(r.id).or_insert((r.body, r.entries));
            }
        }
    }
    // The core's scans: each total, each accumulator, 0 to 2 other axes.
    for kind in [ScanKind::Sum, ScanKind::Prod] {
        for d in [DType::F32, DType::F64, DType::I64] {
            for line_dims in 0..3 {
                let v = super::codegen::Variant::scan(kind, d, line_dims);
                let r = v.render(&crate::expr::ir::Program::default());
                bodies.entry(r.id).or_insert((r.body, r.entries));
            }
        }
    }
    let mut source = prelude(dialect, Features { fp64: true });
    let mut entries = Vec::new();
    for (body, e) in bodies.into_values() {
        source.push_str(&body);
        entries.extend(e);
    }
    Ok((source, entries))
}
