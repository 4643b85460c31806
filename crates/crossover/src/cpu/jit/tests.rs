//! Compiled kernels against the interpreter: the same bits, stored or
//! summed, on inputs with NaN, infinities, signed zeros and ties, at lengths
//! around the 16-point block; and the programs the compiler leaves alone.

use super::*;
use crate::cpu::gather::Access;
use crate::cpu::interp::{Arg, Bound as Source, Scratch};
use crate::dtype::Scalar;
use crate::expr::ir::{Program, SourceKind};

/// The instruction sets this CPU runs: every test covers each. None is a
/// skip, with the reason; the CI machine has AVX-512 and AVX2, so there
/// both run.
fn isas() -> Vec<Isa> {
    #[allow(unused_mut)]
    let mut found = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            found.push(Isa::Avx512);
        }
        if is_x86_feature_detected!("avx2") {
            found.push(Isa::Avx2);
        }
    }
    if found.is_empty() {
        eprintln!("skipped: compiled kernels need x86-64 with AVX2 or AVX-512");
    }
    found
}

/// Values with the awkward cases mixed into a deterministic pseudo-random
/// spread over [-2, 2).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| match i % 23 {
            5 => f64::NAN,
            9 => f64::INFINITY,
            13 => f64::NEG_INFINITY,
            17 => -0.0,
            19 => 0.5,
            _ => {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
            }
        })
        .collect()
}

/// A program over two inputs `x`, `y` of `dtype`; `body` adds instructions.
fn program(dtype: DType, body: impl Fn(&mut Program, Reg, Reg) -> Reg) -> Program {
    let mut p = Program::default();
    p.sources.push(SourceKind::Buffer(dtype));
    p.sources.push(SourceKind::Buffer(dtype));
    let x = p.push(InstKind::Load(0), dtype);
    let y = p.push(InstKind::Load(1), dtype);
    let out = body(&mut p, x, y);
    p.outputs.push(out);
    p
}

fn konst(p: &mut Program, v: f64, dtype: DType) -> Reg {
    p.push(InstKind::Const(Scalar::Float(v)), dtype)
}

/// The programs the kernels cover, each using a different mix of nodes.
fn programs(dtype: DType) -> Vec<(&'static str, Program)> {
    let cmp = |op| {
        program(dtype, move |p, x, y| {
            let c = p.push(InstKind::Binary(op, x, y), DType::Bool);
            p.push(InstKind::Where(c, x, y), dtype)
        })
    };
    vec![
        (
            "where(x > 0.5, x*x, -x)",
            program(dtype, |p, x, _| {
                let half = konst(p, 0.5, dtype);
                let c = p.push(InstKind::Binary(BinaryOp::Gt, x, half), DType::Bool);
                let sq = p.push(InstKind::Binary(BinaryOp::Mul, x, x), dtype);
                let neg = p.push(InstKind::Unary(UnaryOp::Neg, x), dtype);
                p.push(InstKind::Where(c, sq, neg), dtype)
            }),
        ),
        (
            "x*x*y + 2*x - y*3 + 1",
            program(dtype, |p, x, y| {
                let (two, three, one) = (
                    konst(p, 2.0, dtype),
                    konst(p, 3.0, dtype),
                    konst(p, 1.0, dtype),
                );
                let xx = p.push(InstKind::Binary(BinaryOp::Mul, x, x), dtype);
                let xxy = p.push(InstKind::Binary(BinaryOp::Mul, xx, y), dtype);
                let tx = p.push(InstKind::Binary(BinaryOp::Mul, two, x), dtype);
                let a = p.push(InstKind::Binary(BinaryOp::Add, xxy, tx), dtype);
                let y3 = p.push(InstKind::Binary(BinaryOp::Mul, y, three), dtype);
                let b = p.push(InstKind::Binary(BinaryOp::Sub, a, y3), dtype);
                p.push(InstKind::Binary(BinaryOp::Add, b, one), dtype)
            }),
        ),
        (
            "sqrt(|x|) / (y - 0.25) + square(y)",
            program(dtype, |p, x, y| {
                let q = konst(p, 0.25, dtype);
                let ax = p.push(InstKind::Unary(UnaryOp::Abs, x), dtype);
                let s = p.push(InstKind::Unary(UnaryOp::Sqrt, ax), dtype);
                let d = p.push(InstKind::Binary(BinaryOp::Sub, y, q), dtype);
                let r = p.push(InstKind::Binary(BinaryOp::Div, s, d), dtype);
                let yy = p.push(InstKind::Unary(UnaryOp::Square, y), dtype);
                p.push(InstKind::Binary(BinaryOp::Add, r, yy), dtype)
            }),
        ),
        (
            "x*x - y (x's last use names it twice)",
            program(dtype, |p, x, y| {
                let xx = p.push(InstKind::Binary(BinaryOp::Mul, x, x), dtype);
                let y2 = p.push(InstKind::Load(1), dtype);
                let d = p.push(InstKind::Binary(BinaryOp::Sub, xx, y2), dtype);
                p.push(InstKind::Binary(BinaryOp::Add, d, y), dtype)
            }),
        ),
        ("where(x < y, x, y)", cmp(BinaryOp::Lt)),
        ("where(x <= y, x, y)", cmp(BinaryOp::Le)),
        ("where(x >= y, x, y)", cmp(BinaryOp::Ge)),
        ("where(x == y, x, y)", cmp(BinaryOp::Eq)),
        ("where(x != y, x, y)", cmp(BinaryOp::Ne)),
    ]
}

