//! Integration tests of the engine, in one binary (one link, not seven).

mod common;

mod elementwise;
mod errors;
mod expr_fuzz;
mod fusion;
mod placement;
mod random;
mod reductions;
mod views;
