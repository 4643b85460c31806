//! The elementwise IR shared by every backend, and the parser for
//! expression strings like `"a*b + sin(a) + cos(b)"`.

pub mod ir;
pub mod parse;

pub use parse::{evaluate, parse};
