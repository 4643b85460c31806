//! Dense linear algebra on the GPU core ([`crate::op::Library::Dense`]):
//! solve, solve_spd, cholesky, qr, inv, det, svd, svdvals and eigh over a
//! batch of real matrices, through the API's dense solver
//! ([`GpuApi::dense`], cuSOLVER on CUDA). APIs without one (OpenCL) decline
//! these ops and the CPU runs them.
//!
//! Vendor solvers are column-major and overwrite their inputs; crossover's
//! arrays are row-major views of any strides. A row-major matrix *is* its
//! transpose read column-major, so each op picks the packing that makes
//! the solver's outputs come out row-major where it can ([`mapping`]):
//! LU, Cholesky and eigh factor `M = A^T` (the CPU path factors the same
//! `M`), whose inverse, upper Cholesky factor and wide-matrix SVD factors
//! read row-major are exactly the results wanted; what still comes out
//! column-major (a solve's `X` with several columns, QR's factors, a tall
//! matrix's SVD, eigenvectors) is transposed by the core's matrix-copy
//! kernel ([`super::codegen::matcopy`]), which also packs the inputs from
//! any view (strided, transposed, broadcast batch), zeroes the other
//! triangle of Cholesky and R factors and writes identities. The packing
//! is always a copy, so the solver never writes an input.
//!
//! Failures are the CPU's typed errors: the solver's `info` per matrix
//! maps to [`Error::Numerical`] with the CPU's message (a zero pivot, a
//! leading minor that is not positive, an iteration that did not
//! converge); a determinant of a singular matrix is 0. An input holding
//! NaN or infinity, or a solution that overflowed, is rare: the op then
//! runs on the CPU, which reports exactly what it reports there (or, for a
//! result the device's conservative check flagged, computes it).
//!
//! QR's Householder signs are LAPACK's (`R`'s diagonal has the sign
//! opposite to the pivot column's head), which is faer's convention too;
//! singular vectors and eigenvectors are unique only up to sign, on every
//! backend.

use super::api::{DenseCall, DenseJob};
use super::codegen::matcopy::Tri;
use super::codegen::params::{Param, Value as PackedValue};
use super::codegen::{Variant, GROUP};
use super::memory::Block;
use super::{guard, GpuApi, GpuBackend};
use crate::array::Value;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::linalg::{
    batch_offsets, eigh_not_converged, mat_strides, not_positive_definite, singular,
    svd_not_converged, Dense, DenseKind as Kind,
};
use crate::shape::numel;

/// A buffer of a [`DenseJob`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    A,
    B,
    Values,
    U,
    Vt,
}

/// One output, row-major `rows x cols` per matrix, read from job buffer
/// `src` (one `per`-element block per matrix) through strides `rs`, `cs`,
/// keeping `tri`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Unpack {
    src: Src,
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
    per: usize,
    tri: Tri,
}

impl Unpack {
    fn new(src: Src, (rows, cols): (usize, usize), (rs, cs): (usize, usize), per: usize) -> Self {
        Unpack {
            src,
            rows,
            cols,
            rs,
            cs,
            per,
            tri: Tri::All,
        }
    }

    /// Whether the job buffer already is this output: row-major,
    /// contiguous, nothing masked (no copy needed).
    fn as_is(&self) -> bool {
        let rows_ok = self.rows <= 1 || self.rs == self.cols;
        let cols_ok = self.cols <= 1 || self.cs == 1;
        self.tri == Tri::All && rows_ok && cols_ok && self.per == self.rows * self.cols
    }
}

/// An output of a dense op on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Out {
    /// From a job buffer.
    Unpack(Unpack),
    /// A determinant: from the LU factor's diagonal and the pivots.
    Det,
}

/// What `b` of the job holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BFrom {
    None,
    /// The right-hand sides, packed column-major (`n x k`).
    Input,
    /// Identity matrices (`n x n`): the inverse's right-hand sides.
    Identity,
    /// Room for a copy of `a` (QR's factored matrix).
    Scratch,
}

/// How one dense op maps onto the column-major solver: the call, the
/// matrix the solver sees (`m x n`), how `a` is packed, what the other
/// buffers hold (elements per matrix, 0: none) and where each output
/// comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mapping {
    call: DenseCall,
    m: usize,
    n: usize,
    /// Pack `a` row-major (the solver then sees `A^T`), else column-major.
    a_row_major: bool,
    b: BFrom,
    pivots: bool,
    values: usize,
    u: usize,
    vt: usize,
    outs: Vec<Out>,
}

