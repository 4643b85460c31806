//! Cumulative sums and products along one axis (NumPy's `cumsum` and
//! `cumprod`) as a library op: each output depends on every earlier input
//! along the axis, so a scan is its own kernel, not part of an elementwise
//! chain (its input chain is materialised first; its output feeds fusion).
//!
//! Dtypes follow NumPy: bools and integers accumulate in int64 (wrapping),
//! floats keep their dtype; float32 accumulates in float64 and rounds each
//! output once (NumPy accumulates in float32, so crossover's float32 results
//! are at least as accurate). Complex scans are refused (the Python layer
//! runs them in NumPy).

use super::{Array, Value};
use crate::buffer::{Buffer, Storage};
use crate::cpu::gather::for_each_position;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::op::Library;
use crate::shape::{normalize_axis, Layout};
use rayon::prelude::*;
use std::sync::Arc;

/// Which running total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    Sum,
    Prod,
}

/// A scan of a contiguous `shape` along `axis` ([`Library::Scan`]).
#[derive(Debug)]
pub struct Scan {
    kind: ScanKind,
    shape: Vec<usize>,
    axis: usize,
    dtype: DType,
}

impl Array {
    /// Cumulative sum along `axis` (`None`: over the flattened array, as
    /// NumPy's `cumsum`).
    ///
    /// ```
    /// # use crossover::Array;
    /// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(a.cumsum(Some(1))?.to_vec::<f64>()?, vec![1.0, 3.0, 3.0, 7.0]);
    /// assert_eq!(a.cumsum(None)?.to_vec::<f64>()?, vec![1.0, 3.0, 6.0, 10.0]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn cumsum(&self, axis: Option<isize>) -> Result<Array> {
        self.scan(ScanKind::Sum, axis)
    }

    /// Cumulative product along `axis` (`None`: over the flattened array).
    pub fn cumprod(&self, axis: Option<isize>) -> Result<Array> {
        self.scan(ScanKind::Prod, axis)
    }

    fn scan(&self, kind: ScanKind, axis: Option<isize>) -> Result<Array> {
        let op = match kind {
            ScanKind::Sum => "cumsum",
            ScanKind::Prod => "cumprod",
        };
        let d = self.dtype();
        if d.is_complex() {
            return Err(Error::dtype(op, d, "complex scans are not supported yet"));
        }
        // NumPy's default accumulator: int64 for bool and signed integers,
        // uint64 for unsigned ones (scanned in int64: the same bits).
        if d.is_unsigned() {
            return self.cast(DType::I64)?.scan(kind, axis)?.cast(DType::U64);
        }
        let (x, axis) = match axis {
            None => (self.reshape(&[self.numel() as isize])?, 0),
            Some(a) => (self.clone(), normalize_axis(op, a, self.ndim())?),
        };
        let dtype = if d.is_float() { d } else { DType::I64 };
        let x = x.cast(dtype)?;
        let shape = x.shape().to_vec();
        let scan = Scan {
            kind,
            shape: shape.clone(),
            axis,
            dtype,
        };
        Array::library(Library::Scan(scan), vec![(shape, dtype)], vec![x])?
            .pop()
            .ok_or_else(|| Error::internal(op, "library call made no output"))
    }
}

impl Scan {
    /// Which total, the (contiguous) shape scanned, the axis and the dtype
    /// (of input and output alike).
    pub fn parts(&self) -> (ScanKind, &[usize], usize, DType) {
        (self.kind, &self.shape, self.axis, self.dtype)
    }

