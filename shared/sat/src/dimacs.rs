//! DIMACS CNF: the formula a `sat` job solves, read once and checked.

/// A formula in conjunctive normal form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formula {
    /// Variables `1..=vars`.
    pub vars: u32,
    /// The literals of every clause, one after another.
    lits: Vec<i32>,
    /// Where each clause starts in `lits`, and its end.
    starts: Vec<u32>,
}

/// Why a formula's text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct DimacsError {
    pub line: usize,
    pub reason: String,
}

/// Most literals a formula may hold (about 256 MiB of clauses in memory).
pub const MAX_LITERALS: usize = 64 << 20;

impl Formula {
    /// Reads `p cnf V C` and its clauses (each ended by `0`, possibly over
    /// several lines); `c` lines are comments. The clause count must match.
    pub fn parse(text: &str) -> Result<Formula, DimacsError> {
        let mut header: Option<(u32, usize)> = None;
        let mut f = Formula {
            vars: 0,
            lits: Vec::new(),
            starts: vec![0],
        };
        let mut open = false;
        for (i, line) in text.lines().enumerate() {
            let fail = |reason: String| DimacsError {
                line: i + 1,
                reason,
            };
            let t = line.trim();
            if t.is_empty() || t.starts_with('c') || t.starts_with('%') {
                continue;
            }
            if t.starts_with('p') {
                let w: Vec<&str> = t.split_whitespace().collect();
                if header.is_some() || w.len() != 4 || w[1] != "cnf" {
                    return Err(fail("expected one header `p cnf VARS CLAUSES`".into()));
                }
                let vars = w[2]
                    .parse::<u32>()
                    .map_err(|_| fail("bad variable count".into()))?;
                let clauses = w[3]
                    .parse::<usize>()
                    .map_err(|_| fail("bad clause count".into()))?;
                if vars == 0 || vars > (1 << 28) {
                    return Err(fail(format!("{vars} variables: 1 to 2^28 are allowed")));
                }
                header = Some((vars, clauses));
                f.vars = vars;
                continue;
            }
            let Some((vars, _)) = header else {
                return Err(fail("a clause before the header".into()));
            };
            for w in t.split_whitespace() {
                let lit = w
                    .parse::<i32>()
                    .map_err(|_| fail(format!("{w:?} is not a literal")))?;
                if lit == 0 {
                    f.starts.push(f.lits.len() as u32);
                    open = false;
                } else {
                    if lit.unsigned_abs() > vars {
                        return Err(fail(format!("literal {lit} beyond {vars} variables")));
                    }
                    if f.lits.len() >= MAX_LITERALS {
                        return Err(fail(format!("more than {MAX_LITERALS} literals")));
                    }
                    f.lits.push(lit);
                    open = true;
                }
            }
        }
        let Some((_, clauses)) = header else {
            return Err(DimacsError {
                line: 0,
                reason: "no header `p cnf VARS CLAUSES`".into(),
            });
        };
        if open {
            return Err(DimacsError {
                line: text.lines().count(),
                reason: "the last clause is not ended by 0".into(),
            });
        }
        if f.clauses() != clauses {
            return Err(DimacsError {
                line: 0,
                reason: format!(
                    "the header says {clauses} clauses, the file has {}",
                    f.clauses()
                ),
            });
        }
        Ok(f)
    }

    pub fn clauses(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn clause(&self, i: usize) -> &[i32] {
        &self.lits[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// The formula with `cube`'s literals as unit clauses, as DIMACS.
    pub fn with_units(&self, cube: &[i32]) -> Vec<u8> {
        use std::fmt::Write;
        let mut s = String::with_capacity(self.lits.len() * 4 + 64);
        let _ = writeln!(s, "p cnf {} {}", self.vars, self.clauses() + cube.len());
        for i in 0..self.clauses() {
            for l in self.clause(i) {
                let _ = write!(s, "{l} ");
            }
            s.push_str("0\n");
        }
        for l in cube {
            let _ = writeln!(s, "{l} 0");
        }
        s.into_bytes()
    }

    /// The first clause `assignment` leaves false, if any. `assignment[v]`
    /// is variable `v`'s value (index 0 unused).
    pub fn falsified(&self, assignment: &[bool]) -> Option<usize> {
        (0..self.clauses()).find(|&i| {
            !self
                .clause(i)
                .iter()
                .any(|&l| assignment[l.unsigned_abs() as usize] == (l > 0))
        })
    }

    /// The variables by how many clauses they occur in, most first (ties:
    /// the smaller variable): the order cubes split on.
    pub fn split_order(&self) -> Vec<u32> {
        let mut count = vec![0u64; self.vars as usize + 1];
        for &l in &self.lits {
            count[l.unsigned_abs() as usize] += 1;
        }
        let mut order: Vec<u32> = (1..=self.vars).collect();
        order.sort_by(|a, b| count[*b as usize].cmp(&count[*a as usize]).then(a.cmp(b)));
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_parse_and_bad_ones_are_named() {
        let f = Formula::parse("c hi\np cnf 3 2\n1 -2 0\n2 3\n-1 0\n").unwrap();
        assert_eq!(f.clauses(), 2);
        assert_eq!(f.clause(1), [2, 3, -1]);
        assert_eq!(f.falsified(&[false, true, true, false]), None);
        assert_eq!(f.falsified(&[false, false, true, false]), Some(0));
        assert_eq!(f.split_order()[0], 1);
        for (bad, why) in [
            ("1 0\n", "before the header"),
            ("p cnf 2 1\n3 0\n", "beyond"),
            ("p cnf 2 2\n1 0\n", "header says 2"),
            ("p cnf 2 1\n1 2\n", "not ended"),
            ("p cnf 2 1\n1 x 0\n", "not a literal"),
            ("p dnf 2 1\n", "header"),
            ("", "no header"),
        ] {
            let e = Formula::parse(bad).unwrap_err();
            assert!(e.reason.contains(why), "{bad:?}: {e}");
        }
        let text = String::from_utf8(f.with_units(&[-3])).unwrap();
        assert_eq!(text, "p cnf 3 3\n1 -2 0\n2 3 -1 0\n-3 0\n");
    }
}
