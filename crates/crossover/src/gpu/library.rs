//! Library ops on the GPU core: which ones a device runs, and running them.
//!
//! Matrix products run through the API's BLAS where it has one and can
//! read the operands' layouts (cuBLAS on CUDA: row- or column-major
//! matrices, evenly spaced batches), else through the core's own kernel
//! ([`super::codegen::gemm`], every API, any strides). Both write the
//! same row-major result, so the executor cannot tell them apart. Sparse
//! CSR products run through the API's sparse library where it has one
//! (cuSPARSE on CUDA: SpMV, SpMM, SpGEMM; sums in its own order, so within
//! rounding of the CPU's) unless `CROSSOVER_GPU_SPARSE=core`, else through
//! the core's kernels (the CPU's bits), the matrix's arrays uploaded once
//! per matrix. Dense factorisations and solvers run through
//! the API's dense solver ([`super::dense`], cuSOLVER on CUDA). The other
//! library ops run on the CPU, each with its reason.

use super::api::{Arg, Gemm, GemmOperand};
use super::codegen::params::{Param, Value as PackedValue};
use super::codegen::{gemm, scan, Variant, GROUP};
use super::memory::Block;
use super::sparse::{core_route, SparsePath, VENDOR_SUMS};
use super::{guard, GpuApi, GpuBackend};
use crate::array::scan::Scan;
use crate::array::Value;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::ir::Program;
use crate::linalg::{batch_offsets, mat_strides, MatMul};
use crate::op::Library;
use crate::shape::numel;
use crate::sparse::{CsrData, SpMM, Values};
use std::sync::{Arc, Mutex, Weak};

impl<A: GpuApi> GpuBackend<A> {
    /// Why this device cannot run library op `op`, if it cannot.
    pub(super) fn refuse_library(&self, op: &Library) -> std::result::Result<(), String> {
        let info = self.info();
        // Named one by one: a new library op must say what it does here.
        match op {
            Library::MatMul(mm) => {
                let dtype = mm.dims().4;
                // Every dtype a product keeps (the narrow and unsigned
                // integers run as int64 and are cast back).
                let ours = matches!(
                    dtype,
                    DType::F32
                        | DType::F64
                        | DType::I32
                        | DType::I64
                        | DType::Bool
                        | DType::C64
                        | DType::C128
                );
                match dtype {
                    d if !ours => Err(format!("matmul of {d} runs on the CPU only")),
                    _ if info.max_group < GROUP => Err(format!(
                        "{} runs work-groups of at most {} work-items; crossover's kernels use {GROUP}",
                        info.name, info.max_group
                    )),
                    _ if info.local_mem_bytes < gemm::local_bytes(dtype) => Err(format!(
                        "{} has {} bytes of local memory per work-group; crossover's {dtype} matmul kernel needs {}",
                        info.name,
                        info.local_mem_bytes,
                        gemm::local_bytes(dtype)
                    )),
                    DType::F64 | DType::C128 if !info.fp64 => Err(format!(
                        "{} has no double precision, which matmul of {dtype} needs",
                        info.name
                    )),
                    _ => Ok(()),
                }
            }
            Library::SparseDense(sp) => match sp.parts().0.values.dtype() {
                DType::F64 if !info.fp64 => Err(format!("{} has no double precision", info.name)),
                _ => Ok(()),
            },
            Library::SparseSparse(sp) => self.refuse_spgemm(sp),
            Library::Scan(scan) => {
                let dtype = scan.parts().3;
                if dtype.is_cpu_only_int() {
                    Err(format!("scans of {dtype} run on the CPU only"))
                } else if dtype.is_float() && !info.fp64 {
                    Err(format!(
                        "{} has no double precision, which scans of {dtype} accumulate in",
                        info.name
                    ))
                } else {
                    Ok(())
                }
            }
            Library::Fft(f) => self.refuse_fft(f),
            Library::Dense(d) => self.refuse_dense(d),
        }
    }

