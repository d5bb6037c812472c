//! Weighted-automata certificates supplied with a job
//! (`--certificates FILE`): proofs found elsewhere, which the job checks
//! with [`super::verify`] before it runs and which the last resort then
//! uses for their machines before any search, as Coq-BB5 checks the
//! certificates it lists (`Verifier_WFAR_Hardcoded_Certificates.v`).
//!
//! A certificate is data, never code: the worst a wrong one can do is be
//! rejected, with the job, when it is checked. The file holds one
//! certificate a line, `MACHINE wfar MAX_D LEFT RIGHT` (blank lines and
//! `#` comments skipped): the machine in bbchallenge's text form and each
//! automaton in the notation of the bbchallenge community's MITM-WFAR
//! certificates, its states separated by `_`, each
//! `NEXT0,WEIGHT0;NEXT1,WEIGHT1`, state 0 the start.
//! `certificates/coq-bb5-large-wfar.txt` is Coq-BB5's list of the
//! certificates with the largest automata, in that form.

use serde::{Deserialize, Serialize};

use super::{closure_limit, verify, Certificate, Wdfa, WfarError, MAX_CERTIFICATE_WDFA};
use crate::machine::{from_text, Table};

/// Most certificates one job may carry: the parameters travel with every
/// lease, and each certificate is verified by every host that takes the
/// job (Coq-BB5 lists a few dozen).
pub const MAX_SUPPLIED: usize = 1_000;

/// Largest certificates file read (bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Most pairs of automaton states over all of a job's certificates: a
/// certificate's verification is bounded by
/// [`super::CLOSURE_PER_PAIR`] abstract configurations per pair, so
/// this bounds what checking a job costs every host (Coq-BB5's four
/// largest have 8,822 pairs).
pub const MAX_TOTAL_PAIRS: usize = 1 << 16;

/// Largest `max_d` a supplied certificate may ask for (Coq-BB5's are 1 to
/// 3; the closure grows with the bound).
pub const MAX_SUPPLIED_BOUND: i32 = 16;

/// The certificates a job carries, as text: the file's name and its
/// certificates, parsed again and verified whenever the job is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuppliedCertificates {
    /// The file's name on the submitting machine (for the report).
    pub name: String,
    pub entries: Vec<SuppliedEntry>,
}

/// One supplied certificate, as its line wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuppliedEntry {
    pub machine: String,
    pub max_d: i32,
    pub left: String,
    pub right: String,
}

/// Why supplied certificates were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuppliedError {
    #[error("line {line}: {reason}")]
    Syntax { line: usize, reason: String },
    #[error("certificate {index}: {reason}")]
    Entry { index: usize, reason: String },
    #[error("no certificate in the file")]
    Empty,
    #[error("more than {MAX_SUPPLIED} certificates")]
    TooMany,
    #[error("the automata have {0} pairs of states in all, more than {MAX_TOTAL_PAIRS}")]
    TooLarge(usize),
    #[error("{machine}: two certificates for one machine")]
    Duplicate { machine: String },
    #[error("{machine}: {states} states, the job has {job}")]
    States {
        machine: String,
        states: usize,
        job: usize,
    },
    #[error("{machine}: not a certificate of this machine ({error})")]
    Rejected { machine: String, error: WfarError },
}

/// A verified certificate, ready for the last resort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub table: Table,
    pub certificate: Certificate,
}

impl SuppliedCertificates {
    /// The certificates of the file at `path` on the submitting machine
    /// (the command line's parser of `--certificates`): read and parsed,
    /// not yet verified (that needs the job's number of states).
    pub fn from_path(path: &str) -> Result<SuppliedCertificates, String> {
        let p = std::path::Path::new(path);
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{path}: not a file name"))?
            .to_string();
        let len = std::fs::metadata(p)
            .map_err(|e| format!("{path}: {e}"))?
            .len();
        if len > MAX_FILE_BYTES {
            return Err(format!(
                "{path}: {len} bytes, more than the {MAX_FILE_BYTES} a certificates file may hold"
            ));
        }
        let text = std::fs::read_to_string(p).map_err(|e| format!("{path}: {e}"))?;
        SuppliedCertificates::parse(&name, &text).map_err(|e| format!("{path}: {e}"))
    }

