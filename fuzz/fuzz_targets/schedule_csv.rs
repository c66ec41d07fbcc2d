//! Fuzz the schedule CSV reader (`Schedule::parse_csv`, what `--schedule FILE.csv` reads):
//! arbitrary text must give a valid schedule or an error naming a line, never a panic, and
//! a schedule's phases must be valid with at most 10⁷ steps in all.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::accounting::schedule::{Schedule, MAX_TOTAL_STEPS};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = Schedule::parse_csv(&text) {
        assert!(!s.phases().is_empty() && s.total_steps() <= MAX_TOTAL_STEPS);
        for p in s.phases() {
            assert!(p.sampling_rate > 0.0 && p.sampling_rate <= 1.0);
            assert!(p.noise_multiplier > 0.0 && p.noise_multiplier.is_finite());
            assert!(p.steps >= 1);
        }
        let g = s.grouped();
        assert_eq!(g.iter().map(|p| p.steps).sum::<u64>(), s.total_steps());
    }
});