/// The mapping of op `kind` on an `m x n` matrix (`k` right-hand sides).
fn mapping(kind: Kind, m: usize, n: usize, k: usize) -> Mapping {
    let r = m.min(n);
    let base = Mapping {
        call: DenseCall::Lu {
            solve: false,
            transpose: false,
        },
        m: n,
        n,
        a_row_major: true,
        b: BFrom::None,
        pivots: false,
        values: 0,
        u: 0,
        vt: 0,
        outs: Vec::new(),
    };
    // X (n x k) column-major, read row-major.
    let solution = Out::Unpack(Unpack::new(Src::B, (n, k), (1, n), n * k));
    match kind {
        // getrs with A^T^T = A.
        Kind::Solve => Mapping {
            call: DenseCall::Lu {
                solve: true,
                transpose: true,
            },
            b: BFrom::Input,
            pivots: true,
            outs: vec![solution],
            ..base
        },
        // M = A^T's lower triangle is A's upper one (read, as on the CPU).
        Kind::SolveSpd => Mapping {
            call: DenseCall::Cholesky {
                upper: false,
                solve: true,
            },
            b: BFrom::Input,
            outs: vec![solution],
            ..base
        },
        // M = A^T's upper triangle is A's lower one; M = U^T U with U
        // column-major, which read row-major is L.
        Kind::Cholesky => Mapping {
            call: DenseCall::Cholesky {
                upper: true,
                solve: false,
            },
            outs: vec![Out::Unpack(Unpack {
                tri: Tri::Lower,
                ..Unpack::new(Src::A, (n, n), (n, 1), n * n)
            })],
            ..base
        },
        // inv(M) column-major = inv(A)^T column-major = inv(A) row-major.
        Kind::Inv => Mapping {
            call: DenseCall::Lu {
                solve: true,
                transpose: false,
            },
            b: BFrom::Identity,
            pivots: true,
            outs: vec![Out::Unpack(Unpack::new(Src::B, (n, n), (n, 1), n * n))],
            ..base
        },
        // det(M) = det(A).
        Kind::Det => Mapping {
            pivots: true,
            outs: vec![Out::Det],
            ..base
        },
        Kind::Qr => Mapping {
            call: DenseCall::Qr,
            m,
            n,
            a_row_major: false,
            b: BFrom::Scratch,
            outs: vec![
                Out::Unpack(Unpack::new(Src::A, (m, r), (1, m), m * n)),
                Out::Unpack(Unpack {
                    tri: Tri::Upper,
                    ..Unpack::new(Src::B, (r, n), (1, m), m * n)
                }),
            ],
            ..base
        },
        Kind::Svd | Kind::SvdVals => {
            let vectors = kind == Kind::Svd;
            let s = Out::Unpack(Unpack::new(Src::Values, (1, r), (r, 1), r));
            // The solver needs rows >= columns.
            if n >= m {
                // A^T = U' S V'^T, so A = V' S U'^T: U = V' is V'^T
                // (r x r) column-major read row-major, and V^T = U'^T is
                // U' (n x r) column-major read row-major. No copies.
                Mapping {
                    call: DenseCall::Svd { vectors },
                    m: n,
                    n: m,
                    values: r,
                    u: if vectors { n * r } else { 0 },
                    vt: if vectors { r * r } else { 0 },
                    outs: if vectors {
                        vec![
                            Out::Unpack(Unpack::new(Src::Vt, (m, r), (r, 1), r * r)),
                            s,
                            Out::Unpack(Unpack::new(Src::U, (r, n), (n, 1), n * r)),
                        ]
                    } else {
                        vec![s]
                    },
                    ..base
                }
            } else {
                Mapping {
                    call: DenseCall::Svd { vectors },
                    m,
                    n,
                    a_row_major: false,
                    values: r,
                    u: if vectors { m * r } else { 0 },
                    vt: if vectors { r * n } else { 0 },
                    outs: if vectors {
                        vec![
                            Out::Unpack(Unpack::new(Src::U, (m, r), (1, m), m * r)),
                            s,
                            Out::Unpack(Unpack::new(Src::Vt, (r, n), (1, r), r * n)),
                        ]
                    } else {
                        vec![s]
                    },
                    ..base
                }
            }
        }
        // M = A^T's upper triangle is A's lower one (read, as NumPy's
        // UPLO="L"); eigenvectors come back as columns, column-major.
        Kind::Eigh => Mapping {
            call: DenseCall::Eigh { upper: true },
            values: n,
            outs: vec![
                Out::Unpack(Unpack::new(Src::Values, (1, n), (n, 1), n)),
                Out::Unpack(Unpack::new(Src::A, (n, n), (1, n), n * n)),
            ],
            ..base
        },
    }
}

