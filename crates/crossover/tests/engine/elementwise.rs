//! Elementwise ops against float64 references, on sizes that cross chunk
//! and task edges, with broadcasting and scalars.

use crate::common::*;
use crossover::{Array, BinaryOp, DType, Scalar, UnaryOp};

fn unary_ref(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tan => x.tan(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Square => x * x,
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Not => (x == 0.0) as u8 as f64,
        // On real inputs (complex ops are tested with complex data).
        UnaryOp::Conj | UnaryOp::Real => x,
        UnaryOp::Imag => 0.0,
        UnaryOp::Log1p => x.ln_1p(),
        UnaryOp::Expm1 => x.exp_m1(),
        UnaryOp::Log10 => x.log10(),
        UnaryOp::Log2 => x.log2(),
        UnaryOp::Exp2 => x.exp2(),
        UnaryOp::Arcsin => x.asin(),
        UnaryOp::Arccos => x.acos(),
        UnaryOp::Arctan => x.atan(),
        UnaryOp::Sinh => x.sinh(),
        UnaryOp::Cosh => x.cosh(),
        UnaryOp::Arcsinh => libm::asinh(x),
        UnaryOp::Arccosh => libm::acosh(x),
        UnaryOp::Arctanh => libm::atanh(x),
        UnaryOp::Sign => sign_ref(x),
    }
}

/// NumPy's `sign`: NaN stays NaN, both zeros give +0.
fn sign_ref(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x + 0.0
    }
}

fn domain(op: UnaryOp) -> (f64, f64) {
    match op {
        UnaryOp::Sqrt | UnaryOp::Log | UnaryOp::Log10 | UnaryOp::Log2 => (1e-3, 1e3),
        UnaryOp::Exp | UnaryOp::Expm1 => (-30.0, 30.0),
        UnaryOp::Exp2 => (-40.0, 40.0),
        UnaryOp::Log1p => (-0.9, 1e3),
        UnaryOp::Arcsin | UnaryOp::Arccos => (-1.0, 1.0),
        UnaryOp::Arctanh => (-0.99, 0.99),
        UnaryOp::Arccosh => (1.001, 1e3),
        UnaryOp::Tan => (-1.5, 1.5),
        _ => (-20.0, 20.0),
    }
}

/// Functions OpenCL allows 2-5 ulp (pocl uses that room).
const WIDER_ULPS: [UnaryOp; 13] = [
    UnaryOp::Log1p,
    UnaryOp::Expm1,
    UnaryOp::Log10,
    UnaryOp::Log2,
    UnaryOp::Exp2,
    UnaryOp::Arcsin,
    UnaryOp::Arccos,
    UnaryOp::Arctan,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Arcsinh,
    UnaryOp::Arccosh,
    UnaryOp::Arctanh,
];

#[test]
fn unary_ops_match_f64_on_edge_sizes() {
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            for op in UnaryOp::ALL {
                if op == UnaryOp::Not {
                    continue;
                }
                let (lo, hi) = domain(op);
                for (k, &n) in EDGE_SIZES.iter().enumerate() {
                    let (a, x) = array(&[n], dtype, 11 + k as u64, lo, hi);
                    let got = a.unary(op).unwrap();
                    assert_eq!(got.dtype(), dtype, "{}", op.name());
                    let want: Vec<f64> = x.iter().map(|&v| unary_ref(op, v)).collect();
                    // f32 transcendentals: within 4 ulp of the f64 result;
                    // OpenCL allows 2-5 ulp for the inverse, hyperbolic and
                    // log1p/expm1 family (pocl uses that room), and an ulp is
                    // up to twice the relative epsilon.
                    let ulps = if WIDER_ULPS.contains(&op) { 12.0 } else { 5.0 };
                    assert_close(
                        &got.to_vec_f64().unwrap(),
                        &want,
                        rtol(dtype, ulps),
                        1e-30,
                        op.name(),
                    );
                }
            }
        }
    });
}

