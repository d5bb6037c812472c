//! The audit file: every machine of a job's enumeration with its verdict
//! and what a re-check of the verdict needs, compressed, beside the
//! results file (as bbchallenge publishes its index of machines and
//! deciders).
//!
//! **How it is made.** A cluster run sends summaries, not 181 million
//! verdicts, so the audit file is regenerated: [`regenerate::write`]
//! enumerates and decides the job's units again on this machine, in
//! parallel, in a fixed order, and writes the file only when the results
//! file it makes agrees line for line with the run's (the counts, the
//! champions, the undecided machines, and at up to [`crate::LISTED_STATES`]
//! states every machine's verdict). The deciders are deterministic, so the
//! same parameters give the same verdicts whatever the cuts of the run.
//!
//! **Format, version 1.** A zstd stream (with zstd's content checksum) of:
//!
//! - the header: the 16 bytes `ORCHARD-BB-AUDIT`, the version byte `1`,
//!   the number of states `n`, then the job's parameters as little-endian
//!   `u32`: step limit, depth, n-gram length, long limit, halting horizon,
//!   deep gas;
//! - for each root unit of the job, in [`crate::BusyBeaver`]'s
//!   `root_units` order: `U`, a byte `1` for a subtree or `0` for the node
//!   alone, the unit's table; then its machines in the order of a depth
//!   first walk (a halting machine, then the subtrees of its children in
//!   [`crate::children`]'s order), one record each;
//! - the end: `E`, then little-endian `u64`s: machines, halting, the
//!   nonhalting ones by decider in [`crate::Decider::ALL`]'s order,
//!   undecided.
//!
//! A table is `2 n` bytes, one per transition `2 * state + read`: `0`
//! undefined, else `1 + write + 2 * right + 4 * next` ([`crate::machine`]).
//! A record is a tag, the table, and what the tag says ([`Certificate`]):
//!
//! | tag | verdict | then |
//! |---|---|---|
//! | `0x00` | halts | steps `u32`, ones `u32`, undefined transition reached `u8` |
//! | `0x10` | cycler | pre-period `u32`, period `u32`: the configuration at the pre-period comes back after the period |
//! | `0x11` | translated cycler | times `t1 < t2` `u32`: two records on the same side, in the same state, equal on the cells the head went back over between them |
//! | `0x12` | backward reasoning | depth `u8` |
//! | `0x13` | n-gram closed position set (the plain stage) | n-gram length `u8` |
//! | `0x14` | closed position set, [`crate::cps`] | history `u8` (`255`: LRU), n-gram length `u8`, gas `u32` |
//! | `0x15` | repeated word list | word length `u8`, threshold `u8`, macro steps `u32`, gas `u32` |
//! | `0x16` | finite automata reduction | most DFA states `u8`, gas `u32` |
//! | `0x17` | weighted finite automata reduction | `max_d` `i32`, then each automaton: its states `u8` (1 to [`crate::wfar::MAX_CERTIFICATE_WDFA`]; a reader refuses more as corrupt), per state next on 0 `u8`, weight `i8`, next on 1 `u8`, weight `i8` |
//! | `0x18` | finite automata reduction, the DFA | its states `u8`, `1` if it reads the mirrored machine else `0` `u8`, `δ(q, b)` per `2 q + b` `u8` each |
//! | `0x20` | undecided | nothing |
//!
//! **What re-checks it.** [`check::check`] reads the file back, walks the
//! tree the records describe (every machine once, in the order above,
//! nothing missing: the children of each halting machine follow it),
//! re-runs every halting machine by plain simulation to its step count,
//! and re-checks a seeded sample of the nonhalting verdicts: a plain run
//! of many steps, and the certificate: cycles and translated cycles are
//! re-verified on the tape, a WFAR certificate by [`crate::wfar::verify`]
//! (with the closure limit [`crate::wfar::closure_limit`]),
//! a DFA by [`dfa::verify`] (not the search's code), the other deciders
//! re-run with the parameters recorded.

pub mod check;
pub mod cli;
pub mod dfa;
mod evidence;
mod format;
pub mod regenerate;
mod tape;

pub use check::{check, CheckOptions, CheckReport};
pub use format::{read_all, write_all, Certificate, Entry, Item, Reader, Record, Totals};
pub use regenerate::{write, Written};

use crate::Decider;

/// The version byte this code writes. It also reads version 1, whose
/// header has no `--last-resort` byte (a run without the last resort).
pub const VERSION: u8 = 3;

/// Most states of a DFA certificate (tag `0x18`): more than the direct
/// search's [`crate::far::MAX_DFA`], for the DFAs a SAT solver finds
/// ([`crate::far_sat`]; Coq-BB5 needs 13).
pub const MAX_CERTIFICATE_DFA: usize = 16;

/// The first bytes of the decompressed stream.
pub const MAGIC: &[u8; 16] = b"ORCHARD-BB-AUDIT";

/// Why an audit file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not an audit file of busy-beaver ({0})")]
    NotAnAuditFile(String),
    #[error("audit file version {0}, this program reads versions 1 to {VERSION}")]
    Version(u8),
    #[error("audit file truncated after {machines} machines (no end record)")]
    Truncated { machines: u64 },
    #[error("audit file corrupt after {machines} machines: {what}")]
    Corrupt { machines: u64, what: String },
    #[error("parameters of the audit file rejected: {0}")]
    Params(String),
    #[error("{0}")]
    Family(#[from] orchard_core::FamilyError),
    #[error("results file {path}: {what}")]
    Disagrees { path: String, what: String },
    /// The run's `--far-solver` failed or answered a model that is not a
    /// certificate (the message names the solver or the machine).
    #[error("{0}")]
    FarSolver(String),
    #[error("no certificate found for {machine} ({decider}), which the pipeline settled")]
    NoCertificate {
        machine: String,
        decider: &'static str,
    },
}

impl Certificate {
    /// The decider this certificate is the evidence of.
    pub fn decider(&self) -> Decider {
        match *self {
            Certificate::Cycler { .. } => Decider::Cycler,
            Certificate::TranslatedCycler { .. } => Decider::TranslatedCycler,
            Certificate::Backward { .. } => Decider::BackwardReasoning,
            Certificate::NGram { .. } => Decider::NGramCps,
            Certificate::Cps { history, .. } => match history {
                0 => Decider::NGramCps,
                format::LRU => Decider::NGramCpsLru,
                _ => Decider::NGramCpsHistory,
            },
            Certificate::RepWl { .. } => Decider::RepWl,
            Certificate::Far { .. } | Certificate::FarDfa { .. } => {
                Decider::FiniteAutomataReduction
            }
            Certificate::Wfar(_) => Decider::WeightedFiniteAutomataReduction,
        }
    }
}