    /// How this device runs library op `op` (one it accepts), for explain.
    pub(super) fn library_route(&self, op: &Library) -> Option<String> {
        let api = &self.shared.api;
        Some(match op {
            Library::MatMul(mm) if vendor_dtype(mm.dims().4) => match api.blas_name() {
                Some(blas) => {
                    format!("{blas} where it can read the operands' layouts, else crossover's tiled kernel")
                }
                None => "crossover's tiled matmul kernel".into(),
            },
            Library::MatMul(mm) if mm.dims().4 == DType::Bool => {
                "crossover's tiled matmul kernel (the logical or of ands)".into()
            }
            Library::MatMul(_) => "crossover's tiled matmul kernel (integer products wrap)".into(),
            Library::Fft(f) => match api.fft_name() {
                Some(lib) => format!("{lib} per axis; crossover's kernels load, scale and extend"),
                None => match f.step_lengths().into_iter().find(|n| !n.is_power_of_two()) {
                    Some(n) => format!(
                        "crossover's radix-2 FFT kernels (Bluestein's algorithm for {n} points)"
                    ),
                    None => "crossover's radix-2 FFT kernels".into(),
                },
            },
            Library::SparseDense(sp) => match self.spmm_path(sp) {
                SparsePath::Vendor(lib) => format!(
                    "{lib} (SpMV for a contiguous vector, else SpMM) where it can read the dense operand's layout, else crossover's CSR kernel; {}",
                    VENDOR_SUMS
                ),
                SparsePath::Core(why) => core_route("crossover's CSR kernel (", why),
            },
            Library::SparseSparse(sp) => match self.spgemm_path(sp) {
                SparsePath::Vendor(lib) => format!(
                    "{lib} SpGEMM (zeros it keeps dropped and rows sorted on the host, as the CPU stores them); {}",
                    VENDOR_SUMS
                ),
                SparsePath::Core(why) => {
                    core_route("crossover's CSR merge kernel (count, then fill;", why)
                }
            },
            Library::Scan(_) => "crossover's three-stage scan kernel".into(),
            Library::Dense(d) => return self.dense_route(d),
        })
    }

    /// Runs library op `op` (one this device accepted) on `inputs`.
    pub(super) fn run_library(
        &self,
        op: &Library,
        inputs: &[Value],
        outputs: &[(Vec<usize>, DType)],
    ) -> Result<Vec<Value>> {
        match op {
            Library::MatMul(mm) => self.run_matmul(mm, inputs).map(|v| vec![v]),
            Library::SparseDense(sp) => self.run_spmm(sp, inputs, outputs).map(|v| vec![v]),
            Library::SparseSparse(sp) => self.run_spgemm(sp).map(|v| vec![v]),
            Library::Scan(scan) => self.run_scan(scan, inputs).map(|v| vec![v]),
            Library::Fft(f) => self.run_fft(f, inputs).map(|v| vec![v]),
            Library::Dense(d) => self.run_dense(d, inputs),
        }
    }

