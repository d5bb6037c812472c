//! The `orchard.v1` protocol shared by coordinator, worker and CLI.
//!
//! Generated from `orchard/v1/orchard.proto`; see that file for the meaning of
//! every message.

pub mod access;

/// Bumped when the protocol changes incompatibly; workers send it at
/// registration and the coordinator refuses a mismatch.
pub const PROTOCOL_VERSION: u32 = 1;

#[allow(clippy::all)]
pub mod v1 {
    tonic::include_proto!("orchard.v1");
}
