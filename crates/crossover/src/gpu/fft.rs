//! FFTs on the GPU core: the transform's steps
//! ([`crate::fft::FftOp::steps`]) launched as the kernels of
//! [`super::codegen`]'s FFT variant, on every API. Each axis goes to the
//! API's FFT library where it has one (cuFFT on CUDA: any length), else
//! through the core's radix-2 passes: directly for powers of two, by
//! Bluestein's algorithm for other lengths (three passes of a padded
//! power-of-two length around a chirp, see `codegen/bluestein.rs`).
//!
//! Bluestein's filter spectrum `FFT(conj(w))` is recomputed on every call
//! (one `filter` launch and `log2(len)` passes over a single line) rather
//! than cached per (length, direction, precision): it costs one line's
//! work next to the batch's, and a cache would hold device memory outside
//! the pool's accounting and need invalidating when the pool trims.

use super::api::FftAxis;
use super::codegen::params::{Param, Value as PackedValue};
use super::codegen::{Variant, GROUP};
use super::memory::Block;
use super::{GpuApi, GpuBackend};
use crate::array::Value;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fft::{FftOp, Step};
use crate::shape::numel;

/// Entry points of the FFT variant, in its render order.
const LOAD: usize = 0;
const PASS: usize = 1;
const FINISH: usize = 2;
const EXTEND: usize = 3;
const REAL: usize = 4;
const CHIRP: usize = 5;
const FILTER: usize = 6;
const PRODUCT: usize = 7;
const UNCHIRP: usize = 8;

/// The parameters of one launch (those a step does not use stay 0).
#[derive(Clone, Copy, Default)]
struct StepArgs {
    points: usize,
    outer: usize,
    len: usize,
    inner: usize,
    span: usize,
    inverse: bool,
    keep: usize,
    scale: f64,
    /// Bluestein: the transform's length (`len` is the padded one).
    chirp: usize,
}

/// Launches entry `.0` of the FFT variant with `.1` on the buffers `.2`.
type Launch<'a, A> =
    dyn Fn(usize, StepArgs, &[&<A as GpuApi>::Mem]) -> Result<<A as GpuApi>::Event> + 'a;

/// `log2(p.len)` radix-2 passes along the middle axis of `(outer, len,
/// inner)` (`len` a power of two); ping-pong, so the result ends in `cur`.
fn passes<A: GpuApi>(
    launch: &Launch<'_, A>,
    mut p: StepArgs,
    cur: &mut Block<A>,
    other: &mut Block<A>,
    events: &mut Vec<A::Event>,
) -> Result<()> {
    let mut span = 1;
    while span < p.len {
        p.span = span;
        events.push(launch(PASS, p, &[cur.mem(), other.mem()])?);
        std::mem::swap(cur, other);
        span *= 2;
    }
    Ok(())
}

impl<A: GpuApi> GpuBackend<A> {
    /// One axis through the API's FFT library (cuFFT on CUDA), serialised
    /// with launches; `None` when the API has none.
    fn vendor_fft(&self, f: &FftAxis<'_, A::Mem>) -> Option<Result<A::Event>> {
        let sh = &self.shared;
        let _serial = sh.launch.lock().unwrap_or_else(|p| p.into_inner());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.api.fft_axis(f)))
            .unwrap_or_else(|_| {
                Some(Err(super::api::ApiError::new(
                    "fft",
                    "the FFT library panicked",
                )))
            })?;
        Some(r.map_err(|e| super::api_error("fft", &sh.label, e)))
    }
}

/// `(outer, n, inner)` around `axis` of a row-major shape.
fn around(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        numel(&shape[..axis]),
        shape[axis],
        numel(&shape[axis + 1..]),
    )
}

impl<A: GpuApi> GpuBackend<A> {
    /// Why this device cannot run transform `op`, if it cannot.
    pub(super) fn refuse_fft(&self, op: &FftOp) -> std::result::Result<(), String> {
        let info = self.info();
        let precision = op.output().1.real_part();
        if precision == DType::F64 && !info.fp64 {
            return Err(format!("{} has no double precision", info.name));
        }
        // Every length runs: powers of two by radix-2 passes, others by
        // Bluestein's algorithm over them (or the API's FFT library).
        Ok(())
    }

