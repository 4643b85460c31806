//! `crossover._crossover.EngineKernel`: a memory-bound kernel of
//! `python -m crossover.compare --memory` written with the Rust API, on the
//! same engine arrays the Python path reads, so that the harness can time
//! the Python path and the engine itself in the same rounds (issue 16,
//! target 3: the Python path within 10% of the engine). Two processes
//! cannot settle that on these VMs: their memory bandwidth moves by a third
//! between runs seconds apart.

use crate::array::PyArr;
use crossover::{Array, Result};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// One kernel over engine arrays, as a Rust user writes it.
#[derive(Clone, Copy, Debug)]
enum Kernel {
    Sum(Option<isize>),
    Mean(Option<isize>),
    Std(Option<isize>),
    Max(Option<isize>),
    /// `a*b + c`.
    MulAdd,
    /// `sum(where(a > 0.5, a*a, -a))`: issue 16's conditional sum
    /// (`conditional_accumulate`).
    ConditionalSum,
}

impl Kernel {
    /// The kernel the harness names `name` (its `KERNELS` keys).
    fn parse(name: &str) -> Option<(Kernel, usize)> {
        let reduction = |method: &str| -> Option<Kernel> {
            let (m, axis) = match method.split_once("(axis=") {
                None => (method, None),
                Some((m, rest)) => (m, Some(rest.strip_suffix(')')?.parse::<isize>().ok()?)),
            };
            Some(match m {
                "sum" => Kernel::Sum(axis),
                "mean" => Kernel::Mean(axis),
                "std" => Kernel::Std(axis),
                "max" => Kernel::Max(axis),
                _ => return None,
            })
        };
        match name {
            "a*b + c" => Some((Kernel::MulAdd, 3)),
            "conditional_accumulate" => Some((Kernel::ConditionalSum, 1)),
            _ => reduction(name).map(|k| (k, 1)),
        }
    }

    /// The result's graph over `x` (one input, or three for `a*b + c`).
    fn build(self, x: &[Array]) -> Result<Array> {
        let axes = |axis: Option<isize>| axis.map(|a| vec![a]);
        match self {
            Kernel::Sum(axis) => x[0].sum(axes(axis).as_deref(), false),
            Kernel::Mean(axis) => x[0].mean(axes(axis).as_deref(), false),
            Kernel::Std(axis) => x[0].std(axes(axis).as_deref(), false, 0),
            Kernel::Max(axis) => x[0].max(axes(axis).as_deref(), false),
            Kernel::MulAdd => x[0].mul(&x[1])?.add(&x[2]),
            Kernel::ConditionalSum => {
                let a = &x[0];
                Array::where_(&a.gt(0.5)?, &a.mul(a)?, &a.neg()?)?.sum(None, false)
            }
        }
    }
}

/// ``EngineKernel(name, arrays)``: the harness's kernel ``name`` through the
/// Rust API over ``arrays`` (crossover arrays, used as they are: the same
/// memory the Python path reads). ``run()`` builds and computes it once
/// with the GIL released.
#[pyclass(name = "EngineKernel", module = "crossover._crossover", frozen)]
pub struct PyEngineKernel {
    kernel: Kernel,
    inputs: Vec<Array>,
}

#[pymethods]
impl PyEngineKernel {
    #[new]
    fn new(name: &str, arrays: Vec<PyRef<'_, PyArr>>) -> PyResult<Self> {
        let (kernel, arity) = Kernel::parse(name).ok_or_else(|| {
            PyValueError::new_err(format!("EngineKernel: unknown kernel {name:?}"))
        })?;
        if arrays.len() != arity {
            return Err(PyValueError::new_err(format!(
                "EngineKernel: {name:?} takes {arity} arrays, got {}",
                arrays.len()
            )));
        }
        Ok(PyEngineKernel {
            kernel,
            inputs: arrays.iter().map(|a| a.inner()).collect(),
        })
    }

    /// The kernel's graph, not computed, as a crossover array (for
    /// ``crossover.explain``: the plan the Rust API gets).
    fn graph(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let g = crate::errors::engine(py, || self.kernel.build(&self.inputs))?;
        crate::array::wrap(py, g)
    }

    /// Builds and computes the kernel once (the result is dropped, as the
    /// Rust bench drops it).
    fn run(&self, py: Python<'_>) -> PyResult<()> {
        crate::errors::detached(py, || self.kernel.build(&self.inputs)?.eval())
    }
}