/// The CPU's error for the solver's `info` of one matrix of op `kind`
/// (`None`: success, or a value that is no failure for the op, such as a
/// zero pivot for a determinant).
fn info_error(kind: Kind, info: i32) -> Option<Error> {
    let op = kind.name();
    if info < 0 {
        return Some(Error::internal(
            op,
            format!("the dense solver rejected its argument {}", -info),
        ));
    }
    let at = usize::try_from(info).ok().filter(|&i| i > 0)?;
    match kind {
        Kind::Solve | Kind::Inv => Some(singular(op, at - 1)),
        Kind::SolveSpd | Kind::Cholesky => Some(not_positive_definite(op, at)),
        Kind::Svd | Kind::SvdVals => Some(svd_not_converged(op)),
        Kind::Eigh => Some(eigh_not_converged(op)),
        Kind::Det | Kind::Qr => None,
    }
}

/// The determinant from an LU factor's diagonal and LAPACK's 1-based
/// pivots, as the CPU computes it: the diagonal's product (0 from the first
/// zero pivot on: a singular matrix, NumPy's 0 rather than NaN), negated
/// for an odd number of row swaps.
fn det_from_lu<T>(diag: &[T], pivots: &[i32], one: T) -> T
where
    T: Copy + PartialEq + Default + std::ops::MulAssign + std::ops::Neg<Output = T>,
{
    let mut d = one;
    for &u in diag {
        if u == T::default() {
            d = T::default();
            break;
        }
        d *= u;
    }
    let swaps = pivots
        .iter()
        .enumerate()
        .filter(|&(i, &p)| p as i64 != i as i64 + 1)
        .count();
    if swaps % 2 == 1 {
        -d
    } else {
        d
    }
}

impl<A: GpuApi> GpuBackend<A> {
    /// Why this device cannot run dense op `op`, if it cannot.
    pub(super) fn refuse_dense(&self, op: &Dense) -> std::result::Result<(), String> {
        let (kind, _, m, n, k, dtype) = op.parts();
        let Some(solver) = self.shared.api.solver_name() else {
            return Err(format!(
                "{} (dense linear algebra) runs on the CPU: the {} core has no dense solver kernels; cuSOLVER runs them on CUDA",
                kind.name(),
                if self.info().api == "opencl" { "OpenCL" } else { self.info().api }
            ));
        };
        if dtype.is_complex() {
            return Err(format!(
                "{} of {dtype} runs on the CPU ({solver} is used for float32 and float64 only)",
                kind.name()
            ));
        }
        if dtype == DType::F64 && !self.info().fp64 {
            return Err(format!("{} has no double precision", self.info().name));
        }
        if [m, n, k].iter().any(|&d| i32::try_from(d).is_err()) {
            return Err(format!(
                "{} of a {m} x {n} matrix runs on the CPU ({solver} takes sizes below 2^31)",
                kind.name()
            ));
        }
        Ok(())
    }

    /// The vendor calls of dense op `op`, for explain.
    pub(super) fn dense_route(&self, op: &Dense) -> Option<String> {
        let solver = self.shared.api.solver_name()?;
        let calls = match op.parts().0 {
            Kind::Solve => "getrf/getrs",
            Kind::SolveSpd => "potrf/potrs",
            Kind::Cholesky => "potrf",
            Kind::Inv => "getrf/getrs against the identity",
            Kind::Det => "getrf",
            Kind::Qr => "geqrf/orgqr",
            Kind::Svd | Kind::SvdVals => "gesvd",
            Kind::Eigh => "syevd",
        };
        Some(format!(
            "{solver} {calls}; crossover's matrix-copy kernel packs and transposes"
        ))
    }

    /// The op on the CPU (the device's data copied back first): for the
    /// rare inputs whose failure the CPU describes exactly.
    fn dense_on_cpu(&self, op: &Dense, inputs: &[Value]) -> Result<Vec<Value>> {
        for v in inputs {
            crate::residency::ensure_buffer_on_host(&v.buffer)?;
        }
        op.run_cpu(inputs)
    }

