//! The CPU backend: runs kernels on all cores with SIMD.
//!
//! Fused elementwise kernels and reductions go through the chunked
//! interpreter ([`interp`]); work below a size threshold runs on the calling
//! thread with no thread-pool dispatch, so small arrays stay cheap.

mod backend;
mod complex;
mod complex_special;
pub(crate) mod direct;
pub mod gather;
pub mod interp;
mod jit;
pub(crate) use jit::Lowering as JitLowering;
pub mod math;
pub mod math32_exp512;
pub mod math32_hyp;
pub mod math32_inverse;
pub mod math32_pow;
pub mod math32_tanh512;
pub mod math64;
pub mod math64_asin512;
pub mod math64_exp512;
pub mod math64_hyp;
pub mod math64_inverse;
pub mod math64_pow;
pub mod math_log;
pub mod math_log1p512;
pub mod num;
pub mod reduce;
mod regs;
pub mod simd;
pub mod stream;
mod tasks;

use crate::array::Value;
use crate::buffer::Buffer;
use crate::device::{BoundBody, BoundKernel, BoundSource};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::ir::Program;
use crate::fuse::ReducePlan;
use crate::shape::Layout;
pub use backend::CpuBackend;
use gather::Access;
use interp::{with_type, Bound, Data, Prepared, Scratch, CHUNK};
use num::Pod;
pub use regs::wrap_i64;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
pub(crate) use tasks::{for_each_task, map_tasks};

/// Points per parallel task of an elementwise kernel: small enough that a
/// kernel of 65,536 points splits in two (a split costs the caller about a
/// microsecond since it never waits for a helper to wake: `tasks.rs`).
pub(crate) const ELEMENTWISE_TASK: usize = 16 * CHUNK;

/// Points per parallel task of an elementwise kernel whose points cost
/// `weight` (1 + flops/4, as in the parallel threshold): heavy kernels
/// (transcendentals, `power`) take proportionally smaller tasks, whole
/// chunks, so that ten thousand points of `power` still split across
/// threads; light ones keep [`ELEMENTWISE_TASK`].
pub(crate) fn elementwise_task(weight: f64) -> usize {
    let points = (2.0 * ELEMENTWISE_TASK as f64 / weight.max(1.0)) as usize;
    (points / CHUNK).clamp(1, ELEMENTWISE_TASK / CHUNK) * CHUNK
}

/// [`elementwise_task`] for a kernel of `n` points split across threads,
/// made smaller (whole 256-point blocks, at least 1,024 points) until every
/// thread has four tasks: ten thousand points of a heavy function made five
/// 2,048-point tasks, split three to two between two threads.
pub(crate) fn parallel_task(weight: f64, n: usize) -> usize {
    let quarter = n.div_ceil(4 * threads()).next_multiple_of(256).max(1024);
    elementwise_task(weight).min(quarter)
}

/// Below this much work (points weighted by flops) a kernel runs on the
/// calling thread; dispatching to the pool costs more than it saves. The
/// built-in default: `crossover calibrate` measures this machine's
/// ([`set_parallel_min_work`]).
pub const PARALLEL_MIN_WORK: f64 = 48.0 * 1024.0;

/// The threshold in force (f64 bits; 0: the default).
static PARALLEL_MIN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The work from which a kernel is split across threads (see
/// [`PARALLEL_MIN_WORK`]).
pub fn parallel_min_work() -> f64 {
    match PARALLEL_MIN.load(std::sync::atomic::Ordering::Relaxed) {
        0 => PARALLEL_MIN_WORK,
        bits => f64::from_bits(bits),
    }
}

/// Sets the threshold for the process (`None`: the default). The engine
/// applies a calibrated profile's value; results do not depend on it
/// (the work grid is fixed by the shape), only speed does.
pub fn set_parallel_min_work(work: Option<f64>) {
    let bits = work
        .filter(|w| w.is_finite() && *w > 0.0)
        .map_or(0, f64::to_bits);
    PARALLEL_MIN.store(bits, std::sync::atomic::Ordering::Relaxed);
}

static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();

/// Set in a process forked after the pool started. The pool's threads do
/// not survive a fork, and one of them may have held a lock of rayon's at
/// that moment: a child that handed the pool work waited forever (any
/// parallel matmul, solve or FFT, every time; a fused kernel about once in
/// 300 forks). Such a child computes on its calling thread alone.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn mark_forked() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Threads the engine uses: `CROSSOVER_NUM_THREADS` (validated and capped,
/// see [`crate::env::num_threads`]), else all cores; 1 in a process forked
/// after the engine's threads started (see [`pool`]).
pub fn threads() -> usize {
    if FORKED.load(Ordering::Relaxed) {
        return 1;
    }
    pool().current_num_threads()
}

/// The engine's thread pool (created on first use). Callers hand it work
/// only when [`threads`] is above 1: a forked child has the pool without
/// its threads.
pub fn pool() -> &'static rayon::ThreadPool {
    POOL.get_or_init(|| {
        // SAFETY: the child handler only stores to an atomic, which is
        // async-signal-safe as a handler run after fork must be.
        unsafe {
            libc::pthread_atfork(None, None, Some(mark_forked));
        }
        let n = crate::env::num_threads();
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("crossover-cpu-{i}"))
            .build()
            .expect("building a thread pool only fails if threads cannot be spawned")
    })
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch registers.
pub(crate) fn scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut sc) => f(&mut sc),
        // Re-entrant use (a kernel evaluating inside a kernel) gets its own.
        Err(_) => f(&mut Scratch::default()),
    })
}

