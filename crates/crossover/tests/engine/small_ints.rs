//! int8, int16, uint8, uint16, uint32 and uint64: NumPy 2's wrapping
//! arithmetic, promotion, casts and reductions, on every engine (GPU
//! engines run these kernels on the CPU: see
//! `small_int_kernels_are_placed_on_the_cpu_by_a_gpu`).

use crate::common::*;
use crossover::{Array, DType, DeviceKind, Error, Policy};

/// Sizes around the CPU interpreter's chunk of 2048 points.
const SIZES: &[usize] = &[1, 2047, 2049, 5000];

/// Deterministic integers covering the whole range of a dtype (as i128).
fn ints(n: usize, seed: u64, lo: i128, hi: i128) -> Vec<i128> {
    xorshift(seed)
        .take(n)
        .map(|s| {
            let span = (hi - lo + 1) as u128;
            let v = lo + ((s as u128 * 0x2545_F491_4F6C_DD1D) % span) as i128;
            // Never zero (divisors, products).
            if v == 0 {
                1
            } else {
                v
            }
        })
        .collect()
}

/// Wraps an exact value to dtype `d` (two's complement).
fn wrap(d: DType, v: i128) -> i128 {
    let (signed, bits) = d.int_parts().unwrap();
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if signed && r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// `p * q` modulo 2^64 (as a non-negative value): the product every
/// dtype's wrap reduces further, without overflowing i128 for uint64.
fn mulw(p: i128, q: i128) -> i128 {
    (p as u128).wrapping_mul(q as u128) as u64 as i128
}

/// Expands `$of!(rust type)` for the integer dtype `$d` (the match both
/// `make` and `read` need); other dtypes take `$other`.
macro_rules! per_int_dtype {
    ($d:expr, $of:ident, $other:pat => $fallback:expr) => {
        match $d {
            DType::I8 => $of!(i8),
            DType::I16 => $of!(i16),
            DType::I32 => $of!(i32),
            DType::I64 => $of!(i64),
            DType::U8 => $of!(u8),
            DType::U16 => $of!(u16),
            DType::U32 => $of!(u32),
            DType::U64 => $of!(u64),
            $other => $fallback,
        }
    };
}

/// Builds an array of dtype `d` from exact values (which must fit).
fn make(d: DType, v: &[i128], shape: &[usize]) -> Array {
    macro_rules! of {
        ($t:ty) => {
            Array::from_vec(
                v.iter().map(|&x| <$t>::try_from(x).unwrap()).collect(),
                shape,
            )
        };
    }
    per_int_dtype!(d, of, d => panic!("not an integer dtype: {d}")).unwrap()
}

/// The values of an integer array, exactly.
fn read(a: &Array) -> Vec<i128> {
    macro_rules! of {
        ($t:ty) => {
            a.to_vec::<$t>()
                .unwrap()
                .into_iter()
                .map(|x| x as i128)
                .collect()
        };
    }
    per_int_dtype!(a.dtype(), of, d => match d {
        DType::Bool => a
            .to_vec::<bool>()
            .unwrap()
            .into_iter()
            .map(|x| x as i128)
            .collect(),
        d => panic!("not an integer dtype: {d}"),
    })
}

const SMALL: [DType; 6] = [
    DType::I8,
    DType::I16,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];

fn range(d: DType) -> (i128, i128) {
    d.int_range().unwrap()
}

#[test]
fn small_ints_wrap_after_every_op_like_numpy() {
    on_every_engine_lenient(|e| {
        for d in SMALL {
            let (lo, hi) = range(d);
            for &n in SIZES {
                let what = |op: &str| format!("{op} {d} n={n} on {}", e.name);
                let x = ints(n, 1 + n as u64, lo, hi);
                let y = ints(n, 2 + n as u64, lo, hi);
                let z = ints(n, 3 + n as u64, lo, hi);
                let (a, b, c) = (make(d, &x, &[n]), make(d, &y, &[n]), make(d, &z, &[n]));
                let ew = |f: &dyn Fn(i128, i128) -> i128| -> Vec<i128> {
                    x.iter().zip(&y).map(|(&p, &q)| wrap(d, f(p, q))).collect()
                };
                let s = a.add(&b).unwrap();
                assert_eq!(s.dtype(), d);
                assert_eq!(read(&s), ew(&|p, q| p + q), "{}", what("add"));
                assert_eq!(
                    read(&a.sub(&b).unwrap()),
                    ew(&|p, q| p - q),
                    "{}",
                    what("sub")
                );
                assert_eq!(
                    read(&a.mul(&b).unwrap()),
                    ew(&|p, q| mulw(p, q)),
                    "{}",
                    what("mul")
                );
                assert_eq!(read(&a.neg().unwrap()), ew(&|p, _| -p), "{}", what("neg"));
                assert_eq!(
                    read(&a.abs().unwrap()),
                    ew(&|p, _| p.abs()),
                    "{}",
                    what("abs")
                );
                assert_eq!(
                    read(&a.square().unwrap()),
                    ew(&|p, _| mulw(p, p)),
                    "{}",
                    what("square")
                );
                assert_eq!(
                    read(&a.minimum(&b).unwrap()),
                    ew(&|p, q| p.min(q)),
                    "{}",
                    what("minimum")
                );
                // The sum wraps before the comparison and the maximum read it.
                let want: Vec<i128> = x
                    .iter()
                    .zip(&y)
                    .zip(&z)
                    .map(|((&p, &q), &r)| (wrap(d, p + q) > r) as i128)
                    .collect();
                assert_eq!(read(&s.gt(&c).unwrap()), want, "{}", what("(a+b) > c"));
                let want: Vec<i128> = x
                    .iter()
                    .zip(&y)
                    .zip(&z)
                    .map(|((&p, &q), &r)| wrap(d, mulw(p, q)).max(r))
                    .collect();
                let m = a.mul(&b).unwrap().maximum(&c).unwrap();
                assert_eq!(read(&m), want, "{}", what("maximum(a*b, c)"));
                // Widened to float64 after a wrapping product.
                let f = a.mul(&b).unwrap().cast(DType::F64).unwrap();
                let want: Vec<f64> = ew(&|p, q| mulw(p, q))
                    .into_iter()
                    .map(|v| v as f64)
                    .collect();
                assert_eq!(f.to_vec::<f64>().unwrap(), want, "{}", what("cast(a*b)"));
                // A weak Python int keeps the dtype.
                let one = a.add(1i64).unwrap();
                assert_eq!(one.dtype(), d);
                assert_eq!(read(&one), ew(&|p, _| p + 1), "{}", what("a + 1"));
                // where keeps the values.
                let w = Array::where_(&a.lt(&b).unwrap(), &a, &b).unwrap();
                assert_eq!(read(&w), ew(&|p, q| p.min(q)), "{}", what("where"));
            }
        }
    });
}

#[test]
fn small_int_strided_and_broadcast_reads() {
    on_every_engine_lenient(|e| {
        for d in SMALL {
            let (lo, hi) = range(d);
            let (r, c) = (70, 33);
            let x = ints(r * c, 9, lo, hi);
            let a = make(d, &x, &[r, c]);
            let t = a.transpose().unwrap().add(a.transpose().unwrap()).unwrap();
            let got = read(&t);
            for i in 0..c {
                for j in 0..r {
                    assert_eq!(
                        got[i * r + j],
                        wrap(d, 2 * x[j * c + i]),
                        "{d} on {}",
                        e.name
                    );
                }
            }
            // A row broadcast over the matrix (a constant-stride source).
            let row = make(d, &x[..c], &[c]);
            let got = read(&a.sub(&row).unwrap());
            for i in 0..r {
                for j in 0..c {
                    assert_eq!(
                        got[i * c + j],
                        wrap(d, x[i * c + j] - x[j]),
                        "{d} on {}",
                        e.name
                    );
                }
            }
        }
    });
}

#[test]
fn promotion_of_arrays_follows_numpy() {
    use DType::*;
    let cases = [
        (I8, U8, I16),
        (I16, U16, I32),
        (I32, U32, I64),
        (I64, U64, F64),
        (U8, I32, I32),
        (U8, F32, F32),
        (I16, F32, F32),
        (U32, F32, F64),
        (U64, F32, F64),
        (Bool, U16, U16),
    ];
    on_every_engine_lenient(|e| {
        for (p, q, want) in cases {
            let a = if p == Bool {
                make(I8, &[1, 2, 3], &[3]).cast(Bool).unwrap()
            } else {
                make(p, &[1, 2, 3], &[3])
            };
            let b = match q {
                F32 => Array::from_vec(vec![0.5f32, 1.5, 2.5], &[3]).unwrap(),
                _ => make(q, &[4, 5, 6], &[3]),
            };
            let s = a.add(&b).unwrap();
            assert_eq!(s.dtype(), want, "{p} + {q}");
            let got = s.cast(F64).unwrap().to_vec::<f64>().unwrap();
            let a0: Vec<f64> = if p == Bool {
                vec![1.0; 3]
            } else {
                vec![1.0, 2.0, 3.0]
            };
            let b0: Vec<f64> = if q == F32 {
                vec![0.5, 1.5, 2.5]
            } else {
                vec![4.0, 5.0, 6.0]
            };
            let want: Vec<f64> = a0.iter().zip(&b0).map(|(x, y)| x + y).collect();
            assert_eq!(got, want, "{p} + {q} on {}", e.name);
        }
    });
}

#[test]
fn python_ints_out_of_range_overflow_and_float_functions_name_float16() {
    let u8s = make(DType::U8, &[1, 2, 3], &[3]);
    for v in [300i64, -1] {
        match u8s.add(v) {
            Err(Error::Overflow { msg, .. }) => assert!(msg.contains("uint8"), "{msg}"),
            other => panic!("uint8 + {v}: expected an overflow, got {other:?}"),
        }
    }
    match make(DType::I8, &[1], &[1]).mul(128i64) {
        Err(Error::Overflow { .. }) => {}
        other => panic!("int8 * 128: expected an overflow, got {other:?}"),
    }
    assert!(make(DType::I8, &[1], &[1]).mul(-128i64).is_ok());
    for d in [DType::I8, DType::U8] {
        let a = make(d, &[1, 2], &[2]);
        for r in [a.sin(), a.sqrt(), a.exp()] {
            match r {
                Err(Error::DType { msg, .. }) => assert!(msg.contains("float16"), "{msg}"),
                other => panic!("sin({d}): expected a dtype error, got {other:?}"),
            }
        }
    }
    assert_eq!(
        make(DType::I16, &[4], &[1]).sqrt().unwrap().dtype(),
        DType::F32
    );
    assert_eq!(
        make(DType::U16, &[4], &[1]).sin().unwrap().dtype(),
        DType::F32
    );
    assert_eq!(
        make(DType::U32, &[4], &[1]).sqrt().unwrap().dtype(),
        DType::F64
    );
    assert_eq!(
        make(DType::U64, &[4], &[1]).log().unwrap().dtype(),
        DType::F64
    );
    // True division of any integers is float64 (NumPy).
    let q = make(DType::I8, &[7, -7, 1], &[3])
        .div(make(DType::I8, &[2, 2, 0], &[3]))
        .unwrap();
    assert_eq!(q.dtype(), DType::F64);
    assert_eq!(q.to_vec::<f64>().unwrap(), vec![3.5, -3.5, f64::INFINITY]);
    // bool ** bool and square(bool) are int8 in NumPy.
    let t = Array::from_vec(vec![true, true, false, false], &[4]).unwrap();
    let f = Array::from_vec(vec![true, false, true, false], &[4]).unwrap();
    let p = t.pow(&f).unwrap();
    assert_eq!(p.dtype(), DType::I8);
    assert_eq!(read(&p), vec![1, 1, 0, 1]);
    let s = t.square().unwrap();
    assert_eq!(s.dtype(), DType::I8);
    assert_eq!(read(&s), vec![1, 1, 0, 0]);
    let r = make(DType::U16, &[4, 9], &[2]).sqrt().unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![2.0, 3.0]);
}

