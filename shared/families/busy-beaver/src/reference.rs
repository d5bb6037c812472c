//! A deliberately plain second implementation, to check the search against:
//! no tree, no deciders. Every fully defined machine of `n` states (each of
//! the `2n` transitions one of the `4n` (write, move, next state) or *halt*:
//! `(4n + 1)^(2n)` machines, 25, 6561 and 4,826,809 for 1, 2, 3 states) is
//! simulated from the blank tape for at most `limit` steps; among those
//! that halt within the limit, the most ones and the most steps, and the
//! machines that reach them, each written in tree normal form (states
//! renamed in order of first visit, mirrored if the first move is to the
//! left, transitions it never used left undefined) so that the set can be
//! compared with the family's champions.
//!
//! The halt option writes a 1 (the chapter's cards also write and move on
//! the halting step; a 0, or either move, never gives more ones or steps),
//! and the halting step counts as a step, as in the chapter's 21.

use std::collections::BTreeSet;

/// A transition: `None` halts, `Some((write, right, next))`.
pub type Step = Option<(u8, bool, u8)>;

/// What a brute-force pass found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BruteForce {
    /// Machines simulated: `(4n + 1)^(2n)`.
    pub machines: u64,
    /// Machines that halted within the limit.
    pub halting: u64,
    pub max_ones: u64,
    pub max_steps: u64,
    /// The champions in tree normal form, as bbchallenge's text.
    pub ones_champions: BTreeSet<String>,
    pub steps_champions: BTreeSet<String>,
}

/// A run from the blank tape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// `Some((steps, ones))` if it halted within the limit (the halting step
    /// counted and writing a 1).
    pub halted: Option<(u64, u64)>,
}

/// A tape that grows both ways, reused between runs.
struct Tape {
    cells: Vec<u8>,
    origin: usize,
    used: (usize, usize),
}

impl Tape {
    fn new(limit: u64) -> Tape {
        let origin = limit as usize + 1;
        Tape {
            cells: vec![0; 2 * origin + 1],
            origin,
            used: (origin, origin),
        }
    }

    fn clear(&mut self) {
        let (a, b) = self.used;
        for c in &mut self.cells[a..=b] {
            *c = 0;
        }
        self.used = (self.origin, self.origin);
    }
}

/// Runs `machine` (transition `2 * state + read`) for at most `limit`
/// steps, calling `visit(transition index, moved right)` for every step
/// taken (the halting one excepted).
fn simulate(
    machine: &[Step],
    limit: u64,
    tape: &mut Tape,
    mut visit: impl FnMut(usize, bool),
) -> Option<(u64, u64, usize)> {
    tape.clear();
    let mut pos = tape.origin;
    let mut state = 0usize;
    for step in 0..limit {
        let read = tape.cells[pos] as usize;
        let index = 2 * state + read;
        match machine[index] {
            None => {
                tape.cells[pos] = 1;
                let (a, b) = tape.used;
                let ones = tape.cells[a..=b].iter().filter(|&&c| c == 1).count();
                return Some((step + 1, ones as u64, index));
            }
            Some((write, right, next)) => {
                visit(index, right);
                tape.cells[pos] = write;
                if right {
                    pos += 1;
                } else {
                    pos -= 1;
                }
                tape.used = (tape.used.0.min(pos), tape.used.1.max(pos));
                state = next as usize;
            }
        }
    }
    None
}

/// Runs a machine given as a list of transitions for at most `limit` steps.
pub fn run(machine: &[Step], limit: u64) -> Run {
    let mut tape = Tape::new(limit);
    Run {
        halted: simulate(machine, limit, &mut tape, |_, _| {})
            .map(|(steps, ones, _)| (steps, ones)),
    }
}

/// The transitions of bbchallenge's text form (`---` and `?RZ` halt).
pub fn parse(text: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for block in text.split('_') {
        for t in block.as_bytes().chunks(3) {
            if t == b"---" || t[2] == b'Z' {
                out.push(None);
            } else {
                out.push(Some((t[0] - b'0', t[1] == b'R', t[2] - b'A')));
            }
        }
    }
    out
}

