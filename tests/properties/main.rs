//! Integration tests: properties.

#[path = "../common/mod.rs"]
mod common;

mod rdp_properties;

mod pld_properties;
mod rero_properties;

/// `cargo test` runs the property tests with the fixed seed of `.cargo/config.toml`, so every
/// run draws the same cases (override with `PROPTEST_RNG_SEED=<u64>` to explore others).
#[test]
fn property_tests_use_a_fixed_seed() {
    let seed =
        std::env::var("PROPTEST_RNG_SEED").expect("PROPTEST_RNG_SEED set by .cargo/config.toml");
    let seed: u64 = seed.parse().expect("a u64 seed");
    eprintln!("proptest seed: {seed}");
}
