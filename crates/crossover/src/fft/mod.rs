//! Fast Fourier transforms (NumPy's `numpy.fft` interface) on
//! [rustfft](https://docs.rs/rustfft) and [realfft](https://docs.rs/realfft).
//!
//! Any length works (not only powers of two). float32 and complex64 inputs
//! transform in single precision (complex64 results), everything else in
//! double precision (complex128). Plans are cached per (length, direction,
//! precision) in a bounded cache; batches of rows and the column passes of
//! 2-D transforms run on all of the engine's threads.
//!
//! The transforms are library calls: lazy, their own kernel, and their
//! outputs feed fused elementwise kernels.
//!
//! ```
//! use crossover::{Array, fft::{self, Norm}};
//! use num_complex::Complex64;
//! let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4])?;
//! let y = fft::fft(&x, None, -1, Norm::Backward)?;
//! let v = y.to_vec::<Complex64>()?;
//! assert_eq!(v[0], Complex64::new(10.0, 0.0));
//! assert_eq!(v[1], Complex64::new(-2.0, 2.0));
//! let back = fft::ifft(&y, None, -1, Norm::Backward)?.to_vec::<Complex64>()?;
//! assert!((back[3].re - 4.0).abs() < 1e-12);
//! # Ok::<(), crossover::Error>(())
//! ```

mod kernels;
mod real;
mod steps;

pub use kernels::{cached_plans, PLAN_CACHE_CAPACITY};
pub use real::{irfft, irfft2, rfft, rfft2};
pub use steps::Step;

use crate::array::{Array, Value};
use crate::buffer::{Buffer, Storage};
use crate::cpu::gather::for_each_position;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{normalize_axis, numel, Layout};
use kernels::{c2c_axis, hermitian_fill, r2c_rows, FftFloat};
use num_complex::{Complex, Complex32, Complex64};
use std::sync::Arc;

/// Normalisation of a transform pair, like NumPy's `norm` argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Norm {
    /// Forward unscaled, inverse scaled by `1/n` (NumPy's default).
    #[default]
    Backward,
    /// Both scaled by `1/sqrt(n)` (unitary).
    Ortho,
    /// Forward scaled by `1/n`, inverse unscaled.
    Forward,
}

impl Norm {
    /// Parses NumPy's names (`"backward"`, `"ortho"`, `"forward"`).
    pub fn parse(s: &str) -> Option<Norm> {
        match s {
            "backward" => Some(Norm::Backward),
            "ortho" => Some(Norm::Ortho),
            "forward" => Some(Norm::Forward),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Norm::Backward => "backward",
            Norm::Ortho => "ortho",
            Norm::Forward => "forward",
        }
    }