/// The tree-normal-form text of a machine that halts within `limit`:
/// states renamed by first visit, mirrored if its first move is left, the
/// transitions it never takes undefined, the one it halts on `1RZ`.
pub fn normal_form(machine: &[Step], limit: u64) -> Option<String> {
    let n = machine.len() / 2;
    let mut tape = Tape::new(limit);
    let mut used = vec![false; machine.len()];
    let mut first_right = None;
    let (_, _, halt) = simulate(machine, limit, &mut tape, |i, right| {
        used[i] = true;
        first_right.get_or_insert(right);
    })?;
    let mirror = first_right == Some(false);
    // States in order of first visit: A first, then as the used
    // transitions (in order of first use) lead to them.
    let mut order: Vec<u8> = vec![0];
    let mut tape2 = Tape::new(limit);
    simulate(machine, limit, &mut tape2, |i, _| {
        let next = machine[i].unwrap().2;
        if !order.contains(&next) {
            order.push(next);
        }
    });
    let rename = |s: u8| order.iter().position(|&x| x == s).unwrap() as u8;
    let mut cells = vec!["---".to_string(); 2 * n];
    for (i, step) in machine.iter().enumerate() {
        let to = 2 * rename((i / 2) as u8) as usize + i % 2;
        if i == halt {
            cells[to] = "1RZ".into();
        } else if used[i] {
            let (w, right, next) = step.unwrap();
            let dir = if right != mirror { 'R' } else { 'L' };
            cells[to] = format!("{w}{dir}{}", (b'A' + rename(next)) as char);
        }
    }
    Some(
        cells
            .chunks(2)
            .map(|c| c.concat())
            .collect::<Vec<_>>()
            .join("_"),
    )
}

/// Every fully defined `n`-state machine, simulated for at most `limit`
/// steps.
pub fn brute_force(n: usize, limit: u64) -> BruteForce {
    let choices = 4 * n as u64 + 1;
    let total = choices.pow(2 * n as u32);
    let mut tape = Tape::new(limit);
    let mut machine: Vec<Step> = vec![None; 2 * n];
    let mut out = BruteForce {
        machines: total,
        ..BruteForce::default()
    };
    let mut ones_best: Vec<Vec<Step>> = Vec::new();
    let mut steps_best: Vec<Vec<Step>> = Vec::new();
    for index in 0..total {
        let mut x = index;
        for t in machine.iter_mut() {
            let c = x % choices;
            x /= choices;
            *t = if c == 0 {
                None
            } else {
                let c = c - 1;
                Some(((c % 2) as u8, (c / 2) % 2 == 1, (c / 4) as u8))
            };
        }
        let Some((steps, ones, _)) = simulate(&machine, limit, &mut tape, |_, _| {}) else {
            continue;
        };
        out.halting += 1;
        if ones > out.max_ones {
            out.max_ones = ones;
            ones_best.clear();
        }
        if ones == out.max_ones {
            ones_best.push(machine.clone());
        }
        if steps > out.max_steps {
            out.max_steps = steps;
            steps_best.clear();
        }
        if steps == out.max_steps {
            steps_best.push(machine.clone());
        }
    }
    let forms = |v: &[Vec<Step>]| -> BTreeSet<String> {
        v.iter()
            .map(|m| normal_form(m, limit).expect("a champion halts"))
            .collect()
    };
    out.ones_champions = forms(&ones_best);
    out.steps_champions = forms(&steps_best);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chapters_machines() {
        // The first 3-card example: stops after writing two 1s.
        let m = parse("1RB1RC_1LC1RB_1LB1RZ");
        assert_eq!(run(&m, 1000).halted.map(|(_, ones)| ones), Some(2));
        // Its variant never stops.
        assert_eq!(run(&parse("1RB1RB_1LA1RA_1LB1RZ"), 10_000).halted, None);
        // Lin and Rado's six ones, and the 21 operations.
        assert_eq!(
            run(&parse("1RB1LC_1RC1RZ_1LA0LB"), 1000).halted,
            Some((11, 6))
        );
        assert_eq!(
            run(&parse("1RB1RZ_1LB0RC_1LC1LA"), 1000).halted,
            Some((21, 5))
        );
    }

    #[test]
    fn normal_form_renames_and_mirrors() {
        // The 21-step champion, mirrored and with B and C exchanged.
        let m = parse("1LC1LZ_1RB1RA_1RC0LB");
        assert_eq!(normal_form(&m, 1000).unwrap(), "1RB1RZ_1LB0RC_1LC1LA");
    }
}