/// A kernel output being written by several threads, each to its own range.
pub(crate) struct OutPtr {
    ptr: *mut u8,
    pub dtype: DType,
    len: usize,
}

// SAFETY: tasks write disjoint index ranges of the buffer (asserted by the
// callers' partitioning); the buffer outlives the parallel section.
unsafe impl Send for OutPtr {}
// SAFETY: see Send.
unsafe impl Sync for OutPtr {}

impl OutPtr {
    fn new(buf: &mut Buffer) -> OutPtr {
        let dtype = buf.dtype();
        let len = buf.len();
        let ptr = buf.as_mut_byte_ptr();
        OutPtr { ptr, dtype, len }
    }

    /// Writes element `k`.
    ///
    /// # Safety
    /// `T` is the buffer's storage type, `k < len`, and no other thread
    /// touches element `k` concurrently.
    #[inline(always)]
    pub(crate) unsafe fn write<T: Pod>(&self, k: usize, v: T) {
        debug_assert!(k < self.len && std::mem::size_of::<T>() == self.dtype.size());
        *(self.ptr as *mut T).add(k) = v;
    }

    /// Elements `start..start+len` as a mutable slice.
    ///
    /// # Safety
    /// As for [`OutPtr::write`], for the whole range.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)] // a shared writer handle by design: see Send
    unsafe fn slice_mut<T: Pod>(&self, start: usize, len: usize) -> &mut [T] {
        debug_assert!(
            (start + len) * std::mem::size_of::<T>() <= self.len * self.dtype.size()
                && (std::mem::size_of::<T>() == self.dtype.size() || T::DTYPE == DType::Bool)
        );
        std::slice::from_raw_parts_mut((self.ptr as *mut T).add(start), len)
    }
}

fn data_of(buf: &Buffer) -> Result<Data<'_>> {
    Ok(match buf.dtype() {
        DType::Bool => Data::Bool(buf.as_slice()),
        DType::I32 => Data::I32(buf.as_slice()),
        DType::I64 => Data::I64(buf.as_slice()),
        DType::I8 => Data::I8(buf.as_slice()),
        DType::I16 => Data::I16(buf.as_slice()),
        DType::U8 => Data::U8(buf.as_slice()),
        DType::U16 => Data::U16(buf.as_slice()),
        DType::U32 => Data::U32(buf.as_slice()),
        DType::U64 => Data::U64(buf.as_slice()),
        DType::F32 => Data::F32(buf.as_slice()),
        DType::F64 => Data::F64(buf.as_slice()),
        d => {
            return Err(Error::dtype(
                "cpu kernel",
                d,
                "complex elementwise kernels are not supported yet",
            ))
        }
    })
}

/// Runs one bound kernel on the CPU and returns its outputs' values.
pub fn run(k: &BoundKernel<'_>) -> Result<Vec<Value>> {
    match &k.body {
        BoundBody::Fused {
            program,
            sources,
            reduce,
        } => run_fused(k, program, sources, *reduce),
        BoundBody::Library { op, inputs } => {
            for v in inputs {
                crate::residency::ensure_host(v)?;
            }
            op.run_cpu(inputs)
        }
    }
}