    fn run_matmul(&self, mm: &MatMul, inputs: &[Value]) -> Result<Value> {
        let [a, b] = inputs else {
            return Err(Error::internal("matmul", "expected two inputs"));
        };
        let (batch, m, k, n, dtype) = mm.dims();
        let nb = numel(batch);
        let mut shape = batch.to_vec();
        shape.extend([m, n]);
        let bytes = nb * m * n * dtype.size();
        let out = self.alloc(bytes)?;
        if bytes > 0 {
            let a_mem = self.resident(&a.buffer)?;
            let b_mem = self.resident(&b.buffer)?;
            let (am, bm) = (self.mem_of(a_mem.as_ref())?, self.mem_of(b_mem.as_ref())?);
            let a_offs = batch_offsets(&a.layout, 2, batch);
            let b_offs = batch_offsets(&b.layout, 2, batch);
            let (_, _, ars, acs) = mat_strides(&a.layout);
            let (_, _, brs, bcs) = mat_strides(&b.layout);
            let sh = &self.shared;
            let vendor = match (
                blas_operand(am, m, k, ars, acs, &a_offs),
                blas_operand(bm, k, n, brs, bcs, &b_offs),
            ) {
                (Some(ao), Some(bo)) if k > 0 && vendor_dtype(dtype) => {
                    let g = Gemm {
                        dtype,
                        m,
                        n,
                        k,
                        batch: nb,
                        a: ao,
                        b: bo,
                        c: out.mem(),
                    };
                    let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.api.gemm(&g)))
                    {
                        Ok(r) => r,
                        Err(_) => Some(Err(super::api::ApiError::new(
                            "gemm",
                            "the BLAS library panicked",
                        ))),
                    }
                }
                _ => None,
            };
            let event = match vendor {
                Some(r) => r.map_err(|e| super::api_error("matmul", &sh.label, e))?,
                None => {
                    let strides = [ars, acs, brs, bcs].map(|s| s as i64);
                    let offs: Vec<i64> = a_offs
                        .iter()
                        .zip(&b_offs)
                        .flat_map(|(&x, &y)| [x as i64, y as i64])
                        .collect();
                    self.core_gemm(dtype, (nb, m, k, n), strides, &offs, am, bm, out.mem())?
                }
            };
            sh.ran(super::RunTime::Events(vec![event]));
            // The inputs' memory stays alive with their buffers; blocks the
            // queue still reads return to the pool in queue order.
        }
        self.output_value(out, bytes, &shape, dtype)
    }

    /// Enqueues the core's matrix-product kernel.
    #[allow(clippy::too_many_arguments)]
    fn core_gemm(
        &self,
        dtype: DType,
        (nb, m, k, n): (usize, usize, usize, usize),
        [ars, acs, brs, bcs]: [i64; 4],
        offs: &[i64],
        a: &A::Mem,
        b: &A::Mem,
        c: &A::Mem,
    ) -> Result<A::Event> {
        let table: Vec<u8> = offs.iter().flat_map(|o| o.to_ne_bytes()).collect();
        let offsets = self.upload_bytes(&table)?;
        let value = |p: Param| match p {
            Param::Rows => Ok(m as i64),
            Param::Cols => Ok(n as i64),
            Param::Inner => Ok(k as i64),
            Param::RowStride(0) => Ok(ars),
            Param::ColStride(0) => Ok(acs),
            Param::RowStride(_) => Ok(brs),
            Param::ColStride(_) => Ok(bcs),
            other => Err(format!("matmul has no parameter {}", other.name())),
        };
        let value = ints(&value);
        self.launch_library_kernel(
            &Variant::gemm(dtype),
            &value,
            0,
            gemm::groups(dtype, nb, m, n),
            &[a, b, offsets.mem(), c],
        )
    }

    /// Enqueues entry `entry` of a library kernel of the core (`variant`
    /// has no program): its parameters from `value`, then `mems` as its
    /// buffer arguments.
    pub(super) fn launch_library_kernel(
        &self,
        variant: &Variant,
        value: &dyn Fn(Param) -> std::result::Result<PackedValue, String>,
        entry: usize,
        groups: usize,
        mems: &[&A::Mem],
    ) -> Result<A::Event> {
        let sh = &self.shared;
        let compiled = guard("compile", &sh.label, || {
            sh.cache
                .get(&sh.api, sh.features, variant, &Program::default())
        })?;
        let params = compiled
            .rendered
            .params
            .pack(value)
            .map_err(|m| Error::internal("gpu params", m))?;
        let mut args = vec![Arg::Bytes(&params)];
        args.extend(mems.iter().map(|m| Arg::Mem(*m)));
        let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
        guard("launch", &sh.label, || {
            sh.api.launch(&compiled.module, entry, groups, &args)
        })
    }

    /// `bytes` in a fresh block of device memory.
    pub(super) fn upload_bytes(&self, bytes: &[u8]) -> Result<Block<A>> {
        let sh = &self.shared;
        let block = self.alloc(bytes.len())?;
        guard("copy to device", &sh.label, || {
            sh.api.write(block.mem(), bytes)
        })?;
        Ok(block)
    }

    fn run_spmm(
        &self,
        op: &SpMM,
        inputs: &[Value],
        outputs: &[(Vec<usize>, DType)],
    ) -> Result<Value> {
        let ([x], [(shape, dtype)]) = (inputs, outputs) else {
            return Err(Error::internal(
                "sparse_matmul_dense",
                "expected one input and output",
            ));
        };
        let (data, k) = op.parts();
        let rows = data.nrows;
        let bytes = rows * k * dtype.size();
        let out = self.alloc(bytes)?;
        let vendor = match self.spmm_path(op) {
            SparsePath::Vendor(_) if bytes > 0 => {
                self.vendor_spmm(data, k, *dtype, x, out.mem())?
            }
            _ => None,
        };
        if let Some(event) = vendor {
            self.shared.ran(super::RunTime::Events(vec![event]));
        } else if bytes > 0 {
            let csr = self.csr_on_device(data)?;
            let x_mem = self.resident(&x.buffer)?;
            let l = &x.layout;
            let (rs, cs) = (
                l.strides[0] as i64,
                l.strides.get(1).map_or(0, |&s| s as i64),
            );
            let value = |p: Param| match p {
                Param::Rows => Ok(rows as i64),
                Param::Cols => Ok(k as i64),
                Param::Offset(_) => Ok(l.offset as i64),
                Param::RowStride(_) => Ok(rs),
                Param::ColStride(_) => Ok(cs),
                other => Err(format!(
                    "sparse products have no parameter {}",
                    other.name()
                )),
            };
            let groups = (rows * k).div_ceil(GROUP).clamp(1, self.shared.max_groups);
            let event = self.launch_library_kernel(
                &Variant::spmm(*dtype),
                &ints(&value),
                0,
                groups,
                &[
                    csr.indptr.mem(),
                    csr.indices.mem(),
                    csr.values.mem(),
                    self.mem_of(x_mem.as_ref())?,
                    out.mem(),
                ],
            )?;
            self.shared.ran(super::RunTime::Events(vec![event]));
        }
        self.output_value(out, bytes, shape, *dtype)
    }

    /// A cumulative sum or product: the core's three-stage scan
    /// ([`super::codegen::scan`]) over the input's layout as it is.
    fn run_scan(&self, op: &Scan, inputs: &[Value]) -> Result<Value> {
        let [x] = inputs else {
            return Err(Error::internal(op.name(), "expected one input"));
        };
        let (kind, shape, axis, dtype) = op.parts();
        let total = numel(shape);
        let bytes = total * dtype.size();
        let out = self.alloc(bytes)?;
        if bytes > 0 {
            let len = shape[axis];
            let inner: usize = shape[axis + 1..].iter().product();
            let lines = total / len;
            let l = &x.layout;
            let (dims, strides) = line_axes(shape, &l.strides, axis);
            let (segs, chunk) = scan::split(lines, len);
            let variant = Variant::scan(kind, dtype, dims.len());
            let value = |p: Param| match p {
                Param::Lines => Ok(lines as i64),
                Param::Along => Ok(len as i64),
                Param::Segments => Ok(segs as i64),
                Param::Chunk => Ok(chunk as i64),
                Param::Inner => Ok(inner as i64),
                Param::Offset(0) => Ok(l.offset as i64),
                Param::AlongStride => Ok(l.strides[axis] as i64),
                Param::Dim(d) => Ok(dims[d] as i64),
                Param::Stride(0, d) => Ok(strides[d] as i64),
                other => Err(format!("scans have no parameter {}", other.name())),
            };
            // Chunk totals (8 bytes each: f64 or u64), read by the stages
            // after the one that writes them on the same queue.
            let part = self.alloc(lines * segs * 8)?;
            let x_mem = self.resident(&x.buffer)?;
            let xm = self.mem_of(x_mem.as_ref())?;
            let max = self.shared.max_groups;
            let item_groups = (lines * segs).div_ceil(GROUP).clamp(1, max);
            let mut events = Vec::with_capacity(3);
            if segs > 1 {
                events.push(self.launch_library_kernel(
                    &variant,
                    &ints(&value),
                    0,
                    item_groups,
                    &[xm, part.mem()],
                )?);
                let line_groups = lines.div_ceil(GROUP).clamp(1, max);
                events.push(self.launch_library_kernel(
                    &variant,
                    &ints(&value),
                    1,
                    line_groups,
                    &[part.mem()],
                )?);
            }
            events.push(self.launch_library_kernel(
                &variant,
                &ints(&value),
                2,
                item_groups,
                &[xm, part.mem(), out.mem()],
            )?);
            self.shared.ran(super::RunTime::Events(events));
        }
        self.output_value(out, bytes, shape, dtype)
    }

    /// The device copy of a CSR matrix's arrays, uploaded on its first
    /// product and kept while the matrix lives.
    pub(super) fn csr_on_device(&self, data: &Arc<CsrData>) -> Result<Arc<CsrOnDevice<A>>> {
        let mut cache = self.shared.csr.lock().unwrap_or_else(|p| p.into_inner());
        cache.retain(|(w, _)| w.strong_count() > 0);
        if let Some((_, d)) = cache
            .iter()
            .find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(data)))
        {
            return Ok(Arc::clone(d));
        }
        let indptr: Vec<u8> = data
            .indptr
            .iter()
            .flat_map(|&p| (p as i64).to_ne_bytes())
            .collect();
        let indices: Vec<u8> = data.indices.iter().flat_map(|i| i.to_ne_bytes()).collect();
        let values: Vec<u8> = match &data.values {
            Values::F32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Values::F64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        };
        let d = Arc::new(CsrOnDevice::new(
            self.upload_bytes(&indptr)?,
            self.upload_bytes(&indices)?,
            self.upload_bytes(&values)?,
        ));
        cache.push((Arc::downgrade(data), Arc::clone(&d)));
        Ok(d)
    }
}

