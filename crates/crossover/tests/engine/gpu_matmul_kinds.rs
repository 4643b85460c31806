//! Complex and bool matrix products on every engine (the GPU core's tiled
//! kernel on OpenCL, pocl in CI): 2-D and batched, broadcast and
//! transposed operands, sizes across the kernel's 64x64 tile and 16-deep
//! step edges. Complex results are checked against a complex128 reference
//! computed here, bool results exactly; a device without double precision
//! declines complex128 with the reason.

use crate::common::*;
use crossover::{Array, DType, DeviceKind, Policy};
use num_complex::{Complex32, Complex64};

/// (m, k, n): 1, 17, 63, 65 and 130 each as a row count, depth and
/// column count (partial tiles, one step short of and past a tile).
const SIZES: [(usize, usize, usize); 5] = [
    (1, 1, 1),
    (17, 65, 63),
    (63, 130, 17),
    (65, 17, 130),
    (130, 63, 65),
];

/// `n` complex values with both parts non-zero, in [-1, -0.05] or
/// [0.05, 1], rounded to `dtype`'s precision (C64 or C128).
fn cvalues(n: usize, seed: u64, dtype: DType) -> Vec<Complex64> {
    let away = |x: f64| if x < 0.0 { x - 0.05 } else { x + 0.05 };
    let re = values(n, seed, -0.95, 0.95);
    let im = values(n, seed + 1000, -0.95, 0.95);
    re.iter()
        .zip(&im)
        .map(|(&r, &i)| {
            let (r, i) = (away(r), away(i));
            if dtype == DType::C64 {
                Complex64::new(r as f32 as f64, i as f32 as f64)
            } else {
                Complex64::new(r, i)
            }
        })
        .collect()
}

/// An array of `dtype` (C64 or C128) holding `v`.
fn carray(v: &[Complex64], shape: &[usize], dtype: DType) -> Array {
    let a = if dtype == DType::C64 {
        let f: Vec<Complex32> = v
            .iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect();
        Array::from_vec(f, shape).unwrap()
    } else {
        Array::from_vec(v.to_vec(), shape).unwrap()
    };
    a.eval().unwrap();
    a
}

/// The values of a complex array as complex128.
fn cread(a: &Array) -> Vec<Complex64> {
    if a.dtype() == DType::C64 {
        a.to_vec::<Complex32>()
            .unwrap()
            .iter()
            .map(|z| Complex64::new(z.re as f64, z.im as f64))
            .collect()
    } else {
        a.to_vec::<Complex64>().unwrap()
    }
}

/// Machine epsilon of a complex dtype's parts.
fn ceps(dtype: DType) -> f64 {
    if dtype == DType::C64 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

/// Checks `got` (`batch` row-major `m x n` results) against the complex128
/// products of `a(bi, i, p)` and `b(bi, p, j)`. Tolerance: the standard
/// bound for a k-term complex dot product in any summation order,
/// `|got - ref| <= 2 (k + 2) eps sum_p |a_ip| |b_pj|` (eps of the dtype's
/// parts; `k + 2` covers the complex product's own two roundings).
fn check_complex(
    got: &[Complex64],
    (batch, m, k, n): (usize, usize, usize, usize),
    a: impl Fn(usize, usize, usize) -> Complex64,
    b: impl Fn(usize, usize, usize) -> Complex64,
    dtype: DType,
    what: &str,
) {
    assert_eq!(got.len(), batch * m * n, "{what}: length");
    let tol = 2.0 * (k as f64 + 2.0) * ceps(dtype);
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut want, mut scale) = (Complex64::new(0.0, 0.0), 0.0);
                for p in 0..k {
                    let (x, y) = (a(bi, i, p), b(bi, p, j));
                    want += x * y;
                    scale += x.norm() * y.norm();
                }
                let g = got[(bi * m + i) * n + j];
                assert!(
                    (g - want).norm() <= tol * scale,
                    "{what} [{bi},{i},{j}]: got {g}, want {want} (tol {:e})",
                    tol * scale
                );
            }
        }
    }
}

/// `y` evaluated; on a GPU API engine, as exactly one device kernel.
fn eval_on_device(e: &TestEngine, y: &Array, what: &str) {
    let before = e.engine.kernels_run(DeviceKind::Gpu);
    y.eval().unwrap();
    if e.is_gpu_api() {
        assert_eq!(
            e.engine.kernels_run(DeviceKind::Gpu),
            before + 1,
            "{what}: the product is one device kernel on '{}'",
            e.name
        );
    }
}

