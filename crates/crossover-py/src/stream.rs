//! `crossover._crossover.StreamTriad`: STREAM's triad, the memory bandwidth
//! that `python -m crossover.compare --memory` sets beside each kernel.

use crossover::cpu::stream::StreamTriad;
use pyo3::prelude::*;

/// STREAM's three float64 arrays of ``elements`` each (allocated, touched
/// on the engine's threads and run once when made); ``run()`` times one
/// round ``a = b + 3c`` on all engine threads and returns its seconds,
/// ``bytes`` is what a round moves as STREAM counts it (24 an element).
#[pyclass(name = "StreamTriad", module = "crossover._crossover")]
pub struct PyStreamTriad {
    inner: StreamTriad,
}

#[pymethods]
impl PyStreamTriad {
    #[new]
    fn new(py: Python<'_>, elements: usize) -> PyResult<Self> {
        let inner = crate::errors::detached(py, || StreamTriad::new(elements))?;
        Ok(PyStreamTriad { inner })
    }

    /// Elements of each array.
    #[getter]
    fn elements(&self) -> usize {
        self.inner.elements()
    }

    /// Bytes one round moves, as STREAM counts them.
    #[getter]
    fn bytes(&self) -> f64 {
        self.inner.bytes()
    }

    /// One timed round (the GIL released); its wall-clock seconds.
    fn run(&mut self, py: Python<'_>) -> PyResult<f64> {
        let t = &mut self.inner;
        crate::errors::detached(py, || t.run())
    }

    /// Checks every element against ``b + 3c`` (an ``InternalError`` names
    /// the first wrong one).
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::engine(py, || self.inner.check())
    }
}