/// A CSR matrix's arrays in device memory.
pub(super) struct CsrOnDevice<A: GpuApi> {
    /// Row pointers as i64.
    pub(super) indptr: Block<A>,
    /// Column indices as u32 (int32 for a vendor library: the columns fit).
    pub(super) indices: Block<A>,
    pub(super) values: Block<A>,
    /// Row pointers as int32, for a vendor sparse library (made on its
    /// first use).
    pub(super) indptr32: Mutex<Option<Arc<Block<A>>>>,
}

impl<A: GpuApi> CsrOnDevice<A> {
    pub(super) fn new(indptr: Block<A>, indices: Block<A>, values: Block<A>) -> Self {
        CsrOnDevice {
            indptr,
            indices,
            values,
            indptr32: Mutex::new(None),
        }
    }
}

/// Device copies of CSR matrices, each kept while its matrix lives (a
/// loop of sparse products, PageRank's, uploads its matrix once).
pub(super) type CsrCache<A> = Mutex<Vec<(Weak<CsrData>, Arc<CsrOnDevice<A>>)>>;

/// Parameter values of a kernel whose parameters are all integers.
pub(super) fn ints(
    value: &dyn Fn(Param) -> std::result::Result<i64, String>,
) -> impl Fn(Param) -> std::result::Result<PackedValue, String> + '_ {
    move |p| value(p).map(PackedValue::I64)
}

