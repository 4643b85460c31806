//! Host emulation of the dense plans ([`mapping`]): each op's plan run as
//! `gpu/dense.rs` runs it (pack, solver calls, unpack), with the core's
//! matrix copy done by [`host_matcopy`] and cuSOLVER's routines replaced by
//! their LAPACK semantics (`dense_lapack_emulation.rs`: column-major, reading only the
//! triangle named, `getrs` with a transpose, `potrs` with the factor,
//! `gesvd` returning `V^H`, `heevd` from one triangle, junk where LAPACK
//! leaves reflectors or scratch), in float64 / complex128 over faer, on
//! random complex and real matrices; the results against the CPU path's.
//! This checks every transpose and conjugation of the plans without a GPU;
//! it cannot check cuSOLVER itself (compiled, never run here).

use super::*;
use crate::array::Array;
use crate::dtype::DType;
use lapack::{gesvd, getrf, getrs, heevd, potrf, potrs, qr, JUNK, ZO};
use num_complex::Complex64 as C;

#[path = "dense_lapack_emulation.rs"]
mod lapack;

/// The CPU's inputs and the plan's view of `a`: `nb` matrices `m x n`
/// (each at `offs`, strides `rs`, `cs` in `a`) and `b` row-major `n x k`.
struct Inputs<'a> {
    kind: Kind,
    nb: usize,
    mnk: (usize, usize, usize),
    a: &'a [C],
    strides: (isize, isize),
    b: &'a [C],
}

/// Runs the plan of `x.kind` as `run_dense` does, with the host's copy
/// and emulated solver: the outputs (real ones as complex), or the CPU's
/// typed error from the solver's `info`.
fn run_plan(x: &Inputs) -> crate::error::Result<Vec<Vec<C>>> {
    let (m, n, k) = x.mnk;
    run_mapping(x, &mapping(x.kind, m, n, k))
}

/// [`run_plan`] with plan `map`.
fn run_mapping(x: &Inputs, map: &Mapping) -> crate::error::Result<Vec<Vec<C>>> {
    let (kind, nb, (m, n, k)) = (x.kind, x.nb, x.mnk);
    let id = |z: C| z;
    let per_a = |i: usize| (i * m * n) as isize;
    let a_offs: Vec<isize> = (0..nb).map(per_a).collect();
    let conj = |z: C| if map.conj_a { z.conj() } else { z };
    let mut a = host_matcopy(
        x.a,
        &a_offs,
        a_pack(map, (m, n), x.strides),
        Tri::All,
        ZO,
        conj,
    );
    let (sm, sn, sk) = (map.m, map.n, map.k);
    let (mut b, b_per) = match map.b {
        BFrom::None => (Vec::new(), 0),
        BFrom::Input => {
            let offs: Vec<isize> = (0..nb).map(|i| (i * n * k) as isize).collect();
            // Column-major n x k: row-major k x n of the transpose.
            let b = host_matcopy(x.b, &offs, ((k, n), (1, k as isize)), Tri::All, ZO, id);
            (b, n * k)
        }
        BFrom::Identity => {
            let offs = vec![0isize; nb];
            let b = host_matcopy(&[], &offs, ((n, n), (0, 0)), Tri::Identity, ZO, id);
            (b, n * n)
        }
        BFrom::Scratch => (vec![JUNK; nb * m * n], m * n),
    };
    let mut piv = vec![0i32; nb * sn];
    let (mut vals, mut u, mut vt) = (
        vec![JUNK; nb * map.values],
        vec![JUNK; nb * map.u],
        vec![JUNK; nb * map.vt],
    );
    let mut infos = Vec::new();
    for i in 0..nb {
        let ai = &mut a[i * sm * sn..(i + 1) * sm * sn];
        let bi = &mut b[i * b_per..(i + 1) * b_per];
        let pi = &mut piv[i * sn..(i + 1) * sn];
        infos.push(match map.call {
            DenseCall::Lu { solve, transpose } => {
                let f = getrf(ai, sn, pi);
                if solve && f == 0 {
                    assert_eq!(bi.len(), sn * sk, "b holds n x k");
                    getrs(transpose, sn, sk, ai, pi, bi);
                }
                f
            }
            DenseCall::Cholesky { upper, solve } => {
                let f = potrf(upper, sn, ai);
                if solve && f == 0 {
                    potrs(upper, sn, sk, ai, bi);
                }
                f
            }
            DenseCall::Qr => {
                qr(sm, sn, ai, bi);
                0
            }
            DenseCall::Svd { vectors } => {
                let r = map.values;
                let (ui, vti) = if vectors {
                    (
                        &mut u[i * sm * r..(i + 1) * sm * r],
                        &mut vt[i * r * r..(i + 1) * r * r],
                    )
                } else {
                    (<&mut [C]>::default(), <&mut [C]>::default())
                };
                gesvd(vectors, sm, sn, ai, &mut vals[i * r..(i + 1) * r], ui, vti);
                0
            }
            DenseCall::Eigh { upper } => {
                heevd(upper, sn, ai, &mut vals[i * sn..(i + 1) * sn]);
                0
            }
        });
    }
    if let Some(e) = infos.iter().find_map(|&i| info_error(kind, i)) {
        return Err(e);
    }
    let mut outs = Vec::new();
    for out in &map.outs {
        outs.push(match *out {
            Out::Unpack(p) => {
                let src = match p.src {
                    Src::A => &a,
                    Src::B => &b,
                    Src::Values => &vals,
                    Src::U => &u,
                    Src::Vt => &vt,
                };
                let offs: Vec<isize> = (0..nb).map(|i| (i * p.per) as isize).collect();
                let shape = ((p.rows, p.cols), (p.rs as isize, p.cs as isize));
                host_matcopy(src, &offs, shape, p.tri, ZO, id)
            }
            Out::Det => {
                let offs: Vec<isize> = (0..nb).map(|i| (i * n * n) as isize).collect();
                let d = host_matcopy(&a, &offs, ((n, 1), ((n + 1) as isize, 0)), Tri::All, ZO, id);
                (0..nb)
                    .map(|i| det_from_lu(&d[i * n..(i + 1) * n], &piv[i * n..(i + 1) * n], ZO.1))
                    .collect()
            }
        });
    }
    Ok(outs)
}