/// `sign` on its edge values (both zeros, NaN, infinities, subnormals,
/// extremes) among random ones, at a size crossing chunk and task edges,
/// alone and inside a fused chain, for floats and integers: bit for bit.
#[test]
fn sign_matches_numpy_on_edge_values_every_dtype() {
    on_every_engine(|_e| {
        let n = 70_001;
        let specials = [
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            5e-324,
            -5e-324,
            1e-40,
            -1e-40,
            f64::MAX,
            f64::MIN,
        ];
        let mut x = values(n, 31, -3.0, 3.0);
        for (i, v) in x.iter_mut().enumerate() {
            if i % 7 == 0 {
                *v = specials[(i / 7) % specials.len()];
            }
        }
        let (_, y) = array(&[n], DType::F64, 32, 0.5, 2.0);
        for dtype in [DType::F32, DType::F64] {
            let a = Array::from_vec(x.clone(), &[n])
                .unwrap()
                .cast(dtype)
                .unwrap();
            let xs = a.to_vec_f64().unwrap();
            let want: Vec<f64> = xs.iter().map(|&v| sign_ref(v)).collect();
            let got = a.sign().unwrap();
            assert_eq!(got.dtype(), dtype);
            let got = got.to_vec_f64().unwrap();
            for i in 0..n {
                assert!(
                    got[i].to_bits() == want[i].to_bits(),
                    "{dtype} sign({}) = {}, want {}",
                    xs[i],
                    got[i],
                    want[i]
                );
            }
            // Fused: sign(a) * b + 1.
            let b = Array::from_vec(y.clone(), &[n])
                .unwrap()
                .cast(dtype)
                .unwrap();
            let yb = b.to_vec_f64().unwrap();
            let chain = a.sign().unwrap().mul(&b).unwrap().add(1i64).unwrap();
            let want: Vec<f64> = (0..n).map(|i| sign_ref(xs[i]) * yb[i] + 1.0).collect();
            assert_close(
                &chain.to_vec_f64().unwrap(),
                &want,
                rtol(dtype, 1.0),
                0.0,
                "sign chain",
            );
        }
        for dtype in [DType::I32, DType::I64] {
            let (a, xs) = array(&[n], dtype, 33, -4.0, 4.0);
            assert!(xs.contains(&0.0) && xs.contains(&-4.0) && xs.contains(&3.0));
            let got = a.sign().unwrap();
            assert_eq!(got.dtype(), dtype);
            let want: Vec<f64> = xs
                .iter()
                .map(|&v| v.signum() * (v != 0.0) as u8 as f64)
                .collect();
            assert_eq!(got.to_vec_f64().unwrap(), want, "{dtype} sign");
        }
        let u = Array::from_vec(vec![0u64, 1, u64::MAX, 1 << 63, 7], &[5]).unwrap();
        assert_eq!(
            u.sign().unwrap().to_vec::<u64>().unwrap(),
            vec![0, 1, 1, 1, 1]
        );
        let (flags, _) = array(&[9], DType::Bool, 34, 0.0, 1.0);
        let err = flags.sign().unwrap_err().to_string();
        assert!(err.contains("sign"), "{err}");
        // NumPy 2's complex sign (x / |x|) is not the engine's: refused.
        let z = vec![num_complex::Complex64::new(3.0, 4.0); 3];
        let err = Array::from_vec(z, &[3])
            .unwrap()
            .sign()
            .unwrap_err()
            .to_string();
        assert!(err.contains("sign"), "{err}");
    });
}

fn binary_ref(op: BinaryOp, a: f64, b: f64) -> f64 {
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Minimum => a.min(b),
        BinaryOp::Maximum => a.max(b),
        BinaryOp::Lt => (a < b) as u8 as f64,
        BinaryOp::Le => (a <= b) as u8 as f64,
        BinaryOp::Gt => (a > b) as u8 as f64,
        BinaryOp::Ge => (a >= b) as u8 as f64,
        BinaryOp::Eq => (a == b) as u8 as f64,
        BinaryOp::Ne => (a != b) as u8 as f64,
        BinaryOp::And => (a != 0.0 && b != 0.0) as u8 as f64,
        BinaryOp::Or => (a != 0.0 || b != 0.0) as u8 as f64,
        BinaryOp::Atan2 => a.atan2(b),
        BinaryOp::Hypot => a.hypot(b),
    }
}

