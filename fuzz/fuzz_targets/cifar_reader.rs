//! Fuzz the CIFAR-10 binary reader: arbitrary bytes must give `Ok` or `Err`, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::data::cifar;

fuzz_target!(|data: &[u8]| {
    if let Ok(ds) = cifar::parse(data) {
        assert_eq!(ds.len() * cifar::RECORD_LEN, data.len());
        assert_eq!(ds.shape(), (3, 32, 32));
        assert!(ds.labels().iter().all(|&l| l < 10));
    }
});