/// The CPU path's outputs for the same inputs (complex128, or float64 from
/// the real parts when `real`), as complex.
fn run_cpu(x: &Inputs, real: bool) -> crate::error::Result<Vec<Vec<C>>> {
    let (nb, (m, n, k)) = (x.nb, x.mnk);
    let make = |v: &[C], shape: &[usize]| -> Array {
        if real {
            Array::from_vec(v.iter().map(|z| z.re).collect::<Vec<f64>>(), shape).unwrap()
        } else {
            Array::from_vec(v.to_vec(), shape).unwrap()
        }
    };
    // The plan reads `a` through strides: (n, 1) row-major, (1, m) a
    // transposed view of a row-major n x m buffer.
    let a = if x.strides == (n as isize, 1) {
        make(x.a, &[nb, m, n])
    } else {
        assert_eq!(x.strides, (1, m as isize));
        make(x.a, &[nb, n, m]).swapaxes(-1, -2).unwrap()
    };
    let b = || make(x.b, &[nb, n, k]);
    use crate::linalg as la;
    let arrays = match x.kind {
        Kind::Solve => vec![la::solve(&a, &b())?],
        Kind::SolveSpd => vec![la::solve_spd(&a, &b())?],
        Kind::Cholesky => vec![la::cholesky(&a)?],
        Kind::Inv => vec![la::inv(&a)?],
        Kind::Det => vec![la::det(&a)?],
        Kind::Qr => {
            let (q, r) = la::qr(&a)?;
            vec![q, r]
        }
        Kind::Svd => {
            let (u, s, vt) = la::svd(&a)?;
            vec![u, s, vt]
        }
        Kind::SvdVals => vec![la::svdvals(&a)?],
        Kind::Eigh => {
            let (w, v) = la::eigh(&a)?;
            vec![w, v]
        }
    };
    arrays
        .iter()
        .map(|o| {
            Ok(match o.dtype() {
                DType::C128 => o.to_vec::<C>()?,
                _ => o
                    .to_vec::<f64>()?
                    .into_iter()
                    .map(|v| C::new(v, 0.0))
                    .collect(),
            })
        })
        .collect()
}

/// Seeded values in [-1, 1) (xorshift).
fn randoms(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            2.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 1.0
        })
        .collect()
}

/// `len` complex values, both parts non-zero (imaginary 0 when `real`).
fn complexes(len: usize, seed: u64, real: bool) -> Vec<C> {
    let v = randoms(2 * len, seed);
    (0..len)
        .map(|i| C::new(v[2 * i], if real { 0.0 } else { v[2 * i + 1] }))
        .collect()
}