/// Two inputs of `n` points read from offset 3 of their buffers; `y`
/// shares some of `x`'s values, so comparisons meet ties.
fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    let x = values(n + 3, 1);
    let mut y = values(n + 3, 2);
    for i in (0..n + 3).step_by(5) {
        y[i] = x[i];
    }
    (x, y)
}

fn prepare<'a>(p: &'a Program, x: Data<'a>, y: Data<'a>) -> Prepared<'a> {
    let src = |data| Source::Buffer {
        data,
        access: Access::Contiguous { offset: 3 },
    };
    Prepared::new(p, vec![src(x), src(y)]).unwrap()
}

/// The interpreter's values of the output at points `0..n`, as float64.
fn interpreted(prep: &Prepared<'_>, n: usize) -> Vec<f64> {
    let mut sc = Scratch::default();
    let out = prep.program.outputs[0];
    let mut vals = Vec::with_capacity(n);
    for start in (0..n).step_by(prep.chunk()) {
        let len = prep.chunk().min(n - start);
        prep.eval_chunk(&mut sc, start, len);
        match prep.program.dtype(out) {
            DType::F64 => match prep.arg::<f64>(&sc, out, start, len) {
                Arg::Slice(s) => vals.extend_from_slice(s),
                Arg::Splat(_) => unreachable!(),
            },
            _ => match prep.arg::<f32>(&sc, out, start, len) {
                Arg::Slice(s) => vals.extend(s.iter().map(|&v| v as f64)),
                Arg::Splat(_) => unreachable!(),
            },
        }
    }
    vals
}

/// Runs `check(isa, name, prep, n)` for every instruction set, program,
/// dtype and length.
fn for_each_case(check: impl Fn(Isa, &str, &Prepared<'_>, usize)) {
    for isa in isas() {
        for_each_input(|name, prep, n| check(isa, name, prep, n));
    }
}

fn for_each_input(check: impl Fn(&str, &Prepared<'_>, usize)) {
    for n in [1, 15, 16, 17, 100, 511, 4103] {
        let (x, y) = inputs(n);
        let (x32, y32): (Vec<f32>, Vec<f32>) = (
            x.iter().map(|&v| v as f32).collect(),
            y.iter().map(|&v| v as f32).collect(),
        );
        for (name, p) in programs(DType::F64) {
            check(name, &prepare(&p, Data::F64(&x), Data::F64(&y)), n);
        }
        for (name, p) in programs(DType::F32) {
            check(name, &prepare(&p, Data::F32(&x32), Data::F32(&y32)), n);
        }
    }
}

#[test]
fn stored_values_are_the_interpreters_bits() {
    for_each_case(|isa, name, prep, n| {
        let kernel = bind_for(prep, Mode::Store, isa)
            .unwrap_or_else(|| panic!("{isa:?}, {name}: not compiled"));
        let want = interpreted(prep, n);
        let blocks = n / BLOCK;
        let got: Vec<f64> = if prep.program.dtype(prep.program.outputs[0]) == DType::F64 {
            let mut out = vec![7.0f64; blocks * BLOCK];
            kernel.store_blocks(0, blocks, bytes_of(&mut out));
            out
        } else {
            let mut out = vec![7.0f32; blocks * BLOCK];
            kernel.store_blocks(0, blocks, bytes_of(&mut out));
            out.iter().map(|&v| v as f64).collect()
        };
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if g.is_nan() && w.is_nan() {
                continue; // any NaN for NaN (see the sums' test)
            }
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{isa:?}, {name}, n = {n}, point {i}: {g} against {w}"
            );
        }
    });
}

