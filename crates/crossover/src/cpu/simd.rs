//! Run-time SIMD dispatch.
//!
//! Hot loops are written once as `#[inline(always)]` plain Rust over slices
//! and compiled three times: for AVX-512, for AVX2+FMA and for the baseline.
//! [`simd_dispatch!`] makes the entry point that picks the best version the
//! CPU supports (detected once). `CROSSOVER_SIMD=avx2|scalar` caps the level,
//! for testing the other paths on a machine that has AVX-512.

use std::sync::OnceLock;

/// The widest instruction set the CPU kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    Scalar,
    Avx2,
    Avx512,
}

impl SimdLevel {
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar (no AVX2)",
            SimdLevel::Avx2 => "AVX2+FMA (256-bit)",
            SimdLevel::Avx512 => "AVX-512 (512-bit)",
        }
    }

    /// f32 lanes per vector register.
    pub fn f32_lanes(self) -> usize {
        match self {
            SimdLevel::Scalar => 4,
            SimdLevel::Avx2 => 8,
            SimdLevel::Avx512 => 16,
        }
    }
}

fn detect() -> SimdLevel {
    #[cfg(target_arch = "x86_64")]
    let found = {
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("avx2")
        {
            SimdLevel::Avx512
        } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            SimdLevel::Avx2
        } else {
            SimdLevel::Scalar
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let found = SimdLevel::Scalar;
    let cap = match std::env::var("CROSSOVER_SIMD").ok().as_deref() {
        Some("scalar") => SimdLevel::Scalar,
        Some("avx2") => SimdLevel::Avx2,
        None | Some("" | "avx512") => SimdLevel::Avx512,
        Some(other) => {
            crate::env::warn(
                "CROSSOVER_SIMD",
                other,
                "expected avx512, avx2 or scalar; using the best level this CPU has",
            );
            SimdLevel::Avx512
        }
    };
    found.min(cap)
}

/// The SIMD level in use (detected on first call).
pub fn level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(detect)
}

/// Defines `fn $name(args) -> ret` that calls `$imp(args)` compiled for the
/// best available instruction set. `$imp` must be `#[inline(always)]` (and
/// so must everything it calls in its hot loops) for the features to apply.
macro_rules! simd_dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? => $imp:path) => {
        $(#[$m])*
        $vis fn $name $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                unsafe fn avx512 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? { $imp($($arg),*) }
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                unsafe fn avx2 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? { $imp($($arg),*) }
                match $crate::cpu::simd::level() {
                    // SAFETY: level() only reports features the CPU has.
                    $crate::cpu::simd::SimdLevel::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: as above.
                    $crate::cpu::simd::SimdLevel::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::cpu::simd::SimdLevel::Scalar => {}
                }
            }
            $imp($($arg),*)
        }
    };
}
pub(crate) use simd_dispatch;

/// Runs an AVX-512 kernel over `x` into `out` where [`level`] selects
/// AVX-512, and says so; false (nothing written) elsewhere, for the
/// portable loop. `kernel` must enable no feature beyond AVX-512
/// F/VL/DQ/BW, AVX2 and FMA, and read `out.len()` points of `x`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn avx512_slice<T>(
    what: &str,
    x: &[T],
    out: &mut [T],
    kernel: unsafe fn(*const T, &mut [T]),
) -> bool {
    if level() != SimdLevel::Avx512 {
        return false;
    }
    assert!(x.len() >= out.len(), "{what}: input shorter than output");
    // SAFETY: level() reports AVX-512 only where the CPU has every feature
    // the kernel enables; x holds out.len() points (asserted).
    unsafe { kernel(x.as_ptr(), out) };
    true
}
