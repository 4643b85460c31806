//! The two preludes that turn one kernel body into OpenCL C or CUDA C.
//!
//! Kernel bodies are written once against the macros below (`KERNEL`,
//! `GLOBAL`, `GLOBAL_ID`, `LOCAL_ID`, `BARRIER()`, `TREE_BARRIER(h)`,
//! `LOCAL_ARRAY`, `XO_FN`, the fixed-width types `i32 i64 u32 u64 u8 f32 f64`, and the math names
//! `xo_sin_f32`...). The OpenCL prelude maps them to `__kernel`,
//! `__global`, `get_global_id(0)`...; the CUDA prelude to
//! `extern "C" __global__`, nothing, `blockIdx.x * blockDim.x +
//! threadIdx.x`... So what CI executes on pocl is the text NVRTC compiles
//! for NVIDIA. The shared helpers (Philox, NumPy's casts, integer powers)
//! follow the prelude and are dialect-neutral.

use std::fmt::Write;

/// The kernel language a GPU API compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenCL C 1.2 and later (pocl, AMD, Intel, NVIDIA's OpenCL).
    OpenCl,
    /// CUDA C++ for NVRTC.
    Cuda,
}

impl Dialect {
    /// `"opencl"` or `"cuda"`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenCl => "opencl",
            Dialect::Cuda => "cuda",
        }
    }
}

/// What the device can do, as far as the source text is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features {
    /// Double precision (`cl_khr_fp64`; every CUDA device).
    pub fp64: bool,
}

/// Math functions rendered as `xo_<name>_f32` / `xo_<name>_f64` (log1p is
/// [`LOG1P`]).
const MATH: [&str; 25] = [
    "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "floor", "ceil", "fabs", "pow", "expm1",
    "log10", "log2", "exp2", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "atan2", "hypot",
];

/// log1p returns tiny arguments as they are (their log1p rounds to them):
/// pocl's float64 log1p gave +0 for -5e-324, where C99 and the CPU give
/// the argument. `$F` is the float type, `$S` the CUDA suffix of its math
/// functions.
const LOG1P: &str = "XO_FN $F xo_log1p_$F($F x) { return fabs$S(x) < $T ? x : log1p$S(x); }\n";

const OPENCL: &str = r#"// OpenCL prelude
#pragma OPENCL FP_CONTRACT OFF
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL_ARRAY(t, name, n) __local t name[n]
#define GLOBAL_ID ((i64)get_global_id(0))
#define GLOBAL_SIZE ((i64)get_global_size(0))
#define LOCAL_ID ((int)get_local_id(0))
#define LOCAL_SIZE ((int)get_local_size(0))
#define GROUP_ID ((i64)get_group_id(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define TREE_BARRIER(h) barrier(CLK_LOCAL_MEM_FENCE)
#define MULHI(a, b) mul_hi((uint)(a), (uint)(b))
#define XO_FN static inline
#define XO_ASSERT_LAYOUT(cond)
typedef char i8;
typedef uchar u8;
typedef int i32;
typedef uint u32;
typedef long i64;
typedef ulong u64;
typedef float f32;
"#;

const CUDA: &str = r#"// CUDA prelude
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL_ARRAY(t, name, n) __shared__ t name[n]
#define GLOBAL_ID ((i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x)
#define GLOBAL_SIZE ((i64)gridDim.x * (i64)blockDim.x)
#define LOCAL_ID ((int)threadIdx.x)
#define LOCAL_SIZE ((int)blockDim.x)
#define GROUP_ID ((i64)blockIdx.x)
#define BARRIER() __syncthreads()
// After a tree step of width h <= 32 every writer and the next step's
// readers are in warp 0: a warp barrier orders them (same merges, same
// bits, without stalling the block).
#define TREE_BARRIER(h) do { if ((h) > 32) __syncthreads(); else __syncwarp(); } while (0)
#define MULHI(a, b) __umulhi((unsigned int)(a), (unsigned int)(b))
#define XO_FN static __device__ __forceinline__
#define XO_ASSERT_LAYOUT(cond) static_assert(cond, "kernel parameter layout differs from the host's")
typedef signed char i8;
typedef unsigned char u8;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;
"#;