    /// Runs transform `op` (one this device accepted) on `inputs`.
    pub(super) fn run_fft(&self, op: &FftOp, inputs: &[Value]) -> Result<Value> {
        let [x] = inputs else {
            return Err(Error::internal(op.name(), "expected one input"));
        };
        let (out_shape, out_dtype) = op.output();
        let precision = out_dtype.real_part();
        let complex_bytes = 2 * precision.size();
        let (load_shape, steps) = op.steps();
        if numel(out_shape) == 0 || numel(&load_shape) == 0 {
            let out = self.alloc(numel(out_shape) * out_dtype.size())?;
            return self.output_value(out, 0, out_shape, out_dtype);
        }
        let l = &x.layout;
        let variant = Variant::fft(precision, x.buffer.dtype().is_complex(), load_shape.len());
        let launch = |entry: usize, p: StepArgs, mems: &[&A::Mem]| -> Result<A::Event> {
            let value = |q: Param| {
                let int = |v: usize| Ok(PackedValue::I64(v as i64));
                match q {
                    Param::Points => int(p.points),
                    Param::Rows => int(p.outer),
                    Param::Along => int(p.len),
                    Param::Inner => int(p.inner),
                    Param::Span => int(p.span),
                    Param::Inverse => int(p.inverse as usize),
                    Param::Keep => int(p.keep),
                    Param::Chirp => int(p.chirp),
                    Param::Scale => Ok(PackedValue::F64(p.scale)),
                    Param::Offset(0) => int(l.offset),
                    Param::Dim(d) => int(load_shape[d]),
                    Param::Extent(d) => int(l.shape[d]),
                    Param::Stride(0, d) => Ok(PackedValue::I64(l.strides[d] as i64)),
                    other => Err(format!("FFTs have no parameter {}", other.name())),
                }
            };
            let items = match entry {
                PASS => p.outer * (p.len / 2) * p.inner,
                FINISH | UNCHIRP => p.outer * p.keep * p.inner,
                EXTEND | CHIRP | PRODUCT => p.outer * p.len * p.inner,
                FILTER => p.len,
                _ => p.points,
            };
            let groups = items.div_ceil(GROUP).clamp(1, self.shared.max_groups);
            self.launch_library_kernel(&variant, &value, entry, groups, mems)
        };
        let mut events = Vec::new();
        let x_mem = self.resident(&x.buffer)?;
        let mut shape = load_shape.clone();
        let mut cur: Block<A> = self.alloc(numel(&shape) * complex_bytes)?;
        let args = StepArgs {
            points: numel(&shape),
            ..StepArgs::default()
        };
        events.push(launch(
            LOAD,
            args,
            &[self.mem_of(x_mem.as_ref())?, cur.mem()],
        )?);
        for step in steps {
            match step {
                Step::Axis {
                    axis,
                    n,
                    inverse,
                    keep,
                    scale,
                } => {
                    let (outer, _, inner) = around(&shape, axis);
                    let p = StepArgs {
                        outer,
                        len: n,
                        inner,
                        inverse,
                        keep,
                        scale,
                        ..StepArgs::default()
                    };
                    // The vendor's library where it takes this length,
                    // else radix-2 passes or Bluestein's algorithm (which
                    // makes its own temporaries).
                    let library = n.is_power_of_two() || self.shared.api.fft_any_length();
                    if n > 1 && library {
                        let mut other = self.alloc(numel(&shape) * complex_bytes)?;
                        let vendor = self.vendor_fft(&FftAxis {
                            precision,
                            outer,
                            n,
                            inner,
                            inverse,
                            src: cur.mem(),
                            dst: other.mem(),
                        });
                        match vendor {
                            Some(event) => {
                                events.push(event?);
                                std::mem::swap(&mut cur, &mut other);
                            }
                            None if n.is_power_of_two() => {
                                passes(&launch, p, &mut cur, &mut other, &mut events)?
                            }
                            None => {
                                drop(other);
                                shape[axis] = keep;
                                cur =
                                    self.bluestein(&launch, p, &cur, complex_bytes, &mut events)?;
                                continue;
                            }
                        }
                    } else if n > 1 {
                        shape[axis] = keep;
                        cur = self.bluestein(&launch, p, &cur, complex_bytes, &mut events)?;
                        continue;
                    }
                    shape[axis] = keep;
                    let next = self.alloc(numel(&shape) * complex_bytes)?;
                    events.push(launch(FINISH, p, &[cur.mem(), next.mem()])?);
                    cur = next;
                }
                Step::Extend { axis, n } => {
                    let (outer, _, inner) = around(&shape, axis);
                    shape[axis] = n;
                    let next = self.alloc(numel(&shape) * complex_bytes)?;
                    let p = StepArgs {
                        outer,
                        len: n,
                        inner,
                        ..StepArgs::default()
                    };
                    events.push(launch(EXTEND, p, &[cur.mem(), next.mem()])?);
                    cur = next;
                }
                Step::Real => {
                    let next = self.alloc(numel(&shape) * precision.size())?;
                    let p = StepArgs {
                        points: numel(&shape),
                        ..StepArgs::default()
                    };
                    events.push(launch(REAL, p, &[cur.mem(), next.mem()])?);
                    cur = next;
                }
            }
        }
        self.shared.ran(super::RunTime::Events(events));
        // Buffers dropped above return to the pool in queue order.
        let bytes = numel(out_shape) * out_dtype.size();
        self.output_value(cur, bytes, out_shape, out_dtype)
    }
}