#[test]
fn sum_lanes_are_the_interpreters_bits() {
    for_each_case(|isa, name, prep, n| {
        let kernel = bind_for(prep, Mode::Sum, isa)
            .unwrap_or_else(|| panic!("{isa:?}, {name}: not compiled"));
        let vals = interpreted(prep, n);
        let blocks = n / BLOCK;
        // From point 16 on too: the kernel reads from where it is told.
        for start_block in [0, 1] {
            if start_block > blocks {
                continue;
            }
            let got = kernel.sum_blocks(start_block * BLOCK, blocks - start_block);
            let mut want = [0f64; BLOCK];
            for b in start_block..blocks {
                for (l, w) in want.iter_mut().enumerate() {
                    *w += vals[b * BLOCK + l];
                }
            }
            for l in 0..BLOCK {
                // Any NaN for NaN: which operand's NaN an addition returns
                // is the compiler's operand order, not the arithmetic.
                if got[l].is_nan() && want[l].is_nan() {
                    continue;
                }
                assert_eq!(
                    got[l].to_bits(),
                    want[l].to_bits(),
                    "{isa:?}, {name}, n = {n}, from block {start_block}, lane {l}: {} against {}",
                    got[l],
                    want[l]
                );
            }
        }
    });
}

fn bytes_of<T: crate::cpu::num::Pod>(v: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: plain numbers viewed as their bytes, same memory and length.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, len) }
}

#[test]
fn programs_outside_the_kernels_stay_in_the_interpreter() {
    for isa in isas() {
        outside_programs(isa);
    }
}

fn outside_programs(isa: Isa) {
    let (x, y) = inputs(64);
    let f64s = |p: &Program| {
        bind_for(&prepare(p, Data::F64(&x), Data::F64(&y)), Mode::Store, isa).is_some()
    };
    let dt = DType::F64;
    // A transcendental.
    assert!(!f64s(&program(dt, |p, x, y| {
        let s = p.push(InstKind::Unary(UnaryOp::Sin, x), dt);
        p.push(InstKind::Binary(BinaryOp::Add, s, y), dt)
    })));
    // A comparison as the output (a bool).
    assert!(!f64s(&program(dt, |p, x, y| {
        let a = p.push(InstKind::Binary(BinaryOp::Add, x, y), dt);
        p.push(InstKind::Binary(BinaryOp::Lt, a, y), DType::Bool)
    })));
    // A comparison used as a number.
    assert!(!f64s(&program(dt, |p, x, y| {
        let c = p.push(InstKind::Binary(BinaryOp::Lt, x, y), DType::Bool);
        let f = p.push(InstKind::Cast(c), dt);
        p.push(InstKind::Binary(BinaryOp::Add, f, y), dt)
    })));
    // One instruction: already one loop in the interpreter.
    assert!(!f64s(&program(dt, |p, x, y| p
        .push(InstKind::Binary(BinaryOp::Add, x, y), dt))));
    // A strided input (gathered by the interpreter).
    let p = program(dt, |p, x, y| {
        let a = p.push(InstKind::Binary(BinaryOp::Add, x, y), dt);
        p.push(InstKind::Binary(BinaryOp::Mul, a, x), dt)
    });
    let strided = Source::Buffer {
        data: Data::F64(&x),
        access: Access::of(&crate::shape::Layout {
            shape: vec![8],
            strides: vec![2],
            offset: 0,
        }),
    };
    let contiguous = Source::Buffer {
        data: Data::F64(&y),
        access: Access::Contiguous { offset: 0 },
    };
    let prep = Prepared::new(&p, vec![strided, contiguous]).unwrap();
    assert!(bind_for(&prep, Mode::Store, isa).is_none());
    // The same program on contiguous inputs is compiled.
    assert!(f64s(&p));
}

#[test]
fn a_summed_program_matches_a_float64_reference() {
    for isa in isas() {
        summed_against_reference(isa);
    }
}

fn summed_against_reference(isa: Isa) {
    // sum(where(x > 0.5, x*x, -x)) over finite values against a plain
    // float64 loop, within a relative 1e-12.
    let n = 10_000;
    let x: Vec<f64> = values(n + 3, 7)
        .iter()
        .map(|v| if v.is_finite() { *v } else { 1.25 })
        .collect();
    let (name, p) = programs(DType::F64).remove(0);
    let prep = prepare(&p, Data::F64(&x), Data::F64(&x));
    let kernel = bind_for(&prep, Mode::Sum, isa).unwrap();
    let blocks = n / BLOCK;
    let lanes = kernel.sum_blocks(0, blocks);
    let got: f64 = lanes.iter().sum();
    let want: f64 = x[3..3 + blocks * BLOCK]
        .iter()
        .map(|&v| if v > 0.5 { v * v } else { -v })
        .sum();
    assert!(
        ((got - want) / want).abs() < 1e-12,
        "{isa:?}, {name}: {got} against {want}"
    );
}