    pub fn name(&self) -> &'static str {
        match self.kind {
            ScanKind::Sum => "cumsum",
            ScanKind::Prod => "cumprod",
        }
    }

    pub fn key(&self) -> String {
        format!(
            "{} {:?} axis={} {}",
            self.name(),
            self.shape,
            self.axis,
            self.dtype
        )
    }

    pub fn flops(&self) -> f64 {
        self.shape.iter().product::<usize>() as f64
    }

    pub fn bytes(&self) -> f64 {
        2.0 * self.flops() * self.dtype.size() as f64
    }

    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let x = &inputs[0];
        // A small scan stays on the calling thread: handing it to the pool
        // cost about 15 us, four times NumPy's whole `cumsum` of 1,000.
        let total: usize = self.shape.iter().product();
        let parallel = total as f64 >= crate::cpu::parallel_min_work() && crate::cpu::threads() > 1;
        let run = || match self.dtype {
            DType::F32 => self.run::<f32>(x, parallel),
            DType::F64 => self.run::<f64>(x, parallel),
            _ => self.run::<i64>(x, parallel),
        };
        crate::linalg::run_library(self.name(), parallel, |_| run()).map(|v| vec![v])
    }

    fn run<T: Storage + Accumulate>(&self, x: &Value, parallel: bool) -> Result<Value> {
        let n = self.shape[self.axis];
        let inner: usize = self.shape[self.axis + 1..].iter().product();
        let total: usize = self.shape.iter().product();
        let xd = x.buffer.as_slice::<T>();
        let owned;
        let xs: &[T] = if x.layout.is_contiguous() {
            &xd[x.layout.offset..x.layout.offset + total]
        } else {
            let mut v = Vec::with_capacity(total);
            for_each_position(&x.layout, |p| v.push(xd[p]));
            owned = v;
            &owned
        };
        let mut buf = Buffer::alloc(T::DTYPE, total)?;
        let out = buf.as_mut_slice::<T>();
        let block = n * inner;
        if block > 0 {
            // One outer block per task: each is an independent scan of its
            // `inner` columns, walked row by row (contiguous reads).
            let kind = self.kind;
            let scan_block = |(o, s): (&mut [T], &[T])| {
                if inner == 1 {
                    // One column (a 1-D scan, the common case): the same
                    // steps in the same order, without a row loop per
                    // point (3.8 -> ~1 ns per point, the add's latency).
                    let mut acc = T::identity(kind);
                    for (ov, &sv) in o.iter_mut().zip(s) {
                        acc = T::step(kind, acc, sv);
                        *ov = T::round(acc);
                    }
                    return;
                }
                let mut acc = vec![T::identity(kind); inner];
                for (orow, srow) in o.chunks_mut(inner).zip(s.chunks(inner)) {
                    for ((a, ov), &sv) in acc.iter_mut().zip(orow).zip(srow) {
                        *a = T::step(kind, *a, sv);
                        *ov = T::round(*a);
                    }
                }
            };
            if parallel {
                out.par_chunks_mut(block)
                    .zip(xs.par_chunks(block))
                    .for_each(scan_block);
            } else {
                out.chunks_mut(block)
                    .zip(xs.chunks(block))
                    .for_each(scan_block);
            }
        }
        Ok(Value {
            buffer: Arc::new(buf),
            layout: Layout::contiguous(&self.shape),
        })
    }
}

/// The running total of one storage type (floats in f64, integers wrapping
/// in i64).
trait Accumulate: Copy + Send + Sync {
    type Acc: Copy + Send + Sync;
    fn identity(kind: ScanKind) -> Self::Acc;
    fn step(kind: ScanKind, acc: Self::Acc, x: Self) -> Self::Acc;
    fn round(acc: Self::Acc) -> Self;
}

macro_rules! float_accumulate {
    ($t:ty) => {
        impl Accumulate for $t {
            type Acc = f64;
            fn identity(kind: ScanKind) -> f64 {
                (kind == ScanKind::Prod) as u8 as f64
            }
            #[inline(always)]
            fn step(kind: ScanKind, acc: f64, x: $t) -> f64 {
                match kind {
                    ScanKind::Sum => acc + x as f64,
                    ScanKind::Prod => acc * x as f64,
                }
            }
            #[inline(always)]
            fn round(acc: f64) -> $t {
                acc as $t
            }
        }
    };
}
float_accumulate!(f32);
float_accumulate!(f64);

impl Accumulate for i64 {
    type Acc = i64;
    fn identity(kind: ScanKind) -> i64 {
        (kind == ScanKind::Prod) as i64
    }
    #[inline(always)]
    fn step(kind: ScanKind, acc: i64, x: i64) -> i64 {
        match kind {
            ScanKind::Sum => acc.wrapping_add(x),
            ScanKind::Prod => acc.wrapping_mul(x),
        }
    }
    #[inline(always)]
    fn round(acc: i64) -> i64 {
        acc
    }
}