/// The axes of `shape` other than `axis`, size-1 ones dropped and
/// neighbours that step through memory as one merged: their sizes and
/// strides, slowest first (a scan's lines, in row-major order).
fn line_axes(shape: &[usize], strides: &[isize], axis: usize) -> (Vec<usize>, Vec<isize>) {
    let mut dims: Vec<usize> = Vec::new();
    let mut steps: Vec<isize> = Vec::new();
    for (d, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        if d == axis || n == 1 {
            continue;
        }
        match (dims.last_mut(), steps.last_mut()) {
            (Some(ln), Some(ls)) if *ls == s * n as isize => {
                *ln *= n;
                *ls = s;
            }
            _ => {
                dims.push(n);
                steps.push(s);
            }
        }
    }
    (dims, steps)
}

/// Whether vendor BLAS multiplies `dtype` (floats and complex; integer
/// and bool products run on the core's kernel).
fn vendor_dtype(dtype: DType) -> bool {
    dtype.is_float() || dtype.is_complex()
}

/// How BLAS reads an `rows x cols` operand with strides `rs`, `cs` and
/// per-batch offsets `offs`, or `None` when it cannot (no unit stride,
/// negative or broadcast strides, unevenly spaced batches, sizes past a C
/// `int`).
fn blas_operand<'m, M>(
    mem: &'m M,
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
    offs: &[isize],
) -> Option<GemmOperand<'m, M>> {
    let fits = |v: usize| i32::try_from(v).is_ok();
    if !(fits(rows) && fits(cols)) {
        return None;
    }
    // A dimension of length 1 may have any stride.
    let (rs, cs) = (
        if rows == 1 { cols.max(1) as isize } else { rs },
        if cols == 1 { 1 } else { cs },
    );
    let (column_major, ld) = if cs == 1 && rs >= cols.max(1) as isize {
        (false, rs as usize)
    } else {
        let (rs, cs) = (
            if rows == 1 { 1 } else { rs },
            if cols == 1 { rows.max(1) as isize } else { cs },
        );
        if rs == 1 && cs >= rows.max(1) as isize {
            (true, cs as usize)
        } else {
            return None;
        }
    };
    let first = *offs.first()?;
    let step = offs.get(1).map_or(0, |&o| o - first);
    let even = offs
        .iter()
        .enumerate()
        .all(|(i, &o)| o == first + i as isize * step);
    if first < 0 || step < 0 || !even || !fits(ld) {
        return None;
    }
    Some(GemmOperand {
        mem,
        offset: first as usize,
        column_major,
        ld,
        batch_stride: step as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::{blas_operand, line_axes};

    #[test]
    fn line_axes_merge_neighbours_around_the_scanned_axis() {
        // Contiguous (2, 3, 4) scanned along 1: the outer and inner axes
        // stay apart (strides 12 and 1).
        assert_eq!(
            line_axes(&[2, 3, 4], &[12, 4, 1], 1),
            (vec![2, 4], vec![12, 1])
        );
        // Along the last axis: the others merge into one.
        assert_eq!(line_axes(&[2, 3, 4], &[12, 4, 1], 2), (vec![6], vec![4]));
        // A transposed view does not merge; size-1 axes drop out.
        assert_eq!(
            line_axes(&[4, 1, 3, 2], &[1, 99, 4, 12], 3),
            (vec![4, 3], vec![1, 4])
        );
        assert_eq!(line_axes(&[5], &[1], 0), (vec![], vec![]));
    }

    #[test]
    fn blas_reads_row_and_column_major_operands_and_refuses_the_rest() {
        let op = |r, c, rs, cs, offs: &[isize]| {
            blas_operand(&(), r, c, rs, cs, offs).map(|o| (o.column_major, o.ld, o.batch_stride))
        };
        assert_eq!(op(3, 4, 4, 1, &[0]), Some((false, 4, 0)));
        assert_eq!(
            op(3, 4, 1, 3, &[0]),
            Some((true, 3, 0)),
            "a transposed view"
        );
        assert_eq!(
            op(3, 4, 8, 1, &[2, 26]),
            Some((false, 8, 24)),
            "a sliced batch"
        );
        assert_eq!(op(1, 4, 0, 1, &[0]), Some((false, 4, 0)), "one row");
        assert_eq!(op(3, 4, 2, 6, &[0]), None, "no unit stride");
        assert_eq!(op(3, 4, -4, 1, &[8]), None, "reversed rows");
        assert_eq!(op(3, 4, 0, 1, &[0]), None, "broadcast rows");
        assert_eq!(op(3, 4, 4, 1, &[0, 12, 30]), None, "uneven batches");
        assert_eq!(
            op(3, 4, 4, 1, &[0, 0, 0]),
            Some((false, 4, 0)),
            "a broadcast batch"
        );
    }
}
