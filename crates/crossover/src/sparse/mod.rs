//! Sparse matrices in compressed sparse row form ([`Csr`]).
//!
//! A `Csr` is built eagerly (from triplets, parts, a dense array, or at
//! random) and validated when built: row pointers non-decreasing, column
//! indices in range and strictly increasing within each row. Products with
//! dense arrays ([`Csr::matmul_dense`]) are lazy library calls whose results
//! feed fused kernels; sparse-sparse products ([`Csr::matmul`]) return a new
//! `Csr` at once. Values are float32 or float64.
//!
//! ```
//! use crossover::{Array, sparse::Csr};
//! // [[1, 0, 2],
//! //  [0, 3, 0]]
//! let a = Csr::from_triplets(2, 3, &[0, 0, 1], &[0, 2, 1], &[1.0f64, 2.0, 3.0])?;
//! let x = Array::from_vec(vec![1.0f64, 1.0, 1.0], &[3])?;
//! assert_eq!(a.matmul_dense(&x)?.to_vec::<f64>()?, vec![3.0, 3.0]);
//! assert_eq!(a.transpose().to_dense()?.shape(), &[3, 2]);
//! # Ok::<(), crossover::Error>(())
//! ```

mod ops;
mod spgemm;
pub(crate) use ops::spgemm_node;
pub use ops::{SpGemm, SpMM};

use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::rng::{self, RandomKey};
use std::sync::Arc;

/// Element types of sparse values.
pub trait SparseValue:
    Element
    + Default
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::AddAssign
{
    /// Wraps values of this type.
    fn wrap(v: Vec<Self>) -> Values;
    /// The values if they are of this type.
    fn unwrap(v: &Values) -> Option<&[Self]>;
    fn from_f64_(x: f64) -> Self;
}

impl SparseValue for f32 {
    fn wrap(v: Vec<f32>) -> Values {
        Values::F32(v)
    }
    fn unwrap(v: &Values) -> Option<&[f32]> {
        match v {
            Values::F32(x) => Some(x),
            Values::F64(_) => None,
        }
    }
    fn from_f64_(x: f64) -> f32 {
        x as f32
    }
}

impl SparseValue for f64 {
    fn wrap(v: Vec<f64>) -> Values {
        Values::F64(v)
    }
    fn unwrap(v: &Values) -> Option<&[f64]> {
        match v {
            Values::F64(x) => Some(x),
            Values::F32(_) => None,
        }
    }
    fn from_f64_(x: f64) -> f64 {
        x
    }
}

