//! Integration tests: reproductions.

#[path = "../common/mod.rs"]
mod common;

mod peers_rdp;
mod peers_rdp_without_replacement;

mod guo_section7;
mod guo_section7_fil;
mod hayes_gamma;
mod hayes_table2;
mod peers_pld;
mod peers_schedule;
