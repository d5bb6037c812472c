//! The `exec` protocol, version 1: what a program prints on stdout, one
//! statement a line, read as it comes.
//!
//! ```text
//! unit TEXT            (roots only) a root unit
//! count NAME N         add N (0 <= N < 2^128) to counter NAME
//! max NAME V WITNESS   offer V (an integer, |V| < 2^127) reached by WITNESS
//! min NAME V WITNESS   likewise for the minimum
//! witness NAME TEXT    add TEXT to NAME's list of smallest witnesses
//! nodes N              N more nodes explored (reported for rates and budgets)
//! progress N           N nodes so far (shown while running; not merged)
//! rest TEXT            a unit covering part of what was not explored
//! done                 the report is whole: the last line
//! ```
//!
//! Blank lines and lines starting with `#` are ignored. A `NAME` is 1 to 64
//! of `A-Z a-z 0-9 _ . : -`; a `TEXT` (unit or witness) is the rest of the
//! line, 1 to [`MAX_TEXT`] bytes. Anything else is an error naming the line:
//! a report that does not parse is discarded whole, never half merged.

use crate::summary::{Direction, ExecSummary, MAX_NAMES};

/// The protocol version programs are told (`ORCHARD_EXEC_PROTOCOL`).
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest unit or witness, in bytes.
pub const MAX_TEXT: usize = 65_536;

/// Most `rest` or `unit` lines in one report.
pub const MAX_UNITS: usize = 1_000_000;

/// Why a line of a program's output was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}: {text:?}")]
pub struct ProtocolError {
    pub line: u64,
    pub reason: String,
    /// The line, cut at 200 bytes.
    pub text: String,
}

/// Which call of the program a report answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `PROGRAM roots ARGS...`: root units only.
    Roots,
    /// `PROGRAM explore ARGS...`: one unit's figures.
    Explore,
}

/// A report being read.
#[derive(Debug)]
pub struct Report {
    call: Call,
    lines: u64,
    nodes_said: bool,
    pub summary: ExecSummary,
    /// `rest` lines (explore) or `unit` lines (roots), in order.
    pub units: Vec<String>,
    pub done: bool,
}

impl Report {
    pub fn new(call: Call) -> Self {
        Report {
            call,
            lines: 0,
            nodes_said: false,
            summary: ExecSummary::default(),
            units: Vec::new(),
            done: false,
        }
    }

    /// Whether the program said how many nodes it explored.
    pub fn nodes_said(&self) -> bool {
        self.nodes_said
    }

    /// Reads one line (without its newline). `Ok(Some(n))` for a progress
    /// line saying `n` nodes so far.
    pub fn line(&mut self, raw: &str) -> Result<Option<u64>, ProtocolError> {
        self.lines += 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let fail = |reason: &str| ProtocolError {
            line: self.lines,
            reason: reason.to_string(),
            text: cut(line, 200),
        };
        if line.trim().is_empty() || line.starts_with('#') {
            return Ok(None);
        }
        if self.done {
            return Err(fail("output after `done`"));
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match (self.call, word) {
            (_, "done") if rest.is_empty() => self.done = true,
            (_, "progress") => {
                let n = rest.parse::<u64>().map_err(|_| fail("not a node count"))?;
                return Ok(Some(n));
            }
            (Call::Roots, "unit") | (Call::Explore, "rest") => {
                text(rest).map_err(|r| fail(&r))?;
                if self.units.len() >= MAX_UNITS {
                    return Err(fail(&format!("more than {MAX_UNITS} units")));
                }
                self.units.push(rest.to_string());
            }
            (Call::Explore, "nodes") => {
                let n = rest.parse::<u64>().map_err(|_| fail("not a node count"))?;
                self.summary.nodes = self
                    .summary
                    .nodes
                    .checked_add(n)
                    .ok_or_else(|| fail("node count overflows"))?;
                self.nodes_said = true;
            }
            (Call::Explore, "count") => {
                let (name, value) = two(rest).ok_or_else(|| fail("expected `count NAME N`"))?;
                name_ok(name).map_err(|r| fail(&r))?;
                let v = value
                    .parse::<u128>()
                    .map_err(|_| fail("not a count (0 <= N < 2^128)"))?;
                self.summary
                    .count(name, v)
                    .map_err(|_| fail("the counter overflows 2^128"))?;
            }
            (Call::Explore, "max" | "min") => {
                let (name, after) = rest
                    .split_once(' ')
                    .ok_or_else(|| fail("expected `max|min NAME V WITNESS`"))?;
                let (value, witness) = after
                    .split_once(' ')
                    .ok_or_else(|| fail("expected `max|min NAME V WITNESS`"))?;
                name_ok(name).map_err(|r| fail(&r))?;
                let v = value
                    .parse::<i128>()
                    .map_err(|_| fail("not an integer value"))?;
                text(witness).map_err(|r| fail(&r))?;
                let dir = if word == "max" {
                    Direction::Max
                } else {
                    Direction::Min
                };
                self.summary.extreme(dir, name, v, witness);
            }
            (Call::Explore, "witness") => {
                let (name, witness) = rest
                    .split_once(' ')
                    .ok_or_else(|| fail("expected `witness NAME TEXT`"))?;
                name_ok(name).map_err(|r| fail(&r))?;
                text(witness).map_err(|r| fail(&r))?;
                self.summary.witness(name, witness);
            }
            _ => {
                return Err(fail(match self.call {
                    Call::Roots => "not a statement of `roots` (unit, progress, done)",
                    Call::Explore => {
                        "not a statement (count, max, min, witness, nodes, progress, rest, done)"
                    }
                }))
            }
        }
        if self.summary.names() > MAX_NAMES {
            return Err(fail(&format!("more than {MAX_NAMES} named figures")));
        }
        Ok(None)
    }
}

fn two(s: &str) -> Option<(&str, &str)> {
    let (a, b) = s.split_once(' ')?;
    (!b.contains(' ')).then_some((a, b))
}

/// Checks a counter's, extreme's or list's name.
pub fn name_ok(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err("a name is 1 to 64 of A-Z a-z 0-9 _ . : -".into())
    }
}

