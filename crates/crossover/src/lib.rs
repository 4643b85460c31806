//! # crossover
//!
//! NumPy-style array math that runs where it is fastest. Operations record a
//! lazy graph; when a result is needed, elementwise chains (and the reduction
//! that ends them) are fused into single kernels and run on all CPU cores
//! with SIMD, in one pass over memory.
//!
//! ```
//! use crossover::{Array, DType, Generator};
//!
//! let mut rng = Generator::new(42);
//! let a = rng.uniform(&[1000, 1000], DType::F32)?;
//! let b = rng.uniform(&[1000, 1000], DType::F32)?;
//! // a*b + sin(a) + cos(b): one kernel, one pass over memory.
//! let y = a.mul(&b)?.add(&a.sin()?)?.add(&b.cos()?)?;
//! let s = y.std(None, false, 0)?.item()?;
//! assert!(s > 0.0);
//!
//! // The same through an expression string.
//! let z = crossover::evaluate("a*b + sin(a) + cos(b)", &[("a", &a), ("b", &b)])?;
//! assert_eq!(z.shape(), &[1000, 1000]);
//! # Ok::<(), crossover::Error>(())
//! ```
//!
//! Stages, in order (see ARCHITECTURE.md): [`array`] records ops,
//! [`graph`] collects pending nodes, [`fuse`] makes kernels of [`expr::ir`]
//! programs, [`plan`] places each on a device by the [`cost`] model,
//! [`exec`]/[`Engine`] run them ([`cpu`] backend; [`device`] residency),
//! [`explain`] and [`trace`] say what happened.

pub mod array;
pub mod buffer;
pub mod compiled;
pub mod cost;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod device;
mod direct;
pub mod dtype;
pub mod engine;
pub mod env;
pub mod error;
pub mod exec;
pub mod explain;
pub mod expr;
pub mod fft;
pub mod fuse;
mod fuse_cache;
pub mod gpu;
pub mod graph;
pub mod interrupt;
pub mod limits;
pub mod linalg;
pub mod op;
pub mod opencl;
pub mod plan;
pub mod residency;
pub mod rng;
pub mod shape;
pub mod sparse;
pub mod trace;

pub use array::{Array, Operand, Value};
pub use cost::Profile;
pub use device::{DeviceKind, Policy};
pub use dtype::{DType, Element, Scalar};
pub use engine::{effective_policy, policy, set_policy, DeviceStatus, Engine};
pub use error::{Error, ErrorKind, Result};
pub use exec::{evaluate_with_report, lower, KernelRun};
pub use expr::evaluate;
pub use op::{BinaryOp, ReduceOp, UnaryOp};
pub use plan::Plan;
pub use rng::Generator;
pub use shape::SliceArg;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
