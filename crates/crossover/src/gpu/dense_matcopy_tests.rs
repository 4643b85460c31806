//! The core's matrix copy ([`super::super::codegen::matcopy`]) run on the
//! OpenCL device (pocl in CI) against the host reference
//! ([`host_matcopy`]), bit for bit: every dtype the dense solvers take,
//! plain and conjugating, shapes across the work-group edges, row-major,
//! transposed and broadcast reads, triangles, identities and diagonals;
//! and the complex determinant from an LU factor. Skipped without an
//! OpenCL device unless `CROSSOVER_REQUIRE_OPENCL=1` (CI).

use super::*;
use crate::gpu::dense_plan::host_matcopy;
use crate::opencl::OpenClApi;

/// A copy to check: what, offsets, shape, strides, triangle.
type Case = (
    &'static str,
    Vec<isize>,
    (usize, usize),
    (isize, isize),
    Tri,
);

fn backend() -> Option<GpuBackend<OpenClApi>> {
    match super::super::discover::opencl_backend(None)
        .or_else(|_| super::super::discover::opencl_backend(Some("pocl")))
    {
        Ok(b) => Some(b),
        Err(why) => {
            assert!(
                std::env::var("CROSSOVER_REQUIRE_OPENCL").map_or(true, |v| v != "1"),
                "no OpenCL device: {why}"
            );
            eprintln!("skipped: no OpenCL device ({why})");
            None
        }
    }
}

/// Host elements as (re, im) pairs, encoded as `dtype` (real dtypes keep
/// `re`); the values are exact in float32.
fn encode(v: &[(f64, f64)], dtype: DType) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * dtype.size());
    for &(re, im) in v {
        match dtype {
            DType::F32 => out.extend((re as f32).to_ne_bytes()),
            DType::F64 => out.extend(re.to_ne_bytes()),
            DType::C64 => {
                out.extend((re as f32).to_ne_bytes());
                out.extend((im as f32).to_ne_bytes());
            }
            _ => {
                out.extend(re.to_ne_bytes());
                out.extend(im.to_ne_bytes());
            }
        }
    }
    out
}

#[test]
fn matrix_copies_match_the_host_on_pocl_for_every_dtype_plain_and_conjugating() {
    let Some(be) = backend() else { return };
    let dtypes: Vec<DType> = [DType::F32, DType::F64, DType::C64, DType::C128]
        .into_iter()
        .filter(|d| be.info().fp64 || !matches!(d, DType::F64 | DType::C128))
        .collect();
    let shapes = [
        (1, 1),
        (1, 17),
        (17, 1),
        (17, 33),
        (33, 65),
        (65, 130),
        (130, 65),
    ];
    let nb = 3;
    for &dtype in &dtypes {
        for conj in [false, true] {
            for &(rows, cols) in &shapes {
                let len = nb * rows * cols;
                // Exact in float32, both parts non-zero.
                let x: Vec<(f64, f64)> = (0..len)
                    .map(|e| {
                        (
                            (e % 251) as f64 / 8.0 + 0.5,
                            -((e % 127) as f64) / 4.0 - 0.25,
                        )
                    })
                    .collect();
                let xb = be.upload_bytes(&encode(&x, dtype)).unwrap();
                let per = (rows * cols) as isize;
                let each: Vec<isize> = (0..nb as isize).map(|i| i * per).collect();
                let square = rows.min(cols);
                // (what, offsets, shape, strides, triangle)
                let cases: Vec<Case> = vec![
                    (
                        "row-major",
                        each.clone(),
                        (rows, cols),
                        (cols as isize, 1),
                        Tri::All,
                    ),
                    (
                        "transposed",
                        each.clone(),
                        (rows, cols),
                        (1, rows as isize),
                        Tri::All,
                    ),
                    (
                        "broadcast",
                        vec![0; nb],
                        (rows, cols),
                        (cols as isize, 1),
                        Tri::All,
                    ),
                    (
                        "lower",
                        each.clone(),
                        (rows, cols),
                        (cols as isize, 1),
                        Tri::Lower,
                    ),
                    (
                        "upper",
                        each.clone(),
                        (rows, cols),
                        (1, rows as isize),
                        Tri::Upper,
                    ),
                    (
                        "identity",
                        vec![0; nb],
                        (square, square),
                        (0, 0),
                        Tri::Identity,
                    ),
                    (
                        "diagonal",
                        each.clone(),
                        (square, 1),
                        ((cols + 1) as isize, 0),
                        Tri::All,
                    ),
                ];
                for (what, offs, shape, strides, tri) in cases {
                    let n_out = offs.len() * shape.0 * shape.1;
                    let out = be.alloc(n_out * dtype.size()).unwrap();
                    be.matcopy(
                        (dtype, conj),
                        xb.mem(),
                        &offs,
                        shape,
                        strides,
                        tri,
                        out.mem(),
                    )
                    .unwrap();
                    let got = be.read_back(&out, n_out * dtype.size()).unwrap();
                    let flip = conj && dtype.is_complex();
                    let want = host_matcopy(
                        &x,
                        &offs,
                        (shape, strides),
                        tri,
                        ((0.0, 0.0), (1.0, 0.0)),
                        |(re, im)| if flip { (re, -im) } else { (re, im) },
                    );
                    assert!(
                        got == encode(&want, dtype),
                        "{dtype} conj {conj} {rows}x{cols} {what}: the copy differs from the host's"
                    );
                }
            }
        }
    }
}

#[test]
fn complex_determinants_multiply_the_diagonal_and_follow_the_swaps() {
    // (1 + 2i)(3 - i) = 5 + 5i; one swap negates; a zero pivot gives 0.
    let diag = |v: &[(f64, f64)]| encode(v, DType::C128);
    let d = diag(&[(1.0, 2.0), (3.0, -1.0), (1.0, 2.0), (3.0, -1.0)]);
    let p = [1, 2, 2, 2];
    let got = dets_from_lu(DType::C128, &d, &p, 2, 2);
    assert_eq!(got, diag(&[(5.0, 5.0), (-5.0, -5.0)]));
    let z = encode(&[(0.0, 0.0), (f64::NAN, 1.0)], DType::C64);
    assert_eq!(
        dets_from_lu(DType::C64, &z, &[1, 2], 1, 2),
        encode(&[(0.0, 0.0)], DType::C64)
    );
    let r = encode(&[(2.0, 0.0), (-4.0, 0.0)], DType::F32);
    assert_eq!(
        dets_from_lu(DType::F32, &r, &[2, 2], 1, 2),
        encode(&[(8.0, 0.0)], DType::F32)
    );
    // Past float32's range: +-inf parts as NumPy's (which multiplies in
    // double), not complex64 arithmetic's NaN; 1e30 * 1e30 rounds once.
    let big = encode(&[(1e30, 1e29), (1e30, 0.0), (1e30, 0.0)], DType::C64);
    assert_eq!(
        dets_from_lu(DType::C64, &big, &[1, 2, 3], 1, 3),
        encode(&[(f64::INFINITY, f64::INFINITY)], DType::C64)
    );
    let (x, y) = (3e-30f32, 1e30f32);
    let small = encode(&[(x as f64, 0.0), (y as f64, 0.0)], DType::F32);
    assert_eq!(
        dets_from_lu(DType::F32, &small, &[1, 2], 1, 2),
        encode(&[((x as f64 * y as f64) as f32 as f64, 0.0)], DType::F32)
    );
}
