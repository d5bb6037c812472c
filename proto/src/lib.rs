//! The `orchard.v1` protocol shared by coordinator, worker and CLI.
//!
//! Generated from `orchard/v1/orchard.proto`; see that file for the meaning of
//! every message.

pub mod access;

/// Bumped when the protocol changes incompatibly; workers send it at
/// registration and the coordinator refuses a mismatch.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest blob of lemmas a worker sends in one `ShareLemmas` request;
/// the coordinator refuses larger ones.
pub const MAX_LEMMA_UPLOAD_BYTES: usize = 1 << 20;

/// About how many bytes of lemmas one `ShareLemmas` answer carries.
pub const LEMMA_PAGE_BYTES: usize = 4 << 20;

#[allow(clippy::all)]
pub mod v1 {
    tonic::include_proto!("orchard.v1");

    /// The encoded `FileDescriptorSet` of `orchard.v1` (every message and
    /// service), for server reflection: a client that has never seen
    /// orchard's proto lists and calls the services from it.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("orchard_v1_descriptor");
}
