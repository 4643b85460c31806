//! Sparse products on the GPU core: which path runs them, and sparse
//! times sparse ([`crate::op::Library::SparseSparse`]).
//!
//! Where the API has a sparse library (cuSPARSE on CUDA, see
//! `cuda/sparse.rs`) both products run through it unless
//! `CROSSOVER_GPU_SPARSE=core` ([`sparse_path`]): CSR times dense as SpMV
//! or SpMM where the library can read the dense operand's layout, CSR
//! times CSR as SpGEMM, read back and made a valid [`Csr`]
//! ([`product_from_vendor`]: rows sorted, zeros dropped as on the CPU).
//! The library sums in its own order, so results agree with the CPU's
//! within rounding, not bit for bit. Sizes past its 32-bit indices, empty
//! operands and unreadable layouts run on the core's kernels, the reason
//! in explain where it is known before the run.
//!
//! The core's merge kernel ([`super::codegen`]'s `spgemm`), whose sums are
//! the CPU's bits: the product's size is known only once computed, so the
//! call runs in two launches around one read-back: `count` (stored columns
//! per row), the row pointers summed on the host, then `fill`. The product
//! comes back to the host (a [`Csr`] holds host arrays), and its device
//! arrays stay in the backend's CSR cache while the product lives, so a
//! following product with it on this device uploads nothing.

use super::api::{ApiError, CsrOperand, SparseDense, SparseSparse};
use super::codegen::params::Param;
use super::codegen::{Variant, GROUP};
use super::library::{ints, CsrOnDevice};
use super::memory::Block;
use super::sparse_vendor::product_from_vendor;
use super::{GpuApi, GpuBackend};
use crate::array::Value;
use crate::device::Backend;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::explain::si;
use crate::sparse::{Csr, CsrData, SpGemm, SpMM, Values};
use std::sync::Arc;

const OP: &str = "sparse_matmul";

impl<A: GpuApi> GpuBackend<A> {
    /// Why this device cannot run `op`, if it cannot: float64 without
    /// double precision, or more device memory than it has (operands,
    /// cursors, row counts and the product's upper bound).
    pub(super) fn refuse_spgemm(&self, op: &SpGemm) -> std::result::Result<(), String> {
        let info = self.info();
        let (a, b) = op.parts();
        let dtype = a.values.dtype();
        if dtype == DType::F64 && !info.fp64 {
            return Err(format!("{} has no double precision", info.name));
        }
        let per = (4 + dtype.size()) as f64;
        let nnz_a = a.indices.len() as f64;
        let largest = (nnz_a * 16.0).max(op.bound() * dtype.size() as f64);
        let total = (nnz_a + b.indices.len() as f64 + op.bound()) * per
            + nnz_a * 16.0
            + (a.nrows as f64 * 3.0 + b.nrows as f64 + 3.0) * 8.0;
        let memory = self.memory_bytes().unwrap_or(info.memory_bytes) as f64;
        if total > memory {
            return Err(format!(
                "the product may need {}B of device memory, more than the {}B crossover may use on {}",
                si(total),
                si(memory),
                info.name
            ));
        }
        if largest > info.max_alloc_bytes as f64 {
            return Err(format!(
                "the product may need a buffer of {}B; {} allocates at most {}B at once",
                si(largest),
                info.name,
                si(info.max_alloc_bytes as f64)
            ));
        }
        Ok(())
    }

    /// How this device runs CSR times dense `op`.
    pub(super) fn spmm_path(&self, op: &SpMM) -> SparsePath {
        let (a, k) = op.parts();
        let refusal = if a.indices.is_empty() {
            Some("the matrix stores no entries".into())
        } else {
            index_refusal(&[
                ("rows", a.nrows as f64),
                ("columns", a.ncols as f64),
                ("stored entries", a.indices.len() as f64),
                ("columns of the dense operand", k as f64),
            ])
        };
        sparse_path(
            sparse_setting().as_deref(),
            self.shared.api.sparse_name(),
            refusal,
        )
    }

