//! The library half of the `orchard` package: the registry of every family
//! this build knows ([`families`]), shared by the binary (`src/main.rs`) and
//! the integration tests that need every family at once (the hostile-input
//! fuzzer of `tests/e2e/hostile_input.rs`).

pub mod families;

#[cfg(test)]
mod architecture_map;