    /// Parses a certificates file's text (every line checked for its form).
    pub fn parse(name: &str, text: &str) -> Result<SuppliedCertificates, SuppliedError> {
        let mut entries = Vec::new();
        let mut pairs = 0usize;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let syntax = |reason: String| SuppliedError::Syntax {
                line: i + 1,
                reason,
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [machine, kind, max_d, left, right] = fields[..] else {
                return Err(syntax(format!(
                    "expected `MACHINE wfar MAX_D LEFT RIGHT`, got {} fields",
                    fields.len()
                )));
            };
            if kind != "wfar" {
                return Err(syntax(format!(
                    "unknown kind of certificate `{kind}` (only `wfar`)"
                )));
            }
            from_text(machine).map_err(syntax)?;
            let max_d: i32 = max_d
                .parse()
                .ok()
                .filter(|d| (1..=MAX_SUPPLIED_BOUND).contains(d))
                .ok_or_else(|| {
                    syntax(format!(
                        "MAX_D must be an integer from 1 to {MAX_SUPPLIED_BOUND}, got `{max_d}`"
                    ))
                })?;
            let l = parse_wdfa(left).map_err(|e| syntax(format!("left automaton: {e}")))?;
            let r = parse_wdfa(right).map_err(|e| syntax(format!("right automaton: {e}")))?;
            pairs += l.states() * r.states();
            if pairs > MAX_TOTAL_PAIRS {
                return Err(SuppliedError::TooLarge(pairs));
            }
            if entries.len() == MAX_SUPPLIED {
                return Err(SuppliedError::TooMany);
            }
            entries.push(SuppliedEntry {
                machine: machine.to_string(),
                max_d,
                left: left.to_string(),
                right: right.to_string(),
            });
        }
        if entries.is_empty() {
            return Err(SuppliedError::Empty);
        }
        Ok(SuppliedCertificates {
            name: name.to_string(),
            entries,
        })
    }

    /// Every certificate parsed again and verified for its machine, an
    /// `n`-state one: the first that fails refuses them all.
    pub fn check(&self, n: usize) -> Result<Vec<Checked>, SuppliedError> {
        if self.entries.is_empty() {
            return Err(SuppliedError::Empty);
        }
        if self.entries.len() > MAX_SUPPLIED {
            return Err(SuppliedError::TooMany);
        }
        let pairs: usize = self
            .entries
            .iter()
            .map(|e| (e.left.split('_').count()).saturating_mul(e.right.split('_').count()))
            .fold(0, usize::saturating_add);
        if pairs > MAX_TOTAL_PAIRS {
            return Err(SuppliedError::TooLarge(pairs));
        }
        let mut out: Vec<Checked> = Vec::with_capacity(self.entries.len());
        for (i, e) in self.entries.iter().enumerate() {
            let syntax = |reason: String| SuppliedError::Entry {
                index: i + 1,
                reason,
            };
            let (table, states) = from_text(&e.machine).map_err(syntax)?;
            if states != n {
                return Err(SuppliedError::States {
                    machine: e.machine.clone(),
                    states,
                    job: n,
                });
            }
            if !(1..=MAX_SUPPLIED_BOUND).contains(&e.max_d) {
                return Err(syntax(format!("MAX_D {} out of range", e.max_d)));
            }
            let certificate = Certificate {
                max_d: e.max_d,
                left: parse_wdfa(&e.left).map_err(syntax)?,
                right: parse_wdfa(&e.right).map_err(syntax)?,
            };
            if out.iter().any(|c| c.table == table) {
                return Err(SuppliedError::Duplicate {
                    machine: e.machine.clone(),
                });
            }
            verify(&table, n, &certificate, closure_limit(&certificate)).map_err(|error| {
                SuppliedError::Rejected {
                    machine: e.machine.clone(),
                    error,
                }
            })?;
            out.push(Checked { table, certificate });
        }
        Ok(out)
    }

    /// The machines, in the file's order.
    pub fn machines(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.machine.as_str()).collect()
    }
}

/// Reads an automaton in MITM-WFAR's notation (`0,0;2,0_1,0;1,0_...`).
pub fn parse_wdfa(text: &str) -> Result<Wdfa, String> {
    let states: Vec<&str> = text.split('_').collect();
    let k = states.len();
    if k > MAX_CERTIFICATE_WDFA {
        return Err(format!(
            "{k} states, more than the {MAX_CERTIFICATE_WDFA} a certificate may have"
        ));
    }
    let mut w = Wdfa {
        next: Vec::with_capacity(k),
        weight: Vec::with_capacity(k),
    };
    for (q, s) in states.iter().enumerate() {
        let mut next = [0u8; 2];
        let mut weight = [0i8; 2];
        let halves: Vec<&str> = s.split(';').collect();
        if halves.len() != 2 {
            return Err(format!(
                "state {q}: `{s}` is not `NEXT0,WEIGHT0;NEXT1,WEIGHT1`"
            ));
        }
        for (b, h) in halves.iter().enumerate() {
            let bad = || format!("state {q}: `{h}` is not `NEXT,WEIGHT`");
            let (t, x) = h.split_once(',').ok_or_else(bad)?;
            let t: usize = t.parse().map_err(|_| bad())?;
            if t >= k {
                return Err(format!("state {q}: goes to state {t} of {k}"));
            }
            next[b] = t as u8;
            weight[b] = x.parse().map_err(|_| bad())?;
        }
        w.next.push(next);
        w.weight.push(weight);
    }
    if w.next[0][0] != 0 || w.weight[0][0] != 0 {
        return Err(WfarError::BlankNotNeutral.to_string());
    }
    Ok(w)
}