    /// How this device runs CSR times CSR `op`.
    pub(super) fn spgemm_path(&self, op: &crate::sparse::SpGemm) -> SparsePath {
        let (a, b) = op.parts();
        let refusal = if a.indices.is_empty() || b.indices.is_empty() {
            Some("an operand stores no entries (the product is empty)".into())
        } else {
            index_refusal(&[
                ("rows", a.nrows as f64),
                ("inner dimension", a.ncols as f64),
                ("columns", b.ncols as f64),
                ("stored entries of a", a.indices.len() as f64),
                ("stored entries of b", b.indices.len() as f64),
                ("entries the product may hold", op.bound()),
            ])
        };
        sparse_path(
            sparse_setting().as_deref(),
            self.shared.api.sparse_name(),
            refusal,
        )
    }

    /// Enqueues `a @ x` through the API's sparse library, or `None` when
    /// it cannot read `x`'s layout or has no library after all (the
    /// core's kernel runs instead).
    pub(super) fn vendor_spmm(
        &self,
        data: &Arc<CsrData>,
        k: usize,
        dtype: DType,
        x: &Value,
        out: &A::Mem,
    ) -> Result<Option<A::Event>> {
        let l = &x.layout;
        let (rs, cs) = (l.strides[0], l.strides.get(1).copied().unwrap_or(1));
        let Some(ld) = dense_ld(data.ncols, k, rs, cs) else {
            return Ok(None);
        };
        let csr = self.csr_on_device(data)?;
        let indptr = self.csr_indptr32(data, &csr)?;
        let x_mem = self.resident(&x.buffer)?;
        let job = SparseDense {
            dtype,
            a: CsrOperand {
                rows: data.nrows,
                cols: data.ncols,
                nnz: data.indices.len(),
                indptr: indptr.mem(),
                indices: csr.indices.mem(),
                values: csr.values.mem(),
            },
            k,
            vector: k == 1 && ld == 1,
            x: self.mem_of(x_mem.as_ref())?,
            x_offset: l.offset,
            x_ld: ld,
            c: out,
        };
        let sh = &self.shared;
        let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.api.spmm(&job))) {
            Ok(Some(r)) => r
                .map(Some)
                .map_err(|e| super::api_error("sparse_matmul_dense", &sh.label, e)),
            Ok(None) => Ok(None),
            Err(_) => Err(super::api_error(
                "sparse_matmul_dense",
                &sh.label,
                ApiError::new("spmm", "the sparse library panicked"),
            )),
        }
    }

    /// The row pointers of `data` (whose device copy is `d`) as int32, for
    /// a vendor library: uploaded on first use, kept with the copy. The
    /// caller checked that they fit.
    pub(super) fn csr_indptr32(&self, data: &CsrData, d: &CsrOnDevice<A>) -> Result<Arc<Block<A>>> {
        let mut slot = d.indptr32.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = slot.as_ref() {
            return Ok(Arc::clone(b));
        }
        let bytes: Vec<u8> = data
            .indptr
            .iter()
            .flat_map(|&p| (p as i32).to_ne_bytes())
            .collect();
        let b = Arc::new(self.upload_bytes(&bytes)?);
        *slot = Some(Arc::clone(&b));
        Ok(b)
    }

    /// Runs `op` (one this device accepted); returns the call's output (the
    /// row pointers). Timed by the host from start to the product made on
    /// the host, since the device's events leave out reading the product
    /// back and making it a CSR, most of a large product's time.
    pub(super) fn run_spgemm(&self, op: &SpGemm) -> Result<Value> {
        let start = std::time::Instant::now();
        let c = self.spgemm_product(op)?;
        self.shared
            .ran(super::RunTime::Host(start.elapsed().as_secs_f64()));
        op.deliver(c)
    }

    /// `op`'s product: the API's sparse library where it has one, else
    /// crossover's kernel (count, row pointers, fill, read back).
    fn spgemm_product(&self, op: &SpGemm) -> Result<Csr> {
        let (a, b) = op.parts();
        let dtype = a.values.dtype();
        let (m, n, nnz_a) = (a.nrows, b.ncols, a.indices.len());
        let empty = || match dtype {
            DType::F32 => Values::F32(Vec::new()),
            _ => Values::F64(Vec::new()),
        };
        if nnz_a == 0 || b.indices.is_empty() {
            // No products: every row of the result is empty.
            return Ok(Csr::new_unchecked(
                m,
                n,
                vec![0; m + 1],
                Vec::new(),
                empty(),
            ));
        }
        if let SparsePath::Vendor(_) = self.spgemm_path(op) {
            if let Some(c) = self.vendor_spgemm(op)? {
                return Ok(c);
            }
        }
        let ad = self.csr_on_device(a)?;
        let bd = self.csr_on_device(b)?;
        let cursors = self.alloc(2 * nnz_a * 8)?;
        let counts = self.alloc(m * 8)?;
        let value = |p: Param| match p {
            Param::Rows => Ok(m as i64),
            Param::Cols => Ok(n as i64),
            Param::Inner => Ok(nnz_a as i64),
            other => Err(format!("{OP} has no parameter {}", other.name())),
        };
        let variant = Variant::spgemm(dtype);
        let groups = m.div_ceil(GROUP).clamp(1, self.shared.max_groups);
        let operands = [
            ad.indptr.mem(),
            ad.indices.mem(),
            ad.values.mem(),
            bd.indptr.mem(),
            bd.indices.mem(),
            bd.values.mem(),
            cursors.mem(),
        ];
        let mut args = operands.to_vec();
        args.push(counts.mem());
        let mut events =
            vec![self.launch_library_kernel(&variant, &ints(&value), 0, groups, &args)?];
        // Row pointers from the counts (each at most `n`: anything else is
        // a fault of the device, never trusted as a size).
        let counted = self.read_back(&counts, m * 8)?;
        let mut indptr = Vec::with_capacity(m + 1);
        let mut total = 0usize;
        indptr.push(0usize);
        for c in counted.chunks_exact(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            let c = i64::from_ne_bytes(w);
            if c < 0 || c as u64 > n as u64 {
                return Err(Error::internal(
                    OP,
                    format!("the device counted {c} entries in a row of {n} columns"),
                ));
            }
            total += c as usize;
            indptr.push(total);
        }
        let ptr_bytes: Vec<u8> = indptr
            .iter()
            .flat_map(|&p| (p as i64).to_ne_bytes())
            .collect();
        let c_ptr = self.upload_bytes(&ptr_bytes)?;
        let c_idx = self.alloc(total * 4)?;
        let c_val = self.alloc(total * dtype.size())?;
        let (indices, values) = if total > 0 {
            let mut args = operands.to_vec();
            args.extend([c_ptr.mem(), c_idx.mem(), c_val.mem()]);
            events.push(self.launch_library_kernel(&variant, &ints(&value), 1, groups, &args)?);
            let idx = self.read_back(&c_idx, total * 4)?;
            let val = self.read_back(&c_val, total * dtype.size())?;
            let indices: Vec<u32> = idx
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let values = match dtype {
                DType::F32 => Values::F32(
                    val.chunks_exact(4)
                        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                ),
                _ => Values::F64(
                    val.chunks_exact(8)
                        .map(|c| {
                            let mut w = [0u8; 8];
                            w.copy_from_slice(c);
                            f64::from_ne_bytes(w)
                        })
                        .collect(),
                ),
            };
            (indices, values)
        } else {
            (Vec::new(), empty())
        };
        // Finished (the product was read back): timed by `run_spgemm`.
        drop(events);
        let c = Csr::new_unchecked(m, n, indptr, indices, values);
        if total > 0 {
            // The product's device arrays serve its next product here.
            let on_device = Arc::new(CsrOnDevice::new(c_ptr, c_idx, c_val));
            let mut cache = self.shared.csr.lock().unwrap_or_else(|p| p.into_inner());
            cache.retain(|(w, _)| w.strong_count() > 0);
            cache.push((Arc::downgrade(&c.data), on_device));
        }
        Ok(c)
    }

    /// Runs `op` through the API's sparse library (cuSPARSE's SpGEMM):
    /// the product read back and made a valid [`Csr`] (see
    /// [`product_from_vendor`]); its device arrays seed the CSR cache when
    /// the host changed nothing. `None`: the API has no library after all
    /// (the core's kernel runs).
    fn vendor_spgemm(&self, op: &SpGemm) -> Result<Option<Csr>> {
        let (a, b) = op.parts();
        let dtype = a.values.dtype();
        let (m, n) = (a.nrows, b.ncols);
        let (ad, bd) = (self.csr_on_device(a)?, self.csr_on_device(b)?);
        let (ap, bp) = (self.csr_indptr32(a, &ad)?, self.csr_indptr32(b, &bd)?);
        let job = SparseSparse {
            dtype,
            a: operand(a, &ad, ap.mem()),
            b: operand(b, &bd, bp.mem()),
        };
        let sh = &self.shared;
        let done = {
            let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.api.spgemm(&job))) {
                Ok(r) => r,
                Err(_) => Some(Err(super::api::ApiError::new(
                    "spgemm",
                    "the sparse library panicked",
                ))),
            }
        };
        let done = match done {
            Some(r) => r.map_err(|e| super::api_error(OP, &sh.label, e))?,
            None => return Ok(None),
        };
        let nnz = done.nnz;
        let ptr_block = Block::lent(done.indptr, (m + 1) * 4);
        let raw_ptr = self.read_back(&ptr_block, (m + 1) * 4)?;
        let (idx_block, val_block) = match (done.indices, done.values) {
            (Some(i), Some(v)) if nnz > 0 => (
                Some(Block::lent(i, nnz * 4)),
                Some(Block::lent(v, nnz * dtype.size())),
            ),
            _ if nnz == 0 => (None, None),
            _ => {
                return Err(Error::internal(
                    OP,
                    format!("the sparse library reported {nnz} entries but returned no arrays"),
                ))
            }
        };
        let raw_idx = match &idx_block {
            Some(bl) => self.read_back(bl, nnz * 4)?,
            None => Vec::new(),
        };
        let raw_val = match &val_block {
            Some(bl) => self.read_back(bl, nnz * dtype.size())?,
            None => Vec::new(),
        };
        let i32s = |raw: &[u8]| -> Vec<i32> {
            raw.chunks_exact(4)
                .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let (indptr, indices) = (i32s(&raw_ptr), i32s(&raw_idx));
        let fault = |m: String| Error::internal(OP, format!("the sparse library's product: {m}"));
        let (c, changed) = match dtype {
            DType::F32 => {
                let v: Vec<f32> = raw_val
                    .chunks_exact(4)
                    .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                let (p, i, v, ch) =
                    product_from_vendor(m, n, &indptr, &indices, &v).map_err(fault)?;
                (Csr::new_unchecked(m, n, p, i, Values::F32(v)), ch)
            }
            _ => {
                let v: Vec<f64> = raw_val
                    .chunks_exact(8)
                    .map(|c| {
                        let mut w = [0u8; 8];
                        w.copy_from_slice(c);
                        f64::from_ne_bytes(w)
                    })
                    .collect();
                let (p, i, v, ch) =
                    product_from_vendor(m, n, &indptr, &indices, &v).map_err(fault)?;
                (Csr::new_unchecked(m, n, p, i, Values::F64(v)), ch)
            }
        };
        if let (false, Some(idx), Some(val)) = (changed, idx_block, val_block) {
            // The device arrays are the product as stored: they serve its
            // next product here (row pointers as i64 for the core, int32
            // for the library).
            let ptr_bytes: Vec<u8> = c
                .data
                .indptr
                .iter()
                .flat_map(|&p| (p as i64).to_ne_bytes())
                .collect();
            let on_device = CsrOnDevice::new(self.upload_bytes(&ptr_bytes)?, idx, val);
            *on_device.indptr32.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(Arc::new(ptr_block));
            let mut cache = self.shared.csr.lock().unwrap_or_else(|p| p.into_inner());
            cache.retain(|(w, _)| w.strong_count() > 0);
            cache.push((Arc::downgrade(&c.data), Arc::new(on_device)));
        }
        Ok(Some(c))
    }
}