    /// The factor applied to a transform of `n` points in this direction.
    fn factor(self, n: usize, inverse: bool) -> Option<f64> {
        let n = n as f64;
        match (self, inverse) {
            (Norm::Backward, false) | (Norm::Forward, true) => None,
            (Norm::Ortho, _) => Some(1.0 / n.sqrt()),
            _ => Some(1.0 / n),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Complex transform along one axis.
    C2c { axis: usize, inverse: bool },
    /// Complex transform over the last two axes.
    C2c2 { inverse: bool },
    /// Forward transform of real input along the last axis (`two_d`: and
    /// the one before), full complex output by Hermitian symmetry.
    RealFull { two_d: bool },
    /// `rfft` along one axis.
    R2c { axis: usize },
    /// `rfft2` over the last two axes.
    R2c2,
    /// `irfft` along one axis.
    C2r { axis: usize },
    /// `irfft2` over the last two axes.
    C2r2,
}

/// One FFT (complex, real-to-complex or complex-to-real, 1-D or 2-D)
/// ([`crate::op::Library::Fft`]).
#[derive(Debug)]
pub struct FftOp {
    name: &'static str,
    kind: Kind,
    in_shape: Vec<usize>,
    out_shape: Vec<usize>,
    /// The dtype of the output.
    out_dtype: DType,
    norm: Norm,
}

impl FftOp {
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The output's shape and dtype.
    pub fn output(&self) -> (&[usize], DType) {
        (&self.out_shape, self.out_dtype)
    }

    pub fn key(&self) -> String {
        format!(
            "{} {:?}->{:?} {} {}",
            self.name,
            self.in_shape,
            self.out_shape,
            self.out_dtype,
            self.norm.name()
        )
    }

    pub fn flops(&self) -> f64 {
        let n = numel(&self.out_shape).max(1) as f64;
        5.0 * n * n.log2().max(1.0)
    }

    pub fn bytes(&self) -> f64 {
        (numel(&self.in_shape) + numel(&self.out_shape)) as f64 * self.out_dtype.size() as f64
    }

    pub fn run_cpu(&self, inputs: &[Value]) -> Result<Vec<Value>> {
        let x = &inputs[0];
        // Below the kernels' own threshold every step runs sequentially, so
        // the call stays on this thread.
        let parallel = numel(&self.in_shape).max(numel(&self.out_shape)) >= kernels::PARALLEL_MIN;
        let v = match self.out_dtype.real_part() {
            DType::F32 => crate::linalg::run_library(self.name, parallel, |_| self.run::<f32>(x)),
            _ => crate::linalg::run_library(self.name, parallel, |_| self.run::<f64>(x)),
        }?;
        Ok(vec![v])
    }
}

/// Storage types for `Complex<T>` and `T`.
trait Precision: FftFloat + crate::buffer::Storage {
    const REAL: DType;
    const COMPLEX: DType;
}
impl Precision for f32 {
    const REAL: DType = DType::F32;
    const COMPLEX: DType = DType::C64;
}
impl Precision for f64 {
    const REAL: DType = DType::F64;
    const COMPLEX: DType = DType::C128;
}

/// Typed mutable slice of a buffer whose storage is `Complex<T>` or `T`.
fn slice_mut<U: Copy>(buf: &mut Buffer, dtype: DType) -> &mut [U] {
    assert_eq!(buf.dtype(), dtype, "fft buffer dtype");
    assert_eq!(std::mem::size_of::<U>(), dtype.size(), "fft element size");
    let len = buf.len();
    let ptr: *mut u8 = match dtype {
        DType::F32 => buf.as_mut_slice::<f32>().as_mut_ptr().cast(),
        DType::F64 => buf.as_mut_slice::<f64>().as_mut_ptr().cast(),
        DType::C64 => buf.as_mut_slice::<Complex32>().as_mut_ptr().cast(),
        DType::C128 => buf.as_mut_slice::<Complex64>().as_mut_ptr().cast(),
        d => unreachable!("no fft buffers of {d}"),
    };
    // SAFETY: U is the storage type of `dtype` (same size, checked; the
    // callers pair T/Complex<T> with Precision::REAL/COMPLEX).
    unsafe { std::slice::from_raw_parts_mut(ptr.cast::<U>(), len) }
}

/// Source elements convertible to the working precision.
trait Load: Storage {
    fn re_im<T: FftFloat>(self) -> (T, T);
}
impl Load for f32 {
    fn re_im<T: FftFloat>(self) -> (T, T) {
        (T::of(self as f64), T::of(0.0))
    }
}
impl Load for f64 {
    fn re_im<T: FftFloat>(self) -> (T, T) {
        (T::of(self), T::of(0.0))
    }
}
impl Load for Complex32 {
    fn re_im<T: FftFloat>(self) -> (T, T) {
        (T::of(self.re as f64), T::of(self.im as f64))
    }
}
impl Load for Complex64 {
    fn re_im<T: FftFloat>(self) -> (T, T) {
        (T::of(self.re), T::of(self.im))
    }
}

/// A working element the loaders write: `T` (real signals) or `Complex<T>`.
trait Dest: Copy {
    /// Whether complex sources load into it.
    const COMPLEX: bool;
    fn zero() -> Self;
    fn from_source<S: Load>(s: S) -> Self;
}
impl<T: FftFloat> Dest for T {
    const COMPLEX: bool = false;
    fn zero() -> Self {
        T::of(0.0)
    }
    fn from_source<S: Load>(s: S) -> Self {
        s.re_im::<T>().0
    }
}
impl<T: FftFloat> Dest for Complex<T> {
    const COMPLEX: bool = true;
    fn zero() -> Self {
        Complex::new(T::of(0.0), T::of(0.0))
    }
    fn from_source<S: Load>(s: S) -> Self {
        let (re, im) = s.re_im::<T>();
        Complex::new(re, im)
    }
}

/// Copies the overlap of `src` (any layout, shape `layout.shape`) into the
/// row-major `dst` of shape `dst_shape` (same rank), zero elsewhere:
/// crops and zero-pads axes like NumPy's `n` arguments.
fn load<S: Load, D: Dest>(src: &[S], layout: &Layout, dst: &mut [D], dst_shape: &[usize]) {
    let common: Vec<usize> = layout
        .shape
        .iter()
        .zip(dst_shape)
        .map(|(&a, &b)| a.min(b))
        .collect();
    if common != dst_shape {
        dst.fill(D::zero());
    }
    if numel(&common) == 0 {
        return;
    }
    let view = Layout {
        shape: common.clone(),
        strides: layout.strides.clone(),
        offset: layout.offset,
    };
    if common == dst_shape {
        let mut i = 0;
        for_each_position(&view, |p| {
            dst[i] = D::from_source(src[p]);
            i += 1;
        });
        return;
    }
    // Row-major walk of the common region, mapped into dst.
    let nd = common.len();
    let dst_strides = crate::shape::contiguous_strides(dst_shape);
    let mut idx = vec![0usize; nd];
    for_each_position(&view, |p| {
        let q: isize = idx
            .iter()
            .zip(&dst_strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        dst[q as usize] = D::from_source(src[p]);
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < common[d] {
                break;
            }
            idx[d] = 0;
        }
    });
}

/// The real input's values for a transform of `shape`: in place when they
/// are `T`, contiguous and of that shape (no crop or pad), else loaded into
/// `copy`. Copying first cost about a fifth of a 1024 x 1024 float32
/// `fft2`, on the calling thread alone.
fn real_input<'v, T: Precision>(x: &'v Value, shape: &[usize], copy: &'v mut Vec<T>) -> &'v [T] {
    let l = &x.layout;
    if x.buffer.dtype() == T::REAL && l.shape == shape && l.is_contiguous() {
        return &x.buffer.as_slice::<T>()[l.offset..l.offset + numel(shape)];
    }
    *copy = vec![T::of(0.0); numel(shape)];
    load_value(x, &x.layout, copy, shape);
    copy
}

/// [`load`] from a value of any fft input dtype (complex ones only into
/// complex destinations).
fn load_value<D: Dest>(x: &Value, layout: &Layout, dst: &mut [D], shape: &[usize]) {
    let b = &x.buffer;
    match b.dtype() {
        DType::F32 => load(b.as_slice::<f32>(), layout, dst, shape),
        DType::F64 => load(b.as_slice::<f64>(), layout, dst, shape),
        DType::C64 if D::COMPLEX => load(b.as_slice::<Complex32>(), layout, dst, shape),
        DType::C128 if D::COMPLEX => load(b.as_slice::<Complex64>(), layout, dst, shape),
        d if D::COMPLEX => unreachable!("fft inputs are cast to float or complex, got {d}"),
        d => unreachable!("real fft inputs are real, got {d}"),
    }
}

/// `(outer, n, inner)` around `axis` of a row-major shape.
fn split3(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        numel(&shape[..axis]),
        shape[axis],
        numel(&shape[axis + 1..]),
    )
}

impl FftOp {
    fn scale<T: FftFloat>(&self, n: usize, inverse: bool) -> Option<T> {
        self.norm.factor(n, inverse).map(<T as FftFloat>::of)
    }