    /// Enqueues the core's matrix copy: `out` (row-major `rows x cols`
    /// per matrix, contiguous) from `x` at `offs` (one per matrix) through
    /// strides `rs`, `cs`, keeping `tri`.
    #[allow(clippy::too_many_arguments)]
    fn matcopy(
        &self,
        dtype: DType,
        x: &A::Mem,
        offs: &[isize],
        (rows, cols): (usize, usize),
        (rs, cs): (isize, isize),
        tri: Tri,
        out: &A::Mem,
    ) -> Result<A::Event> {
        let table: Vec<u8> = offs
            .iter()
            .flat_map(|&o| (o as i64).to_ne_bytes())
            .collect();
        let offsets = self.upload_bytes(&table)?;
        let value = |p: Param| match p {
            Param::Rows => Ok(PackedValue::I64(rows as i64)),
            Param::Cols => Ok(PackedValue::I64(cols as i64)),
            Param::Inner => Ok(PackedValue::I64(offs.len() as i64)),
            Param::RowStride(0) => Ok(PackedValue::I64(rs as i64)),
            Param::ColStride(0) => Ok(PackedValue::I64(cs as i64)),
            Param::Triangle => Ok(PackedValue::I64(tri as i64)),
            other => Err(format!("matrix copies have no parameter {}", other.name())),
        };
        let groups = (offs.len() * rows * cols)
            .div_ceil(GROUP)
            .clamp(1, self.shared.max_groups);
        // The offset table returns to the pool in queue order.
        self.launch_library_kernel(
            &Variant::matcopy(dtype),
            &value,
            0,
            groups,
            &[x, offsets.mem(), out],
        )
    }

    /// `bytes` of `block`, after all queued work.
    pub(super) fn read_back(&self, block: &Block<A>, bytes: usize) -> Result<Vec<u8>> {
        let sh = &self.shared;
        let mut out = vec![0u8; bytes];
        guard("copy to host", &sh.label, || {
            sh.api.read(block.mem(), &mut out)
        })?;
        Ok(out)
    }