/// The words every vendor sparse route ends with.
pub(super) const VENDOR_SUMS: &str = "its sums run in cuSPARSE's order, so results agree with the CPU's within rounding (a few units in the last place of each sum of magnitudes), not bit for bit; CROSSOVER_GPU_SPARSE=core runs crossover's kernel in the CPU's summation order";

/// How a sparse product runs on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum SparsePath {
    /// The API's sparse library (its name).
    Vendor(&'static str),
    /// The core's kernel, and why the API's library does not run it
    /// (`None`: the API has none).
    Core(Option<String>),
}

/// `CROSSOVER_GPU_SPARSE` (`core`: the core's kernels even where the API
/// has a sparse library).
fn sparse_setting() -> Option<String> {
    std::env::var("CROSSOVER_GPU_SPARSE").ok()
}

/// The choice of path: the API's library `vendor` unless `setting` (the
/// variable's value) is `core` or `refusal` says why it cannot take the
/// product. Unset, empty, `auto` or the library's name use the library
/// where there is one; any other value is a mistake, so the core's kernels
/// (the CPU's bits) run and explain names the value.
pub(super) fn sparse_path(
    setting: Option<&str>,
    vendor: Option<&'static str>,
    refusal: Option<String>,
) -> SparsePath {
    let Some(lib) = vendor else {
        return SparsePath::Core(None);
    };
    if let Some(v) = setting.map(str::trim) {
        if v.eq_ignore_ascii_case("core") {
            return SparsePath::Core(Some("CROSSOVER_GPU_SPARSE=core".into()));
        }
        if !(v.is_empty() || v.eq_ignore_ascii_case("auto") || v.eq_ignore_ascii_case(lib)) {
            return SparsePath::Core(Some(format!(
                "CROSSOVER_GPU_SPARSE={v:?} is not auto, core or {lib}"
            )));
        }
    }
    match refusal {
        Some(why) => SparsePath::Core(Some(format!("not {lib}: {why}"))),
        None => SparsePath::Vendor(lib),
    }
}