/// complex64 and complex128 products: 2-D across tile edges, a batch
/// against a broadcast transposed operand, and two batches of views.
#[test]
fn complex_matmul_runs_on_every_engine_across_tile_edges() {
    on_every_engine(|e| {
        for dtype in [DType::C64, DType::C128] {
            for (m, k, n) in SIZES {
                let what = format!("{dtype} {m}x{k}x{n}");
                let (x, y) = (
                    cvalues(m * k, (m * k) as u64, dtype),
                    cvalues(k * n, (k * n + 7) as u64, dtype),
                );
                let c = carray(&x, &[m, k], dtype)
                    .matmul(&carray(&y, &[k, n], dtype))
                    .unwrap();
                eval_on_device(e, &c, &what);
                assert_eq!(c.dtype(), dtype, "{what}");
                check_complex(
                    &cread(&c),
                    (1, m, k, n),
                    |_, i, p| x[i * k + p],
                    |_, p, j| y[p * n + j],
                    dtype,
                    &what,
                );
            }
            // A batch of 3 against one broadcast, transposed operand (the
            // transpose of a (n, k) array: column-major).
            let (m, k, n) = (65, 33, 70);
            let (x, yt) = (cvalues(3 * m * k, 41, dtype), cvalues(n * k, 42, dtype));
            let b = carray(&yt, &[n, k], dtype).transpose().unwrap();
            let c = carray(&x, &[3, m, k], dtype).matmul(&b).unwrap();
            assert_eq!(c.shape(), &[3, m, n]);
            let what = format!("{dtype} batched, transposed b");
            eval_on_device(e, &c, &what);
            check_complex(
                &cread(&c),
                (3, m, k, n),
                |bi, i, p| x[(bi * m + i) * k + p],
                |_, p, j| yt[j * k + p],
                dtype,
                &what,
            );
            // Two batches of a sliced, transposed view: a[b] = x[b]ᵀ with
            // x of shape (2, k, m), b of shape (2, k, n).
            let (m, k, n) = (17, 130, 64);
            let (x, y) = (cvalues(2 * k * m, 43, dtype), cvalues(2 * k * n, 44, dtype));
            let a = carray(&x, &[2, k, m], dtype).swapaxes(1, 2).unwrap();
            let c = a.matmul(&carray(&y, &[2, k, n], dtype)).unwrap();
            let what = format!("{dtype} batched view");
            eval_on_device(e, &c, &what);
            check_complex(
                &cread(&c),
                (2, m, k, n),
                |bi, i, p| x[(bi * k + p) * m + i],
                |bi, p, j| y[(bi * k + p) * n + j],
                dtype,
                &what,
            );
        }
    });
}

/// Sparse-ish random bools (about one in five true).
fn bools(n: usize, seed: u64) -> Vec<bool> {
    values(n, seed, 0.0, 1.0).iter().map(|&v| v < 0.2).collect()
}

/// NumPy's bool product: `c[i, j] = any_p(a[i, p] and b[p, j])`, exactly.
fn check_bool(
    got: &[bool],
    (batch, m, k, n): (usize, usize, usize, usize),
    a: impl Fn(usize, usize, usize) -> bool,
    b: impl Fn(usize, usize, usize) -> bool,
    what: &str,
) {
    assert_eq!(got.len(), batch * m * n, "{what}: length");
    let mut trues = 0;
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).any(|p| a(bi, i, p) && b(bi, p, j));
                trues += want as usize;
                assert_eq!(got[(bi * m + i) * n + j], want, "{what} [{bi},{i},{j}]");
            }
        }
    }
    // Mixed results (the products are neither all false nor all true)
    // where there is room for both.
    if k >= 17 && m * n > 100 {
        assert!(trues > 0 && trues < batch * m * n, "{what}: {trues} true");
    }
}

/// bool products (the logical or of ands, as NumPy's), exactly, 2-D
/// across tile edges, batched with a broadcast transposed operand.
#[test]
fn bool_matmul_runs_on_every_engine_exactly() {
    on_every_engine(|e| {
        for (m, k, n) in SIZES {
            let what = format!("bool {m}x{k}x{n}");
            let (x, y) = (bools(m * k, (m + k) as u64), bools(k * n, (k * n) as u64));
            let (a, b) = (
                Array::from_vec(x.clone(), &[m, k]).unwrap(),
                Array::from_vec(y.clone(), &[k, n]).unwrap(),
            );
            a.eval().unwrap();
            b.eval().unwrap();
            let c = a.matmul(&b).unwrap();
            eval_on_device(e, &c, &what);
            assert_eq!(c.dtype(), DType::Bool, "{what}");
            check_bool(
                &c.to_vec::<bool>().unwrap(),
                (1, m, k, n),
                |_, i, p| x[i * k + p],
                |_, p, j| y[p * n + j],
                &what,
            );
        }
        let (m, k, n) = (63, 65, 130);
        let (x, yt) = (bools(2 * m * k, 51), bools(n * k, 52));
        let a = Array::from_vec(x.clone(), &[2, m, k]).unwrap();
        let bt = Array::from_vec(yt.clone(), &[n, k]).unwrap();
        let c = a.matmul(&bt.transpose().unwrap()).unwrap();
        eval_on_device(e, &c, "bool batched, transposed b");
        check_bool(
            &c.to_vec::<bool>().unwrap(),
            (2, m, k, n),
            |bi, i, p| x[(bi * m + i) * k + p],
            |_, p, j| yt[j * k + p],
            "bool batched, transposed b",
        );
    });
}

