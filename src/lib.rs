#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
//! # reconbound
//!
//! Bounds on — and attacks against — training-data reconstruction in differentially private
//! learning: a pure-Rust, `no_std`-capable reference implementation of
//!
//! - Guo, Karrer, Chaudhuri, van der Maaten 2022 — MSE lower bounds from RDP (Thm 1),
//! - Hayes, Mahloujifar, Balle 2023 — reconstruction robustness (ReRo) of DP-SGD,
//! - Balle, Cherubin, Hayes 2022 — ReRo from RDP and DP,
//! - and the accounting they rest on: RDP of the subsampled Gaussian (exact at fractional
//!   orders), certified privacy-loss distributions, the analytic Gaussian mechanism, Fano.
//!
//! Every function validates its input and returns [`Result`]: invalid input gives an
//! [`Error`] naming the parameter, the value and the valid range; a bound is returned only
//! when it is valid, and rounded to the safe side.
//!
//! ## Example: what does DP-SGD on MNIST guarantee against reconstruction?
//!
//! ```
//! use reconbound::accounting::{rdp, rero};
//!
//! // Abadi et al. 2016: batch 256 of 60,000, noise multiplier 1.1, 60 epochs, δ = 1e-5.
//! let (q, sigma, steps, delta) = (256.0 / 60000.0, 1.1, 14063, 1e-5);
//! let eps = rdp::epsilon(q, sigma, steps, delta, rdp::Conversion::Improved)?;
//! assert!(eps.epsilon > 1.0 && eps.epsilon < 3.0);
//!
//! // Probability that any attack picks the right one of 10 equally likely candidates
//! // (Hayes et al. 2023, certified upper bound) — the baseline is 0.1.
//! let gamma = rero::dpsgd::gamma(0.1, 0.01, 1.0, 100)?;
//! assert!(gamma.gamma >= 0.1 && gamma.gamma <= 1.0);
//! # Ok::<(), reconbound::Error>(())
//! ```
//!
//! ## A run as a value, one accountant interface
//!
//! ```
//! use reconbound::accounting::guarantees::{guarantees, Prior};
//! use reconbound::accounting::run::{epsilon_all, Run, Unsupported};
//!
//! // ε(δ) by RDP and by the certified PLD, with the adjacency the guarantees hold for
//! let run = Run::poisson(256.0 / 60000.0, 1.1, 14063)?;
//! let e = epsilon_all(&run, 1e-5)?.expect("Poisson sampling is accounted");
//! let pld = e.pld.expect("certified");
//! assert!(pld.lower <= pld.value && pld.value < e.rdp.epsilon);
//!
//! // what an accountant cannot guarantee is a typed answer, not a number
//! let shuffled = Run::shuffled(256, 60000, 1.1, 14063)?;
//! assert_eq!(epsilon_all(&shuffled, 1e-5)?.unwrap_err(), Unsupported::Shuffled);
//!
//! // every guarantee of `reconbound bound`, typed
//! let g = guarantees(run.as_schedule().expect("Poisson"), 1e-5, Prior::uniform(10)?, 1.0)?;
//! assert!(g.gamma.expect("certified").gamma <= g.gamma_balle.gamma);
//! # Ok::<(), reconbound::Error>(())
//! ```
//!
//! Calibration to any target: [`accounting::calibrate`]; an audit's claim and verdict:
//! [`attacks::audit::claim`].
//!
//! ## Features
//!
//! `std` (default, implies `alloc`): threads for independent trials, file readers (IDX,
//! CIFAR-10, schedules), interruption between trials. `alloc`: the PLD accountant
//! and FFT, Monte Carlo estimators. With `--no-default-features` the scalar accountants
//! (RDP, analytic Gaussian, ReRo from RDP/DP and full batch, Fano, MSE, κ) remain, and every
//! result is bit-identical to the `std` build: all math goes through `libm`.

//! ## Layers
//!
//! This crate is the numerical core: every formula, bound, attack and verdict. The command
//! line (`reconbound`, crate `reconbound-cli` in `crates/reconbound-cli`) and the Python
//! package (`python/`) are its clients: they parse input, call this crate's public API and
//! render the results; no bound is computed in them.

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod accounting;
#[cfg(feature = "alloc")]
pub mod attacks;
pub mod autodiff;
#[cfg(feature = "alloc")]
pub mod conformance;
#[cfg(feature = "alloc")]
pub mod data;
pub mod error;
#[cfg(feature = "alloc")]
pub mod fingerprint;
pub mod math;
pub mod nn;
pub mod rng;
#[cfg(feature = "alloc")]
pub mod text;
pub mod train;

pub use error::{Error, Result};

/// The fingerprint of the core's computation: FNV-1a (64 bits, 16 hex digits) of the core's
/// sources (`src/`, its unit tests included) without their comment lines, `Cargo.toml` and
/// `Cargo.lock`, computed by `build.rs`. Files whose content depends on the computation
/// (shards) record it, so that a reader can refuse a file written by another computation; a
/// change to documentation comments, to the integration tests or to the command line does
/// not change it.
pub const SOURCE_FINGERPRINT: &str = env!("RECONBOUND_SOURCE_HASH");