const BINARY: [BinaryOp; 15] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Pow,
    BinaryOp::Minimum,
    BinaryOp::Maximum,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Atan2,
    BinaryOp::Hypot,
];

#[test]
fn binary_ops_match_f64_with_broadcasting() {
    on_every_engine(|_e| {
        // (shape a, shape b, broadcast shape)
        let cases: [(&[usize], &[usize]); 5] = [
            (&[2049], &[2049]),
            (&[3, 1, 700], &[4, 1]),
            (&[1], &[65_537]),
            (&[5, 7], &[7]),
            (&[], &[3, 3]),
        ];
        for dtype in [DType::F32, DType::F64] {
            for (ci, (sa, sb)) in cases.iter().enumerate() {
                let (a, xa) = array(sa, dtype, 100 + ci as u64, 0.5, 4.0);
                let (b, xb) = array(sb, dtype, 200 + ci as u64, 0.5, 4.0);
                let out_shape = crossover::shape::broadcast_shapes("t", sa, sb).unwrap();
                for op in BINARY {
                    let got = Array::binary(op, &a, &b).unwrap();
                    assert_eq!(got.shape(), &out_shape[..]);
                    let want: Vec<f64> = indices(&out_shape)
                        .iter()
                        .map(|idx| {
                            let pick = |s: &[usize], x: &[f64]| {
                                let off = idx.len() - s.len();
                                let j: Vec<usize> = s
                                    .iter()
                                    .enumerate()
                                    .map(|(d, &n)| if n == 1 { 0 } else { idx[off + d] })
                                    .collect();
                                x[flat(&j, s)]
                            };
                            binary_ref(op, pick(sa, &xa), pick(sb, &xb))
                        })
                        .collect();
                    // A GPU's float32 atan2 may be 6 ulp off (OpenCL's bound).
                    let tol = if op == BinaryOp::Pow {
                        rtol(dtype, 4.0)
                    } else if op.is_float_function() {
                        rtol(dtype, 8.0)
                    } else {
                        rtol(dtype, 1.0)
                    };
                    assert_close(&got.to_vec_f64().unwrap(), &want, tol, 0.0, op.name());
                }
            }
        }
    });
}

#[test]
fn a_long_chain_fuses_into_one_kernel_and_is_right() {
    on_every_engine(|_e| {
        let n = 100_003;
        let (a, xa) = array(&[n], DType::F32, 1, -3.0, 3.0);
        let (b, xb) = array(&[n], DType::F32, 2, -3.0, 3.0);
        let y = a
            .mul(&b)
            .unwrap()
            .add(a.sin().unwrap())
            .unwrap()
            .add(b.cos().unwrap())
            .unwrap();
        assert_eq!(crossover::lower(std::slice::from_ref(&y)).unwrap().len(), 1);
        let want: Vec<f64> = xa
            .iter()
            .zip(&xb)
            .map(|(&p, &q)| p * q + p.sin() + q.cos())
            .collect();
        // Each of the 5 ops rounds once in f32.
        assert_close(
            &y.to_vec_f64().unwrap(),
            &want,
            2e-6,
            2e-6,
            "a*b+sin(a)+cos(b)",
        );
    });
}