#[test]
fn casts_between_every_integer_pair_wrap_like_numpy() {
    let all = [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ];
    on_every_engine_lenient(|e| {
        for from in all {
            let (lo, hi) = range(from);
            let x = ints(2049, 17, lo, hi);
            let a = make(from, &x, &[2049]);
            for to in all {
                let got = read(&a.cast(to).unwrap());
                let want: Vec<i128> = x.iter().map(|&v| wrap(to, v)).collect();
                assert_eq!(got, want, "{from} -> {to} on {}", e.name);
            }
            let b = read(&a.cast(DType::Bool).unwrap());
            assert_eq!(b, x.iter().map(|&v| (v != 0) as i128).collect::<Vec<_>>());
            // To float64: exact up to 2^53, rounded beyond (uint64).
            let f = a.cast(DType::F64).unwrap().to_vec::<f64>().unwrap();
            let want: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            assert_eq!(f, want, "{from} -> float64 on {}", e.name);
        }
        // float -> small ints: truncation toward zero, in range.
        let f = Array::from_vec(vec![-128.9f64, 127.9, -0.5, 3.7, 255.5, 65535.2], &[6]).unwrap();
        let want: [(DType, Vec<i128>); 2] = [
            (DType::I16, vec![-128, 127, 0, 3, 255, -1]),
            (DType::U8, vec![128, 127, 0, 3, 255, 255]),
        ];
        for (d, w) in want {
            assert_eq!(read(&f.cast(d).unwrap()), w, "float64 -> {d} on {}", e.name);
        }
        let big = Array::from_vec(vec![18446744073709549568.0f64, 9.3e18, 5.0], &[3]).unwrap();
        assert_eq!(
            read(&big.cast(DType::U64).unwrap()),
            vec![18446744073709549568, 9300000000000000000, 5],
            "float64 -> uint64 on {}",
            e.name
        );
    });
}

