//! The measuring harness behind docs/benchmarks.md "Monte Carlo pi: where
//! the time goes" (2026-11-28, session 26): the AVX-512 Philox4x32-10
//! uniform generator of `crates/crossover/src/rng.rs` in three variants,
//! timed side by side on one thread for 2e8 float32 values (4,096 at a
//! time, as the interpreter fills a chunk), after checking that all three
//! give the same bits. "shift" is the generator before session 26,
//! "shuf+perm" the one in rng.rs since. A copy for measuring, not engine
//! code:
//!
//!     rustc --edition 2021 -O -C target-cpu=native philox_variants.rs -o /tmp/phx && /tmp/phx

use std::arch::x86_64::*;
use std::time::Instant;
const M0: u32 = 0xD251_1F53; const M1: u32 = 0xCD9E_8D57; const W0: u32 = 0x9E37_79B9; const W1: u32 = 0xBB67_AE85;
struct Keys { k0: [__m512i; 10], k1: [__m512i; 10], m0: __m512i, m1: __m512i, s2: __m512i, s3: __m512i }
#[target_feature(enable = "avx512f")]
fn keys(seed: u64, stream: u64) -> Keys {
    let (mut a, mut b) = (seed as u32, (seed >> 32) as u32);
    let mut k0 = [_mm512_setzero_si512(); 10]; let mut k1 = [_mm512_setzero_si512(); 10];
    for r in 0..10 { k0[r] = _mm512_set1_epi64(a as i64); k1[r] = _mm512_set1_epi64(b as i64); a = a.wrapping_add(W0); b = b.wrapping_add(W1); }
    Keys { k0, k1, m0: _mm512_set1_epi64(M0 as i64), m1: _mm512_set1_epi64(M1 as i64), s2: _mm512_set1_epi64(stream as u32 as i64), s3: _mm512_set1_epi64((stream >> 32) as i64) }
}
#[inline] #[target_feature(enable = "avx512f")]
fn groups<const G: usize, const SHUF: bool>(k: &Keys, b0: u64) -> [[__m512i; 4]; G] {
    let lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let mut c = [[_mm512_setzero_si512(); 4]; G];
    for (j, cj) in c.iter_mut().enumerate() { let b = _mm512_add_epi64(_mm512_set1_epi64((b0 + 8 * j as u64) as i64), lanes); *cj = [b, _mm512_srli_epi64::<32>(b), k.s2, k.s3]; }
    for r in 0..10 { for cj in c.iter_mut() {
        let p0 = _mm512_mul_epu32(cj[0], k.m0); let p1 = _mm512_mul_epu32(cj[2], k.m1);
        let (hi0, hi1) = if SHUF { (_mm512_shuffle_epi32::<_MM_PERM_CDAB>(p0), _mm512_shuffle_epi32::<_MM_PERM_CDAB>(p1)) } else { (_mm512_srli_epi64::<32>(p0), _mm512_srli_epi64::<32>(p1)) };
        let n0 = _mm512_ternarylogic_epi64::<0x96>(hi1, cj[1], k.k0[r]); let n2 = _mm512_ternarylogic_epi64::<0x96>(hi0, cj[3], k.k1[r]);
        *cj = [n0, p1, n2, p0];
    } }
    c
}
#[inline] #[target_feature(enable = "avx512f")]
fn store_uniform<const PERM: bool>(w: [__m512i; 4], o: &mut [f32]) {
    let lo = _mm512_set1_epi64(0xffff_ffff);
    let first = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0); let second = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    let scale = _mm512_set1_ps(1.0 / 16_777_216.0);
    let (w01, w23) = if PERM {
        let pick = _mm512_set_epi32(30, 14, 28, 12, 26, 10, 24, 8, 22, 6, 20, 4, 18, 2, 16, 0);
        let _ = lo;
        (_mm512_permutex2var_epi32(w[0], pick, w[1]), _mm512_permutex2var_epi32(w[2], pick, w[3]))
    } else {
        (_mm512_ternarylogic_epi64::<0xf8>(_mm512_slli_epi64::<32>(w[1]), w[0], lo),
         _mm512_ternarylogic_epi64::<0xf8>(_mm512_slli_epi64::<32>(w[3]), w[2], lo))
    };
    let a = _mm512_permutex2var_epi64(w01, first, w23); let b = _mm512_permutex2var_epi64(w01, second, w23);
    let fa = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32::<8>(a)), scale); let fb = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32::<8>(b)), scale);
    assert!(o.len() >= 32);
    unsafe { _mm512_storeu_ps(o.as_mut_ptr(), fa); _mm512_storeu_ps(o.as_mut_ptr().add(16), fb); }
}
#[target_feature(enable = "avx512f")]
unsafe fn fill<const SHUF: bool, const PERM: bool>(seed: u64, stream: u64, first_block: u64, out: &mut [f32]) {
    let k = keys(seed, stream); let mut b = first_block;
    for o in out.chunks_exact_mut(128) { let c = groups::<4, SHUF>(&k, b); for (j, w) in c.into_iter().enumerate() { store_uniform::<PERM>(w, &mut o[32 * j..]); } b += 32; }
}
fn main() {
    let n = 4096usize; let total = 200_000_000usize; // 2e8 values, like monte_carlo_pi 1e8
    let mut a = vec![0f32; n]; let mut bb = vec![0f32; n];
    let mut cc = vec![0f32; n]; unsafe { fill::<false, false>(7, 3, 100, &mut a); fill::<true, false>(7, 3, 100, &mut bb); fill::<true, true>(7, 3, 100, &mut cc); }
    assert_eq!(a, bb); assert_eq!(a, cc);
    for round in 0..3 { for (shuf, perm) in [(false, false), (true, false), (true, true)] {
        let t0 = Instant::now(); let mut s = 0f32;
        for c in 0..total / n { unsafe { match (shuf, perm) { (true, true) => fill::<true, true>(7, 3, (c * n / 4) as u64, &mut a), (true, false) => fill::<true, false>(7, 3, (c * n / 4) as u64, &mut a), _ => fill::<false, false>(7, 3, (c * n / 4) as u64, &mut a) } } s += a[c % n]; }
        let dt = t0.elapsed().as_secs_f64();
        println!("round {round} {} {:.1} ms for 2e8 values one thread ({:.3} ns/value) {s}", match (shuf, perm) { (true, true) => "shuf+perm", (true, false) => "shuffle  ", _ => "shift    " }, dt * 1e3, dt * 1e9 / total as f64);
    } }
}