fn run_fused(
    k: &BoundKernel<'_>,
    program: &Program,
    sources: &[BoundSource<'_>],
    reduce: Option<&ReducePlan>,
) -> Result<Vec<Value>> {
    for s in sources {
        if let BoundSource::Buffer { buffer, layout } = s {
            crate::residency::ensure_buffer_on_host(buffer)?;
            if layout.required_len() > buffer.len() {
                return Err(Error::internal(
                    "cpu kernel",
                    format!("layout {layout:?} exceeds a buffer of {}", buffer.len()),
                ));
            }
        }
    }
    if complex::is_complex(program) {
        return complex::run_fused(k, program, sources, reduce);
    }
    let mut bound = Vec::with_capacity(sources.len());
    for s in sources {
        bound.push(match s {
            BoundSource::Buffer { buffer, layout } => Bound::Buffer {
                data: data_of(buffer)?,
                access: Access::of(layout),
            },
            BoundSource::Index { layout } => Bound::Index {
                access: Access::of(layout),
            },
        });
    }
    let mut prep = Prepared::new(program, bound)?;
    let n = k.numel();
    let flops = program.flops_per_point();
    if jit::worth_compiling(n, flops) {
        match reduce {
            Some(plan) if reduce::sums_only(plan) => prep.attach_jit(jit::Mode::Sum, n),
            None if prep.direct_output().is_some() => prep.attach_jit(jit::Mode::Store, n),
            _ => {}
        }
    }
    let weight = 1.0 + flops / 4.0;
    let work = n as f64 * weight;
    let parallel = work >= parallel_min_work() && threads() > 1;
    let mut bufs: Vec<Buffer> = k
        .outputs
        .iter()
        .map(|(shape, dtype)| Buffer::alloc(*dtype, crate::shape::numel(shape)))
        .collect::<Result<_>>()?;
    let outs: Vec<OutPtr> = bufs.iter_mut().map(OutPtr::new).collect();
    match reduce {
        Some(plan) => reduce::run(&prep, plan, &outs, parallel),
        None if n == 0 => {}
        None => {
            let len = if parallel {
                parallel_task(weight, n)
            } else {
                elementwise_task(weight)
            };
            let tasks = n.div_ceil(len);
            let task = |t: usize| {
                // A stop request skips the remaining tasks (checked below).
                if crate::interrupt::requested() {
                    return;
                }
                let (a, b) = (t * len, ((t + 1) * len).min(n));
                scratch(|sc| elementwise_range(&prep, &outs, sc, a, b));
            };
            if parallel && tasks > 1 {
                for_each_task(tasks, task);
            } else {
                (0..tasks).for_each(task);
            }
        }
    }
    crate::interrupt::check("cpu kernel")?;
    prep.check_domain()?;
    drop(outs);
    drop(prep);
    Ok(bufs
        .into_iter()
        .zip(k.outputs.iter())
        .map(|(b, (shape, _))| Value {
            buffer: Arc::new(b),
            layout: Layout::contiguous(shape),
        })
        .collect())
}

/// Evaluates points `a..b` chunk by chunk, writing each output register.
fn elementwise_range(prep: &Prepared<'_>, outs: &[OutPtr], sc: &mut Scratch, a: usize, b: usize) {
    let direct = prep.direct_output();
    if let (Some(kernel), Some(_)) = (prep.jit(), direct) {
        // The compiled loop over whole blocks and the tail (one padded
        // block); the interpreter where it declines (pointwise results do
        // not depend on the split).
        let size = outs[0].dtype.size();
        // SAFETY: this task owns points a..b of the output.
        let bytes = unsafe { outs[0].slice_mut::<u8>(a * size, (b - a) * size) };
        let blocks = (b - a) / jit::BLOCK;
        let done = blocks * jit::BLOCK;
        // A kernel that stops early (a sin/cos argument beyond its range)
        // leaves the whole range to the interpreter.
        let compiled = kernel.store_blocks(a, blocks, &mut bytes[..done * size]);
        let mut p = if compiled { done } else { 0 };
        if compiled && kernel.store_tail(a + done, b - a - done, &mut bytes[done * size..]) {
            p = b - a;
        }
        while p < b - a {
            let len = prep.chunk().min(b - a - p);
            prep.eval_chunk_into(sc, a + p, len, &mut bytes[p * size..(p + len) * size]);
            p += len;
        }
        return;
    }
    let mut p = a;
    while p < b {
        let len = prep.chunk().min(b - p);
        if direct.is_some() {
            // SAFETY: this task owns points a..b of the output.
            let bytes = unsafe {
                outs[0].slice_mut::<u8>(p * outs[0].dtype.size(), len * outs[0].dtype.size())
            };
            prep.eval_chunk_into(sc, p, len, bytes);
            p += len;
            continue;
        }
        prep.eval_chunk(sc, p, len);
        for (out, &reg) in outs.iter().zip(&prep.program.outputs) {
            with_type!(out.dtype, T => {
                // SAFETY: this task owns points a..b of every output; T is
                // the output's register type.
                unsafe { regs::store::<T>(out, p, prep.arg::<T>(sc, reg, p, len), len) }
            })
        }
        p += len;
    }
}