#[test]
fn uint64_above_int64_compares_and_reduces_unsigned() {
    on_every_engine_lenient(|e| {
        let top = u64::MAX as i128;
        let x = vec![top, 1, 1 << 63, (1 << 63) - 1, 7];
        let a = make(DType::U64, &x, &[5]);
        let b = make(DType::U64, &[5, 5, 5, 5, 5], &[5]);
        assert_eq!(
            read(&a.gt(&b).unwrap()),
            vec![1, 0, 1, 1, 1],
            "on {}",
            e.name
        );
        assert_eq!(read(&a.max(None, false).unwrap()), vec![top]);
        assert_eq!(read(&a.min(None, false).unwrap()), vec![1]);
        assert_eq!(read(&a.argmax(None).unwrap()), vec![0]);
        let s = a.sum(None, false).unwrap();
        assert_eq!(s.dtype(), DType::U64);
        assert_eq!(
            read(&s),
            vec![wrap(DType::U64, x.iter().sum())],
            "on {}",
            e.name
        );
        let m = a.mean(None, false).unwrap();
        assert_eq!(m.dtype(), DType::F64);
        let want = x.iter().map(|&v| v as f64).sum::<f64>() / 5.0;
        assert_close(&m.to_vec_f64().unwrap(), &[want], 1e-12, 0.0, "mean");
        // Negation wraps.
        assert_eq!(read(&a.neg().unwrap())[1], top);
    });
}

