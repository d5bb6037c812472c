//! The core of orchard: what a search *is*, independent of how it is
//! distributed.
//!
//! * [`family`] — the [`SearchFamily`] trait every search implements (a
//!   value of it is one job), the [`ExploreContext`] a search polls, the
//!   [`Host`] a worker lends it.
//! * [`capability`] — what only some families need: moot units, probes for
//!   estimates, lemmas shared between workers, cache snapshots.
//! * [`erased`] — the type-erased boundary ([`DynFamily`], [`PreparedJob`],
//!   [`Aggregate`]) that the coordinator and the worker use without knowing
//!   any family.
//! * [`figure`] — pictures of an answer a family describes and the
//!   dashboard draws without knowing the family.
//! * [`registry`] — families by name; the binary builds one.
//! * [`codec`] — the versioned binary encoding of units and summaries.
//! * [`estimate`] — Knuth's estimate of a search tree's size from random
//!   probes, before running the search.
//! * [`hostile`] — mutated units, summaries, lemmas and snapshots fed to
//!   every decoder: none may panic.
//! * [`meter`] — the [`NodeMeter`] a search loop counts its nodes with: the
//!   unit's budget and the stop requests, honoured in one place.
//! * [`merge`] — what every family's merge does: checked sums, and
//!   witness lists that are the same whatever the units and merge order.
//! * [`runs`] — jobs of independent random runs: ranges of run numbers as
//!   units, each run's seed from the job's.
//! * [`sequential`] — the single-process reference path the tests compare
//!   the cluster against.
//! * [`testing`] — checks the families' tests share (a probe against its
//!   search, an estimate against a known size).
//!
//! **Architecture invariant**: this crate does no I/O, reads no environment
//! and knows no command line. Families depend on it and on nothing else of
//! orchard's.

pub mod capability;
pub mod codec;
pub mod erased;
pub mod error;
pub mod estimate;
pub mod family;
pub mod figure;
pub mod flags;
pub mod hostile;
pub mod merge;
pub mod meter;
pub mod probe;
pub mod registry;
pub mod runs;
pub mod sequential;
pub mod testing;

pub use capability::{CacheSnapshot, Capabilities, LemmaExchange, MootJudge, MootUnits, Probing};
pub use erased::{Aggregate, DynExploration, DynFamily, EncodedMootJudge, Erased, PreparedJob};
pub use error::{FamilyError, ParamError};
pub use family::{
    pieces_within, Exploration, ExploreContext, FamilyReport, Host, LocalFlags, SearchFamily,
    PIECE_FLOOR_DIVISOR,
};
pub use figure::Figure;
pub use meter::NodeMeter;
pub use probe::Probe;
pub use registry::Registry;
pub use sequential::{explore_all, explore_pieces, merge_all};
