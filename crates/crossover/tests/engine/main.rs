//! Integration tests of the engine, in one binary (one link per change, not one per file).

mod column_reductions;
mod common;
mod compiled;
mod corpus;
mod cuda;
mod cuda_dense;
mod cuda_dense_complex;
mod cuda_sparse;

mod elementwise;
mod errors;
mod expr_fuzz;
mod fusion;
mod fusion_cache;
mod gpu;
mod gpu_fft;
mod gpu_library;
mod gpu_matmul_kinds;
mod gpu_placement;
mod hostile;
mod library_complex;
mod library_fft;
mod library_linalg;
mod library_sparse;
mod placement;
mod random;
mod reductions;
mod small_ints;
mod sparse_products;
mod views;