/// The stored values of a [`Csr`].
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    pub fn dtype(&self) -> DType {
        match self {
            Values::F32(_) => DType::F32,
            Values::F64(_) => DType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Runs `$body` with `$T` bound to the value type of a [`Values`].
macro_rules! with_values {
    ($values:expr, $v:ident, $T:ident => $body:expr) => {
        match $values {
            $crate::sparse::Values::F32($v) => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            $crate::sparse::Values::F64($v) => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_values;

#[derive(Debug, PartialEq)]
pub(crate) struct CsrData {
    pub nrows: usize,
    pub ncols: usize,
    pub indptr: Vec<usize>,
    pub indices: Vec<u32>,
    pub values: Values,
}

/// A sparse matrix in compressed sparse row form (cheap to clone: the
/// arrays are shared).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    pub(crate) data: Arc<CsrData>,
}

const OP: &str = "csr";

impl Csr {
    /// A matrix from its CSR arrays: row `i` holds columns
    /// `indices[indptr[i]..indptr[i+1]]` with `values` at the same
    /// positions.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `indptr` does not have `nrows + 1`
    /// non-decreasing entries from 0 to `indices.len()`, when `values` and
    /// `indices` differ in length, or when a column index is out of range or
    /// not strictly increasing within its row (unsorted or duplicate).
    ///
    /// ```
    /// use crossover::{Error, sparse::Csr};
    /// let ok = Csr::from_parts(2, 2, vec![0, 1, 2], vec![1, 0], vec![5.0f32, 6.0])?;
    /// assert_eq!(ok.nnz(), 2);
    /// let bad = Csr::from_parts(1, 3, vec![0, 2], vec![2, 0], vec![1.0f32, 1.0]);
    /// assert!(matches!(bad, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn from_parts<T: SparseValue>(
        nrows: usize,
        ncols: usize,
        indptr: Vec<usize>,
        indices: Vec<usize>,
        values: Vec<T>,
    ) -> Result<Csr> {
        check_dims(nrows, ncols)?;
        if indptr.len() != nrows + 1 {
            return Err(Error::invalid(
                OP,
                format!(
                    "indptr has {} entries, expected nrows + 1 = {}",
                    indptr.len(),
                    nrows + 1
                ),
            ));
        }
        if indices.len() != values.len() {
            return Err(Error::invalid(
                OP,
                format!("{} indices but {} values", indices.len(), values.len()),
            ));
        }
        if indptr[0] != 0 || indptr[nrows] != indices.len() {
            return Err(Error::invalid(
                OP,
                format!(
                    "indptr must start at 0 and end at nnz = {}, got {} .. {}",
                    indices.len(),
                    indptr[0],
                    indptr[nrows]
                ),
            ));
        }
        for i in 0..nrows {
            let (a, b) = (indptr[i], indptr[i + 1]);
            if b < a {
                return Err(Error::invalid(
                    OP,
                    format!("indptr decreases at row {i} ({a} then {b})"),
                ));
            }
            for p in a..b {
                let j = indices[p];
                if j >= ncols {
                    return Err(Error::invalid(
                        OP,
                        format!("column index {j} at position {p} (row {i}) is out of range for {ncols} columns"),
                    ));
                }
                if p > a && j <= indices[p - 1] {
                    return Err(Error::invalid(
                        OP,
                        format!(
                            "column indices of row {i} are not sorted and unique ({} then {j} at position {p})",
                            indices[p - 1]
                        ),
                    ));
                }
            }
        }
        Ok(Csr::new_unchecked(
            nrows,
            ncols,
            indptr,
            indices.into_iter().map(|j| j as u32).collect(),
            T::wrap(values),
        ))
    }

    pub(crate) fn new_unchecked(
        nrows: usize,
        ncols: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        values: Values,
    ) -> Csr {
        Csr {
            data: Arc::new(CsrData {
                nrows,
                ncols,
                indptr,
                indices,
                values,
            }),
        }
    }

    /// A matrix from coordinate triplets `(rows[p], cols[p], values[p])` in
    /// any order; duplicates are summed (like SciPy).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the three slices differ in length or
    /// an index is out of range.
    pub fn from_triplets<T: SparseValue>(
        nrows: usize,
        ncols: usize,
        rows: &[usize],
        cols: &[usize],
        values: &[T],
    ) -> Result<Csr> {
        check_dims(nrows, ncols)?;
        if rows.len() != cols.len() || rows.len() != values.len() {
            return Err(Error::invalid(
                OP,
                format!(
                    "triplets differ in length: {} rows, {} cols, {} values",
                    rows.len(),
                    cols.len(),
                    values.len()
                ),
            ));
        }
        for (p, (&i, &j)) in rows.iter().zip(cols).enumerate() {
            if i >= nrows || j >= ncols {
                return Err(Error::invalid(
                    OP,
                    format!(
                        "triplet {p} at ({i}, {j}) is out of range for a {nrows} x {ncols} matrix"
                    ),
                ));
            }
        }
        // Counting sort by row, then sort each row by column and merge
        // duplicates.
        crate::limits::check_bytes(OP, (nrows as f64 + 1.0) * 16.0, &[nrows, ncols], T::DTYPE)?;
        let mut indptr = vec![0usize; nrows + 1];
        for &i in rows {
            indptr[i + 1] += 1;
        }
        for i in 0..nrows {
            indptr[i + 1] += indptr[i];
        }
        let mut next = indptr.clone();
        let mut order = vec![(0u32, T::default()); rows.len()];
        for p in 0..rows.len() {
            let slot = &mut next[rows[p]];
            order[*slot] = (cols[p] as u32, values[p]);
            *slot += 1;
        }
        let mut out_ptr = Vec::with_capacity(nrows + 1);
        let mut indices = Vec::with_capacity(rows.len());
        let mut vals = Vec::with_capacity(rows.len());
        out_ptr.push(0);
        for i in 0..nrows {
            let row = &mut order[indptr[i]..indptr[i + 1]];
            row.sort_by_key(|e| e.0);
            for &(j, v) in row.iter() {
                if indices.len() > out_ptr[i] && *indices.last().expect("non-empty") == j {
                    *vals.last_mut().expect("non-empty") += v;
                } else {
                    indices.push(j);
                    vals.push(v);
                }
            }
            out_ptr.push(indices.len());
        }
        Ok(Csr::new_unchecked(
            nrows,
            ncols,
            out_ptr,
            indices,
            T::wrap(vals),
        ))
    }

    /// The nonzero entries of a dense 2-D array (evaluated now). Integer and
    /// bool arrays become float64.
    ///
    /// # Errors
    /// [`Error::Shape`] unless 2-D; [`Error::DType`] for complex; errors of
    /// evaluating `a`.
    pub fn from_dense(a: &Array) -> Result<Csr> {
        if a.ndim() != 2 {
            return Err(Error::shape(
                "csr_from_dense",
                a.shape(),
                "needs a 2-D array",
            ));
        }
        let (m, n) = (a.shape()[0], a.shape()[1]);
        check_dims(m, n)?;
        match a.dtype() {
            DType::F32 => Ok(Self::from_rows(m, n, &a.to_vec::<f32>()?)),
            DType::C64 | DType::C128 => Err(Error::dtype(
                "csr_from_dense",
                a.dtype(),
                "sparse matrices hold float32 or float64",
            )),
            _ => Ok(Self::from_rows(m, n, &a.cast(DType::F64)?.to_vec::<f64>()?)),
        }
    }

    fn from_rows<T: SparseValue>(m: usize, n: usize, dense: &[T]) -> Csr {
        let zero = T::default();
        let mut indptr = Vec::with_capacity(m + 1);
        let (mut indices, mut vals) = (Vec::new(), Vec::new());
        indptr.push(0);
        for i in 0..m {
            for (j, &v) in dense[i * n..(i + 1) * n].iter().enumerate() {
                if v != zero {
                    indices.push(j as u32);
                    vals.push(v);
                }
            }
            indptr.push(indices.len());
        }
        Csr::new_unchecked(m, n, indptr, indices, T::wrap(vals))
    }

    /// A random matrix with `round(density * nrows * ncols)` nonzeros at
    /// distinct uniformly chosen positions, values uniform on `[0, 1)`
    /// (like `scipy.sparse.random`), reproducible from `seed` (Philox).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a density outside `[0, 1]`;
    /// [`Error::DType`] unless float32 or float64.
    ///
    /// ```
    /// use crossover::{DType, sparse::Csr};
    /// let a = Csr::random(100, 50, 0.1, 7, DType::F64)?;
    /// assert_eq!(a.nnz(), 500);
    /// assert_eq!(a, Csr::random(100, 50, 0.1, 7, DType::F64)?);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn random(
        nrows: usize,
        ncols: usize,
        density: f64,
        seed: u64,
        dtype: DType,
    ) -> Result<Csr> {
        const RND: &str = "sparse_random";
        if !(0.0..=1.0).contains(&density) {
            return Err(Error::invalid(
                RND,
                format!("density must be in [0, 1], got {density}"),
            ));
        }
        check_dims(nrows, ncols)?;
        let total = nrows
            .checked_mul(ncols)
            .ok_or_else(|| Error::invalid(RND, "nrows * ncols overflows"))?;
        let k = (density * total as f64).round() as usize;
        // Values, indices and positions per nonzero, row pointers, and the
        // sampler's bitmap or set: refused up front when they cannot fit.
        let sampler = if total > 1 << 28 && k < total / 256 {
            k as f64 * 16.0
        } else {
            total as f64 / 8.0
        };
        let bytes = k as f64 * (dtype.size() + 4 + 8) as f64 + (nrows as f64 + 1.0) * 8.0 + sampler;
        crate::limits::check_bytes(RND, bytes, &[nrows, ncols], dtype)?;
        let positions = sample_distinct(total, k.min(total), seed);
        let key = RandomKey { seed, stream: 1 };
        let values = match dtype {
            DType::F32 => {
                let mut v = vec![0f32; positions.len()];
                rng::fill_uniform_f32(key, 0, &mut v);
                Values::F32(v)
            }
            DType::F64 => {
                let mut v = vec![0f64; positions.len()];
                rng::fill_uniform_f64(key, 0, &mut v);
                Values::F64(v)
            }
            d => {
                return Err(Error::dtype(
                    RND,
                    d,
                    "sparse matrices hold float32 or float64",
                ))
            }
        };
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices = Vec::with_capacity(positions.len());
        for &p in &positions {
            indptr[p / ncols + 1] += 1;
            indices.push((p % ncols) as u32);
        }
        for i in 0..nrows {
            indptr[i + 1] += indptr[i];
        }
        Ok(Csr::new_unchecked(nrows, ncols, indptr, indices, values))
    }

    pub fn nrows(&self) -> usize {
        self.data.nrows
    }

    pub fn ncols(&self) -> usize {
        self.data.ncols
    }

    /// `[nrows, ncols]`.
    pub fn shape(&self) -> [usize; 2] {
        [self.data.nrows, self.data.ncols]
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.indices.len()
    }

    pub fn dtype(&self) -> DType {
        self.data.values.dtype()
    }

    /// Row pointers (`nrows + 1` entries).
    pub fn indptr(&self) -> &[usize] {
        &self.data.indptr
    }

    /// Column indices, sorted within each row.
    pub fn indices(&self) -> &[u32] {
        &self.data.indices
    }

    /// The stored values.
    pub fn values(&self) -> &Values {
        &self.data.values
    }

    /// The same matrix with values converted to `dtype` (float32/float64).
    ///
    /// # Errors
    /// [`Error::DType`] for other dtypes.
    pub fn astype(&self, dtype: DType) -> Result<Csr> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let values = match (&self.data.values, dtype) {
            (Values::F32(v), DType::F64) => Values::F64(v.iter().map(|&x| x as f64).collect()),
            (Values::F64(v), DType::F32) => Values::F32(v.iter().map(|&x| x as f32).collect()),
            (_, d) => {
                return Err(Error::dtype(
                    "csr_astype",
                    d,
                    "sparse matrices hold float32 or float64",
                ))
            }
        };
        let d = &self.data;
        Ok(Csr::new_unchecked(
            d.nrows,
            d.ncols,
            d.indptr.clone(),
            d.indices.clone(),
            values,
        ))
    }

    /// The dense matrix (`nrows x ncols`, row-major), computed now.
    ///
    /// # Errors
    /// Allocation failures only.
    pub fn to_dense(&self) -> Result<Array> {
        let d = &self.data;
        let shape = [d.nrows, d.ncols];
        crate::limits::checked_numel("to_dense", &shape, self.dtype())?;
        crate::limits::check_fits("to_dense", &shape, self.dtype())?;
        with_values!(&d.values, v, T => {
            let mut dense = vec![T::default(); d.nrows * d.ncols];
            for i in 0..d.nrows {
                for p in d.indptr[i]..d.indptr[i + 1] {
                    dense[i * d.ncols + d.indices[p] as usize] = v[p];
                }
            }
            Array::from_vec(dense, &[d.nrows, d.ncols])
        })
    }

    /// The transpose, as a new CSR matrix (a counting sort by column).
    pub fn transpose(&self) -> Csr {
        let d = &self.data;
        let mut indptr = vec![0usize; d.ncols + 1];
        for &j in &d.indices {
            indptr[j as usize + 1] += 1;
        }
        for j in 0..d.ncols {
            indptr[j + 1] += indptr[j];
        }
        let mut next = indptr.clone();
        let mut indices = vec![0u32; d.indices.len()];
        let values = with_values!(&d.values, v, T => {
            let mut out = vec![T::default(); v.len()];
            for i in 0..d.nrows {
                let (p0, p1) = (d.indptr[i], d.indptr[i + 1]);
                for (&j, &x) in d.indices[p0..p1].iter().zip(&v[p0..p1]) {
                    let j = j as usize;
                    let q = next[j];
                    indices[q] = i as u32;
                    out[q] = x;
                    next[j] += 1;
                }
            }
            T::wrap(out)
        });
        Csr::new_unchecked(d.ncols, d.nrows, indptr, indices, values)
    }

    /// Sum of all entries (`axis = None`, a 0-d array), of each column
    /// (`axis = Some(0)`, shape `[ncols]`) or of each row (`Some(1)`, shape
    /// `[nrows]`). Sums accumulate in float64 and are returned in the
    /// matrix's dtype.
    ///
    /// # Errors
    /// [`Error::Axis`] for an axis other than 0 or 1.
    pub fn sum(&self, axis: Option<usize>) -> Result<Array> {
        let d = &self.data;
        with_values!(&d.values, v, T => {
            let out: Vec<T> = match axis {
                None => vec![T::from_f64_(v.iter().map(|x| x.to_f64()).sum())],
                Some(0) => {
                    let mut s = vec![0f64; d.ncols];
                    for (&j, &x) in d.indices.iter().zip(v.iter()) {
                        s[j as usize] += x.to_f64();
                    }
                    s.into_iter().map(T::from_f64_).collect()
                }
                Some(1) => (0..d.nrows)
                    .map(|i| T::from_f64_(v[d.indptr[i]..d.indptr[i + 1]].iter().map(|x| x.to_f64()).sum()))
                    .collect(),
                Some(a) => return Err(Error::Axis { op: "csr_sum", axis: a as isize, ndim: 2 }),
            };
            let shape: &[usize] = match axis {
                None => &[],
                Some(0) => &[d.ncols],
                _ => &[d.nrows],
            };
            Array::from_vec(out, shape)
        })
    }

    /// The sparse-sparse product `self @ other`, computed now, as a new CSR
    /// matrix with sorted indices and no stored zeros. Mixed float32 and
    /// float64 operands compute in float64.
    ///
    /// It runs where the current engine places it (policy and cost model,
    /// as for every library op): on the CPU by Gustavson's algorithm (rows
    /// in parallel), or on a GPU: on CUDA by cuSPARSE's SpGEMM where it
    /// loads (sums in its own order: within rounding of the CPU's, not bit
    /// for bit), else (OpenCL, or `CROSSOVER_GPU_SPARSE=core`) by the
    /// core's merge kernel, whose sums are the CPU's bits.
    /// [`Csr::matmul_plan`] says where and why.
    ///
    /// # Errors
    /// [`Error::Shape`] when the inner dimensions differ; a forced GPU
    /// policy that the GPU cannot honour ([`Error::Device`]).
    pub fn matmul(&self, other: &Csr) -> Result<Csr> {
        ops::spgemm(self, other)
    }

    /// Where the current engine would compute `self @ other` and why (the
    /// plan explain prints), without computing it.
    ///
    /// # Errors
    /// As [`Csr::matmul`].
    ///
    /// ```
    /// use crossover::{DType, sparse::Csr};
    /// let a = Csr::random(50, 40, 0.1, 1, DType::F64)?;
    /// let plan = a.matmul_plan(&a.transpose())?;
    /// assert_eq!(plan.kernels[0].name, "sparse_matmul");
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn matmul_plan(&self, other: &Csr) -> Result<crate::plan::Plan> {
        ops::spgemm_plan(self, other)
    }

    /// [`Csr::matmul`], also returning the plan it ran by, with measured
    /// times.
    ///
    /// # Errors
    /// As [`Csr::matmul`].
    pub fn matmul_explained(&self, other: &Csr) -> Result<(Csr, crate::plan::Plan)> {
        ops::spgemm_explained(self, other)
    }

    /// The product with a dense vector `(ncols,)` or matrix `(ncols, k)`:
    /// a lazy dense array `(nrows,)` or `(nrows, k)`.
    ///
    /// # Errors
    /// [`Error::Shape`] when `x` is not 1-D or 2-D or its rows differ from
    /// `ncols`; [`Error::DType`] for complex `x`.
    pub fn matmul_dense(&self, x: &Array) -> Result<Array> {
        ops::spmm(self, x)
    }
}

fn check_dims(nrows: usize, ncols: usize) -> Result<()> {
    if ncols > u32::MAX as usize || nrows > u32::MAX as usize {
        return Err(Error::invalid(
            OP,
            format!("a {nrows} x {ncols} matrix exceeds the 2^32 - 1 rows/columns index limit"),
        ));
    }
    Ok(())
}

/// `k` distinct integers of `0..n`, sorted (Floyd's algorithm on Philox
/// draws).
fn sample_distinct(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let key = [seed as u32, (seed >> 32) as u32];
    let draw = |i: u64, bound: u64| -> u64 {
        let w = rng::philox4x32_10([i as u32, (i >> 32) as u32, 0, 0x5a5a_0001], key);
        let r = ((w[0] as u64) << 32) | w[1] as u64;
        ((r as u128 * bound as u128) >> 64) as u64
    };
    if n > 1 << 28 && k < n / 256 {
        // Too big for a bitmap: a hash set of the chosen ones.
        let mut chosen = std::collections::HashSet::with_capacity(k);
        for (i, t) in (n - k..n).enumerate() {
            let j = draw(i as u64, t as u64 + 1) as usize;
            if !chosen.insert(j) {
                chosen.insert(t);
            }
        }
        let mut out: Vec<usize> = chosen.into_iter().collect();
        out.sort_unstable();
        return out;
    }
    let mut bits = vec![0u64; n.div_ceil(64)];
    let mut set = |x: usize| -> bool {
        let (w, b) = (x / 64, x % 64);
        let was = bits[w] >> b & 1 == 1;
        bits[w] |= 1 << b;
        was
    };
    for (i, t) in (n - k..n).enumerate() {
        let j = draw(i as u64, t as u64 + 1) as usize;
        if set(j) {
            set(t);
        }
    }
    let mut out = Vec::with_capacity(k);
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            out.push(w * 64 + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
    out
}
