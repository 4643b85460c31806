//! Every transform as a sequence of complex steps over contiguous
//! buffers, for devices that run FFTs as passes (the GPU core): load the
//! input into a complex work array (cropping and zero-padding each axis as
//! NumPy's `n`/`s` do), transform one axis at a time, and for inverse real
//! transforms extend the half spectrum and keep the real part.
//!
//! Real inputs are transformed as complex ones with zero imaginary parts,
//! and `rfft`'s half spectrum is the first `n/2 + 1` outputs of the full
//! one; an inverse real transform's extension `X[n - k] = conj(X[k])`
//! followed by the real part of a complex inverse ignores the imaginary
//! parts of the zero and Nyquist terms, as pocketfft's and rustfft's
//! complex-to-real transforms do.

use super::{FftOp, Kind};

/// One step of a transform on a contiguous complex array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Transform along `axis` (length `n`), keep the first `keep` outputs
    /// along it, multiply by `scale`.
    Axis {
        axis: usize,
        n: usize,
        inverse: bool,
        keep: usize,
        scale: f64,
    },
    /// Extend the half spectrum along `axis` (`n / 2 + 1` entries) to all
    /// `n` by Hermitian symmetry.
    Extend { axis: usize, n: usize },
    /// Keep the real parts (the output is real).
    Real,
}

impl FftOp {
    /// The shape the input is loaded into (as complex) and the steps that
    /// turn it into the output.
    pub fn steps(&self) -> (Vec<usize>, Vec<Step>) {
        let out = &self.out_shape;
        let nd = out.len();
        let (last, prev) = (nd - 1, nd.saturating_sub(2));
        let scale = |n: usize, inverse: bool| self.norm.factor(n, inverse).unwrap_or(1.0);
        let axis = |axis: usize, n: usize, inverse: bool, keep: usize, scale: f64| Step::Axis {
            axis,
            n,
            inverse,
            keep,
            scale,
        };
        let with = |ax: usize, len: usize| {
            let mut s = out.clone();
            s[ax] = len;
            s
        };
        match self.kind {
            Kind::C2c { axis: ax, inverse } => {
                let n = out[ax];
                (
                    out.clone(),
                    vec![axis(ax, n, inverse, n, scale(n, inverse))],
                )
            }
            Kind::C2c2 { inverse } => {
                let (n1, n2) = (out[prev], out[last]);
                (
                    out.clone(),
                    vec![
                        axis(last, n2, inverse, n2, 1.0),
                        axis(prev, n1, inverse, n1, scale(n1 * n2, inverse)),
                    ],
                )
            }
            Kind::RealFull { two_d: false } => {
                let n = out[last];
                (out.clone(), vec![axis(last, n, false, n, scale(n, false))])
            }
            Kind::RealFull { two_d: true } => {
                let (n1, n2) = (out[prev], out[last]);
                (
                    out.clone(),
                    vec![
                        axis(last, n2, false, n2, 1.0),
                        axis(prev, n1, false, n1, scale(n1 * n2, false)),
                    ],
                )
            }
            Kind::R2c { axis: ax } => {
                let n = self.in_shape[ax];
                (
                    with(ax, n),
                    vec![axis(ax, n, false, out[ax], scale(n, false))],
                )
            }
            Kind::R2c2 => {
                let (n1, n2) = (out[prev], self.in_shape[last]);
                (
                    with(last, n2),
                    vec![
                        axis(last, n2, false, out[last], 1.0),
                        axis(prev, n1, false, n1, scale(n1 * n2, false)),
                    ],
                )
            }
            Kind::C2r { axis: ax } => {
                let n = out[ax];
                (
                    with(ax, n / 2 + 1),
                    vec![
                        Step::Extend { axis: ax, n },
                        axis(ax, n, true, n, scale(n, true)),
                        Step::Real,
                    ],
                )
            }
            Kind::C2r2 => {
                let (n1, n2) = (out[prev], out[last]);
                (
                    with(last, n2 / 2 + 1),
                    vec![
                        axis(prev, n1, true, n1, 1.0),
                        Step::Extend { axis: last, n: n2 },
                        axis(last, n2, true, n2, scale(n1 * n2, true)),
                        Step::Real,
                    ],
                )
            }
        }
    }

    /// The lengths this transform's axis steps take (for devices that run
    /// only some lengths).
    pub fn step_lengths(&self) -> Vec<usize> {
        self.steps()
            .1
            .iter()
            .filter_map(|s| match s {
                Step::Axis { n, .. } => Some(*n),
                _ => None,
            })
            .collect()
    }
}