/// Why a vendor library's 32-bit indices cannot describe a product, if
/// one of `sizes` (name, value) passes `i32::MAX`.
fn index_refusal(sizes: &[(&str, f64)]) -> Option<String> {
    sizes
        .iter()
        .find(|(_, v)| *v > i32::MAX as f64)
        .map(|(what, v)| format!("{what} ({v}) past its 32-bit indices"))
}

/// The route of the core's sparse kernel for explain: `open` (the
/// kernel's name and an open parenthesis, with a note ending in `;` or
/// not), then the summation order and `why` the vendor library does not
/// run it.
pub(super) fn core_route(open: &str, why: Option<String>) -> String {
    let sep = if open.ends_with('(') { "" } else { " " };
    match why {
        None => format!("{open}{sep}the CPU's summation order)"),
        Some(why) => format!("{open}{sep}the CPU's summation order; {why})"),
    }
}

/// The row step of a dense `rows x k` operand with strides `rs`, `cs`
/// (elements) as a vendor library reads it (row-major, unit column step,
/// rows at least `k` apart), or `None` when it cannot (transposed,
/// broadcast or reversed views).
fn dense_ld(rows: usize, k: usize, rs: isize, cs: isize) -> Option<usize> {
    // A dimension of length 1 may have any stride.
    let cs = if k <= 1 { 1 } else { cs };
    let rs = if rows <= 1 { k.max(1) as isize } else { rs };
    (cs == 1 && rs >= k.max(1) as isize && i32::try_from(rs).is_ok()).then_some(rs as usize)
}

