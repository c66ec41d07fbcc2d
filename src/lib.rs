#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
//! reconbound (crate docs to come)

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod accounting;
pub mod error;
pub mod math;
pub mod rng;

pub use error::{Error, Result};