impl<A: GpuApi> GpuBackend<A> {
    /// One axis step `p` (`len` points, not a power of two) of `src` by
    /// Bluestein's algorithm; returns the `(outer, keep, inner)` result,
    /// scaled. Temporaries come from the pool and return to it in queue
    /// order as they drop.
    fn bluestein(
        &self,
        launch: &Launch<'_, A>,
        p: StepArgs,
        src: &Block<A>,
        complex_bytes: usize,
        events: &mut Vec<A::Event>,
    ) -> Result<Block<A>> {
        let n = p.len;
        let len = (2 * n - 1).next_power_of_two();
        let chirp = StepArgs { len, chirp: n, ..p };
        let work = p.outer * len * p.inner * complex_bytes;
        let (mut a, mut spare) = (self.alloc(work)?, self.alloc(work)?);
        events.push(launch(CHIRP, chirp, &[src.mem(), a.mem()])?);
        let forward = StepArgs {
            inverse: false,
            ..chirp
        };
        passes(launch, forward, &mut a, &mut spare, events)?;
        // The filter's spectrum: one line of `len` points.
        let line = StepArgs {
            outer: 1,
            inner: 1,
            ..chirp
        };
        let (mut b, mut b_spare) = (
            self.alloc(len * complex_bytes)?,
            self.alloc(len * complex_bytes)?,
        );
        events.push(launch(FILTER, line, &[b.mem()])?);
        let line_forward = StepArgs {
            inverse: false,
            ..line
        };
        passes(launch, line_forward, &mut b, &mut b_spare, events)?;
        drop(b_spare);
        events.push(launch(PRODUCT, chirp, &[a.mem(), b.mem()])?);
        drop(b);
        let backward = StepArgs {
            inverse: true,
            ..chirp
        };
        passes(launch, backward, &mut a, &mut spare, events)?;
        drop(spare);
        let out = self.alloc(p.outer * p.keep * p.inner * complex_bytes)?;
        // The unnormalised inverse pass leaves a factor of `len`.
        let finish = StepArgs {
            scale: p.scale / len as f64,
            ..chirp
        };
        events.push(launch(UNCHIRP, finish, &[a.mem(), out.mem()])?);
        Ok(out)
    }
}
