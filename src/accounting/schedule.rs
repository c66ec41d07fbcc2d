//! Schedules of DP-SGD phases: runs that change the sampling rate q, the noise multiplier σ
//! or both between phases (warm-up, noise decay, fine-tuning on more data).
//!
//! A [`Schedule`] is a validated, non-empty list of [`Phase`]s (q, σ, T) with at most
//! [`MAX_TOTAL_STEPS`] steps in all. Phases compose adaptively, in order; since RDP and
//! PLD composition are commutative the order does not change any bound.
//! - RDP: the RDP curve of a schedule is the sum of its phases' curves at each order
//!   (Mironov 2017, Prop. 1), converted to (ε, δ) as for one phase ([`Schedule::epsilon_rdp`]).
//! - PLD: heterogeneous composition, see [`crate::accounting::pld_schedule`].
//! - ReRo: Hayes et al.'s γ of the composition, see [`crate::accounting::rero::schedule`].
//!
//! Every computation first merges adjacent phases with equal (q, σ) (by bits) into one
//! phase of the summed steps ([`Schedule::merged`]): that changes nothing mathematically, and
//! a schedule that merges into one phase gives the single-phase functions' results bit for
//! bit (the schedule functions delegate to them).
//!
//! # CSV format ([`Schedule::parse_csv`])
//! One phase per line: `sampling_rate,noise_multiplier,steps` (fields trimmed, `\r\n`
//! accepted). The header line `sampling_rate,noise_multiplier,steps` is optional (allowed
//! only as the first non-blank, non-comment line). Blank lines and lines whose first
//! non-blank character is `#` are ignored. Any other line that is not three numbers (the
//! steps an integer; `1e3` accepted when exact) is an error naming its 1-based line number.

use alloc::vec::Vec;
use core::fmt;

use crate::accounting::rdp::{self, Conversion, EpsilonBound, DEFAULT_ORDERS};
use crate::error::{check_dpsgd, check_open_unit, check_positive, Error, Result};

/// Largest total number of steps of a schedule (over all phases).
pub const MAX_TOTAL_STEPS: u64 = 10_000_000;

/// The CSV header accepted as the first line of a schedule file.
pub const CSV_HEADER: &str = "sampling_rate,noise_multiplier,steps";

/// One phase of a schedule: `steps` DP-SGD steps with Poisson sampling rate
/// `sampling_rate` and noise multiplier `noise_multiplier`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Poisson sampling rate q ∈ (0, 1].
    pub sampling_rate: f64,
    /// Noise multiplier σ (finite, > 0).
    pub noise_multiplier: f64,
    /// Number of steps T ≥ 1.
    pub steps: u64,
}

impl Phase {
    /// Parse `sampling_rate,noise_multiplier,steps` (fields trimmed; steps a non-negative
    /// integer, `1e3` accepted when exact). The values are not range-checked here (see
    /// [`Schedule::new`]).
    ///
    /// # Errors
    /// What is malformed, in words.
    pub fn parse(text: &str) -> core::result::Result<Phase, &'static str> {
        let mut it = text.split(',').map(str::trim);
        let (Some(q), Some(s), Some(t), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return Err("expected 3 comma-separated fields sampling_rate,noise_multiplier,steps");
        };
        let sampling_rate = q
            .parse::<f64>()
            .map_err(|_| "sampling_rate is not a number")?;
        let noise_multiplier = s
            .parse::<f64>()
            .map_err(|_| "noise_multiplier is not a number")?;
        let steps = parse_steps(t).ok_or("steps is not a non-negative integer")?;
        Ok(Phase {
            sampling_rate,
            noise_multiplier,
            steps,
        })
    }
}

/// Why a schedule is invalid.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// No phase at all.
    Empty,
    /// A CSV line that is not `sampling_rate,noise_multiplier,steps`.
    Malformed {
        /// 1-based line number.
        line: usize,
        /// What is wrong, in words.
        what: &'static str,
    },
    /// A phase with an invalid field.
    Phase {
        /// 1-based index of the phase.
        index: usize,
        /// 1-based CSV line of the phase, if it came from a CSV text.
        line: Option<usize>,
        /// The field's error (names the field, the value and the valid range).
        error: Error,
    },
    /// More than [`MAX_TOTAL_STEPS`] steps in all.
    TooManySteps {
        /// The total (saturated at `u64::MAX`).
        total: u64,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ScheduleError::Empty => f.write_str("the schedule is empty: give at least one phase"),
            ScheduleError::Malformed { line, what } => write!(f, "line {line}: {what}"),
            ScheduleError::Phase {
                index,
                line: Some(line),
                error,
            } => write!(f, "line {line} (phase {index}): {error}"),
            ScheduleError::Phase {
                index,
                line: None,
                error,
            } => write!(f, "phase {index}: {error}"),
            ScheduleError::TooManySteps { total } => write!(
                f,
                "the schedule has {total} steps in all: must be at most {MAX_TOTAL_STEPS}"
            ),
        }
    }
}

