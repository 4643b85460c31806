//! Transforms of real signals: `rfft`/`irfft` along one axis and
//! `rfft2`/`irfft2` over the last two, storing (or reading) only the `n/2 + 1`
//! non-negative frequencies of the last transformed axis.

use super::kernels::{c2c_axis, c2r_rows, r2c_rows, FftFloat};
use super::{
    axis_and_len, check_input, check_last_two, check_len, load_value, real_input, record, slice_mut,
};
use super::{FftOp, Kind, Norm, Precision};
use crate::array::{Array, Value};
use crate::buffer::Buffer;
use crate::cpu::gather::for_each_position;
use crate::error::Result;
use crate::shape::{normalize_axis, numel, Layout};
use num_complex::Complex;

/// A permutation moving `axis` last.
fn axis_last(nd: usize, axis: usize) -> Vec<usize> {
    (0..nd).filter(|&d| d != axis).chain([axis]).collect()
}

/// The result of a real transform along a moved axis, before it is moved
/// back.
enum Perm<T: FftFloat> {
    Complex(Vec<Complex<T>>),
    Real(Vec<T>),
}

impl FftOp {
    /// The real signal length of an `rfft` along `axis` (kept in the
    /// recorded input shape after cropping/padding).
    fn real_len(&self, axis: usize) -> usize {
        self.in_shape[axis]
    }

    /// Runs the real-signal kinds ([`Kind::R2c`], [`Kind::R2c2`],
    /// [`Kind::C2r`], [`Kind::C2r2`]) into `out`.
    pub(super) fn run_real<T: Precision>(&self, x: &Value, out: &mut Buffer) -> Result<()> {
        let out_shape = &self.out_shape;
        let nd = out_shape.len();
        match self.kind {
            Kind::R2c { axis } | Kind::C2r { axis } if axis != nd - 1 => {
                // Move the axis last, transform rows, move it back.
                let perm = axis_last(nd, axis);
                let in_perm = x.layout.permute(self.name, &perm)?;
                let out_perm_shape: Vec<usize> = perm.iter().map(|&d| out_shape[d]).collect();
                let last = if let Kind::R2c { .. } = self.kind {
                    let mut work_shape = out_perm_shape.clone();
                    // Input rows hold the real length n (2 * (h - 1) or
                    // 2 * h - 1): recover it from the recorded shapes.
                    work_shape[nd - 1] = self.real_len(axis);
                    let mut real = vec![T::of(0.0); numel(&work_shape)];
                    load_value(x, &in_perm, &mut real, &work_shape);
                    let mut tmp =
                        vec![Complex::new(T::of(0.0), T::of(0.0)); numel(&out_perm_shape)];
                    let n = work_shape[nd - 1];
                    r2c_rows(
                        &real,
                        n,
                        &mut tmp,
                        out_perm_shape[nd - 1],
                        self.scale(n, false),
                    );
                    Perm::Complex(tmp)
                } else {
                    let n = out_perm_shape[nd - 1];
                    let mut work_shape = out_perm_shape.clone();
                    work_shape[nd - 1] = n / 2 + 1;
                    let mut spec = vec![Complex::new(T::of(0.0), T::of(0.0)); numel(&work_shape)];
                    load_value(x, &in_perm, &mut spec, &work_shape);
                    let mut tmp = vec![T::of(0.0); numel(&out_perm_shape)];
                    c2r_rows(&spec, n, &mut tmp, self.scale(n, true));
                    Perm::Real(tmp)
                };
                let out_view = Layout::contiguous(out_shape).permute(self.name, &perm)?;
                let mut i = 0;
                match last {
                    Perm::Complex(tmp) => {
                        let o = slice_mut::<Complex<T>>(out, T::COMPLEX);
                        for_each_position(&out_view, |p| {
                            o[p] = tmp[i];
                            i += 1;
                        });
                    }
                    Perm::Real(tmp) => {
                        let o = slice_mut::<T>(out, T::REAL);
                        for_each_position(&out_view, |p| {
                            o[p] = tmp[i];
                            i += 1;
                        });
                    }
                }
            }
            Kind::R2c { axis } => {
                let mut work_shape = out_shape.clone();
                work_shape[nd - 1] = self.real_len(axis);
                let n = work_shape[nd - 1];
                let mut copy = Vec::new();
                let real = real_input::<T>(x, &work_shape, &mut copy);
                let o = slice_mut::<Complex<T>>(out, T::COMPLEX);
                r2c_rows(real, n, o, out_shape[nd - 1], self.scale(n, false));
            }
            Kind::R2c2 => {
                let mut work_shape = out_shape.clone();
                work_shape[nd - 1] = self.real_len(nd - 1);
                let (n1, n2) = (work_shape[nd - 2], work_shape[nd - 1]);
                let h = out_shape[nd - 1];
                let batch = numel(&out_shape[..nd - 2]);
                let mut copy = Vec::new();
                let real = real_input::<T>(x, &work_shape, &mut copy);
                let o = slice_mut::<Complex<T>>(out, T::COMPLEX);
                r2c_rows(real, n2, o, h, None);
                c2c_axis(o, batch, n1, h, h, false, self.scale(n1 * n2, false));
            }
            Kind::C2r { .. } => {
                let n = out_shape[nd - 1];
                let mut work_shape = out_shape.clone();
                work_shape[nd - 1] = n / 2 + 1;
                let mut spec = vec![Complex::new(T::of(0.0), T::of(0.0)); numel(&work_shape)];
                load_value(x, &x.layout, &mut spec, &work_shape);
                let o = slice_mut::<T>(out, T::REAL);
                c2r_rows(&spec, n, o, self.scale(n, true));
            }
            Kind::C2r2 => {
                let (n1, n2) = (out_shape[nd - 2], out_shape[nd - 1]);
                let h = n2 / 2 + 1;
                let batch = numel(&out_shape[..nd - 2]);
                let mut work_shape = out_shape.clone();
                work_shape[nd - 1] = h;
                let mut spec = vec![Complex::new(T::of(0.0), T::of(0.0)); numel(&work_shape)];
                load_value(x, &x.layout, &mut spec, &work_shape);
                c2c_axis(&mut spec, batch, n1, h, h, true, None);
                let o = slice_mut::<T>(out, T::REAL);
                c2r_rows(&spec, n2, o, self.scale(n1 * n2, true));
            }
            Kind::C2c { .. } | Kind::C2c2 { .. } | Kind::RealFull { .. } => {
                unreachable!("{} is not a transform of a real signal", self.name)
            }
        }
        Ok(())
    }
}

