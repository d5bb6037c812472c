//! The parameters of a `busy-beaver` job: the command line's flags and
//! the stored job's fields (a field added later has a serde default that
//! reads an older stored job as it ran).

use serde::{Deserialize, Serialize};

use crate::far_sat;
use crate::wfar::supplied::SuppliedCertificates;
use crate::{
    DEFAULT_DEEP_GAS, DEFAULT_DEPTH, DEFAULT_HALT_HORIZON, DEFAULT_LONG_LIMIT, DEFAULT_NGRAM,
    DEFAULT_STEP_LIMIT,
};

/// Parameters of a `busy-beaver` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct BusyBeaverParams {
    /// Number of states, the chapter's cards (1..=5).
    #[arg(long)]
    pub states: u32,
    /// Steps a machine runs (watched for cyclers and translated cyclers)
    /// before it is handed to backward reasoning (100..=1000000).
    #[arg(long, default_value_t = DEFAULT_STEP_LIMIT)]
    #[serde(default = "default_step_limit")]
    pub step_limit: u32,
    /// Depth of backward reasoning (0: none; at most 60 and the step limit).
    #[arg(long, default_value_t = DEFAULT_DEPTH)]
    #[serde(default = "default_depth")]
    pub depth: u32,
    /// Longest n-grams of the n-gram closed position sets, tried from 1 up
    /// (0: none; at most 10).
    #[arg(long, default_value_t = DEFAULT_NGRAM)]
    #[serde(default = "default_ngram")]
    pub ngram: u32,
    /// Steps of the second watched run, for machines the cheap deciders
    /// left (0: none; else from the step limit to 10000000).
    #[arg(long, default_value_t = DEFAULT_LONG_LIMIT)]
    #[serde(default = "default_long_limit")]
    pub long_limit: u32,
    /// Steps a machine no decider settled is simulated plainly to see
    /// whether it halts late (0: none; else from the longer watched run to
    /// 4000000000). Undecided machines ran this far.
    #[arg(long, default_value_t = DEFAULT_HALT_HORIZON)]
    #[serde(default = "default_halt_horizon")]
    pub halt_horizon: u32,
    /// Most configurations one attempt of the deep stage (long n-grams,
    /// long repeated words, finite automata reduction) may meet (0: no
    /// deep stage; at most 10000000).
    #[arg(long, default_value_t = DEFAULT_DEEP_GAS)]
    #[serde(default = "default_deep_gas")]
    pub deep_gas: u32,
    /// Machines that run to the halting horizon go on to the last resort:
    /// long translated cyclers, weighted automata of up to 5 states,
    /// weighted automata built on DFA pairs (meet in the middle), DFAs of
    /// 8 to 10 states (minutes a machine); `--last-resort false` skips it.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_resort: bool,
    /// The last resort searches weighted automata built on DFA pairs
    /// (meet in the middle); `--mitm-wfar false` leaves that search out,
    /// as in a job stored without this field, which ran without it (its
    /// results stay reproducible). Off with `--last-resort false`.
    #[arg(
        long,
        default_value_t = true,
        default_value_if("last_resort", "false", "false"),
        action = clap::ArgAction::Set
    )]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mitm_wfar: bool,
    /// A SAT solver (CaDiCaL's command line), as a file on this machine:
    /// the last resort then asks it for DFAs of up to 13 states instead of
    /// searching DFAs itself (finite automata reduction as a CNF formula,
    /// each model checked as a certificate). Every worker runs its own copy of that name from its
    /// --programs directory, only if the SHA-256 matches.
    #[arg(long, value_name = "FILE", value_parser = far_sat::SolverRef::from_path)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_solver: Option<far_sat::SolverRef>,
    /// Weighted-automata certificates found elsewhere (one a line:
    /// `MACHINE wfar MAX_D LEFT RIGHT`, see docs/busy-beaver.md), as a
    /// file on this machine: each is verified when the job is checked, the
    /// job refused if one fails, and the last resort settles a machine
    /// with its own before searching.
    #[arg(long, value_name = "FILE", value_parser = SuppliedCertificates::from_path)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificates: Option<SuppliedCertificates>,
}

fn default_deep_gas() -> u32 {
    DEFAULT_DEEP_GAS
}

fn default_ngram() -> u32 {
    DEFAULT_NGRAM
}

fn default_step_limit() -> u32 {
    DEFAULT_STEP_LIMIT
}

fn default_depth() -> u32 {
    DEFAULT_DEPTH
}

fn default_long_limit() -> u32 {
    DEFAULT_LONG_LIMIT
}

fn default_halt_horizon() -> u32 {
    DEFAULT_HALT_HORIZON
}
