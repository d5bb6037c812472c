//! Helpers for the end-to-end tests: real `orchard` processes on 127.0.0.1.
//! Each test module uses a part of them.

#![allow(dead_code)]

pub mod bb;
pub mod cluster;
pub mod db;
pub mod family;
pub mod hc;
pub mod hip;
pub mod http;
pub mod nn;
pub mod pki;
pub mod process;
pub mod proxy;
pub mod raw_worker;

#[allow(unused_imports)] // not every test module uses each part
pub use cluster::*;
#[allow(unused_imports)] // not every test module uses each part
pub use http::*;
#[allow(unused_imports)] // not every test module uses each part
pub use process::*;

/// A test's size or seed from the environment (`ORCHARD_FUZZ_ROW_INPUTS`,
/// `ORCHARD_CHAOS_ROUNDS`, ...), else `default`; a value that is not a
/// number stops the test with its name rather than running another size.
pub fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: not a number")),
        Err(_) => default,
    }
}