    /// Runs dense op `op` (one this device accepted) on `inputs`.
    pub(super) fn run_dense(&self, op: &Dense, inputs: &[Value]) -> Result<Vec<Value>> {
        let (kind, batch, m, n, k, dtype) = op.parts();
        let nb = numel(batch);
        let map = mapping(kind, m, n, k);
        if nb == 0 || m == 0 || n == 0 || (map.b == BFrom::Input && k == 0) || dtype.is_complex() {
            // Empty results: the CPU checks and returns them.
            return self.dense_on_cpu(op, inputs);
        }
        let a = inputs
            .first()
            .ok_or_else(|| Error::internal(kind.name(), "expected a matrix"))?;
        let size = dtype.size();
        let sh = &self.shared;
        let mut events = Vec::new();
        // Pack `a`.
        let a_block = self.alloc(nb * m * n * size)?;
        {
            let a_mem = self.resident(&a.buffer)?;
            let offs = batch_offsets(&a.layout, 2, batch);
            let (_, _, rs, cs) = mat_strides(&a.layout);
            let (shape, strides) = if map.a_row_major {
                ((m, n), (rs, cs))
            } else {
                ((n, m), (cs, rs))
            };
            let x = self.mem_of(a_mem.as_ref())?;
            events.push(self.matcopy(dtype, x, &offs, shape, strides, Tri::All, a_block.mem())?);
        }
        let b_block = match map.b {
            BFrom::None => None,
            BFrom::Input => {
                let b = inputs
                    .get(1)
                    .ok_or_else(|| Error::internal(kind.name(), "expected a right-hand side"))?;
                let block = self.alloc(nb * n * k * size)?;
                let b_mem = self.resident(&b.buffer)?;
                let offs = batch_offsets(&b.layout, 2, batch);
                let (_, _, rs, cs) = mat_strides(&b.layout);
                let x = self.mem_of(b_mem.as_ref())?;
                // Column-major n x k: row-major k x n of the transpose.
                events.push(self.matcopy(
                    dtype,
                    x,
                    &offs,
                    (k, n),
                    (cs, rs),
                    Tri::All,
                    block.mem(),
                )?);
                Some(block)
            }
            BFrom::Identity => {
                let block = self.alloc(nb * n * n * size)?;
                let offs = vec![0isize; nb];
                events.push(self.matcopy(
                    dtype,
                    block.mem(),
                    &offs,
                    (n, n),
                    (0, 0),
                    Tri::Identity,
                    block.mem(),
                )?);
                Some(block)
            }
            BFrom::Scratch => Some(self.alloc(nb * m * n * size)?),
        };
        let pivots = if map.pivots {
            Some(self.alloc(nb * map.n * 4)?)
        } else {
            None
        };
        let opt = |len: usize| {
            if len > 0 {
                self.alloc(nb * len * size).map(Some)
            } else {
                Ok(None)
            }
        };
        let (values, u, vt) = (opt(map.values)?, opt(map.u)?, opt(map.vt)?);
        let job = DenseJob {
            call: map.call,
            dtype,
            batch: nb,
            m: map.m,
            n: map.n,
            k,
            a: a_block.mem(),
            b: b_block.as_ref().map(Block::mem),
            pivots: pivots.as_ref().map(Block::mem),
            values: values.as_ref().map(Block::mem),
            u: u.as_ref().map(Block::mem),
            vt: vt.as_ref().map(Block::mem),
        };
        let done = {
            let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.api.dense(&job))) {
                Ok(r) => r,
                Err(_) => Some(Err(super::api::ApiError::new(
                    "dense",
                    "the dense solver panicked",
                ))),
            }
        };
        let done = match done {
            Some(r) => r.map_err(|e| super::api_error(kind.name(), &sh.label, e))?,
            None => return self.dense_on_cpu(op, inputs),
        };
        if !done.finite_input {
            return self.dense_on_cpu(op, inputs);
        }
        if let Some(e) = done.info.iter().find_map(|&i| info_error(kind, i)) {
            return Err(e);
        }
        if !done.finite_result {
            return self.dense_on_cpu(op, inputs);
        }
        events.push(done.event);
        let mut slots = [Some(a_block), b_block, values, u, vt];
        let slot = |s: Src| match s {
            Src::A => 0,
            Src::B => 1,
            Src::Values => 2,
            Src::U => 3,
            Src::Vt => 4,
        };
        let mut results = Vec::with_capacity(map.outs.len());
        for (out, (shape, out_dtype)) in map.outs.iter().zip(op.outputs()) {
            let bytes = numel(&shape) * out_dtype.size();
            match *out {
                Out::Unpack(p) if p.as_is() && slots[slot(p.src)].is_some() => {
                    let block = slots[slot(p.src)].take().expect("checked above");
                    results.push(self.output_value(block, bytes, &shape, out_dtype)?);
                }
                Out::Unpack(p) => {
                    let src = slots[slot(p.src)]
                        .as_ref()
                        .ok_or_else(|| Error::internal(kind.name(), "a job buffer used twice"))?;
                    let block = self.alloc(bytes)?;
                    let offs: Vec<isize> = (0..nb).map(|i| (i * p.per) as isize).collect();
                    events.push(self.matcopy(
                        dtype,
                        src.mem(),
                        &offs,
                        (p.rows, p.cols),
                        (p.rs as isize, p.cs as isize),
                        p.tri,
                        block.mem(),
                    )?);
                    results.push(self.output_value(block, bytes, &shape, out_dtype)?);
                }
                Out::Det => {
                    let lu = slots[0]
                        .as_ref()
                        .ok_or_else(|| Error::internal(kind.name(), "no LU factor"))?;
                    let piv = pivots
                        .as_ref()
                        .ok_or_else(|| Error::internal(kind.name(), "no pivots"))?;
                    let diag = self.alloc(nb * n * size)?;
                    let offs: Vec<isize> = (0..nb).map(|i| (i * n * n) as isize).collect();
                    events.push(self.matcopy(
                        dtype,
                        lu.mem(),
                        &offs,
                        (n, 1),
                        ((n + 1) as isize, 0),
                        Tri::All,
                        diag.mem(),
                    )?);
                    let d = self.read_back(&diag, nb * n * size)?;
                    let p: Vec<i32> = self
                        .read_back(piv, nb * n * 4)?
                        .chunks_exact(4)
                        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                        .collect();
                    let dets: Vec<u8> = match dtype {
                        DType::F32 => {
                            let d: Vec<f32> = d
                                .chunks_exact(4)
                                .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                                .collect();
                            (0..nb)
                                .flat_map(|i| {
                                    det_from_lu(&d[i * n..(i + 1) * n], &p[i * n..(i + 1) * n], 1.0)
                                        .to_ne_bytes()
                                })
                                .collect()
                        }
                        _ => {
                            let d: Vec<f64> = d
                                .chunks_exact(8)
                                .map(|c| {
                                    f64::from_ne_bytes([
                                        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                                    ])
                                })
                                .collect();
                            (0..nb)
                                .flat_map(|i| {
                                    det_from_lu(&d[i * n..(i + 1) * n], &p[i * n..(i + 1) * n], 1.0)
                                        .to_ne_bytes()
                                })
                                .collect()
                        }
                    };
                    let block = self.upload_bytes(&dets)?;
                    results.push(self.output_value(block, bytes, &shape, out_dtype)?);
                }
            }
        }
        sh.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(events);
        // Job buffers dropped here return to the pool in queue order.
        Ok(results)
    }
}

#[cfg(test)]
#[path = "dense_tests.rs"]
mod tests;
