//! The chunk length `Prepared` picks for a program (`chunk_for`).

use super::*;
use crate::dtype::Scalar;
use crate::expr::ir::SourceKind;

/// `where(x > 0.5, x*x, -x)` over a contiguous `dtype` input.
fn prepared_where(dtype: DType, data: Data<'_>) -> usize {
    let mut p = Program::default();
    p.sources.push(SourceKind::Buffer(dtype));
    let x = p.push(InstKind::Load(0), dtype);
    let half = p.push(InstKind::Const(Scalar::Float(0.5)), dtype);
    let c = p.push(InstKind::Binary(BinaryOp::Gt, x, half), DType::Bool);
    let sq = p.push(InstKind::Binary(BinaryOp::Mul, x, x), dtype);
    let neg = p.push(InstKind::Unary(UnaryOp::Neg, x), dtype);
    let w = p.push(InstKind::Where(c, sq, neg), dtype);
    p.outputs.push(w);
    let src = Bound::Buffer {
        data,
        access: Access::Contiguous { offset: 0 },
    };
    Prepared::new(&p, vec![src]).unwrap().chunk()
}

#[test]
fn wide_programs_take_chunks_that_fit_l1_and_loads_keep_the_longest() {
    let (f64s, f32s) = ([0.0f64; 4], [0.0f32; 4]);
    // float64: x (8) + mask (1) + three float64 registers (24) = 33
    // bytes a point: 512 fit 24 KiB, 1024 do not.
    assert_eq!(prepared_where(DType::F64, Data::F64(&f64s)), 512);
    // float32: 4 + 1 + 12 = 17 bytes: 1024.
    assert_eq!(prepared_where(DType::F32, Data::F32(&f32s)), 1024);
    // A plain load (a sum of an input) keeps 2048: its bits stay.
    let mut p = Program::default();
    p.sources.push(SourceKind::Buffer(DType::F64));
    let x = p.push(InstKind::Load(0), DType::F64);
    p.outputs.push(x);
    let src = Bound::Buffer {
        data: Data::F64(&f64s),
        access: Access::Contiguous { offset: 0 },
    };
    assert_eq!(Prepared::new(&p, vec![src]).unwrap().chunk(), CHUNK);
}

#[test]
fn a_programs_kept_slot_plan_serves_only_calls_that_read_alike() {
    // `x*y + (x - y)*x`, prepared with x and y read in turn in place,
    // gathered (strided: computed into a slot) and as one repeated
    // element. The program keeps its first slot plan; each call's slots,
    // chunk and register kinds must be those a fresh copy of the program
    // (no kept plan) assigns for the same reads.
    let dtype = DType::F64;
    let mut p = Program::default();
    p.sources.push(SourceKind::Buffer(dtype));
    p.sources.push(SourceKind::Buffer(dtype));
    let x = p.push(InstKind::Load(0), dtype);
    let y = p.push(InstKind::Load(1), dtype);
    let xy = p.push(InstKind::Binary(BinaryOp::Mul, x, y), dtype);
    let d = p.push(InstKind::Binary(BinaryOp::Sub, x, y), dtype);
    let dx = p.push(InstKind::Binary(BinaryOp::Mul, d, x), dtype);
    let out = p.push(InstKind::Binary(BinaryOp::Add, xy, dx), dtype);
    p.outputs.push(out);
    let data: Vec<f64> = (0..64).map(|i| i as f64 * 0.5 - 3.0).collect();
    let read = |how: usize| Bound::Buffer {
        data: Data::F64(&data),
        access: match how {
            0 => Access::Contiguous { offset: 1 },
            1 => Access::of(&crate::shape::Layout {
                shape: vec![16],
                strides: vec![3],
                offset: 2,
            }),
            _ => Access::Constant { pos: 5 },
        },
    };
    let describe =
        |prep: &Prepared<'_>| format!("{} {} {:?}", prep.slots, prep.chunk(), prep.kinds);
    for (hx, hy) in [(0, 0), (1, 0), (0, 1), (2, 1), (1, 1), (0, 2), (0, 0)] {
        let kept = Prepared::new(&p, vec![read(hx), read(hy)]).unwrap();
        let copy = p.clone();
        let fresh = Prepared::new(&copy, vec![read(hx), read(hy)]).unwrap();
        assert_eq!(
            describe(&kept),
            describe(&fresh),
            "x read {hx}, y read {hy}"
        );
    }
}
