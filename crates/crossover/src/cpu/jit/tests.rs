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
pub(super) fn isas() -> Vec<Isa> {
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
pub(super) fn interpreted(prep: &Prepared<'_>, n: usize) -> Vec<f64> {
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
        let (whole, tail) = (blocks * BLOCK, n % BLOCK);
        // Whole blocks, then the tail as one padded block.
        let got: Vec<f64> = if prep.program.dtype(prep.program.outputs[0]) == DType::F64 {
            let mut out = vec![7.0f64; n];
            let bytes = bytes_of(&mut out);
            assert!(kernel.store_blocks(0, blocks, &mut bytes[..whole * 8]));
            assert!(kernel.store_tail(whole, tail, &mut bytes[whole * 8..]));
            out
        } else {
            let mut out = vec![7.0f32; n];
            let bytes = bytes_of(&mut out);
            assert!(kernel.store_blocks(0, blocks, &mut bytes[..whole * 4]));
            assert!(kernel.store_tail(whole, tail, &mut bytes[whole * 4..]));
            out.iter().map(|&v| v as f64).collect()
        };
        assert_eq!(got.len(), want.len());
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
            let got = kernel
                .sum_blocks(start_block * BLOCK, blocks - start_block)
                .expect("no trig: never stops early");
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

pub(super) fn bytes_of<T: crate::cpu::num::Pod>(v: &mut [T]) -> &mut [u8] {
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
    // A float64 transcendental (float32 sin/cos are compiled).
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
    // One stored instruction: already one loop in the interpreter (its sum
    // is compiled).
    let add = program(dt, |p, x, y| {
        p.push(InstKind::Binary(BinaryOp::Add, x, y), dt)
    });
    assert!(!f64s(&add));
    assert!(bind_for(&prepare(&add, Data::F64(&x), Data::F64(&y)), Mode::Sum, isa).is_some());
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
    let lanes = kernel.sum_blocks(0, blocks).unwrap();
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

/// float32 programs with sin, cos and exp: arguments up to a few thousand
/// (every quadrant), NaN and -0.0, exp's overflow and subnormal results,
/// nested and side by side.
fn trig_programs() -> Vec<(&'static str, Program)> {
    let dt = DType::F32;
    let un = |p: &mut Program, op, a| p.push(InstKind::Unary(op, a), dt);
    let bin = |p: &mut Program, op, a, b| p.push(InstKind::Binary(op, a, b), dt);
    vec![
        ("sin(x)", program(dt, |p, x, _| un(p, UnaryOp::Sin, x))),
        ("cos(y)", program(dt, |p, _, y| un(p, UnaryOp::Cos, y))),
        (
            "x*y + sin(x) + cos(y)",
            program(dt, |p, x, y| {
                let xy = bin(p, BinaryOp::Mul, x, y);
                let s = un(p, UnaryOp::Sin, x);
                let a = bin(p, BinaryOp::Add, xy, s);
                let c = un(p, UnaryOp::Cos, y);
                bin(p, BinaryOp::Add, a, c)
            }),
        ),
        (
            "sin(x * 1500) - cos(y * 2500)",
            program(dt, |p, x, y| {
                let (k1, k2) = (konst(p, 1500.0, dt), konst(p, 2500.0, dt));
                let a = bin(p, BinaryOp::Mul, x, k1);
                let b = bin(p, BinaryOp::Mul, y, k2);
                let s = un(p, UnaryOp::Sin, a);
                let c = un(p, UnaryOp::Cos, b);
                bin(p, BinaryOp::Sub, s, c)
            }),
        ),
        (
            "exp(-x*x) * y",
            program(dt, |p, x, y| {
                let xx = bin(p, BinaryOp::Mul, x, x);
                let n = un(p, UnaryOp::Neg, xx);
                let e = un(p, UnaryOp::Exp, n);
                bin(p, BinaryOp::Mul, e, y)
            }),
        ),
        (
            "exp(x * 50) + exp(sin(y))",
            program(dt, |p, x, y| {
                // exp(+-100): overflow to inf and subnormal results.
                let k = konst(p, 50.0, dt);
                let a = bin(p, BinaryOp::Mul, x, k);
                let ea = un(p, UnaryOp::Exp, a);
                let s = un(p, UnaryOp::Sin, y);
                let es = un(p, UnaryOp::Exp, s);
                bin(p, BinaryOp::Add, ea, es)
            }),
        ),
        (
            "cos(sin(x) * y) * x",
            program(dt, |p, x, y| {
                let s = un(p, UnaryOp::Sin, x);
                let m = bin(p, BinaryOp::Mul, s, y);
                let c = un(p, UnaryOp::Cos, m);
                bin(p, BinaryOp::Mul, c, x)
            }),
        ),
    ]
}

/// `x*y + sin(x) + cos(y)`.
fn chain() -> (&'static str, Program) {
    trig_programs()
        .into_iter()
        .find(|(name, _)| *name == "x*y + sin(x) + cos(y)")
        .unwrap()
}

/// float32 inputs for the trig programs: `values` without infinities
/// (those send a kernel to the interpreter, tested apart).
fn trig_inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let (x, y) = inputs(n);
    let finite = |v: &Vec<f64>| -> Vec<f32> {
        v.iter()
            .map(|&v| if v.is_infinite() { 1.75 } else { v as f32 })
            .collect()
    };
    (finite(&x), finite(&y))
}

#[test]
fn trig_kernels_are_the_interpreters_bits() {
    for isa in isas() {
        for n in [1, 16, 17, 511, 4103] {
            let (x, y) = trig_inputs(n);
            for (name, p) in trig_programs() {
                let prep = prepare(&p, Data::F32(&x), Data::F32(&y));
                let want = interpreted(&prep, n);
                let blocks = n / BLOCK;
                // A lone sin or cos is stored by the interpreter (one loop
                // there too); only summed here.
                let lone = !name.contains(' ');
                let store = bind_for(&prep, Mode::Store, isa);
                assert_eq!(store.is_none(), lone, "{isa:?}, {name}");
                if let Some(store) = store {
                    let mut out = vec![7.0f32; blocks * BLOCK];
                    assert!(store.store_blocks(0, blocks, bytes_of(&mut out)));
                    for (i, (g, w)) in out.iter().zip(&want).enumerate() {
                        let g = *g as f64;
                        assert!(
                            g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(),
                            "{isa:?}, {name}, n = {n}, point {i}: {g} against {w}"
                        );
                    }
                }
                let sum = bind_for(&prep, Mode::Sum, isa).unwrap();
                let lanes = sum.sum_blocks(0, blocks).expect("arguments in range");
                for (l, got) in lanes.iter().enumerate() {
                    // From +0.0, as the kernel's lanes (an empty `sum()` is -0.0).
                    let want = (0..blocks).fold(0.0, |acc, b| acc + want[b * BLOCK + l]);
                    assert!(
                        got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                        "{isa:?}, {name}, n = {n}, lane {l}: {got} against {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn trig_kernels_match_a_float64_reference() {
    // On finite inputs, within 4e-7 relative (a few f32 roundings of
    // values of size ~2) of the float64 formulas.
    let n = 4096;
    let (x, y) = trig_inputs(n);
    let (x, y): (Vec<f32>, Vec<f32>) = (
        x.iter()
            .map(|v| if v.is_nan() { 0.3 } else { *v })
            .collect(),
        y.iter()
            .map(|v| if v.is_nan() { -1.1 } else { *v })
            .collect(),
    );
    type Formula = fn(f64, f64) -> f64;
    let formulas: [(&str, Formula); 2] = [
        ("x*y + sin(x) + cos(y)", |a, b| a * b + a.sin() + b.cos()),
        ("exp(-x*x) * y", |a, b| (-a * a).exp() * b),
    ];
    for (name, f) in formulas {
        let (_, p) = trig_programs()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap();
        let prep = prepare(&p, Data::F32(&x), Data::F32(&y));
        for isa in isas() {
            let kernel = bind_for(&prep, Mode::Store, isa).unwrap();
            let mut out = vec![0f32; n];
            assert!(kernel.store_blocks(0, n / BLOCK, bytes_of(&mut out)));
            for (i, &g) in out.iter().enumerate() {
                let want = f(x[i + 3] as f64, y[i + 3] as f64);
                assert!(
                    (g as f64 - want).abs() <= 4e-7 * (1.0 + want.abs()),
                    "{isa:?}, {name}, point {i}: {g} against {want}"
                );
            }
        }
    }
}

#[test]
fn trig_arguments_beyond_the_range_stop_the_kernel() {
    // An argument beyond 1e6 (or infinite) anywhere in the call: the
    // kernel reports it and the caller runs the interpreter instead.
    for isa in isas() {
        for big in [2.0e6f32, -3.0e7, f32::INFINITY] {
            let (mut x, y) = trig_inputs(64);
            x[3 + 40] = big;
            let (_, p) = chain();
            let prep = prepare(&p, Data::F32(&x), Data::F32(&y));
            let store = bind_for(&prep, Mode::Store, isa).unwrap();
            let mut out = vec![0f32; 64];
            assert!(
                !store.store_blocks(0, 4, bytes_of(&mut out)),
                "{isa:?}, {big}"
            );
            // Blocks before the one holding it complete.
            assert!(
                store.store_blocks(0, 2, bytes_of(&mut out)),
                "{isa:?}, {big}"
            );
            // A tail holding it stops too (nothing written); one after it
            // completes.
            let mut tail = [5f32; 16];
            assert!(
                !store.store_tail(40, 7, bytes_of(&mut tail)),
                "{isa:?}, {big}"
            );
            assert_eq!(tail, [5f32; 16]);
            assert!(
                store.store_tail(50, 7, bytes_of(&mut tail)),
                "{isa:?}, {big}"
            );
            let sum = bind_for(&prep, Mode::Sum, isa).unwrap();
            assert!(sum.sum_blocks(0, 4).is_none(), "{isa:?}, {big}");
            assert!(sum.sum_blocks(48, 1).is_some(), "{isa:?}, {big}");
        }
    }
}

#[test]
fn streaming_stores_are_the_same_bits_and_need_alignment() {
    // The large-output kernel (non-temporal stores) against the plain one,
    // on a 64-byte aligned output and on one 4 bytes off (which takes the
    // plain kernel rather than fault).
    for isa in isas() {
        for_each_input(|name, prep, n| {
            let mut plain = bind_for(prep, Mode::Store, isa).unwrap();
            let (spec, ..) = lower(prep, Mode::Store, isa).unwrap();
            let stream = Spec {
                stream: true,
                ..spec
            };
            plain.streaming = Some(compiled(&stream).unwrap());
            let size = plain.size;
            let blocks = n / BLOCK;
            let want = interpreted(prep, n);
            let mut buf = vec![0u8; blocks * BLOCK * size + 128];
            let aligned = buf.as_ptr().align_offset(64);
            for at in [aligned, aligned + 4] {
                let out = &mut buf[at..at + blocks * BLOCK * size];
                assert!(plain.store_blocks(0, blocks, out));
                for (i, w) in want.iter().take(blocks * BLOCK).enumerate() {
                    let b = &out[i * size..(i + 1) * size];
                    let g = if size == 8 {
                        f64::from_le_bytes(b.try_into().unwrap())
                    } else {
                        f32::from_le_bytes(b.try_into().unwrap()) as f64
                    };
                    assert!(
                        g.to_bits() == w.to_bits() || g.is_nan() && w.is_nan(),
                        "{isa:?}, {name}, n = {n}, offset {at}, point {i}: {g} against {w}"
                    );
                }
            }
        });
    }
}

#[test]
fn a_sum_of_one_instruction_is_the_interpreters_bits() {
    // `(x*y).sum()` and `sqrt(x).sum()`: compiled as sums only (a lone
    // stored instruction stays in the interpreter).
    for isa in isas() {
        for n in [17, 511, 4103] {
            let (x, y) = inputs(n);
            for dt in [DType::F64, DType::F32] {
                let ops: [(&str, Program); 2] = [
                    (
                        "x*y",
                        program(dt, |p, x, y| {
                            p.push(InstKind::Binary(BinaryOp::Mul, x, y), dt)
                        }),
                    ),
                    (
                        "sqrt(x)",
                        program(dt, |p, x, _| p.push(InstKind::Unary(UnaryOp::Sqrt, x), dt)),
                    ),
                ];
                let (x32, y32): (Vec<f32>, Vec<f32>) = (
                    x.iter().map(|&v| v as f32).collect(),
                    y.iter().map(|&v| v as f32).collect(),
                );
                for (name, p) in &ops {
                    let prep = if dt == DType::F64 {
                        prepare(p, Data::F64(&x), Data::F64(&y))
                    } else {
                        prepare(p, Data::F32(&x32), Data::F32(&y32))
                    };
                    assert!(bind_for(&prep, Mode::Store, isa).is_none(), "{name}");
                    let kernel = bind_for(&prep, Mode::Sum, isa).unwrap();
                    let vals = interpreted(&prep, n);
                    let blocks = n / BLOCK;
                    let lanes = kernel.sum_blocks(0, blocks).unwrap();
                    for (l, got) in lanes.iter().enumerate() {
                        let want = (0..blocks).fold(0.0, |acc, b| acc + vals[b * BLOCK + l]);
                        assert!(
                            got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                            "{isa:?}, {name} {dt:?}, n = {n}, lane {l}: {got} against {want}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_programs_kept_lowering_serves_only_calls_that_read_alike() {
    // One program bound again and again, as the fusion cache shares it
    // between calls: inputs in place, then `y` one repeated element (a
    // constant to the kernel), then in place again, in both modes and on
    // every instruction set. The program keeps its first lowering; each
    // binding must still compute the interpreter's bits for its own reads.
    let n = 100;
    // Finite values: which NaN an operation returns is not the arithmetic.
    let finite = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .map(|f| if f.is_finite() { f } else { 1.25 })
            .collect()
    };
    let (x, y) = inputs(n);
    let (x, y) = (finite(x), finite(y));
    let (name, p) = programs(DType::F64).remove(1);
    let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    for isa in isas() {
        for mode in [Mode::Store, Mode::Sum] {
            for repeated_y in [false, true, false] {
                let prep = match repeated_y {
                    false => prepare(&p, Data::F64(&x), Data::F64(&y)),
                    true => {
                        let in_place = Source::Buffer {
                            data: Data::F64(&x),
                            access: Access::Contiguous { offset: 3 },
                        };
                        let element = Source::Buffer {
                            data: Data::F64(&y),
                            access: Access::Constant { pos: 4 },
                        };
                        Prepared::new(&p, vec![in_place, element]).unwrap()
                    }
                };
                let kernel = bind_for(&prep, mode, isa)
                    .unwrap_or_else(|| panic!("{isa:?}, {name}: not compiled"));
                let want = interpreted(&prep, n);
                let what = format!("{isa:?}, {mode:?}, y repeated: {repeated_y}");
                let blocks = n / BLOCK;
                if mode == Mode::Store {
                    let mut out = vec![7.0f64; n];
                    let bytes = bytes_of(&mut out);
                    assert!(kernel.store_blocks(0, blocks, &mut bytes[..blocks * BLOCK * 8]));
                    assert!(kernel.store_tail(
                        blocks * BLOCK,
                        n % BLOCK,
                        &mut bytes[blocks * BLOCK * 8..]
                    ));
                    assert_eq!(bits(&out), bits(&want), "{what}");
                } else {
                    let got = kernel.sum_blocks(0, blocks).unwrap();
                    let mut lanes = [0f64; BLOCK];
                    for b in 0..blocks {
                        for (l, w) in lanes.iter_mut().enumerate() {
                            *w += want[b * BLOCK + l];
                        }
                    }
                    assert_eq!(bits(&got), bits(&lanes), "{what}");
                }
            }
        }
    }
}
