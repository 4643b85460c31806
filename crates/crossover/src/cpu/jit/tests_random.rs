//! Compiled kernels with random sources and counts of a comparison (Monte
//! Carlo pi's `mean(x*x + y*y <= 1)`): the interpreter's bits, summed and
//! stored, at lengths and offsets around the 16-point block and the
//! store's fill of [`FILL_POINTS`]; and a count against a float64
//! reference from the portable generator.

use super::tests::{bytes_of, interpreted, isas};
use super::*;
use crate::dtype::Scalar;
use crate::expr::ir::{Program, SourceKind};
use crate::rng::{fill_uniform_f32_portable, Distribution, RandomKey};

const SEED: u64 = 2024;

/// A program over two random registers `x`, `y` of `dtype` (streams 0 and
/// 1 of [`SEED`]); `body` adds instructions and returns the output.
fn random_program(
    dtype: DType,
    dist: Distribution,
    body: impl Fn(&mut Program, Reg, Reg) -> Reg,
) -> Program {
    let mut p = Program::default();
    p.sources.push(SourceKind::Index);
    let draw = |stream| InstKind::Random {
        index: 0,
        dist,
        key: RandomKey { seed: SEED, stream },
    };
    let x = p.push(draw(0), dtype);
    let y = p.push(draw(1), dtype);
    let out = body(&mut p, x, y);
    p.outputs.push(out);
    p
}

/// Binds the program's index source from point `offset` on (a chunk of a
/// larger array starts its draws there).
fn bind_index(p: &Program, offset: usize) -> Prepared<'_> {
    let index = Source::Index {
        access: Access::Contiguous { offset },
    };
    Prepared::new(p, vec![index]).unwrap()
}

/// `mean(x*x + y*y <= 1)`'s program: the comparison cast to `count`.
fn monte_carlo(values: DType, count: DType) -> Program {
    random_program(values, Distribution::Uniform, |p, x, y| {
        let one = p.push(InstKind::Const(Scalar::Float(1.0)), values);
        let xx = p.push(InstKind::Binary(BinaryOp::Mul, x, x), values);
        let yy = p.push(InstKind::Binary(BinaryOp::Mul, y, y), values);
        let r = p.push(InstKind::Binary(BinaryOp::Add, xx, yy), values);
        let inside = p.push(InstKind::Binary(BinaryOp::Le, r, one), DType::Bool);
        p.push(InstKind::Cast(inside), count)
    })
}

/// The programs with random sources, and whether each is also compiled as
/// a store (a float32 count widened to float64 is compiled as a sum only).
fn random_programs() -> Vec<(String, Program, bool)> {
    let mut all = Vec::new();
    for dt in [DType::F32, DType::F64] {
        all.push((
            format!("count {dt:?} as F64"),
            monte_carlo(dt, DType::F64),
            dt == DType::F64,
        ));
        all.push((format!("count {dt:?} as {dt:?}"), monte_carlo(dt, dt), true));
        let affine = random_program(dt, Distribution::Uniform, |p, x, y| {
            let two = p.push(InstKind::Const(Scalar::Float(2.0)), dt);
            let xy = p.push(InstKind::Binary(BinaryOp::Mul, x, y), dt);
            let tx = p.push(InstKind::Binary(BinaryOp::Mul, two, x), dt);
            p.push(InstKind::Binary(BinaryOp::Sub, xy, tx), dt)
        });
        all.push((format!("x*y - 2*x uniform {dt:?}"), affine, true));
        let normal = random_program(dt, Distribution::Normal, |p, x, y| {
            let c = p.push(InstKind::Binary(BinaryOp::Lt, x, y), DType::Bool);
            let ny = p.push(InstKind::Unary(UnaryOp::Neg, y), dt);
            p.push(InstKind::Where(c, x, ny), dt)
        });
        all.push((format!("where(x < y, x, -y) normal {dt:?}"), normal, true));
    }
    all
}

/// `got` against the interpreter's `want`, bit for bit (any NaN for NaN).
fn assert_same_bits(got: f64, want: f64, what: impl Fn() -> String) {
    assert!(
        got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
        "{}: {got} against {want}",
        what()
    );
}

