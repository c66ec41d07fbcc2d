//! Integration tests: properties.

#[path = "../common/mod.rs"]
mod common;

mod rdp_properties;

mod pld_properties;
mod rero_properties;