#[test]
fn small_int_reductions_accumulate_like_numpy() {
    on_every_engine_lenient(|e| {
        for d in SMALL {
            let (lo, hi) = range(d);
            for &n in &[2047usize, 5000] {
                let cols = 3;
                let x = ints(n * cols, 40 + n as u64, lo, hi);
                let a = make(d, &x, &[n, cols]);
                let acc = if d.is_unsigned() {
                    DType::U64
                } else {
                    DType::I64
                };
                let what = format!("{d} n={n} on {}", e.name);
                let s = a.sum(None, false).unwrap();
                assert_eq!(s.dtype(), acc);
                assert_eq!(read(&s), vec![wrap(acc, x.iter().sum())], "sum {what}");
                // Per column (the outer, leading-axis mode) and per row.
                let sc = read(&a.sum(Some(&[0]), false).unwrap());
                for j in 0..cols {
                    let col: i128 = (0..n).map(|i| x[i * cols + j]).sum();
                    assert_eq!(sc[j], wrap(acc, col), "column sum {what}");
                }
                let mx = a.max(Some(&[1]), false).unwrap();
                assert_eq!(mx.dtype(), d);
                let want: Vec<i128> = x.chunks(cols).map(|r| *r.iter().max().unwrap()).collect();
                assert_eq!(read(&mx), want, "row max {what}");
                let mn = a.min(Some(&[0]), false).unwrap();
                assert_eq!(mn.dtype(), d);
                let want: Vec<i128> = (0..cols)
                    .map(|j| (0..n).map(|i| x[i * cols + j]).min().unwrap())
                    .collect();
                assert_eq!(read(&mn), want, "column min {what}");
                let p = a.slice_rows(4).prod(None, false).unwrap();
                assert_eq!(p.dtype(), acc);
                let want = x[..4 * cols]
                    .iter()
                    .fold(1i128, |q, &v| wrap(acc, mulw(q, v)));
                assert_eq!(read(&p), vec![want], "prod {what}");
                let m = a.mean(None, false).unwrap();
                assert_eq!(m.dtype(), DType::F64);
                let want = x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64;
                assert_close(&m.to_vec_f64().unwrap(), &[want], 1e-12, 0.0, &what);
                let am = read(&a.argmin(None).unwrap())[0] as usize;
                assert_eq!(x[am], *x.iter().min().unwrap(), "argmin {what}");
                // A reduction of a fused chain: the product wraps first.
                let sq = a.mul(&a).unwrap().max(None, false).unwrap();
                let want = x.iter().map(|&v| wrap(d, mulw(v, v))).max().unwrap();
                assert_eq!(read(&sq), vec![want], "max(a*a) {what}");
            }
        }
    });
}

