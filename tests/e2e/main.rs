//! The end-to-end tests: real `orchard` processes on 127.0.0.1, real gRPC,
//! real SQLite files, processes killed with SIGKILL. One module per concern.
//!
//! Why one test binary and not one per file: each integration-test file is
//! its own crate, linked against the whole dependency graph and compiling
//! its own copy of the generic gRPC and Tokio code it uses. Twenty-five of
//! them took 4.6 minutes of a two-core build (7.2 CPU minutes) just to
//! rebuild after a change to `common/`; as modules of one crate they are
//! compiled and linked once. Run one concern with its module's name:
//! `cargo test --workspace --release --test e2e -- checkpoints::`.

mod common;

mod access;
mod chaos;
mod checkpoints;
mod cli_errors;
mod crash_recovery;
mod dashboard;
mod disk_faults;
mod empty_job;
mod estimate;
mod exec;
mod grpc_health_reflection;
mod hostile_input;
mod hostile_rows;
mod hostile_wire;
mod lemmas;
mod migration;
mod mutual_tls;
mod network_faults;
mod open_many_units;
mod published_figures;
mod replicas;
mod report_and_lease;
mod results_files;
mod sat;
mod shell_conventions;
mod snapshots;
mod synthetic_cluster;
mod unsettled_job;
mod worker_settings;