#[test]
fn trig_chains_with_huge_arguments_are_right_stored_and_summed() {
    // A float32 sin/cos chain is compiled on x86-64 CPUs; arguments beyond
    // 1e6 (and infinities) send a call to the interpreter, which takes the
    // scalar float64 path for them. Both, stored and summed, against f64.
    on_every_engine(|_e| {
        let n = 20_011;
        let (_, mut xa) = array(&[n], DType::F32, 4, -3.0, 3.0);
        let (b, xb) = array(&[n], DType::F32, 5, -3.0, 3.0);
        for (i, big) in [(7, 2.5e6), (9_000, -4.0e7), (15_555, 1.0e6 + 64.0)] {
            xa[i] = big;
        }
        let a = Array::from_vec(xa.iter().map(|&v| v as f32).collect(), &[n]).unwrap();
        let y = a
            .sin()
            .unwrap()
            .mul(&b)
            .unwrap()
            .add(a.cos().unwrap())
            .unwrap();
        let want: Vec<f64> = xa
            .iter()
            .zip(&xb)
            .map(|(&p, &q)| p.sin() * q + p.cos())
            .collect();
        assert_close(
            &y.to_vec_f64().unwrap(),
            &want,
            2e-6,
            2e-6,
            "sin(a)*b + cos(a)",
        );
        let total = y.sum(None, false).unwrap().to_vec_f64().unwrap()[0];
        let want_total: f64 = want.iter().map(|&v| v as f32 as f64).sum();
        assert!(
            (total - want_total).abs() <= 1e-3,
            "sum: {total} against {want_total}"
        );
        let inf = Array::from_vec(vec![f32::INFINITY; 5000], &[5000]).unwrap();
        let z = inf.sin().unwrap().mul(&inf).unwrap().to_vec_f64().unwrap();
        assert!(z.iter().all(|v| v.is_nan()), "sin(inf) * inf is NaN");
    });
}

#[test]
fn weak_scalars_keep_the_array_dtype() {
    on_every_engine(|_e| {
        let (a, x) = array(&[10], DType::F32, 3, 1.0, 2.0);
        let y = a.mul(2.5).unwrap().sub(1).unwrap();
        assert_eq!(y.dtype(), DType::F32);
        let want: Vec<f64> = x.iter().map(|v| v * 2.5 - 1.0).collect();
        assert_close(
            &y.to_vec_f64().unwrap(),
            &want,
            rtol(DType::F32, 1.0),
            0.0,
            "scalar ops",
        );
        // Reflected: 2 - a and 1 / a.
        let r = Array::binary(BinaryOp::Sub, 2.0, &a).unwrap();
        assert_close(
            &r.to_vec_f64().unwrap(),
            &x.iter().map(|v| 2.0 - v).collect::<Vec<_>>(),
            1e-6,
            0.0,
            "2-a",
        );
        let (i, xi) = array(&[10], DType::I32, 4, -50.0, 50.0);
        let f = i.mul(0.5).unwrap();
        assert_eq!(f.dtype(), DType::F64, "int * float scalar is float64");
        assert_close(
            &f.to_vec_f64().unwrap(),
            &xi.iter().map(|v| v * 0.5).collect::<Vec<_>>(),
            0.0,
            0.0,
            "i*0.5",
        );
    });
}

#[test]
fn promotion_between_arrays() {
    on_every_engine(|_e| {
        let (a, xa) = array(&[2049], DType::F32, 5, -2.0, 2.0);
        let (b, xb) = array(&[2049], DType::F64, 6, -2.0, 2.0);
        let (c, xc) = array(&[2049], DType::I32, 7, -100.0, 100.0);
        let ab = a.add(&b).unwrap();
        assert_eq!(ab.dtype(), DType::F64);
        assert_close(
            &ab.to_vec_f64().unwrap(),
            &xa.iter().zip(&xb).map(|(p, q)| p + q).collect::<Vec<_>>(),
            1e-15,
            0.0,
            "f32+f64",
        );
        let ac = a.mul(&c).unwrap();
        assert_eq!(
            ac.dtype(),
            DType::F64,
            "int32 * float32 is float64 in NumPy"
        );
        assert_close(
            &ac.to_vec_f64().unwrap(),
            &xa.iter().zip(&xc).map(|(p, q)| p * q).collect::<Vec<_>>(),
            1e-15,
            0.0,
            "f32*i32",
        );
        let cd = c.div(c.add(1000).unwrap()).unwrap();
        assert_eq!(cd.dtype(), DType::F64, "integer true division is float64");
    });
}

