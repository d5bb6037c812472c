//! The core library of orchard: what a search *is*, independent of how it is
//! distributed.
//!
//! * [`family`] — the [`family::SearchFamily`] trait every search implements,
//!   and its type-erased form [`family::DynFamily`] that the coordinator and the
//!   worker use without knowing any family.
//! * [`families`] — the registry of families (`hc`, ...). Adding a family means
//!   adding a module there and one line to the registry; nothing else changes.
//! * [`codec`] — the versioned binary encoding of units and summaries.
//! * [`estimate`] — Knuth's estimate of a search tree's size from random
//!   probes, before running the search.
//!
//! Nothing in this crate does I/O, networking or storage.

pub mod codec;
pub mod estimate;
pub mod families;
pub mod family;

pub use family::{DynFamily, Exploration, ExploreContext, SearchFamily};