/// The transform of real input along `axis`, keeping the `n/2 + 1`
/// non-negative frequencies (NumPy's `fft.rfft`).
///
/// # Errors
/// As [`fft`](super::fft); [`Error::DType`](crate::Error::DType) for
/// complex input.
///
/// ```
/// use crossover::{Array, fft::{self, Norm}};
/// use num_complex::Complex64;
/// let x = Array::from_vec(vec![1.0f64, 1.0, 1.0, 1.0, 1.0], &[5])?;
/// let y = fft::rfft(&x, None, -1, Norm::Forward)?.to_vec::<Complex64>()?;
/// assert_eq!(y.len(), 3);
/// assert!((y[0].re - 1.0).abs() < 1e-12 && y[1].norm() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn rfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    const OP: &str = "rfft";
    let (work, out) = check_input(OP, x, 1, Some("fft"))?;
    let (ax, n) = axis_and_len(OP, x, axis, n)?;
    let x = x.cast(work)?;
    let mut in_shape = x.shape().to_vec();
    in_shape[ax] = n;
    let mut out_shape = in_shape.clone();
    out_shape[ax] = n / 2 + 1;
    record(
        OP,
        Kind::R2c { axis: ax },
        &x,
        in_shape,
        out_shape,
        out,
        norm,
    )
}

/// The inverse of [`rfft`] (NumPy's `fft.irfft`): `n` real points from the
/// non-negative frequencies along `axis`; `n` defaults to `2 * (m - 1)` for
/// `m` input points. Imaginary parts that a real signal cannot have (zero
/// and Nyquist frequencies) are ignored, like NumPy.
///
/// # Errors
/// As [`fft`](super::fft).
///
/// ```
/// use crossover::{Array, fft::{self, Norm}};
/// let x = Array::from_vec(vec![1.0f64, -2.0, 3.0, 0.5, 7.0], &[5])?;
/// let y = fft::rfft(&x, None, 0, Norm::Ortho)?;
/// let back = fft::irfft(&y, Some(5), 0, Norm::Ortho)?.to_vec::<f64>()?;
/// assert!((back[4] - 7.0).abs() < 1e-12);
/// # Ok::<(), crossover::Error>(())
/// ```
pub fn irfft(x: &Array, n: Option<usize>, axis: isize, norm: Norm) -> Result<Array> {
    const OP: &str = "irfft";
    let (work, _) = check_input(OP, x, 1, None)?;
    let ax = normalize_axis(OP, axis, x.ndim())?;
    let m = x.shape()[ax];
    let n = n.unwrap_or(2 * m.saturating_sub(1));
    check_len(OP, n, "for the output")?;
    let x = x.cast(work)?;
    let mut out_shape = x.shape().to_vec();
    out_shape[ax] = n;
    let real = work.real_part();
    record(
        OP,
        Kind::C2r { axis: ax },
        &x,
        x.shape().to_vec(),
        out_shape,
        real,
        norm,
    )
}

/// [`rfft`] over the last two axes (NumPy's `fft.rfft2`): output
/// `(..., n1, n2/2 + 1)`.
///
/// # Errors
/// As [`fft2`](super::fft2); [`Error::DType`](crate::Error::DType) for
/// complex input.
pub fn rfft2(x: &Array, norm: Norm) -> Result<Array> {
    const OP: &str = "rfft2";
    let (work, out) = check_input(OP, x, 2, Some("fft2"))?;
    check_last_two(OP, x)?;
    let nd = x.ndim();
    let x = x.cast(work)?;
    let in_shape = x.shape().to_vec();
    let mut out_shape = in_shape.clone();
    out_shape[nd - 1] = in_shape[nd - 1] / 2 + 1;
    record(OP, Kind::R2c2, &x, in_shape, out_shape, out, norm)
}

/// The inverse of [`rfft2`] (NumPy's `fft.irfft2`): `s` is the output's
/// last two axes, by default `(m1, 2 * (m2 - 1))`.
///
/// # Errors
/// As [`fft2`](super::fft2).
pub fn irfft2(x: &Array, s: Option<[usize; 2]>, norm: Norm) -> Result<Array> {
    const OP: &str = "irfft2";
    let (work, _) = check_input(OP, x, 2, None)?;
    let nd = x.ndim();
    let [n1, n2] = s.unwrap_or([x.shape()[nd - 2], 2 * x.shape()[nd - 1].saturating_sub(1)]);
    check_len(OP, n1 * n2, "for the output")?;
    // Crop/pad the first transformed axis to n1 with a resize of the input
    // shape the kernel reads (the last axis is resized inside).
    let x = x.cast(work)?;
    let mut out_shape = x.shape().to_vec();
    out_shape[nd - 2] = n1;
    out_shape[nd - 1] = n2;
    let real = work.real_part();
    record(
        OP,
        Kind::C2r2,
        &x,
        x.shape().to_vec(),
        out_shape,
        real,
        norm,
    )
}