impl core::error::Error for ScheduleError {}

impl From<ScheduleError> for Error {
    /// The field error of a bad phase; [`Error::Inconsistent`] for an empty schedule or a
    /// malformed line (value: the line number); [`Error::InvalidCount`] `steps` for too many
    /// steps.
    fn from(e: ScheduleError) -> Error {
        match e {
            ScheduleError::Empty => Error::Inconsistent {
                what: "the schedule is empty",
                value: 0.0,
            },
            ScheduleError::Malformed { line, what } => Error::Inconsistent {
                what,
                value: line as f64,
            },
            ScheduleError::Phase { error, .. } => error,
            ScheduleError::TooManySteps { total } => Error::InvalidCount {
                name: "steps",
                value: total,
                expected: "at most 1e7 in all phases",
            },
        }
    }
}

/// A validated schedule: non-empty, every phase valid (q ∈ (0, 1], σ finite and > 0,
/// T ≥ 1, as for one phase), at most [`MAX_TOTAL_STEPS`] steps in all.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    phases: Vec<Phase>,
    total: u64,
}

/// s = a + b rounded upward (a, b ≥ 0): the exact error of the rounded sum (two-sum) tells
/// whether it fell below the exact one.
fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return s;
    }
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        s.next_up()
    } else {
        s
    }
}

/// An integer field of a CSV line: digits, or an integer in exponent form, decided on the
/// decimal digits (`1.00000000000000001` is not an integer), as the command line's flags.
fn parse_steps(s: &str) -> Option<u64> {
    crate::text::exact_u64(s)
}

impl Schedule {
    /// Validate a list of phases.
    ///
    /// # Errors
    /// [`ScheduleError::Empty`]; [`ScheduleError::Phase`] naming the 1-based phase index and
    /// the field (`sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0,
    /// `steps` = 0); [`ScheduleError::TooManySteps`] beyond [`MAX_TOTAL_STEPS`] in all.
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::schedule::{Phase, Schedule};
    /// let p = |q, s, t| Phase { sampling_rate: q, noise_multiplier: s, steps: t };
    /// let s = Schedule::new(&[p(0.01, 2.0, 100), p(0.01, 1.0, 900)]).unwrap();
    /// assert_eq!(s.total_steps(), 1000);
    /// let e = Schedule::new(&[p(0.01, 2.0, 100), p(1.5, 1.0, 900)]).unwrap_err();
    /// assert_eq!(e.to_string(), "phase 2: sampling_rate = 1.5 is out of range: must be in (0, 1]");
    /// ```
    pub fn new(phases: &[Phase]) -> core::result::Result<Schedule, ScheduleError> {
        Self::validated(phases, None)
    }

    /// A one-phase schedule, the phase validated as by the single-phase functions: the
    /// [`MAX_TOTAL_STEPS`] limit applies to lists of phases ([`Schedule::new`],
    /// [`Schedule::parse_csv`]), not here, so every single-phase input has a schedule form.
    ///
    /// # Errors
    /// `sampling_rate` ∉ (0, 1], `noise_multiplier` not finite and > 0, `steps` = 0.
    pub fn single(phase: Phase) -> Result<Schedule> {
        check_dpsgd(phase.sampling_rate, phase.noise_multiplier, phase.steps)?;
        Ok(Schedule {
            phases: alloc::vec![phase],
            total: phase.steps,
        })
    }