    fn run<T: Precision>(&self, x: &Value) -> Result<Value> {
        let out_shape = &self.out_shape;
        let nd = out_shape.len();
        let mut out = Buffer::alloc(self.out_dtype, numel(out_shape))?;
        match self.kind {
            Kind::C2c { axis, inverse } => {
                let o = slice_mut::<Complex<T>>(&mut out, T::COMPLEX);
                load_value(x, &x.layout, o, out_shape);
                let (outer, n, inner) = split3(out_shape, axis);
                c2c_axis(o, outer, n, inner, inner, inverse, self.scale(n, inverse));
            }
            Kind::C2c2 { inverse } => {
                let o = slice_mut::<Complex<T>>(&mut out, T::COMPLEX);
                load_value(x, &x.layout, o, out_shape);
                let (n1, n2) = (out_shape[nd - 2], out_shape[nd - 1]);
                let batch = numel(&out_shape[..nd - 2]);
                c2c_axis(o, batch * n1, n2, 1, 1, inverse, None);
                c2c_axis(o, batch, n1, n2, n2, inverse, self.scale(n1 * n2, inverse));
            }
            Kind::RealFull { two_d } => {
                let mut copy = Vec::new();
                let real = real_input::<T>(x, out_shape, &mut copy);
                let o = slice_mut::<Complex<T>>(&mut out, T::COMPLEX);
                let n2 = out_shape[nd - 1];
                let h = n2 / 2 + 1;
                if two_d {
                    let n1 = out_shape[nd - 2];
                    let batch = numel(&out_shape[..nd - 2]);
                    r2c_rows(real, n2, o, n2, None);
                    c2c_axis(
                        o,
                        batch,
                        n1,
                        n2,
                        h.min(n2),
                        false,
                        self.scale(n1 * n2, false),
                    );
                    hermitian_fill(o, n1, n2);
                } else {
                    r2c_rows(real, n2, o, n2, self.scale(n2, false));
                    hermitian_fill(o, 1, n2);
                }
            }
            Kind::R2c { .. } | Kind::R2c2 | Kind::C2r { .. } | Kind::C2r2 => {
                self.run_real::<T>(x, &mut out)?
            }
        }
        Ok(Value {
            buffer: Arc::new(out),
            layout: Layout::contiguous(out_shape),
        })
    }
}

// ---- recording --------------------------------------------------------------

/// The dtypes of a transform's input: (working input dtype, complex output).
fn dtypes(op: &'static str, d: DType) -> Result<(DType, DType)> {
    match d {
        DType::F32 => Ok((DType::F32, DType::C64)),
        DType::C64 => Ok((DType::C64, DType::C64)),
        DType::C128 => Ok((DType::C128, DType::C128)),
        DType::Bool => Err(Error::dtype(op, d, "needs numeric input")),
        // float64 and every integer dtype, as NumPy.
        _ => Ok((DType::F64, DType::C128)),
    }
}

fn check_len(op: &'static str, n: usize, what: &str) -> Result<()> {
    if n == 0 {
        return Err(Error::invalid(
            op,
            format!("invalid number of data points (0) {what}"),
        ));
    }
    Ok(())
}

/// Checks a transform's input: numeric, real where `complex_alt` names the
/// transform to use for complex input, and at least `min_ndim` (1 or 2)
/// dimensions. Returns the [`dtypes`].
fn check_input(
    op: &'static str,
    x: &Array,
    min_ndim: usize,
    complex_alt: Option<&str>,
) -> Result<(DType, DType)> {
    let (work, out) = dtypes(op, x.dtype())?;
    if let Some(alt) = complex_alt.filter(|_| work.is_complex()) {
        return Err(Error::dtype(
            op,
            x.dtype(),
            format!("needs real input (use {alt} for complex)"),
        ));
    }
    if x.ndim() < min_ndim {
        let what = if min_ndim == 1 {
            "one dimension"
        } else {
            "two dimensions"
        };
        return Err(Error::shape(
            op,
            x.shape(),
            format!("needs at least {what}"),
        ));
    }
    Ok((work, out))
}

/// The axis of a 1-D transform and its length (`n`, by default the axis's).
fn axis_and_len(
    op: &'static str,
    x: &Array,
    axis: isize,
    n: Option<usize>,
) -> Result<(usize, usize)> {
    let ax = normalize_axis(op, axis, x.ndim())?;
    let n = n.unwrap_or(x.shape()[ax]);
    check_len(op, n, "along the axis")?;
    Ok((ax, n))
}

/// Checks that the last two axes of a 2-D transform's input are not empty.
fn check_last_two(op: &'static str, x: &Array) -> Result<()> {
    let nd = x.ndim();
    check_len(
        op,
        x.shape()[nd - 1] * x.shape()[nd - 2],
        "in the last two axes",
    )
}

fn record(
    name: &'static str,
    kind: Kind,
    x: &Array,
    in_shape: Vec<usize>,
    out_shape: Vec<usize>,
    out_dtype: DType,
    norm: Norm,
) -> Result<Array> {
    let op = FftOp {
        name,
        kind,
        in_shape,
        out_shape: out_shape.clone(),
        out_dtype,
        norm,
    };
    Array::library(
        crate::op::Library::Fft(op),
        vec![(out_shape, out_dtype)],
        vec![x.clone()],
    )?
    .pop()
    .ok_or_else(|| Error::internal(name, "library call made no output"))
}

fn c2c(
    name: &'static str,
    x: &Array,
    n: Option<usize>,
    axis: isize,
    norm: Norm,
    inverse: bool,
) -> Result<Array> {
    let (work, out) = check_input(name, x, 1, None)?;
    let (ax, n) = axis_and_len(name, x, axis, n)?;
    let x = x.cast(work)?;
    let mut shape = x.shape().to_vec();
    shape[ax] = n;
    // Real input along the last axis: half the work, then symmetry.
    let kind = if !inverse && !work.is_complex() && ax == shape.len() - 1 {
        Kind::RealFull { two_d: false }
    } else {
        Kind::C2c { axis: ax, inverse }
    };
    record(name, kind, &x, shape.clone(), shape, out, norm)
}

/// The discrete Fourier transform along `axis` (NumPy's `fft.fft`):
/// `y[k] = sum_j x[j] exp(-2 pi i j k / n)`, with the input cropped or
/// zero-padded to `n` points when given.
///
/// # Errors
/// [`Error::Axis`] for a bad axis; [`Error::InvalidArgument`] for `n = 0`
/// or an empty axis; [`Error::DType`] for bool input.
///
/// ```
/// use crossover::{Array, fft::{self, Norm}};
/// use num_complex::Complex32;
/// let x = Array::from_vec(vec![1.0f32, 0.0, 0.0], &[3])?;
/// let y = fft::fft(&x, None, -1, Norm::Backward)?.to_vec::<Complex32>()?;
/// assert_eq!(y, vec![Complex32::new(1.0, 0.0); 3]);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn fft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    c2c("fft", x, n, axis, norm, false)
}