/// The OpenCL device names its route for complex and bool products; a
/// device without double precision (pocl's description with `fp64` off)
/// declines complex128 with the reason, so a forced GPU policy is an error
/// naming it and `gpu-prefer` computes it on the CPU, while complex64 and
/// bool still run there.
#[test]
fn complex128_matmul_needs_double_precision() {
    if opencl_or_skip().is_none() {
        return;
    }
    let name = std::env::var("CROSSOVER_TEST_OPENCL").unwrap_or_default();
    let mut found = crossover::gpu::discover::find_opencl(Some(&name))
        .unwrap()
        .clone();
    found.info.fp64 = false;
    found.info.name = "pocl without fp64".into();
    let api = crossover::opencl::OpenClApi::open(&found).unwrap();
    let b = crossover::gpu::GpuBackend::new(api, None, None).unwrap();
    let engine = std::sync::Arc::new(
        crossover::Engine::new(crossover::Profile::synthetic())
            .with_gpu(b)
            .with_policy(Policy::Prefer(DeviceKind::Gpu)),
    );
    let explain = |y: &Array| {
        engine
            .plan(
                std::slice::from_ref(y),
                Some(Policy::Prefer(DeviceKind::Gpu)),
            )
            .unwrap()
            .to_string()
    };
    let (m, k, n) = (20, 30, 10);
    let (x, y) = (
        cvalues(m * k, 61, DType::C128),
        cvalues(k * n, 62, DType::C128),
    );
    engine.scope(|| {
        let c = carray(&x, &[m, k], DType::C128)
            .matmul(&carray(&y, &[k, n], DType::C128))
            .unwrap();
        let plan = explain(&c);
        assert!(
            plan.contains(
                "pocl without fp64 has no double precision, which matmul of complex128 needs"
            ),
            "{plan}"
        );
        match c.eval_with(Policy::Force(DeviceKind::Gpu)) {
            Err(err) => assert!(err.to_string().contains("no double precision"), "{err}"),
            Ok(()) => panic!("a forced complex128 product ran without fp64"),
        }
        let before = engine.kernels_run(DeviceKind::Gpu);
        let got = cread(&c);
        assert_eq!(
            engine.kernels_run(DeviceKind::Gpu),
            before,
            "ran on the CPU"
        );
        check_complex(
            &got,
            (1, m, k, n),
            |_, i, p| x[i * k + p],
            |_, p, j| y[p * n + j],
            DType::C128,
            "complex128 on the CPU",
        );
        // complex64 and bool need no double precision.
        let c64 = carray(&x, &[m, k], DType::C64)
            .matmul(&carray(&y, &[k, n], DType::C64))
            .unwrap();
        let c64_plan = explain(&c64);
        assert!(
            c64_plan.contains("crossover's tiled matmul kernel"),
            "{c64_plan}"
        );
        let before = engine.kernels_run(DeviceKind::Gpu);
        c64.eval().unwrap();
        assert_eq!(engine.kernels_run(DeviceKind::Gpu), before + 1);
        let xs: Vec<Complex64> = x
            .iter()
            .map(|z| Complex64::new(z.re as f32 as f64, z.im as f32 as f64))
            .collect();
        let ys: Vec<Complex64> = y
            .iter()
            .map(|z| Complex64::new(z.re as f32 as f64, z.im as f32 as f64))
            .collect();
        check_complex(
            &cread(&c64),
            (1, m, k, n),
            |_, i, p| xs[i * k + p],
            |_, p, j| ys[p * n + j],
            DType::C64,
            "complex64 without fp64",
        );
        let bl = Array::from_vec(bools(m * k, 63), &[m, k]).unwrap();
        let br = Array::from_vec(bools(k * n, 64), &[k, n]).unwrap();
        let cb = bl.matmul(&br).unwrap();
        let plan = explain(&cb);
        assert!(plan.contains("the logical or of ands"), "{plan}");
        let before = engine.kernels_run(DeviceKind::Gpu);
        cb.eval().unwrap();
        assert_eq!(engine.kernels_run(DeviceKind::Gpu), before + 1);
    });
}