trait SliceRows {
    fn slice_rows(&self, k: usize) -> Array;
}
impl SliceRows for Array {
    /// The first `k` rows, as a view.
    fn slice_rows(&self, k: usize) -> Array {
        use crossover::shape::SliceArg;
        self.slice(&[SliceArg::Range {
            start: Some(0),
            stop: Some(k as isize),
            step: 1,
        }])
        .unwrap()
    }
}

#[test]
fn scans_matmul_and_pow_of_small_ints() {
    on_every_engine_lenient(|e| {
        let x = ints(2049, 5, 0, 255);
        let a = make(DType::U8, &x, &[2049]);
        let c = a.cumsum(None).unwrap();
        assert_eq!(c.dtype(), DType::U64);
        let mut run = 0i128;
        let want: Vec<i128> = x
            .iter()
            .map(|&v| {
                run += v;
                run
            })
            .collect();
        assert_eq!(read(&c), want, "cumsum on {}", e.name);
        let y = ints(2049, 6, -128, 127);
        let b = make(DType::I8, &y, &[2049]);
        assert_eq!(b.cumprod(None).unwrap().dtype(), DType::I64);
        // matmul keeps int8 and wraps, as NumPy.
        let (m, k, n) = (5, 40, 3);
        let p = ints(m * k, 7, -128, 127);
        let q = ints(k * n, 8, -128, 127);
        let r = make(DType::I8, &p, &[m, k])
            .matmul(&make(DType::I8, &q, &[k, n]))
            .unwrap();
        assert_eq!(r.dtype(), DType::I8);
        let got = read(&r);
        for i in 0..m {
            for j in 0..n {
                let s: i128 = (0..k).map(|t| p[i * k + t] * q[t * n + j]).sum();
                assert_eq!(got[i * n + j], wrap(DType::I8, s), "matmul on {}", e.name);
            }
        }
        // Integer powers wrap.
        let w = make(DType::I16, &[3, -7, 2], &[3]).pow(11i64).unwrap();
        assert_eq!(w.dtype(), DType::I16);
        assert_eq!(
            read(&w),
            vec![
                wrap(DType::I16, 177147),
                wrap(DType::I16, -1977326743),
                2048
            ]
        );
    });
}

#[test]
fn small_int_kernels_are_placed_on_the_cpu_by_a_gpu() {
    let Some(gpu) = opencl_or_skip() else {
        return;
    };
    let engine = gpu_engine(gpu);
    let x = ints(5000, 3, -128, 127);
    let a = make(DType::I8, &x, &[5000]);
    let y = a.mul(3i64).unwrap().add(&a).unwrap();
    let plan = engine.evaluate(std::slice::from_ref(&y), None).unwrap();
    assert_eq!(plan.devices(), vec![DeviceKind::Cpu]);
    assert!(
        plan.kernels[0].reason.contains("CPU only"),
        "{}",
        plan.kernels[0].reason
    );
    let want: Vec<i128> = x.iter().map(|&v| wrap(DType::I8, 4 * v)).collect();
    assert_eq!(read(&y), want);
    // Forcing the GPU names why it cannot.
    let z = a.add(1i64).unwrap();
    match engine.evaluate(&[z], Some(Policy::Force(DeviceKind::Gpu))) {
        Err(e) => assert!(e.to_string().contains("int8"), "{e}"),
        Ok(p) => panic!("a forced int8 kernel ran on the GPU: {p}"),
    }
    // A float kernel next to it still runs on the device.
    let f = Array::from_vec(vec![1.5f32; 5000], &[5000])
        .unwrap()
        .mul(2.0)
        .unwrap();
    let plan = engine.evaluate(std::slice::from_ref(&f), None).unwrap();
    assert!(plan.devices().contains(&DeviceKind::Gpu), "{plan}");
}