    fn validated(
        phases: &[Phase],
        lines: Option<&[usize]>,
    ) -> core::result::Result<Schedule, ScheduleError> {
        if phases.is_empty() {
            return Err(ScheduleError::Empty);
        }
        let mut total: u64 = 0;
        for (i, p) in phases.iter().enumerate() {
            check_dpsgd(p.sampling_rate, p.noise_multiplier, p.steps).map_err(|error| {
                ScheduleError::Phase {
                    index: i + 1,
                    line: lines.and_then(|l| l.get(i).copied()),
                    error,
                }
            })?;
            total = total.saturating_add(p.steps);
        }
        if total > MAX_TOTAL_STEPS {
            return Err(ScheduleError::TooManySteps { total });
        }
        Ok(Schedule {
            phases: phases.to_vec(),
            total,
        })
    }

    /// Parse and validate a CSV text of phases (see the module docs for the format).
    ///
    /// # Errors
    /// [`ScheduleError::Malformed`] with the 1-based line number for a line that is not
    /// three comma-separated numbers; otherwise as [`Schedule::new`], a bad phase also
    /// naming its line.
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::schedule::Schedule;
    /// let s = Schedule::parse_csv("sampling_rate,noise_multiplier,steps\n# warm-up\n0.01,2,100\n\n0.02,1.1,1e3\n").unwrap();
    /// assert_eq!(s.phases().len(), 2);
    /// assert_eq!(s.total_steps(), 1100);
    /// let e = Schedule::parse_csv("0.01,2,100\n0.01;1;5\n").unwrap_err();
    /// assert!(e.to_string().starts_with("line 2:"));
    /// ```
    pub fn parse_csv(text: &str) -> core::result::Result<Schedule, ScheduleError> {
        let mut phases = Vec::new();
        let mut lines = Vec::new();
        let mut seen_content = false;
        // a byte-order mark (spreadsheets write one) is not part of the first field
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let first = !seen_content;
            seen_content = true;
            if first && l.split(',').map(str::trim).eq(CSV_HEADER.split(',')) {
                continue;
            }
            let phase = Phase::parse(l).map_err(|what| ScheduleError::Malformed { line, what })?;
            phases.push(phase);
            lines.push(line);
        }
        Self::validated(&phases, Some(&lines))
    }

    /// The phases as given.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// Total number of steps.
    pub fn total_steps(&self) -> u64 {
        self.total
    }

    /// The phases with adjacent phases of equal (q, σ) (equal bits) merged into one of the
    /// summed steps: the same composition.
    pub fn merged(&self) -> Vec<Phase> {
        let mut out: Vec<Phase> = Vec::with_capacity(self.phases.len());
        for p in &self.phases {
            match out.last_mut() {
                Some(l)
                    if l.sampling_rate.to_bits() == p.sampling_rate.to_bits()
                        && l.noise_multiplier.to_bits() == p.noise_multiplier.to_bits() =>
                {
                    l.steps += p.steps;
                }
                _ => out.push(*p),
            }
        }
        out
    }

    /// The distinct phases: one per distinct (q, σ) (equal bits), in the order of first
    /// appearance, with the steps of every phase of that (q, σ) summed. Composition is a
    /// product of the phases' pairs of laws and commutes, so this is the same composition as
    /// the schedule's (PLD accounting composes each distinct phase once: its cost grows with
    /// the number of distinct phases, not with the number of phases — one-step phases
    /// alternating between two rates cost two phases).
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::schedule::{Phase, Schedule};
    /// let p = |q, t| Phase { sampling_rate: q, noise_multiplier: 1.0, steps: t };
    /// let s = Schedule::new(&[p(0.02, 1), p(0.01, 1), p(0.02, 1), p(0.01, 2)]).unwrap();
    /// assert_eq!(s.grouped(), vec![p(0.02, 2), p(0.01, 3)]);
    /// ```
    pub fn grouped(&self) -> Vec<Phase> {
        let key = |p: &Phase| (p.sampling_rate.to_bits(), p.noise_multiplier.to_bits());
        // O(n log n): indices sorted by (q, σ) bits then position; each run of one key is
        // one distinct phase, first seen at the run's first index.
        let mut order: Vec<usize> = (0..self.phases.len()).collect();
        order.sort_unstable_by_key(|&i| (self.phases.get(i).map(key), i));
        let mut groups: Vec<(usize, Phase)> = Vec::new();
        for i in order {
            let Some(p) = self.phases.get(i) else {
                continue;
            };
            match groups.last_mut() {
                // total steps <= MAX_TOTAL_STEPS: no overflow
                Some((_, l)) if key(l) == key(p) => l.steps = l.steps.saturating_add(p.steps),
                _ => groups.push((i, *p)),
            }
        }
        groups.sort_unstable_by_key(|&(first, _)| first);
        groups.into_iter().map(|(_, p)| p).collect()
    }

    /// The number of distinct (q, σ) of the schedule (the length of
    /// [`grouped`](Self::grouped)).
    pub fn distinct_phases(&self) -> usize {
        self.grouped().len()
    }

    /// The single phase this schedule merges into, if it merges into one.
    pub fn as_single(&self) -> Option<Phase> {
        let m = self.merged();
        match m.as_slice() {
            [p] => Some(*p),
            _ => None,
        }
    }

    /// Every noise multiplier multiplied by `factor` (each σ_i·c rounded to nearest; the
    /// result is what every bound of the scaled schedule is computed at).
    ///
    /// # Errors
    /// `factor` not finite and > 0 (named `noise_scale`); a scaled σ that overflows or
    /// underflows to 0.
    pub fn scaled(&self, factor: f64) -> Result<Schedule> {
        let c = check_positive("noise_scale", factor)?;
        let phases: Vec<Phase> = self
            .phases
            .iter()
            .map(|p| Phase {
                noise_multiplier: p.noise_multiplier * c,
                ..*p
            })
            .collect();
        if let [p] = phases.as_slice() {
            return Schedule::single(*p);
        }
        Ok(Schedule::new(&phases)?)
    }

    /// RDP of the whole schedule at each of `orders`, written to `out`.
    ///
    /// # Formula
    /// `out[i]` = Σ_phases T_p · r_α(q_p, σ_p) with α = `orders[i]`, each term as
    /// [`rdp::rdp_curve_into`] and the sum rounded upward; the sum runs over the distinct
    /// phases ([`grouped`](Self::grouped): equal (q, σ) anywhere with their steps summed,
    /// the same sum), so its cost grows with the distinct phases, not with all phases.
    ///
    /// # Citations
    /// Mironov 2017, Prop. 1 (adaptive composition); Mironov, Talwar, Zhang 2019, Sec. 3.
    ///
    /// # Errors
    /// As [`rdp::rdp_curve_into`].
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::{rdp::rdp_curve, schedule::{Phase, Schedule}};
    /// let p = |q, s, t| Phase { sampling_rate: q, noise_multiplier: s, steps: t };
    /// let s = Schedule::new(&[p(0.01, 2.0, 100), p(0.02, 1.0, 50)]).unwrap();
    /// let mut out = [0.0; 2];
    /// s.rdp_curve_into(&[2.0, 8.0], &mut out).unwrap();
    /// let a = rdp_curve(0.01, 2.0, 100, &[2.0, 8.0]).unwrap();
    /// let b = rdp_curve(0.02, 1.0, 50, &[2.0, 8.0]).unwrap();
    /// assert!(out[1] >= a[1] + b[1] && out[1] <= (a[1] + b[1]) * (1.0 + 1e-15));
    /// ```
    pub fn rdp_curve_into(&self, orders: &[f64], out: &mut [f64]) -> Result<()> {
        let merged = self.grouped();
        let mut tmp: Vec<f64> = Vec::new();
        for (i, p) in merged.iter().enumerate() {
            if i == 0 {
                rdp::rdp_curve_into(p.sampling_rate, p.noise_multiplier, p.steps, orders, out)?;
            } else {
                tmp.resize(orders.len(), 0.0);
                rdp::rdp_curve_into(
                    p.sampling_rate,
                    p.noise_multiplier,
                    p.steps,
                    orders,
                    &mut tmp,
                )?;
                for (o, &r) in out.iter_mut().zip(&tmp) {
                    *o = crate::error::check_result("composed RDP overflows", add_up(*o, r))?;
                }
            }
        }
        Ok(())
    }

    /// Allocating form of [`Schedule::rdp_curve_into`].
    ///
    /// # Formula
    /// Σ_phases T_p · r_α(q_p, σ_p) for each α in `orders`.
    ///
    /// # Citations
    /// Mironov 2017, Prop. 1.
    ///
    /// # Errors
    /// As [`Schedule::rdp_curve_into`].
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::{rdp::DEFAULT_ORDERS, schedule::Schedule};
    /// let s = Schedule::parse_csv("0.01,1,100\n1,10,5\n").unwrap();
    /// assert_eq!(s.rdp_curve(&DEFAULT_ORDERS).unwrap().len(), DEFAULT_ORDERS.len());
    /// ```
    pub fn rdp_curve(&self, orders: &[f64]) -> Result<Vec<f64>> {
        let mut out = alloc::vec![0.0; orders.len()];
        self.rdp_curve_into(orders, &mut out)?;
        Ok(out)
    }

    /// (ε, δ) of the schedule by RDP, minimised over [`DEFAULT_ORDERS`].
    ///
    /// # Formula
    /// ε = min_α conv(Σ_p T_p r_α(q_p, σ_p), α, δ) ([`rdp::epsilon_from_rdp`]). A schedule
    /// that merges into one phase delegates to [`rdp::epsilon`] (bit for bit).
    ///
    /// # Citations
    /// Mironov 2017, Props 1 and 3; Canonne, Kamath, Steinke 2020, Prop. 12.
    ///
    /// # Errors
    /// `delta` ∉ (0, 1); [`Error::Numerical`] if no order gives a finite RDP.
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::{rdp::{epsilon, Conversion}, schedule::Schedule};
    /// let one = Schedule::parse_csv("0.01,1.1,1000\n").unwrap();
    /// let a = one.epsilon_rdp(1e-5, Conversion::Improved).unwrap();
    /// assert_eq!(a, epsilon(0.01, 1.1, 1000, 1e-5, Conversion::Improved).unwrap());
    /// let two = Schedule::parse_csv("0.01,1.1,1000\n0.01,2,1000\n").unwrap();
    /// assert!(two.epsilon_rdp(1e-5, Conversion::Improved).unwrap().epsilon > a.epsilon);
    /// ```
    pub fn epsilon_rdp(&self, delta: f64, conversion: Conversion) -> Result<EpsilonBound> {
        let delta = check_open_unit("delta", delta)?;
        if let Some(p) = self.as_single() {
            return rdp::epsilon(
                p.sampling_rate,
                p.noise_multiplier,
                p.steps,
                delta,
                conversion,
            );
        }
        let curve = self.rdp_curve(&DEFAULT_ORDERS)?;
        rdp::epsilon_from_rdp(&DEFAULT_ORDERS, &curve, delta, conversion)
    }

    /// The smallest factor c (up to relative 10⁻⁶) such that the schedule with every σ_i
    /// multiplied by c is (target_epsilon, δ)-DP by [`Schedule::epsilon_rdp`]. Always on the
    /// safe side: ε of [`Schedule::scaled`]`(c)` ≤ target_epsilon was verified.
    ///
    /// # Formula
    /// Bisection in ln c on the decreasing map c ↦ ε(c·σ₁, …, c·σ_k), keeping an upper end
    /// with ε ≤ target; stops when hi/lo − 1 ≤ 10⁻⁶ and returns hi (as
    /// [`rdp::calibrate_noise_multiplier`] for one phase). Factors below 10⁻⁶ are not explored:
    /// when even c = 10⁻⁶·(a power of 2) meets the target, the smallest safe power of two
    /// halved down to there is returned without bisection (safe, not the smallest).
    ///
    /// # Citations
    /// Mironov, Talwar, Zhang 2019; Canonne, Kamath, Steinke 2020, Prop. 12.
    ///
    /// # Errors
    /// `target_epsilon` not finite and > 0; `delta` ∉ (0, 1); [`Error::Numerical`] if no
    /// factor ≤ 10⁸ reaches the target.
    ///
    /// # Examples
    /// ```
    /// use reconbound::accounting::{rdp::Conversion, schedule::Schedule};
    /// let s = Schedule::parse_csv("0.01,2,100\n0.01,1,900\n").unwrap();
    /// let c = s.calibrate_noise_scale(2.0, 1e-5, Conversion::Improved).unwrap();
    /// let e = s.scaled(c).unwrap().epsilon_rdp(1e-5, Conversion::Improved).unwrap();
    /// assert!(e.epsilon <= 2.0 && e.epsilon > 1.99);
    /// ```
    pub fn calibrate_noise_scale(
        &self,
        target_epsilon: f64,
        delta: f64,
        conversion: Conversion,
    ) -> Result<f64> {
        let target = check_positive("target_epsilon", target_epsilon)?;
        let delta = check_open_unit("delta", delta)?;
        let safe = |c: f64| match self.scaled(c) {
            Ok(s) => s
                .epsilon_rdp(delta, conversion)
                .is_ok_and(|b| b.epsilon <= target),
            Err(_) => false,
        };
        rdp::bisect_scale(
            safe,
            1e-6,
            1e8,
            "target_epsilon cannot be reached with a noise scale <= 1e8",
            target,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(q: f64, s: f64, t: u64) -> Phase {
        Phase {
            sampling_rate: q,
            noise_multiplier: s,
            steps: t,
        }
    }

    #[test]
    fn bad_phases_name_the_index_field_and_range() {
        let e = Schedule::new(&[]).unwrap_err();
        assert_eq!(e, ScheduleError::Empty);
        let e = Schedule::new(&[p(0.1, 1.0, 5), p(0.1, -1.0, 5)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "phase 2: noise_multiplier = -1 is out of range: must be finite and > 0"
        );
        let e = Schedule::new(&[p(0.1, 1.0, 0)]).unwrap_err();
        assert!(e.to_string().starts_with("phase 1: steps = 0"), "{e}");
        let e = Schedule::new(&[p(0.1, 1.0, MAX_TOTAL_STEPS), p(0.2, 1.0, 1)]).unwrap_err();
        assert_eq!(
            e,
            ScheduleError::TooManySteps {
                total: MAX_TOTAL_STEPS + 1
            }
        );
        // saturating total: no overflow panic
        let e = Schedule::new(&[p(0.1, 1.0, u64::MAX), p(0.2, 1.0, 5)]).unwrap_err();
        assert_eq!(e, ScheduleError::TooManySteps { total: u64::MAX });
        assert!(Schedule::new(&[p(0.1, 1.0, MAX_TOTAL_STEPS)]).is_ok());
    }

    #[test]
    fn csv_errors_name_the_line() {
        let cases = [
            ("0.1,1,5\n0.1,1\n", 2, "expected 3"),
            ("# c\n\n0.1,x,5\n", 3, "noise_multiplier is not a number"),
            ("0.1,1,5\n0.1,1,2.5\n", 2, "steps is not"),
            ("0.1,1,5\n0.1,1,-3\n", 2, "steps is not"),
            (
                "0.1,1,5\nsampling_rate,noise_multiplier,steps\n",
                2,
                "sampling_rate is not",
            ),
            ("0.1,1,5,7\n", 1, "expected 3"),
        ];
        for (text, line, what) in cases {
            let e = Schedule::parse_csv(text).unwrap_err();
            let s = e.to_string();
            assert!(s.starts_with(&format!("line {line}: ")), "{text:?}: {s}");
            assert!(s.contains(what), "{text:?}: {s}");
        }
        let e = Schedule::parse_csv("sampling_rate,noise_multiplier,steps\n0.5,1,5\n1.5,1,5\n")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3 (phase 2): sampling_rate = 1.5 is out of range: must be in (0, 1]"
        );
        assert_eq!(
            Schedule::parse_csv("# only\n\nsampling_rate,noise_multiplier,steps\n").unwrap_err(),
            ScheduleError::Empty
        );
        let s = Schedule::parse_csv(" sampling_rate , noise_multiplier , steps \r\n0.5, 1 ,5\r\n")
            .unwrap();
        assert_eq!(s.phases(), &[p(0.5, 1.0, 5)]);
    }

    #[test]
    fn merging_sums_steps_of_adjacent_equal_phases_only() {
        let s = Schedule::new(&[
            p(0.1, 1.0, 5),
            p(0.1, 1.0, 7),
            p(0.2, 1.0, 1),
            p(0.1, 1.0, 2),
        ])
        .unwrap();
        assert_eq!(
            s.merged(),
            vec![p(0.1, 1.0, 12), p(0.2, 1.0, 1), p(0.1, 1.0, 2)]
        );
        assert_eq!(s.as_single(), None);
        assert_eq!(
            Schedule::new(&[p(0.1, 1.0, 5), p(0.1, 1.0, 7)])
                .unwrap()
                .as_single(),
            Some(p(0.1, 1.0, 12))
        );
    }

    #[test]
    fn upward_sum_is_never_below_the_exact_sum() {
        // 0.1 + 0.2 rounds up to 0.30000000000000004 anyway; 1 + 2^-60 rounds down to 1
        // (exact sum above) and must move up one ulp; exact sums stay.
        assert_eq!(add_up(1.0, libm::ldexp(1.0, -60)), 1.0f64.next_up());
        assert_eq!(add_up(0.5, 0.25), 0.75);
        assert_eq!(add_up(0.1, 0.2), 0.1 + 0.2);
        assert_eq!(add_up(f64::INFINITY, 1.0), f64::INFINITY);
    }

    #[test]
    fn rdp_of_alternating_phases_is_that_of_their_distinct_phases_bit_for_bit() {
        // Issue 20 item 3: the RDP sum runs over distinct phases (exact equality: the same
        // operations), so 2,000 alternating one-step phases cost two phases.
        let alt: Vec<Phase> = (0..2000)
            .map(|i| p(if i % 2 == 0 { 0.02 } else { 0.01 }, 1.0, 1))
            .collect();
        let alt = Schedule::new(&alt).unwrap();
        let two = Schedule::new(&[p(0.02, 1.0, 1000), p(0.01, 1.0, 1000)]).unwrap();
        let orders = [1.5, 2.0, 8.0, 64.0];
        assert_eq!(
            alt.rdp_curve(&orders).unwrap(),
            two.rdp_curve(&orders).unwrap()
        );
        assert_eq!(alt.grouped(), two.phases());
    }

    #[test]
    fn rdp_of_a_schedule_is_the_sum_of_its_phases() {
        // Each entry is the upward-rounded sum of the phases' curves: ≥ the float sum and
        // within 2 ulps of it (one nudge per addition).
        let s = Schedule::new(&[p(0.01, 2.0, 100), p(0.05, 1.0, 30), p(1.0, 8.0, 3)]).unwrap();
        let orders = [1.5, 2.0, 7.3, 32.0, 256.0];
        let c = s.rdp_curve(&orders).unwrap();
        let a = rdp::rdp_curve(0.01, 2.0, 100, &orders).unwrap();
        let b = rdp::rdp_curve(0.05, 1.0, 30, &orders).unwrap();
        let g = rdp::rdp_curve(1.0, 8.0, 3, &orders).unwrap();
        for i in 0..orders.len() {
            let sum = a[i] + b[i] + g[i];
            assert!(
                c[i] >= sum && c[i] <= sum * (1.0 + 5e-16),
                "{i}: {} {sum}",
                c[i]
            );
        }
    }

    #[test]
    fn one_phase_rdp_is_the_plain_result_bit_for_bit() {
        let s = Schedule::new(&[p(0.004, 1.1, 700), p(0.004, 1.1, 300)]).unwrap();
        let c = s.rdp_curve(&DEFAULT_ORDERS).unwrap();
        let d = rdp::rdp_curve(0.004, 1.1, 1000, &DEFAULT_ORDERS).unwrap();
        for (x, y) in c.iter().zip(&d) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
        for conv in [Conversion::Improved, Conversion::Mironov] {
            let a = s.epsilon_rdp(1e-6, conv).unwrap();
            let b = rdp::epsilon(0.004, 1.1, 1000, 1e-6, conv).unwrap();
            assert_eq!(a.epsilon.to_bits(), b.epsilon.to_bits());
            assert_eq!(a.order.to_bits(), b.order.to_bits());
        }
    }

    #[test]
    fn calibrated_scale_is_safe_and_tight() {
        // Safe: ε(c) ≤ target; tight: ε(c·(1 − 2e-6)) > target (bisection to 1e-6).
        let s = Schedule::new(&[p(0.01, 2.0, 100), p(0.01, 1.0, 1000), p(0.02, 0.8, 500)]).unwrap();
        let c = s
            .calibrate_noise_scale(3.0, 1e-5, Conversion::Improved)
            .unwrap();
        let eps = |c: f64| {
            s.scaled(c)
                .unwrap()
                .epsilon_rdp(1e-5, Conversion::Improved)
                .unwrap()
                .epsilon
        };
        assert!(eps(c) <= 3.0);
        assert!(eps(c * (1.0 - 2e-6)) > 3.0);
        // one phase: the same σ as the single-phase calibration (to the bisection's 1e-6)
        let one = Schedule::new(&[p(0.01, 1.0, 1000)]).unwrap();
        let c1 = one
            .calibrate_noise_scale(2.0, 1e-5, Conversion::Improved)
            .unwrap();
        let s1 =
            rdp::calibrate_noise_multiplier(2.0, 1e-5, 0.01, 1000, Conversion::Improved).unwrap();
        assert!((c1 / s1 - 1.0).abs() <= 2e-6, "{c1} {s1}");
        assert!(s.scaled(0.0).is_err());
    }
}
