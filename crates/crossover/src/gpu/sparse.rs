//! Sparse times sparse on the GPU core ([`crate::op::Library::SparseSparse`]):
//! the core's merge kernel ([`super::codegen`]'s `spgemm`), whose sums are
//! the CPU's bits.
//!
//! The product's size is known only once computed, so the call runs in two
//! launches around one read-back: `count` (stored columns per row), the
//! row pointers summed on the host, then `fill`. The product comes back to
//! the host (a [`Csr`] holds host arrays), and its device arrays stay in
//! the backend's CSR cache while the product lives, so a following
//! product with it on this device uploads nothing.

use super::codegen::params::Param;
use super::codegen::{Variant, GROUP};
use super::library::{ints, CsrOnDevice};
use super::{GpuApi, GpuBackend};
use crate::array::Value;
use crate::device::Backend;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::explain::si;
use crate::sparse::{Csr, SpGemm, Values};
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

    /// Runs `op` (one this device accepted): count, row pointers, fill,
    /// read back; returns the call's output (the row pointers).
    pub(super) fn run_spgemm(&self, op: &SpGemm) -> Result<Value> {
        let (a, b) = op.parts();
        let dtype = a.values.dtype();
        let (m, n, nnz_a) = (a.nrows, b.ncols, a.indices.len());
        let empty = || match dtype {
            DType::F32 => Values::F32(Vec::new()),
            _ => Values::F64(Vec::new()),
        };
        if nnz_a == 0 || b.indices.is_empty() {
            // No products: every row of the result is empty.
            return op.deliver(Csr::new_unchecked(
                m,
                n,
                vec![0; m + 1],
                Vec::new(),
                empty(),
            ));
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
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(events);
        let c = Csr::new_unchecked(m, n, indptr, indices, values);
        if total > 0 {
            // The product's device arrays serve its next product here.
            let on_device = Arc::new(CsrOnDevice {
                indptr: c_ptr,
                indices: c_idx,
                values: c_val,
            });
            let mut cache = self.shared.csr.lock().unwrap_or_else(|p| p.into_inner());
            cache.retain(|(w, _)| w.strong_count() > 0);
            cache.push((Arc::downgrade(&c.data), on_device));
        }
        op.deliver(c)
    }
}