/// `d` (on the device as `on`, int32 row pointers `ptr`) for a vendor
/// library.
fn operand<'a, A: GpuApi>(
    d: &crate::sparse::CsrData,
    on: &'a CsrOnDevice<A>,
    ptr: &'a A::Mem,
) -> CsrOperand<'a, A::Mem> {
    CsrOperand {
        rows: d.nrows,
        cols: d.ncols,
        nnz: d.indices.len(),
        indptr: ptr,
        indices: on.indices.mem(),
        values: on.values.mem(),
    }
}

#[cfg(test)]
mod tests {
    use super::{core_route, dense_ld, index_refusal, sparse_path, SparsePath};

    #[test]
    fn the_sparse_library_runs_unless_told_or_unable() {
        let lib = Some("cuSPARSE");
        assert_eq!(sparse_path(None, lib, None), SparsePath::Vendor("cuSPARSE"));
        for v in ["auto", "cusparse", ""] {
            assert_eq!(
                sparse_path(Some(v), lib, None),
                SparsePath::Vendor("cuSPARSE"),
                "{v}"
            );
        }
        for v in ["core", " Core "] {
            assert_eq!(
                sparse_path(Some(v), lib, None),
                SparsePath::Core(Some("CROSSOVER_GPU_SPARSE=core".into())),
                "{v}"
            );
        }
        // A typo is not silently the default: the core's kernels, named.
        assert_eq!(
            sparse_path(Some("cuspase"), lib, None),
            SparsePath::Core(Some(
                "CROSSOVER_GPU_SPARSE=\"cuspase\" is not auto, core or cuSPARSE".into()
            ))
        );
        assert_eq!(
            sparse_path(None, lib, Some("too big".into())),
            SparsePath::Core(Some("not cuSPARSE: too big".into()))
        );
        // No library (OpenCL, or CUDA without cuSPARSE): the core's kernel,
        // nothing to explain.
        assert_eq!(sparse_path(None, None, None), SparsePath::Core(None));
        assert_eq!(
            sparse_path(Some("core"), None, None),
            SparsePath::Core(None)
        );
        assert_eq!(
            core_route("crossover's CSR kernel (", None),
            "crossover's CSR kernel (the CPU's summation order)"
        );
        assert_eq!(
            core_route("crossover's CSR merge kernel (count, then fill;", None),
            "crossover's CSR merge kernel (count, then fill; the CPU's summation order)"
        );
        assert_eq!(
            core_route("k (", Some("CROSSOVER_GPU_SPARSE=core".into())),
            "k (the CPU's summation order; CROSSOVER_GPU_SPARSE=core)"
        );
    }