/// The inverse of [`fft`] (NumPy's `fft.ifft`).
///
/// # Errors
/// As [`fft`].
pub fn ifft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    c2c("ifft", x, n, axis, norm, true)
}

fn c2c2(name: &'static str, x: &Array, norm: Norm, inverse: bool) -> Result<Array> {
    let (work, out) = check_input(name, x, 2, None)?;
    check_last_two(name, x)?;
    let x = x.cast(work)?;
    let shape = x.shape().to_vec();
    let kind = if !inverse && !work.is_complex() {
        Kind::RealFull { two_d: true }
    } else {
        Kind::C2c2 { inverse }
    };
    record(name, kind, &x, shape.clone(), shape, out, norm)
}

/// The 2-D transform over the last two axes (NumPy's `fft.fft2`). Real
/// input takes the fast path (a real transform of each row, then the
/// columns of half the spectrum, then Hermitian symmetry).
///
/// # Errors
/// [`Error::Shape`] for fewer than two dimensions;
/// [`Error::InvalidArgument`] for an empty axis; [`Error::DType`] for bool.
///
/// ```
/// use crossover::{Array, fft::{self, Norm}};
/// use num_complex::Complex64;
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let y = fft::fft2(&x, Norm::Backward)?.to_vec::<Complex64>()?;
/// assert_eq!(y[0], Complex64::new(10.0, 0.0));
/// assert_eq!(y[3], Complex64::new(0.0, 0.0));
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn fft2(x: &Array, norm: Norm) -> Result<Array> {
    c2c2("fft2", x, norm, false)
}

/// The inverse of [`fft2`] (NumPy's `fft.ifft2`).
///
/// # Errors
/// As [`fft2`].
pub fn ifft2(x: &Array, norm: Norm) -> Result<Array> {
    c2c2("ifft2", x, norm, true)
}
