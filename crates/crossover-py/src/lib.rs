//! Python bindings of the crossover engine: the native module
//! `crossover._crossover` behind the Python package `crossover`.
//!
//! A thin layer: argument conversion, NumPy protocol plumbing and zero-copy
//! data exchange. Every computation is the engine's (`crates/crossover`).

mod args;
mod array;
mod array_ops;
mod compute;
mod convert;
mod device;
mod display;
mod engine_kernel;
mod errors;
mod evaluate;
mod exchange;
mod explain;
mod functions;
mod kwcall;
mod library;
mod random;
mod report;
mod setitem;
mod stream;
mod tape;
mod ufunc;

use pyo3::prelude::*;

/// mimalloc: the engine's many small allocations per call (graph, plan,
/// layouts) cost a quarter of a 1,000-element evaluation under glibc's
/// allocator (measured with callgrind; see docs/benchmarks-ops.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _crossover(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<array::PyArr>()?;
    m.add_class::<device::DeviceScope>()?;
    m.add_class::<explain::Explanation>()?;
    m.add_class::<random::PyGenerator>()?;
    m.add_class::<library::PyCsr>()?;
    m.add_class::<tape::Tape>()?;
    m.add_class::<stream::PyStreamTriad>()?;
    m.add_class::<engine_kernel::PyEngineKernel>()?;
    m.add("__version__", crossover::VERSION)?;
    kwcall::add_evaluate(m)?;
    ufunc::add_unary(m)?;
    ufunc::add_binary(m)?;
    macro_rules! add {
        ($($f:path),* $(,)?) => { $( m.add_function(wrap_pyfunction!($f, m)?)?; )* };
    }
    add!(
        device::set_device,
        device::get_device,
        evaluate::_expression_cache_size,
        evaluate::_expression_compiled_runs,
        explain::_explain,
        random::default_rng,
        functions::asarray,
        functions::array,
        functions::full,
        functions::zeros,
        functions::ones,
        functions::arange,
        functions::linspace,
        functions::where_,
        functions::ufunc,
        functions::broadcast_to,
        functions::expand_dims,
        functions::transpose,
        functions::_to_inputs,
        functions::_tracing,
        functions::_trace_begin,
        functions::_trace_end,
        functions::_trace_abort,
        functions::_replay,
        functions::_materialize,
        functions::_adopt,
        functions::_borrow_volatile,
        functions::_test_panic,
        functions::info,
        library::matmul,
        library::scan,
        library::solve,
        library::linalg_unary,
        library::linalg_multi,
        library::fft1,
        library::fft2,
        report::report_tables,
        report::report_write,
        exchange::_device_address,
        exchange::_import_cuda,
        exchange::_move,
        exchange::_dlpack_capsule,
    );
    Ok(())
}