    #[test]
    fn sizes_past_32_bit_indices_go_to_the_core() {
        assert_eq!(
            index_refusal(&[("rows", 10.0), ("nnz", i32::MAX as f64)]),
            None
        );
        let why = index_refusal(&[("rows", 10.0), ("nnz", 3e9)]).unwrap();
        assert!(why.starts_with("nnz (3000000000)"), "{why}");
    }

    #[test]
    fn the_library_reads_row_major_dense_operands_only() {
        // (rows, k, row stride, column stride) -> row step.
        assert_eq!(dense_ld(5, 3, 3, 1), Some(3), "contiguous");
        assert_eq!(dense_ld(5, 3, 8, 1), Some(8), "a column slice");
        assert_eq!(dense_ld(5, 1, 1, 0), Some(1), "a vector");
        assert_eq!(dense_ld(5, 1, 2, 0), Some(2), "a strided vector");
        assert_eq!(dense_ld(1, 3, 0, 1), Some(3), "one row, any stride");
        assert_eq!(dense_ld(5, 3, 1, 5), None, "transposed");
        assert_eq!(dense_ld(5, 3, 0, 1), None, "broadcast rows");
        assert_eq!(dense_ld(5, 1, -1, 0), None, "reversed");
        assert_eq!(dense_ld(5, 3, 2, 1), None, "overlapping rows");
    }
}
