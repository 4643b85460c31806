//! `crossover.random.default_rng(seed)`: NumPy's Generator interface over
//! the engine's Philox4x32-10 generator (the same numbers on every device;
//! not the same stream as NumPy's PCG64).

use crate::array::{value_of, wrap};
use crate::convert;
use crate::errors;
use crossover::{Array, DType, Generator};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;

/// Random numbers from a Philox4x32-10 counter-based generator.
///
/// Results are lazy crossover arrays: the numbers are made inside the fused
/// kernel that uses them, never stored unless needed.
#[pyclass(name = "Generator", module = "crossover.random", frozen)]
pub struct PyGenerator {
    inner: Mutex<Generator>,
    seed: u64,
}

fn size_arg(size: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<usize>>> {
    match size {
        None => Ok(None),
        Some(s) if s.is_none() => Ok(None),
        Some(s) => crate::args::shape(s).map(Some),
    }
}

fn float_dtype(py: Python<'_>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<DType> {
    let d = match dtype {
        Some(d) if !d.is_none() => convert::parse_dtype(d)?,
        _ => DType::F64,
    };
    if !d.is_float() {
        return Err(errors::dtype_error(
            py,
            format!("random values need float32 or float64, not {d}"),
        ));
    }
    Ok(d)
}

impl PyGenerator {
    /// Makes `size` values with `f`; `size=None` gives one Python float.
    fn draw(
        &self,
        py: Python<'_>,
        size: Option<&Bound<'_, PyAny>>,
        f: impl FnOnce(&mut Generator, &[usize]) -> crossover::Result<Array>,
    ) -> PyResult<Py<PyAny>> {
        let shape = size_arg(size)?;
        let a = {
            let mut g = self
                .inner
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            errors::engine(py, || f(&mut g, shape.as_deref().unwrap_or(&[])))?
        };
        match shape {
            Some(_) => wrap(py, a),
            None => {
                let v = value_of(py, &a, "random scalar")?;
                Ok(convert::readonly_view(py, v)?
                    .call_method0("item")?
                    .unbind())
            }
        }
    }
}

#[pymethods]
impl PyGenerator {
    /// Uniform values on [0, 1).
    #[pyo3(signature = (size = None, dtype = None))]
    fn random(
        &self,
        py: Python<'_>,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let d = float_dtype(py, dtype)?;
        self.draw(py, size, |g, s| g.uniform(s, d))
    }

    /// Standard normal values (mean 0, standard deviation 1).
    #[pyo3(signature = (size = None, dtype = None))]
    fn standard_normal(
        &self,
        py: Python<'_>,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let d = float_dtype(py, dtype)?;
        self.draw(py, size, |g, s| g.standard_normal(s, d))
    }

    /// Uniform values on [low, high).
    #[pyo3(signature = (low = 0.0, high = 1.0, size = None, dtype = None))]
    fn uniform(
        &self,
        py: Python<'_>,
        low: f64,
        high: f64,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let d = float_dtype(py, dtype)?;
        self.draw(py, size, |g, s| g.uniform_range(low, high, s, d))
    }

    /// Normal values with mean ``loc`` and standard deviation ``scale``.
    #[pyo3(signature = (loc = 0.0, scale = 1.0, size = None, dtype = None))]
    fn normal(
        &self,
        py: Python<'_>,
        loc: f64,
        scale: f64,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let d = float_dtype(py, dtype)?;
        self.draw(py, size, |g, s| g.normal(loc, scale, s, d))
    }

    /// The seed this generator was made with.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    fn __repr__(&self) -> String {
        format!(
            "crossover.random.Generator(Philox4x32-10, seed={})",
            self.seed
        )
    }
}

/// A new random generator (Philox4x32-10). ``seed=None`` draws a fresh seed.
#[pyfunction]
#[pyo3(signature = (seed = None))]
pub fn default_rng(seed: Option<&Bound<'_, PyAny>>) -> PyResult<PyGenerator> {
    let seed = match seed {
        Some(s) if !s.is_none() => {
            if let Ok(g) = s.cast::<PyGenerator>() {
                g.get().seed
            } else {
                let v: i128 = s.extract()?;
                u64::try_from(v)
                    .map_err(|_| PyValueError::new_err("seed must be between 0 and 2**64 - 1"))?
            }
        }
        _ => {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            h.finish()
        }
    };
    Ok(PyGenerator {
        inner: Mutex::new(Generator::new(seed)),
        seed,
    })
}
