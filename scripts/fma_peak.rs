//! The fused multiply-add peak of one core, in 256-bit and (where the CPU has AVX-512F) 512-bit
//! vectors, f64 and f32: the figures the README's "Dense kernels" states the
//! products' rates against (issue 32). A stand-alone program, not part of the crate (which
//! has no `unsafe`): calling a `#[target_feature]` function needs an `unsafe` block here, each
//! one behind a run-time check that the CPU has the feature.
//!
//! ```text
//! rustc --edition 2021 -C opt-level=3 scripts/fma_peak.rs -o target/fma_peak && taskset -c 1 target/fma_peak
//! ```
//!
//! Each measurement runs 12 independent chains of vector fmas (v ← a·b + v, as a product's
//! accumulators do) for 2·10⁸ steps: the units' throughput, not their latency (12 chains
//! cover 2 units × 4 cycles of latency). Three rounds;
//! the spread is the machine's.

use std::arch::x86_64::*;
use std::hint::black_box;
use std::time::Instant;

const STEPS: u64 = 200_000_000;

macro_rules! chains {
    ($name:ident, $feat:literal, $vec:ty, $set1:ident, $fmadd:ident, $lanes:expr, $t:ty) => {
        /// Multiply-adds per second of 12 chains of `$lanes`-lane fmas.
        #[target_feature(enable = $feat)]
        fn $name() -> f64 {
            let (a, b) = ($set1(black_box(0.999 as $t)), $set1(black_box(1e-9 as $t)));
            let mut acc: [$vec; 12] = core::array::from_fn(|i| $set1(black_box(i as $t)));
            let t = Instant::now();
            for _ in 0..STEPS {
                for v in acc.iter_mut() {
                    *v = $fmadd(a, b, *v);
                }
            }
            let secs = t.elapsed().as_secs_f64();
            black_box(acc);
            (STEPS * 12 * $lanes) as f64 / secs
        }
    };
}

chains!(
    f64_256,
    "avx2,fma",
    __m256d,
    _mm256_set1_pd,
    _mm256_fmadd_pd,
    4,
    f64
);
chains!(
    f32_256,
    "avx2,fma",
    __m256,
    _mm256_set1_ps,
    _mm256_fmadd_ps,
    8,
    f32
);
chains!(
    f64_512,
    "avx512f",
    __m512d,
    _mm512_set1_pd,
    _mm512_fmadd_pd,
    8,
    f64
);
chains!(
    f32_512,
    "avx512f",
    __m512,
    _mm512_set1_ps,
    _mm512_fmadd_ps,
    16,
    f32
);

fn main() {
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
        println!("this CPU has no AVX2 with FMA: no vector fma peak to measure");
        return;
    }
    let wide = is_x86_feature_detected!("avx512f");
    for round in 1..=3 {
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        let (d256, s256) = unsafe { (f64_256(), f32_256()) };
        print!(
            "round {round}: 256-bit: f64 {:.1} GFLOP/s, f32 {:.1}",
            2.0 * d256 / 1e9,
            2.0 * s256 / 1e9
        );
        if wide {
            // SAFETY: the CPU has AVX-512F (checked above).
            let (d512, s512) = unsafe { (f64_512(), f32_512()) };
            print!(
                "; 512-bit: f64 {:.1} GFLOP/s, f32 {:.1}",
                2.0 * d512 / 1e9,
                2.0 * s512 / 1e9
            );
        }
        println!();
    }
}