#[test]
fn integer_and_bool_ops() {
    on_every_engine(|_e| {
        let (a, xa) = array(&[4097], DType::I64, 8, -1000.0, 1000.0);
        let (b, xb) = array(&[4097], DType::I64, 9, -1000.0, 1000.0);
        for (op, f) in [
            (
                BinaryOp::Add,
                (|p: f64, q: f64| p + q) as fn(f64, f64) -> f64,
            ),
            (BinaryOp::Sub, |p, q| p - q),
            (BinaryOp::Mul, |p, q| p * q),
            (BinaryOp::Minimum, f64::min),
            (BinaryOp::Maximum, f64::max),
        ] {
            let got = Array::binary(op, &a, &b).unwrap();
            assert_eq!(got.dtype(), DType::I64);
            let want: Vec<f64> = xa.iter().zip(&xb).map(|(&p, &q)| f(p, q)).collect();
            assert_eq!(got.to_vec_f64().unwrap(), want, "{}", op.name());
        }
        let p = Array::from_vec(vec![2i32, -3, 5, 1, -1, 7], &[6]).unwrap();
        let e = Array::from_vec(vec![10i32, 3, 0, 2, 3, 2], &[6]).unwrap();
        assert_eq!(
            p.pow(&e).unwrap().to_vec::<i32>().unwrap(),
            vec![1024, -27, 1, 1, -1, 49]
        );
        // Negative integer exponents are NumPy's ValueError (even for 1 and -1).
        let neg = Array::from_vec(vec![10i32, 3, 0, -2, -3, 2], &[6]).unwrap();
        assert!(p.pow(&neg).unwrap().eval().is_err());
        let t = Array::from_vec(vec![true, false, true, false], &[4]).unwrap();
        let u = Array::from_vec(vec![true, true, false, false], &[4]).unwrap();
        assert_eq!(
            t.add(&u).unwrap().to_vec::<bool>().unwrap(),
            vec![true, true, true, false],
            "bool + is or"
        );
        assert_eq!(
            t.mul(&u).unwrap().to_vec::<bool>().unwrap(),
            vec![true, false, false, false],
            "bool * is and"
        );
        assert_eq!(
            t.logical_not().unwrap().to_vec::<bool>().unwrap(),
            vec![false, true, false, true]
        );
        assert_eq!(
            t.sum(None, false).unwrap().to_vec::<i64>().unwrap(),
            vec![2]
        );
        assert!(t.sub(&u).is_err(), "bool - bool is an error like NumPy");
        assert!(t.neg().is_err());
    });
}

#[test]
fn nan_semantics_follow_numpy() {
    on_every_engine(|_e| {
        let a = Array::from_vec(vec![1.0f64, f64::NAN, 3.0, f64::NAN], &[4]).unwrap();
        let b = Array::from_vec(vec![f64::NAN, 2.0, 1.0, f64::NAN], &[4]).unwrap();
        let mn = a.minimum(&b).unwrap().to_vec::<f64>().unwrap();
        assert!(mn[0].is_nan() && mn[1].is_nan() && mn[2] == 1.0 && mn[3].is_nan());
        let mx = a.maximum(&b).unwrap().to_vec::<f64>().unwrap();
        assert!(mx[0].is_nan() && mx[1].is_nan() && mx[2] == 3.0);
        assert_eq!(
            a.lt(&b).unwrap().to_vec::<bool>().unwrap(),
            vec![false, false, false, false]
        );
        assert_eq!(
            a.ne(&b).unwrap().to_vec::<bool>().unwrap(),
            vec![true, true, true, true]
        );
        assert_eq!(
            a.eq_(&a).unwrap().to_vec::<bool>().unwrap(),
            vec![true, false, true, false]
        );
    });
}

