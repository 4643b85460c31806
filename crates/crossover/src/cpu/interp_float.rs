//! The float-only unary functions of the interpreter ([`super::unary`]'s
//! transcendental arm): each op's loop over a chunk, AVX-512 kernels where
//! the CPU has them, else the vectorisable portable functions.

use super::Arg;
use crate::cpu::math32_exp512::{cosh_slice_f32, exp2_slice_f32, sinh_slice_f32};
use crate::cpu::math32_tanh512::tanh_slice_f32;
use crate::cpu::math64_asin512::{acos_slice_f64, asin_slice_f64};
use crate::cpu::math64_exp512::{
    cosh_slice_f64, exp2_slice_f64, exp_slice_f64, expm1_slice_f64, sinh_slice_f64, tanh_slice_f64,
};
use crate::cpu::math_log::{log_slice_f32, log_slice_f64, LogBase};
use crate::cpu::math_log1p512::{
    acosh_slice_f32, acosh_slice_f64, asinh_slice_f32, asinh_slice_f64, atanh_slice_f32,
    atanh_slice_f64, log1p_slice_f32, log1p_slice_f64,
};
use crate::cpu::{math, math32_hyp, math32_inverse, math64, math64_hyp, math64_inverse};
use crate::op::UnaryOp;

/// Float-only unary functions, at slice level (f32 uses the vectorised
/// polynomials of [`math`], f64 those of [`math64`]).
pub trait UnaryFloat: Sized {
    fn unary_float(op: UnaryOp, x: Arg<'_, Self>, out: &mut [Self]);
}

macro_rules! no_float_unary {
    ($($t:ty),*) => {$(
        impl UnaryFloat for $t {
            #[inline(always)]
            fn unary_float(op: UnaryOp, _: Arg<'_, Self>, _: &mut [Self]) {
                unreachable!("{} on {}: the recorder casts to float first", op.name(), stringify!($t))
            }
        }
    )*};
}
no_float_unary!(u8, i32, i64, u64);

/// The body both float types share: the source as a slice (a splat as one
/// element, broadcast afterwards) and `out` cut to its length.
macro_rules! float_unary {
    ($t:ty, $x:ident, $out:ident, |$src:ident, $dst:ident| $body:expr) => {{
        let splat;
        let $src: &[$t] = match $x {
            Arg::Slice(s) => s,
            Arg::Splat(v) => {
                splat = [v];
                &splat
            }
        };
        let n = $src.len();
        let $dst = &mut $out[..n];
        $body;
        if n == 1 && $out.len() > 1 {
            let v = $out[0];
            $out.iter_mut().for_each(|o| *o = v);
        }
    }};
}

/// `dst[i] = f(src[i])`, with `f` called in the loop body itself, not
/// passed as a `fn` item to `map1`: LLVM compiled the `Fn::call` shim of a
/// fn item as a separate function without the caller's FMA and AVX
/// features, which made a lone `exp` 30x slower (software `fmaf`).
macro_rules! each {
    ($src:ident, $dst:ident, $f:path) => {
        for (o, &v) in $dst.iter_mut().zip($src) {
            *o = $f(v);
        }
    };
}

/// `$kernel`, a call of an AVX-512 kernel over the chunk
/// ([`super::math_log`], [`super::math64_exp512`]) that returns false
/// where the CPU lacks AVX-512, else `each!` of the portable function.
macro_rules! avx512_or_each {
    ($kernel:expr, $src:ident, $dst:ident, $f:path) => {
        if !$kernel {
            each!($src, $dst, $f)
        }
    };
}

impl UnaryFloat for f32 {
    #[inline(always)]
    fn unary_float(op: UnaryOp, x: Arg<'_, f32>, out: &mut [f32]) {
        float_unary!(f32, x, out, |s, d| match op {
            UnaryOp::Sqrt => each!(s, d, f32::sqrt),
            UnaryOp::Exp => each!(s, d, math::exp_f32),
            // AVX-512 where the CPU has it (math_log), else the portable
            // functions.
            UnaryOp::Log => avx512_or_each!(log_slice_f32(LogBase::E, s, d), s, d, math::log_f32),
            UnaryOp::Log2 =>
                avx512_or_each!(log_slice_f32(LogBase::Two, s, d), s, d, math::log2_f32),
            UnaryOp::Log10 =>
                avx512_or_each!(log_slice_f32(LogBase::Ten, s, d), s, d, math::log10_f32),
            UnaryOp::Exp2 => avx512_or_each!(exp2_slice_f32(s, d), s, d, math::exp2_f32),
            UnaryOp::Tanh => avx512_or_each!(tanh_slice_f32(s, d), s, d, math::tanh_f32),
            UnaryOp::Sin => math::trig_slice!(f32, s, d, math::sin_f32, f64::sin),
            UnaryOp::Cos => math::trig_slice!(f32, s, d, math::cos_f32, f64::cos),
            UnaryOp::Tan =>
                math::trig_slice!(f32, s, d, math::tan_f32, f64::tan, math::TAN_FAST_LIMIT_F32),
            // Native float32 too (within 2 ulp; arcsin 3): math32_hyp,
            // math32_inverse; with AVX-512 log1p and the inverse
            // hyperbolics in math_log1p512 (log1p within 1 ulp), exp2, sinh
            // and cosh in math32_exp512.
            UnaryOp::Log1p => avx512_or_each!(log1p_slice_f32(s, d), s, d, math32_hyp::log1p_f32),
            UnaryOp::Expm1 => each!(s, d, math32_hyp::expm1_f32),
            UnaryOp::Arcsin => each!(s, d, math32_inverse::asin_f32),
            UnaryOp::Arccos => each!(s, d, math32_inverse::acos_f32),
            UnaryOp::Arctan => each!(s, d, math32_inverse::atan_f32),
            UnaryOp::Sinh => avx512_or_each!(sinh_slice_f32(s, d), s, d, math32_hyp::sinh_f32),
            UnaryOp::Cosh => avx512_or_each!(cosh_slice_f32(s, d), s, d, math32_hyp::cosh_f32),
            UnaryOp::Arcsinh => avx512_or_each!(asinh_slice_f32(s, d), s, d, math32_hyp::asinh_f32),
            UnaryOp::Arccosh => avx512_or_each!(acosh_slice_f32(s, d), s, d, math32_hyp::acosh_f32),
            UnaryOp::Arctanh => avx512_or_each!(atanh_slice_f32(s, d), s, d, math32_hyp::atanh_f32),
            _ => unreachable!("not a float function: {}", op.name()),
        })
    }
}

impl UnaryFloat for f64 {
    #[inline(always)]
    fn unary_float(op: UnaryOp, x: Arg<'_, f64>, out: &mut [f64]) {
        float_unary!(f64, x, out, |s, d| match op {
            UnaryOp::Sqrt => each!(s, d, f64::sqrt),
            // The vectorised functions of [`math64`] (within 1-2 ulp of libm).
            UnaryOp::Exp => avx512_or_each!(exp_slice_f64(s, d), s, d, math64::exp_f64),
            UnaryOp::Log => avx512_or_each!(log_slice_f64(LogBase::E, s, d), s, d, math64::log_f64),
            UnaryOp::Exp2 => avx512_or_each!(exp2_slice_f64(s, d), s, d, math64::exp2_f64),
            UnaryOp::Log2 =>
                avx512_or_each!(log_slice_f64(LogBase::Two, s, d), s, d, math64::log2_f64),
            UnaryOp::Log10 =>
                avx512_or_each!(log_slice_f64(LogBase::Ten, s, d), s, d, math64::log10_f64),
            UnaryOp::Sin => math::trig_slice!(f64, s, d, math64::sin_f64, f64::sin),
            UnaryOp::Cos => math::trig_slice!(f64, s, d, math64::cos_f64, f64::cos),
            UnaryOp::Tan => math::trig_slice!(f64, s, d, math64::tan_f64, f64::tan),
            // Vectorised too (math64_hyp, math64_inverse; with AVX-512 the
            // exponentials in math64_exp512, log1p and the inverse
            // hyperbolics in math_log1p512, arcsin and arccos in
            // math64_asin512): within 1 ulp of the true value; within 2 of
            // glibc where glibc is itself more than 1 off (tanh, sinh,
            // cosh, the inverse hyperbolics).
            UnaryOp::Tanh => avx512_or_each!(tanh_slice_f64(s, d), s, d, math64_hyp::tanh_f64),
            UnaryOp::Log1p => avx512_or_each!(log1p_slice_f64(s, d), s, d, math64_hyp::log1p_f64),
            UnaryOp::Expm1 => avx512_or_each!(expm1_slice_f64(s, d), s, d, math64_hyp::expm1_f64),
            UnaryOp::Sinh => avx512_or_each!(sinh_slice_f64(s, d), s, d, math64_hyp::sinh_f64),
            UnaryOp::Cosh => avx512_or_each!(cosh_slice_f64(s, d), s, d, math64_hyp::cosh_f64),
            UnaryOp::Arcsinh => avx512_or_each!(asinh_slice_f64(s, d), s, d, math64_hyp::asinh_f64),
            UnaryOp::Arccosh => avx512_or_each!(acosh_slice_f64(s, d), s, d, math64_hyp::acosh_f64),
            UnaryOp::Arctanh => avx512_or_each!(atanh_slice_f64(s, d), s, d, math64_hyp::atanh_f64),
            UnaryOp::Arcsin =>
                avx512_or_each!(asin_slice_f64(s, d), s, d, math64_inverse::asin_f64),
            UnaryOp::Arccos =>
                avx512_or_each!(acos_slice_f64(s, d), s, d, math64_inverse::acos_f64),
            UnaryOp::Arctan => each!(s, d, math64_inverse::atan_f64),
            _ => unreachable!("not a float function: {}", op.name()),
        })
    }
}