/// Checks a unit's or witness's text.
pub fn text(t: &str) -> Result<(), String> {
    if t.is_empty() {
        Err("empty text".into())
    } else if t.len() > MAX_TEXT {
        Err(format!("text of {} bytes, over {MAX_TEXT}", t.len()))
    } else if t.bytes().any(|b| b == b'\n' || b == b'\r' || b == 0) {
        Err("text with a line break or NUL".into())
    } else {
        Ok(())
    }
}

/// `s` cut at about `max` bytes, on a character boundary.
pub fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(call: Call, lines: &[&str]) -> Result<Report, ProtocolError> {
        let mut r = Report::new(call);
        for l in lines {
            r.line(l)?;
        }
        Ok(r)
    }

    #[test]
    fn a_report_reads_into_a_summary() {
        let r = read(
            Call::Explore,
            &[
                "# a comment",
                "count solutions 12",
                "count solutions 340282366920938463463374607431768211000",
                "max steps 107 1RB1LB_1LA0LC_1RZ1LD_1RD0RA",
                "min gap -4 a b c",
                "witness first 3 1 2 1 3 2",
                "progress 10",
                "nodes 5",
                "",
                "nodes 6",
                "rest 2 3",
                "done",
            ],
        )
        .unwrap();
        assert!(r.done);
        assert_eq!(
            r.summary.counters["solutions"],
            340282366920938463463374607431768211012
        );
        assert_eq!(
            r.summary.maxima["steps"].witness,
            "1RB1LB_1LA0LC_1RZ1LD_1RD0RA"
        );
        assert_eq!(r.summary.minima["gap"].value, -4);
        assert_eq!(r.summary.minima["gap"].witness, "a b c");
        assert_eq!(r.summary.witnesses["first"], ["3 1 2 1 3 2"]);
        assert_eq!(r.summary.nodes, 11);
        assert_eq!(r.units, ["2 3"]);
    }

    #[test]
    fn bad_lines_are_named() {
        for (call, line, why) in [
            (Call::Explore, "count x -1", "not a count"),
            (
                Call::Explore,
                "count x 340282366920938463463374607431768211456",
                "not a count",
            ),
            (Call::Explore, "count bad/name 1", "a name is"),
            (Call::Explore, "count x", "expected"),
            (Call::Explore, "max x 1", "expected"),
            (Call::Explore, "max x one w", "not an integer"),
            (Call::Explore, "rest ", "empty text"),
            (Call::Explore, "unit 1", "not a statement"),
            (Call::Roots, "count x 1", "not a statement of `roots`"),
            (Call::Explore, "done now", "not a statement"),
            (Call::Explore, "nodes -3", "not a node count"),
            (Call::Explore, "hello", "not a statement"),
        ] {
            let e = read(call, &[line]).unwrap_err();
            assert_eq!(e.line, 1);
            assert!(e.reason.contains(why), "{line}: {e}");
        }
        let e = read(Call::Explore, &["done", "count x 1"]).unwrap_err();
        assert_eq!((e.line, e.reason.as_str()), (2, "output after `done`"));
        let e = read(
            Call::Explore,
            &[
                "count x 340282366920938463463374607431768211455",
                "count x 1",
            ],
        )
        .unwrap_err();
        assert!(e.reason.contains("overflows"), "{e}");
    }
}