#[test]
fn where_and_cast() {
    on_every_engine(|_e| {
        let n = 70_001;
        let (x, xs) = array(&[n], DType::F32, 12, -1.0, 1.0);
        let c = x.gt(0.25).unwrap();
        let y = Array::where_(&c, x.mul(&x).unwrap(), Scalar::Float(-1.0)).unwrap();
        let want: Vec<f64> = xs
            .iter()
            .map(|&v| {
                if v > 0.25 {
                    ((v * v) as f32) as f64
                } else {
                    -1.0
                }
            })
            .collect();
        assert_eq!(y.to_vec_f64().unwrap(), want);
        // Broadcast condition against rows.
        let cond = Array::from_vec(vec![true, false, true], &[3, 1]).unwrap();
        let a = Array::arange(0.0, 12.0, 1.0, DType::F64)
            .unwrap()
            .reshape(&[3, 4])
            .unwrap();
        let w = Array::where_(&cond, &a, 0.0).unwrap();
        assert_eq!(
            w.to_vec::<f64>().unwrap(),
            vec![0., 1., 2., 3., 0., 0., 0., 0., 8., 9., 10., 11.]
        );
        // Casts: truncation toward zero; NaN and out of range as NumPy gives
        // them on x86 (the C cast's MIN); nonzero -> true.
        let f = Array::from_vec(vec![1.7f64, -2.7, f64::NAN, 1e30, -0.0, 0.5], &[6]).unwrap();
        let bad = if cfg!(target_arch = "x86_64") {
            (i32::MIN, i32::MIN)
        } else {
            (0, i32::MAX)
        };
        assert_eq!(
            f.cast(DType::I32).unwrap().to_vec::<i32>().unwrap(),
            vec![1, -2, bad.0, bad.1, 0, 0]
        );
        assert_eq!(
            f.cast(DType::Bool).unwrap().to_vec::<bool>().unwrap(),
            vec![true, true, true, true, false, true]
        );
        let fb = f.cast(DType::Bool).unwrap().cast(DType::F32).unwrap();
        assert_eq!(
            fb.to_vec::<f32>().unwrap(),
            vec![1.0, 1.0, 1.0, 1.0, 0.0, 1.0]
        );
    });
}

#[test]
fn creation_functions() {
    on_every_engine(|_e| {
        let z = Array::zeros(&[3, 2049], DType::F32).unwrap();
        assert!(z.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));
        let o = Array::full(&[5], 2.5, DType::F64).unwrap();
        assert_eq!(o.to_vec::<f64>().unwrap(), vec![2.5; 5]);
        let r = Array::arange(-1.0, 1.0, 0.25, DType::F64).unwrap();
        assert_eq!(
            r.to_vec::<f64>().unwrap(),
            vec![-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75]
        );
        let ri = Array::arange(0.0, 5.0, 2.0, DType::I64).unwrap();
        assert_eq!(ri.to_vec::<i64>().unwrap(), vec![0, 2, 4]);
        let l = Array::linspace(0.0, 1.0, 5, true, DType::F64).unwrap();
        assert_eq!(l.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let l = Array::linspace(0.0, 0.3, 7, true, DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert_eq!(l[6], 0.3, "the endpoint is exact");
        let l = Array::linspace(0.0, 1.0, 4, false, DType::F32).unwrap();
        assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
        assert_eq!(
            Array::linspace(0.0, 1.0, 0, true, DType::F64)
                .unwrap()
                .numel(),
            0
        );
        // Large arange crosses chunk edges.
        let big = Array::arange(0.0, 300_000.0, 1.0, DType::F64)
            .unwrap()
            .sum(None, false)
            .unwrap();
        assert_eq!(big.item().unwrap(), 299_999.0 * 300_000.0 / 2.0);
    });
}

#[test]
fn empty_arrays_are_fine() {
    on_every_engine(|_e| {
        let e = Array::zeros(&[0, 5], DType::F32).unwrap();
        let y = e.add(1.0).unwrap().sin().unwrap();
        assert_eq!(y.shape(), &[0, 5]);
        assert!(y.to_vec::<f32>().unwrap().is_empty());
        assert_eq!(e.sum(None, false).unwrap().item().unwrap(), 0.0);
        assert!(e.mean(None, false).unwrap().item().unwrap().is_nan());
        assert_eq!(
            e.sum(Some(&[0]), false).unwrap().to_vec::<f32>().unwrap(),
            vec![0.0; 5]
        );
    });
}

#[test]
fn constant_powers_match_pow_and_never_run_it() {
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            let n = 65_537;
            // Random values, then the edge values NumPy users hit: zeros of
            // both signs, infinities, NaN, a tiny value.
            let mut xa = values(n, 31, -6.0, 6.0);
            xa.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-30]);
            let x = Array::from_slice(&xa, &[xa.len()])
                .unwrap()
                .cast(dtype)
                .unwrap();
            for (e, ulps) in [
                (0.0f64, 0.0f64),
                (1.0, 0.0),
                (2.0, 0.0),
                (-1.0, 0.0),
                (0.5, 0.0),
                (3.0, 2.0),
                (4.0, 2.0),
                (-2.0, 2.0),
            ] {
                let y = x.pow(e).unwrap();
                assert_eq!(y.dtype(), dtype);
                let kernels = crossover::lower(std::slice::from_ref(&y)).unwrap();
                let ops: Vec<&str> = kernels.iter().flat_map(|k| k.fused.clone()).collect();
                assert!(!ops.contains(&"pow"), "x**{e} ran pow: {ops:?}");
                let want: Vec<f64> = xa
                    .iter()
                    .map(|&v| {
                        // NumPy's `x**0.5` is sqrt (-0 stays -0, -inf is NaN).
                        let v = if dtype == DType::F32 {
                            v as f32 as f64
                        } else {
                            v
                        };
                        // NumPy's answers: exact ops where it has them.
                        let r = match e {
                            0.5 => v.sqrt(),
                            2.0 => v * v,
                            -1.0 => 1.0 / v,
                            _ => v.powf(e),
                        };
                        // Rounded to the dtype (1e-30**2 is 0 in float32).
                        if dtype == DType::F32 {
                            r as f32 as f64
                        } else {
                            r
                        }
                    })
                    .collect();
                let got = y.to_vec_f64().unwrap();
                assert_close(
                    &got,
                    &want,
                    rtol(dtype, ulps.max(0.5)),
                    0.0,
                    &format!("x**{e}"),
                );
                // Signs of zeros and NaNs match exactly.
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g.is_nan(), w.is_nan(), "x**{e} at {i}: {g} vs {w}");
                    if *w == 0.0 {
                        assert_eq!(g.is_sign_negative(), w.is_sign_negative(), "x**{e} at {i}");
                    }
                }
            }
            // Any other exponent still runs pow, and is right.
            let y = x.pow(2.5).unwrap();
            let want: Vec<f64> = xa
                .iter()
                .map(|&v| match dtype {
                    DType::F32 => (v as f32 as f64).powf(2.5) as f32 as f64,
                    _ => v.powf(2.5),
                })
                .collect();
            assert_close(
                &y.to_vec_f64().unwrap(),
                &want,
                rtol(dtype, 4.0),
                0.0,
                "x**2.5",
            );
        }
        // Integers: 0-4 by multiplication, wrapping like NumPy's power.
        let (i, xi) = array(&[4099], DType::I64, 32, -70_000.0, 70_000.0);
        for e in 0..=4i64 {
            let got = i.pow(e).unwrap().to_vec::<i64>().unwrap();
            let want: Vec<i64> = xi
                .iter()
                .map(|&v| (v as i64).wrapping_pow(e as u32))
                .collect();
            assert_eq!(got, want, "int64 x**{e}");
        }
        assert!(i.pow(-1i64).is_err(), "negative int power");
    });
}