/// Helpers shared by every kernel (dialect-neutral C).
const COMMON: &str = r#"#define XO_I64_MAX ((i64)0x7FFFFFFFFFFFFFFF)
#define XO_I64_MIN (-XO_I64_MAX - 1)
// Philox4x32-10 (crossover::rng, bit for bit).
typedef struct { u32 x, y, z, w; } xo_u4;
XO_FN xo_u4 xo_philox(u64 block, u64 seed, u64 stream) {
  xo_u4 c;
  c.x = (u32)block; c.y = (u32)(block >> 32); c.z = (u32)stream; c.w = (u32)(stream >> 32);
  u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    u32 lo0 = 0xD2511F53u * c.x, hi0 = MULHI(0xD2511F53u, c.x);
    u32 lo1 = 0xCD9E8D57u * c.z, hi1 = MULHI(0xCD9E8D57u, c.z);
    xo_u4 n;
    n.x = hi1 ^ c.y ^ k0; n.y = lo1; n.z = hi0 ^ c.w ^ k1; n.w = lo0;
    c = n; k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return c;
}
XO_FN u32 xo_word(xo_u4 w, int i) {
  return i == 0 ? w.x : (i == 1 ? w.y : (i == 2 ? w.z : w.w));
}
XO_FN f32 xo_uniform_f32(u64 seed, u64 stream, u64 j) {
  xo_u4 w = xo_philox(j >> 2, seed, stream);
  return (f32)(xo_word(w, (int)(j & 3)) >> 8) * 5.9604644775390625e-08f;
}
XO_FN f32 xo_normal_f32(u64 seed, u64 stream, u64 j) {
  xo_u4 w = xo_philox(j >> 2, seed, stream);
  int pair = (int)((j >> 1) & 1);
  u32 wa = pair ? w.z : w.x, wb = pair ? w.w : w.y;
  f32 u1 = (f32)((wa >> 8) + 1u) * 5.9604644775390625e-08f;
  f32 u2 = (f32)(wb >> 8) * 5.9604644775390625e-08f;
  f32 r = xo_sqrt_f32(-2.0f * xo_log_f32(u1));
  f32 t = 6.28318548202514648e+00f * u2;
  return (j & 1) ? r * xo_sin_f32(t) : r * xo_cos_f32(t);
}
// Integer power with wrapping products; negative exponents give NumPy's
// results for bases 1 and -1 and 0 otherwise (as the CPU backend).
XO_FN i64 xo_ipow(i64 b, i64 e) {
  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
  u64 r = 1, x = (u64)b;
  while (e > 0) { if (e & 1) r *= x; x *= x; e >>= 1; }
  return (i64)r;
}
// An integer power with an exponent read from an array: NumPy refuses
// negative ones, so this sets the kernel's second flag word and the host
// raises NumPy's error instead of returning the results.
XO_FN i64 xo_ipow_noted(i64 b, i64 e, GLOBAL u32* bad) {
  if (e < 0) bad[1] = 1u;
  return xo_ipow(b, e);
}
"#;

/// What a float-to-int cast of NaN, an infinity or an out-of-range value
/// gives: the host CPU's answer, so a kernel's results do not depend on
/// where it ran. x86's conversion instructions return the "integer
/// indefinite" value MIN; elsewhere casts saturate with NaN to 0.
const BAD_CAST: &str = if cfg!(target_arch = "x86_64") {
    "#define XO_BAD_CAST(x, lo, hi) (lo)\n"
} else {
    "#define XO_BAD_CAST(x, lo, hi) ((x) != (x) ? 0 : ((x) > 0 ? (hi) : (lo)))\n"
};

/// Float-to-int casts as the host CPU backend gives them (NumPy's astype
/// on this platform): in range, truncation; NaN, infinities and
/// out-of-range values give `XO_BAD_CAST` (C leaves them undefined). The
/// `_noted` form also sets `bad[0]`, the kernel's flag word that the host
/// turns into NumPy's "invalid value encountered in cast" warning (a plain
/// store: every writer stores 1, so the race is harmless). `$F` is the
/// float type, `$I` the integer one, `$LO`/`$HI` its range as `$F`
/// literals, `$MIN`/`$MAX` its limits.
const FLOAT_TO_INT: &str = r#"XO_FN $I xo_$F_to_$I($F x) {
  return (x >= $LO && x < $HI) ? ($I)x : ($I)XO_BAD_CAST(x, $MIN, $MAX);
}
XO_FN $I xo_$F_to_$I_noted($F x, GLOBAL u32* bad) {
  if (!(x >= $LO && x < $HI)) bad[0] = 1u;
  return xo_$F_to_$I(x);
}
"#;

