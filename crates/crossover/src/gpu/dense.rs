//! Dense linear algebra on the GPU core ([`crate::op::Library::Dense`]):
//! solve, solve_spd, cholesky, qr, inv, det, svd, svdvals and eigh over a
//! batch of real or complex matrices, through the API's dense solver
//! ([`GpuApi::dense`], cuSOLVER on CUDA). APIs without one (OpenCL) decline
//! these ops and the CPU runs them.
//!
//! Vendor solvers are column-major and overwrite their inputs; crossover's
//! arrays are row-major views of any strides. A row-major matrix *is* its
//! transpose read column-major, so each op picks the packing that makes
//! the solver's outputs come out row-major where it can (the plan,
//! [`super::dense_plan::mapping`], which also derives where complex
//! matrices need the conjugating copy rather than the transpose):
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
//! opposite to the pivot column's head), which is faer's convention too
//! for real matrices; for complex ones LAPACK makes `R`'s diagonal real
//! and faer gives it the phase of minus the pivot column's head, so
//! complex `Q` and `R` agree with the CPU's only up to a unit phase per
//! column of `Q` (row of `R`), `Q R` alike; singular vectors and
//! eigenvectors are unique only up to sign (complex: a unit phase), on
//! every backend.

use super::api::DenseJob;
use super::codegen::matcopy::Tri;
use super::codegen::params::{Param, Value as PackedValue};
use super::codegen::{Variant, GROUP};
use super::dense_plan::{a_pack, det_from_lu, info_error, mapping, BFrom, Out, Src};
use super::memory::Block;
use super::{guard, GpuApi, GpuBackend};
use crate::array::Value;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::linalg::{batch_offsets, mat_strides, Dense, DenseKind as Kind};
use crate::shape::numel;
use num_complex::Complex;

/// The determinants of `nb` matrices of `dtype` (bytes, native order)
/// from their LU factors' diagonals `diag` (`n` per matrix, bytes) and
/// LAPACK's pivots (`n` per matrix): complex determinants are complex.
pub(super) fn dets_from_lu(
    dtype: DType,
    diag: &[u8],
    pivots: &[i32],
    nb: usize,
    n: usize,
) -> Vec<u8> {
    fn f32s(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    fn f64s(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(8)
            .map(|c| f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect()
    }
    fn each<T: Copy + PartialEq + Default + std::ops::MulAssign + std::ops::Neg<Output = T>>(
        d: &[T],
        pivots: &[i32],
        nb: usize,
        n: usize,
        one: T,
        bytes: impl Fn(T) -> Vec<u8>,
    ) -> Vec<u8> {
        (0..nb)
            .flat_map(|i| {
                bytes(det_from_lu(
                    &d[i * n..(i + 1) * n],
                    &pivots[i * n..(i + 1) * n],
                    one,
                ))
            })
            .collect()
    }
    // float32 and complex64 pivots multiply in double, rounded once, as on
    // the CPU (`linalg::Field::widen`) and in NumPy: a product past
    // float32's range is +-inf, not the NaN parts of complex64 arithmetic.
    match dtype {
        DType::F32 => {
            let d: Vec<f64> = f32s(diag).into_iter().map(f64::from).collect();
            each(&d, pivots, nb, n, 1.0, |v| {
                (v as f32).to_ne_bytes().to_vec()
            })
        }
        DType::C64 => {
            let d: Vec<Complex<f64>> = f32s(diag)
                .chunks_exact(2)
                .map(|p| Complex::new(f64::from(p[0]), f64::from(p[1])))
                .collect();
            each(&d, pivots, nb, n, Complex::new(1.0, 0.0), |v| {
                [(v.re as f32).to_ne_bytes(), (v.im as f32).to_ne_bytes()].concat()
            })
        }
        DType::C128 => {
            let d: Vec<Complex<f64>> = f64s(diag)
                .chunks_exact(2)
                .map(|p| Complex::new(p[0], p[1]))
                .collect();
            each(&d, pivots, nb, n, Complex::new(1.0, 0.0), |v| {
                [v.re.to_ne_bytes(), v.im.to_ne_bytes()].concat()
            })
        }
        _ => each(&f64s(diag), pivots, nb, n, 1.0, |v| {
            v.to_ne_bytes().to_vec()
        }),
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
        if !matches!(dtype, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
            return Err(format!(
                "{} of {dtype} runs on the CPU ({solver} takes float32, float64, complex64 and complex128)",
                kind.name()
            ));
        }
        if matches!(dtype, DType::F64 | DType::C128) && !self.info().fp64 {
            return Err(format!(
                "{} has no double precision, which {} of {dtype} needs",
                self.info().name,
                kind.name()
            ));
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
        let (kind, .., dtype) = op.parts();
        let complex = dtype.is_complex();
        let calls = match kind {
            Kind::Solve => "getrf/getrs",
            Kind::SolveSpd => "potrf/potrs",
            Kind::Cholesky => "potrf",
            Kind::Inv => "getrf/getrs against the identity",
            Kind::Det => "getrf",
            Kind::Qr if complex => "geqrf/ungqr",
            Kind::Qr => "geqrf/orgqr",
            Kind::Svd | Kind::SvdVals => "gesvd",
            Kind::Eigh if complex => "heevd",
            Kind::Eigh => "syevd",
        };
        let conj = complex && mapping(kind, 1, 1, 1).conj_a;
        Some(format!(
            "{solver} {calls}; crossover's matrix-copy kernel packs{} and transposes",
            if conj { " (conjugating)" } else { "" }
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
    /// strides `rs`, `cs`, keeping `tri`; `conj`: conjugated (complex).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn matcopy(
        &self,
        (dtype, conj): (DType, bool),
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
            &Variant::matcopy(dtype, conj),
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
        if nb == 0 || m == 0 || n == 0 || (map.b == BFrom::Input && k == 0) {
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
            let (shape, strides) = a_pack(&map, (m, n), (rs, cs));
            let x = self.mem_of(a_mem.as_ref())?;
            events.push(self.matcopy(
                (dtype, map.conj_a),
                x,
                &offs,
                shape,
                strides,
                Tri::All,
                a_block.mem(),
            )?);
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
                    (dtype, false),
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
                    (dtype, false),
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
        let opt = |len: usize, size: usize| {
            if len > 0 {
                self.alloc(nb * len * size).map(Some)
            } else {
                Ok(None)
            }
        };
        // Singular values and eigenvalues are real.
        let (values, u, vt) = (
            opt(map.values, dtype.real_part().size())?,
            opt(map.u, size)?,
            opt(map.vt, size)?,
        );
        let job = DenseJob {
            call: map.call,
            dtype,
            batch: nb,
            m: map.m,
            n: map.n,
            k: map.k,
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
                        (out_dtype, false),
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
                        (dtype, false),
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
                    let dets = dets_from_lu(dtype, &d, &p, nb, n);
                    let block = self.upload_bytes(&dets)?;
                    results.push(self.output_value(block, bytes, &shape, out_dtype)?);
                }
            }
        }
        sh.ran(super::RunTime::Events(events));
        // Job buffers dropped here return to the pool in queue order.
        Ok(results)
    }
}

#[cfg(test)]
#[path = "dense_matcopy_tests.rs"]
mod tests;
