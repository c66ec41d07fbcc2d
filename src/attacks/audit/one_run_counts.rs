//! The counts of a one-run audit (Steinke, Nasr & Jagielski 2023) and their validation,
//! shared by the (ε, δ) bound ([`super::epsilon`]) and the trade-off-curve bounds
//! ([`super::one_run_fdp`], [`super::one_run_family`]) one floor below them (issue 44: they
//! lived in `epsilon.rs`, which re-exports the curve bounds).

use crate::error::{Error, Result};

/// The counts of a one-run audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneRunCounts {
    /// m: canaries, each included independently with probability ½ (≥ 1).
    pub canaries: u64,
    /// r: guesses made (the canaries not abstained on), r ≤ m.
    pub guesses: u64,
    /// v: correct guesses, v ≤ r.
    pub correct: u64,
}

pub(super) fn check_one_run(c: OneRunCounts) -> Result<OneRunCounts> {
    if c.canaries == 0 {
        return Err(Error::InvalidCount {
            name: "canaries",
            value: 0,
            expected: ">= 1",
        });
    }
    if c.guesses > c.canaries {
        return Err(Error::InvalidCount {
            name: "guesses",
            value: c.guesses,
            expected: "<= canaries",
        });
    }
    if c.guesses >= 10_000_000 {
        return Err(Error::InvalidCount {
            name: "guesses",
            value: c.guesses,
            expected: "< 1e7 (the binomial tails' limit)",
        });
    }
    if c.correct > c.guesses {
        return Err(Error::InvalidCount {
            name: "correct",
            value: c.correct,
            expected: "<= guesses",
        });
    }
    Ok(c)
}