/// `nb` row-major `m x n` matrices: random plus `max(m, n)` on the
/// diagonal (well conditioned); with `hermitian`, `R R^H + n I`
/// (Hermitian positive definite) whose triangle the op does not read
/// (`unread_upper`, else the lower) is replaced by junk.
fn matrices(
    nb: usize,
    (m, n): (usize, usize),
    seed: u64,
    real: bool,
    herm: Option<bool>,
) -> Vec<C> {
    let r = complexes(nb * m * n, seed, real);
    let junk = complexes(nb * m * n, seed ^ 0x5555, real);
    let mut out = vec![ZO.0; nb * m * n];
    for q in 0..nb {
        let at = |i: usize, j: usize| q * m * n + i * n + j;
        for i in 0..m {
            for j in 0..n {
                let d = if i == j { m.max(n) as f64 } else { 0.0 };
                out[at(i, j)] = match herm {
                    None => r[at(i, j)] + d,
                    Some(unread_upper) if (unread_upper && j > i) || (!unread_upper && j < i) => {
                        junk[at(i, j)]
                    }
                    Some(_) => {
                        let h: C = (0..n).map(|p| r[at(i, p)] * r[at(j, p)].conj()).sum();
                        let h = h + d;
                        if i == j {
                            C::new(h.re, 0.0)
                        } else {
                            h
                        }
                    }
                };
            }
        }
    }
    out
}

/// The matrices of `v` with each transposed (`nb` of `m x n` to `n x m`).
fn transposed(v: &[C], nb: usize, m: usize, n: usize) -> Vec<C> {
    let mut t = vec![ZO.0; v.len()];
    for q in 0..nb {
        for i in 0..m {
            for j in 0..n {
                t[q * m * n + j * m + i] = v[q * m * n + i * n + j];
            }
        }
    }
    t
}

fn max_abs(v: &[C]) -> f64 {
    v.iter().map(|z| z.norm()).fold(1.0, f64::max)
}

#[track_caller]
fn assert_close(what: &str, got: &[C], want: &[C], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = max_abs(want);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).norm() <= tol * scale,
            "{what}: element {i}: {g} vs {w} (tolerance {tol} x {scale})"
        );
    }
}

/// `x^H y` per batch entry, `x` and `y` row-major `rows x cols`: `cols x
/// cols`.
fn gram(x: &[C], y: &[C], nb: usize, rows: usize, cols: usize) -> Vec<C> {
    let mut g = Vec::with_capacity(nb * cols * cols);
    for q in 0..nb {
        let o = q * rows * cols;
        for i in 0..cols {
            for j in 0..cols {
                g.push(
                    (0..rows)
                        .map(|p| x[o + p * cols + i].conj() * y[o + p * cols + j])
                        .sum(),
                );
            }
        }
    }
    g
}

/// The identity's entries (`nb` of `n x n`), to compare `|x^H y|` with.
fn identities(nb: usize, n: usize) -> Vec<C> {
    (0..nb * n * n)
        .map(|e| {
            if (e % (n * n)).is_multiple_of(n + 1) {
                ZO.1
            } else {
                ZO.0
            }
        })
        .collect()
}

fn abs(v: &[C]) -> Vec<C> {
    v.iter().map(|z| C::new(z.norm(), 0.0)).collect()
}

/// Row-major `x` with its rows (`rows x cols` per batch entry) as columns:
/// the conjugate transpose, `cols x rows`.
fn adjoint(x: &[C], nb: usize, rows: usize, cols: usize) -> Vec<C> {
    transposed(x, nb, rows, cols)
        .iter()
        .map(|z| z.conj())
        .collect()
}