/// [`FLOAT_TO_INT`] from float type `f` (`"f32"` or `"f64"`) to both
/// integer types.
fn float_to_int(f: &str) -> String {
    let sfx = if f == "f32" { "f" } else { "" };
    [
        ("i32", "2147483648.0", "(-2147483647 - 1)", "2147483647"),
        ("i64", "9223372036854775808.0", "XO_I64_MIN", "XO_I64_MAX"),
    ]
    .iter()
    .map(|(i, bound, min, max)| {
        FLOAT_TO_INT
            .replace("$F", f)
            .replace("$I", i)
            .replace("$LO", &format!("-{bound}{sfx}"))
            .replace("$HI", &format!("{bound}{sfx}"))
            .replace("$MIN", min)
            .replace("$MAX", max)
    })
    .collect()
}

/// Helpers that need double precision.
const COMMON_F64: &str = r#"XO_FN f64 xo_uniform_f64(u64 seed, u64 stream, u64 j) {
  xo_u4 w = xo_philox(j >> 1, seed, stream);
  u32 hi = (j & 1) ? w.z : w.x, lo = (j & 1) ? w.w : w.y;
  return (f64)((((u64)hi << 32) | (u64)lo) >> 11) * 1.1102230246251565e-16;
}
XO_FN f64 xo_normal_f64(u64 seed, u64 stream, u64 j) {
  xo_u4 w = xo_philox(j >> 1, seed, stream);
  f64 u1 = (f64)((((u64)w.x << 32) | (u64)w.y) >> 11) * 1.1102230246251565e-16 + 1.1102230246251565e-16;
  f64 u2 = (f64)((((u64)w.z << 32) | (u64)w.w) >> 11) * 1.1102230246251565e-16;
  f64 r = xo_sqrt_f64(-2.0 * xo_log_f64(u1));
  f64 t = 6.2831853071795862e+00 * u2;
  return (j & 1) ? r * xo_sin_f64(t) : r * xo_cos_f64(t);
}
"#;

/// [`LOG1P`] for float type `ty`, CUDA suffix `suffix`, below `tiny`.
fn log1p(ty: &str, suffix: &str, tiny: &str) -> String {
    LOG1P
        .replace("$F", ty)
        .replace("$S", suffix)
        .replace("$T", tiny)
}

/// The prelude and shared helpers for `dialect` on a device with
/// `features`: prepend it to one or more kernel bodies.
pub fn prelude(dialect: Dialect, features: Features) -> String {
    let mut s = String::with_capacity(8192);
    match dialect {
        Dialect::OpenCl => {
            s.push_str(OPENCL);
            if features.fp64 {
                s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double f64;\n");
            }
            for f in MATH {
                let _ = writeln!(s, "#define xo_{f}_f32 {f}");
                if features.fp64 {
                    let _ = writeln!(s, "#define xo_{f}_f64 {f}");
                }
            }
            s.push_str(&log1p("f32", "", "0x1p-25f"));
            if features.fp64 {
                s.push_str(&log1p("f64", "", "0x1p-54"));
            }
        }
        Dialect::Cuda => {
            s.push_str(CUDA);
            for f in MATH {
                let _ = writeln!(s, "#define xo_{f}_f32 {f}f\n#define xo_{f}_f64 {f}");
            }
            s.push_str(&log1p("f32", "f", "0x1p-25f"));
            s.push_str(&log1p("f64", "", "0x1p-54"));
        }
    }
    s.push_str(BAD_CAST);
    s.push_str(COMMON);
    s.push_str(&float_to_int("f32"));
    if features.fp64 {
        s.push_str(COMMON_F64);
        s.push_str(&float_to_int("f64"));
    }
    s
}