/// Writes an automaton in MITM-WFAR's notation ([`parse_wdfa`]'s inverse).
pub fn wdfa_text(w: &Wdfa) -> String {
    (0..w.states())
        .map(|q| {
            format!(
                "{},{};{},{}",
                w.next[q][0], w.weight[q][0], w.next[q][1], w.weight[q][1]
            )
        })
        .collect::<Vec<_>>()
        .join("_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const COQ: &str = include_str!("../../certificates/coq-bb5-large-wfar.txt");

    #[test]
    fn coq_bb5s_file_parses_and_verifies() {
        let s = SuppliedCertificates::parse("coq", COQ).unwrap();
        assert_eq!(s.entries.len(), 4);
        let checked = s.check(5).unwrap();
        let sizes: Vec<(usize, usize)> = checked
            .iter()
            .map(|c| (c.certificate.left.states(), c.certificate.right.states()))
            .collect();
        assert_eq!(sizes, [(8, 7), (58, 37), (48, 65), (50, 70)]);
        // The notation round-trips.
        for (c, e) in checked.iter().zip(&s.entries) {
            assert_eq!(wdfa_text(&c.certificate.left), e.left);
            assert_eq!(wdfa_text(&c.certificate.right), e.right);
        }
        // The wrong number of states is refused before any verification.
        assert!(matches!(s.check(4), Err(SuppliedError::States { .. })));
    }

    #[test]
    fn a_damaged_certificate_refuses_the_file() {
        let s = SuppliedCertificates::parse("coq", COQ).unwrap();
        // A weight dropped: the closure reaches the undefined transition.
        let mut bad = s.clone();
        bad.entries[1].left = bad.entries[1].left.replacen(",-1;", ",0;", 1);
        assert_ne!(bad.entries[1].left, s.entries[1].left);
        assert!(matches!(
            bad.check(5),
            Err(SuppliedError::Rejected { ref machine, .. }) if machine == &s.entries[1].machine
        ));
        // A certificate given to another machine.
        let mut other = s.clone();
        other.entries[0].machine = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_---0LA".into();
        assert!(matches!(
            other.check(5),
            Err(SuppliedError::Rejected { .. })
        ));
        // Two for one machine.
        let mut twice = s.clone();
        twice.entries.push(twice.entries[0].clone());
        assert!(matches!(
            twice.check(5),
            Err(SuppliedError::Duplicate { .. })
        ));
    }

    #[test]
    fn too_many_states_in_all_are_refused() {
        // The largest pair, 50 and 70 states, repeated: 3,500 pairs each.
        let s = SuppliedCertificates::parse("coq", COQ).unwrap();
        let big = s.entries.last().unwrap();
        let line = format!("{} wfar 2 {} {}\n", big.machine, big.left, big.right);
        let many = line.repeat(MAX_TOTAL_PAIRS / 3_500 + 1);
        assert!(matches!(
            SuppliedCertificates::parse("t", &many),
            Err(SuppliedError::TooLarge(_))
        ));
        // Stored parameters are bounded the same way when checked.
        let mut stored = s.clone();
        stored.entries = vec![big.clone(); MAX_TOTAL_PAIRS / 3_500 + 1];
        assert!(matches!(stored.check(5), Err(SuppliedError::TooLarge(_))));
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let line = |text: &str| match SuppliedCertificates::parse("t", text) {
            Err(SuppliedError::Syntax { line, .. }) => line,
            other => panic!("{other:?}"),
        };
        let m = "1RB1LC_1LB1RA_0LE0LD_0RA1RD_---0LC";
        assert_eq!(line(&format!("# c\n\n{m} wfar 2 0,0;0,0\n")), 3);
        assert_eq!(line(&format!("{m} far 2 0,0;0,0 0,0;0,0")), 1);
        assert_eq!(line(&format!("{m} wfar 0 0,0;0,0 0,0;0,0")), 1);
        assert_eq!(line(&format!("{m} wfar 2 0,0;1,0 0,0;0,0")), 1);
        assert_eq!(line(&format!("{m} wfar 2 0,1;0,0 0,0;0,0")), 1);
        assert_eq!(line(&format!("{m} wfar 2 0,0;0,x 0,0;0,0")), 1);
        assert_eq!(line("1RB1LC_1LB wfar 2 0,0;0,0 0,0;0,0"), 1);
        assert_eq!(
            SuppliedCertificates::parse("t", "# nothing\n"),
            Err(SuppliedError::Empty)
        );
        // A well-formed pair that is no certificate parses, and is refused
        // when checked.
        let s = SuppliedCertificates::parse("t", &format!("{m} wfar 2 0,0;0,0 0,0;0,0")).unwrap();
        assert!(matches!(s.check(5), Err(SuppliedError::Rejected { .. })));
    }
}