/// Compares the plan's outputs with the CPU's: exactly determined ones
/// elementwise, factors unique up to a unit phase per column (QR, SVD,
/// eigh) through `|x_plan^H x_cpu| = I` and the product they make.
fn check(x: &Inputs, real: bool) {
    let (nb, (m, n, _)) = (x.nb, x.mnk);
    let r = m.min(n);
    let what = format!(
        "{:?} {m}x{n} batch {nb} strides {:?} real {real}",
        x.kind, x.strides
    );
    let got = run_plan(x).unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = run_cpu(x, real).unwrap_or_else(|e| panic!("{what}: {e}"));
    let tol = 1e-10;
    match x.kind {
        Kind::Qr => {
            let (qg, rg, qc, rc) = (&got[0], &got[1], &want[0], &want[1]);
            assert_close(
                &format!("{what}: |Q^H Q_cpu|"),
                &abs(&gram(qg, qc, nb, m, r)),
                &identities(nb, r),
                tol,
            );
            assert_close(&format!("{what}: |R|"), &abs(rg), &abs(rc), tol);
            // Q R = A.
            let qr = product(qg, rg, nb, (m, r, n));
            let rq = product(qc, rc, nb, (m, r, n));
            assert_close(&format!("{what}: Q R"), &qr, &rq, tol);
        }
        Kind::Svd => {
            assert_close(&format!("{what}: S"), &got[1], &want[1], tol);
            let (ug, vg, uc, vc) = (&got[0], &got[2], &want[0], &want[2]);
            assert_close(
                &format!("{what}: |U^H U_cpu|"),
                &abs(&gram(ug, uc, nb, m, r)),
                &identities(nb, r),
                1e-8,
            );
            let (vg, vc) = (adjoint(vg, nb, r, n), adjoint(vc, nb, r, n));
            assert_close(
                &format!("{what}: |V^H V_cpu|"),
                &abs(&gram(&vg, &vc, nb, n, r)),
                &identities(nb, r),
                1e-8,
            );
            // U diag(S) V^H = A.
            let us: Vec<C> = ug
                .iter()
                .enumerate()
                .map(|(e, z)| *z * got[1][(e / (m * r)) * r + e % r].re)
                .collect();
            let a = product(&us, &got[2], nb, (m, r, n));
            let uc_s: Vec<C> = uc
                .iter()
                .enumerate()
                .map(|(e, z)| *z * want[1][(e / (m * r)) * r + e % r].re)
                .collect();
            assert_close(
                &format!("{what}: U S V^H"),
                &a,
                &product(&uc_s, &want[2], nb, (m, r, n)),
                tol,
            );
        }
        Kind::Eigh => {
            assert_close(&format!("{what}: w"), &got[0], &want[0], tol);
            assert_close(
                &format!("{what}: |V^H V_cpu|"),
                &abs(&gram(&got[1], &want[1], nb, n, n)),
                &identities(nb, n),
                1e-8,
            );
        }
        _ => {
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_close(&format!("{what}: output {i}"), g, w, tol);
            }
        }
    }
}

/// `(m x k) @ (k x n)` per batch entry, row-major.
fn product(a: &[C], b: &[C], nb: usize, (m, k, n): (usize, usize, usize)) -> Vec<C> {
    let mut c = Vec::with_capacity(nb * m * n);
    for q in 0..nb {
        for i in 0..m {
            for j in 0..n {
                c.push(
                    (0..k)
                        .map(|p| a[q * m * k + i * k + p] * b[q * k * n + p * n + j])
                        .sum(),
                );
            }
        }
    }
    c
}

/// Every op's plan, complex and real, row-major and transposed inputs,
/// square, tall and wide, against the CPU.
#[test]
fn every_plan_matches_the_cpu_on_complex_and_real_matrices() {
    let nb = 2;
    let square = [1, 2, 5, 9];
    let shapes = [(1, 1), (5, 5), (7, 3), (3, 7), (1, 4), (4, 1), (6, 6)];
    let mut seed = 1;
    for real in [false, true] {
        for transpose in [false, true] {
            let mut case = |kind: Kind, (m, n): (usize, usize), k: usize| {
                seed += 1;
                // The triangle the CPU does not read: solve_spd reads the
                // upper one, cholesky and eigh the lower one.
                let herm = match kind {
                    Kind::SolveSpd => Some(false),
                    Kind::Cholesky | Kind::Eigh => Some(true),
                    _ => None,
                };
                let a = matrices(nb, (m, n), seed, real, herm);
                let b = complexes(nb * n * k, seed + 1000, real);
                let (a, strides) = if transpose {
                    (transposed(&a, nb, m, n), (1, m as isize))
                } else {
                    (a, (n as isize, 1))
                };
                let x = Inputs {
                    kind,
                    nb,
                    mnk: (m, n, k),
                    a: &a,
                    strides,
                    b: &b,
                };
                check(&x, real);
            };
            for &n in &square {
                for k in [1, 3] {
                    case(Kind::Solve, (n, n), k);
                    case(Kind::SolveSpd, (n, n), k);
                }
                for kind in [Kind::Cholesky, Kind::Inv, Kind::Det, Kind::Eigh] {
                    case(kind, (n, n), 0);
                }
            }
            for &s in &shapes {
                for kind in [Kind::Qr, Kind::Svd, Kind::SvdVals] {
                    case(kind, s, 0);
                }
            }
        }
    }
}