#[test]
fn hypot_on_edge_values_matches_libm() {
    on_every_engine(|_e| {
        let edges = [
            0.0,
            -0.0,
            1e-45,
            3e38,
            -3e38,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            2.5,
            -7.0,
        ];
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for &p in &edges {
            for &q in &edges {
                xs.push(p);
                ys.push(q);
            }
        }
        for dtype in [DType::F32, DType::F64] {
            let round = |v: f64| {
                if dtype == DType::F32 {
                    v as f32 as f64
                } else {
                    v
                }
            };
            let x = Array::from_slice(&xs, &[xs.len()])
                .unwrap()
                .cast(dtype)
                .unwrap();
            let y = Array::from_slice(&ys, &[ys.len()])
                .unwrap()
                .cast(dtype)
                .unwrap();
            let got = Array::binary(BinaryOp::Hypot, &x, &y)
                .unwrap()
                .to_vec_f64()
                .unwrap();
            for (i, g) in got.iter().enumerate() {
                let want = round(round(xs[i]).hypot(round(ys[i])));
                assert!(
                    g == &want
                        || (g.is_nan() && want.is_nan())
                        || (g - want).abs() <= want.abs() * 4e-7,
                    "{dtype} hypot({}, {}) = {g}, want {want}",
                    xs[i],
                    ys[i]
                );
            }
        }
    });
}
