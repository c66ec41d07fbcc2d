//! Property tests of the command line's readers (shard files, merge).

#[path = "../common/mod.rs"]
mod common;

mod reader_properties;

#[test]
fn property_tests_use_a_fixed_seed() {
    let seed =
        std::env::var("PROPTEST_RNG_SEED").expect("PROPTEST_RNG_SEED set by .cargo/config.toml");
    let seed: u64 = seed.parse().expect("a u64 seed");
    eprintln!("proptest seed: {seed}");
}