#[test]
fn random_sources_and_counts_are_the_interpreters_bits() {
    for isa in isas() {
        for (name, p, stores) in random_programs() {
            // 1,040 points cross a store's fill; 4,103 several fills.
            for n in [17, 100, 1040, 4103] {
                for offset in [0, 5] {
                    let prep = bind_index(&p, offset);
                    let vals = interpreted(&prep, n);
                    let blocks = n / BLOCK;
                    let case = |start_block: usize| {
                        format!(
                            "{isa:?}, {name}, n = {n}, offset {offset}, from block {start_block}"
                        )
                    };
                    let sum = bind_for(&prep, Mode::Sum, isa)
                        .unwrap_or_else(|| panic!("{}: sum not compiled", case(0)));
                    for start_block in [0, 1] {
                        let lanes = sum
                            .sum_blocks(start_block * BLOCK, blocks - start_block)
                            .expect("no trig: never stops early");
                        for (l, got) in lanes.iter().enumerate() {
                            let want =
                                (start_block..blocks).fold(0.0, |acc, b| acc + vals[b * BLOCK + l]);
                            assert_same_bits(*got, want, || {
                                format!("{}, lane {l}", case(start_block))
                            });
                        }
                    }
                    let store = bind_for(&prep, Mode::Store, isa);
                    assert_eq!(store.is_some(), stores, "{}: compiled as a store", case(0));
                    let Some(store) = store else { continue };
                    // A tail of random draws is the interpreter's.
                    let mut tail = [0u64; BLOCK];
                    assert!(
                        !store.store_tail(0, 5, bytes_of(&mut tail)),
                        "{}: a random tail compiled",
                        case(0)
                    );
                    for start_block in [0, 1] {
                        let count = (blocks - start_block) * BLOCK;
                        let start = start_block * BLOCK;
                        let got: Vec<f64> = if p.dtype(p.outputs[0]) == DType::F64 {
                            let mut out = vec![7.0f64; count];
                            assert!(store.store_blocks(
                                start,
                                blocks - start_block,
                                bytes_of(&mut out)
                            ));
                            out
                        } else {
                            let mut out = vec![7.0f32; count];
                            assert!(store.store_blocks(
                                start,
                                blocks - start_block,
                                bytes_of(&mut out)
                            ));
                            out.iter().map(|&v| v as f64).collect()
                        };
                        for (i, g) in got.iter().enumerate() {
                            assert_same_bits(*g, vals[start + i], || {
                                format!("{}, point {}", case(start_block), start + i)
                            });
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_compiled_monte_carlo_count_matches_a_float64_reference() {
    // 40,000 points from draw 3 on: the count of x*x + y*y <= 1 in float64
    // arithmetic on the portable generator's values (not the SIMD one the
    // kernels' fill uses).
    let (n, offset) = (40_000usize, 3usize);
    let key = |stream| RandomKey { seed: SEED, stream };
    let (mut xs, mut ys) = (vec![0f32; n], vec![0f32; n]);
    fill_uniform_f32_portable(key(0), offset as u64, &mut xs);
    fill_uniform_f32_portable(key(1), offset as u64, &mut ys);
    let reference = xs
        .iter()
        .zip(&ys)
        .filter(|(&x, &y)| (x as f64).powi(2) + (y as f64).powi(2) <= 1.0)
        .count() as f64;
    let p = monte_carlo(DType::F32, DType::F64);
    for isa in isas() {
        let prep = bind_index(&p, offset);
        let kernel = bind_for(&prep, Mode::Sum, isa).expect("compiled");
        let count: f64 = kernel.sum_blocks(0, n / BLOCK).unwrap().iter().sum();
        // float32's x*x + y*y can round across 1 where float64's does not:
        // a handful of points at most in 40,000.
        assert!(
            (count - reference).abs() <= 3.0,
            "{isa:?}: {count} against {reference}"
        );
        let pi = 4.0 * count / n as f64;
        assert!(
            (pi - std::f64::consts::PI).abs() < 0.05,
            "{isa:?}: pi = {pi}"
        );
    }
}