/// The plans' conjugations are needed (and the emulation sees them):
/// without the conjugating pack, complex solve_spd and eigh disagree with
/// the CPU (they solve with, and decompose, the conjugate matrix), while
/// real ones are unchanged.
#[test]
fn the_emulation_catches_a_missing_conjugation() {
    let n = 5;
    for kind in [Kind::SolveSpd, Kind::Eigh] {
        for real in [false, true] {
            let herm = Some(kind != Kind::SolveSpd);
            let a = matrices(1, (n, n), 21, real, herm);
            let b = complexes(n, 22, real);
            let k = usize::from(kind == Kind::SolveSpd);
            let x = Inputs {
                kind,
                nb: 1,
                mnk: (n, n, k),
                a: &a,
                strides: (n as isize, 1),
                b: &b,
            };
            let map = mapping(kind, n, n, k);
            assert!(map.conj_a, "{kind:?} packs conjugated");
            let plain = Mapping {
                conj_a: false,
                ..map
            };
            let (got, want) = (run_mapping(&x, &plain).unwrap(), run_cpu(&x, real).unwrap());
            // Eigh: compare the eigenvectors (|V^H V_cpu| = I when right).
            let (g, w) = if kind == Kind::Eigh {
                (abs(&gram(&got[1], &want[1], 1, n, n)), identities(1, n))
            } else {
                (got[0].clone(), want[0].clone())
            };
            let err = g
                .iter()
                .zip(&w)
                .map(|(g, w)| (g - w).norm())
                .fold(0.0, f64::max);
            if real {
                assert!(err < 1e-8, "{kind:?} real: no conjugation needed ({err})");
            } else {
                assert!(
                    err > 1e-3,
                    "{kind:?} complex: the plain pack is wrong ({err})"
                );
            }
        }
    }
}

/// A singular matrix and one that is not positive definite give the
/// CPU's typed errors through the solver's `info`.
#[test]
fn failures_are_the_cpus_errors() {
    let n = 4;
    // Row 2 zero: A^T's column 2 is zero, the LU's pivot 2 too.
    let mut a = matrices(1, (n, n), 3, false, None);
    for j in 0..n {
        a[2 * n + j] = ZO.0;
    }
    for kind in [Kind::Solve, Kind::Inv] {
        let b = complexes(n, 5, false);
        let k = if kind == Kind::Solve { 1 } else { 0 };
        let x = Inputs {
            kind,
            nb: 1,
            mnk: (n, n, k),
            a: &a,
            strides: (n as isize, 1),
            b: &b,
        };
        let (g, w) = (run_plan(&x).unwrap_err(), run_cpu(&x, false).unwrap_err());
        assert_eq!(g.to_string(), w.to_string());
    }
    let det = Inputs {
        kind: Kind::Det,
        nb: 1,
        mnk: (n, n, 0),
        a: &a,
        strides: (n as isize, 1),
        b: &[],
    };
    assert_eq!(
        run_plan(&det).unwrap()[0],
        vec![ZO.0],
        "det of singular is 0"
    );
    // A Hermitian matrix whose leading minor of order 2 is negative.
    let mut h = matrices(1, (n, n), 9, false, Some(true));
    h[n + 1] = C::new(-50.0, 0.0);
    for kind in [Kind::Cholesky, Kind::SolveSpd] {
        let mut h = h.clone();
        if kind == Kind::SolveSpd {
            // solve_spd reads the upper triangle.
            h = adjoint(&h, 1, n, n);
        }
        let b = complexes(n, 11, false);
        let x = Inputs {
            kind,
            nb: 1,
            mnk: (n, n, usize::from(kind == Kind::SolveSpd)),
            a: &h,
            strides: (n as isize, 1),
            b: &b,
        };
        let (g, w) = (run_plan(&x).unwrap_err(), run_cpu(&x, false).unwrap_err());
        assert_eq!(g.to_string(), w.to_string(), "{kind:?}");
    }
}
