//! DIMACS CNF: the formula a `sat` job solves, read once and checked; and
//! iCNF, the same clauses followed by the user's cubes (what a lookahead
//! cuber such as march_cu writes).

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

/// The lines of a DIMACS text that say something, trimmed, with their
/// 1-based numbers: blank lines and comments (`c`, and the `%` some
/// generators end with) left out.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, t)| !(t.is_empty() || t.starts_with('c') || t.starts_with('%')))
}

/// Most literals a formula may hold (about 256 MiB of clauses in memory).
pub const MAX_LITERALS: usize = 64 << 20;
/// An iCNF's cubes, each its literals, in the file's order.
pub type Cubes = Vec<Vec<i32>>;

/// Most variables a formula may have.
pub const MAX_VARS: u32 = 1 << 28;
/// Most cubes an iCNF may bring: as many root units as `--cube-vars` can
/// make ([`crate::MAX_CUBE_VARS`]).
pub const MAX_CUBES: usize = 1 << crate::MAX_CUBE_VARS;

/// One cube line's literals after the `a`, ended by `0`: each of a
/// variable `1..=vars`, at most [`crate::MAX_CUBE`] of them; a literal
/// written twice counts once. A cube with `x` and `-x` holds no assignment:
/// refused, as a sign of a broken cuber rather than dropped unseen.
pub fn check_cube_line(rest: &str, vars: u32) -> Result<Vec<i32>, String> {
    if !rest.starts_with(char::is_whitespace) {
        return Err(format!(
            "expected a cube line `a LITERALS 0`, got {:?}",
            format!("a{rest}")
        ));
    }
    let mut words = rest.split_whitespace();
    let mut cube: Vec<i32> = Vec::new();
    loop {
        let Some(w) = words.next() else {
            return Err("the cube is not ended by 0 on its line".into());
        };
        let lit = w
            .parse::<i32>()
            .map_err(|_| format!("{w:?} is not a literal"))?;
        if lit == 0 {
            break;
        }
        if lit.unsigned_abs() > vars {
            return Err(format!(
                "cube literal {lit} beyond the formula's {vars} variables"
            ));
        }
        if cube.contains(&-lit) {
            return Err(format!(
                "the cube has both {lit} and {} (it holds no assignment)",
                -lit
            ));
        }
        if !cube.contains(&lit) {
            if cube.len() == crate::MAX_CUBE {
                return Err(format!("a cube of more than {} literals", crate::MAX_CUBE));
            }
            cube.push(lit);
        }
    }
    if let Some(w) = words.next() {
        return Err(format!("{w:?} after the cube's 0"));
    }
    Ok(cube)
}

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
        for (line, t) in content_lines(text) {
            let fail = |reason: String| DimacsError { line, reason };
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
                if vars == 0 || vars > MAX_VARS {
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

    /// Reads a plain CNF (`p cnf`: no cubes) or an iCNF (`p inccnf`: its
    /// cubes), told apart by the header.
    pub fn parse_input(text: &str) -> Result<(Formula, Option<Cubes>), DimacsError> {
        let header = text
            .lines()
            .map(str::trim)
            .find(|t| !(t.is_empty() || t.starts_with('c') || t.starts_with('%')));
        if header.is_some_and(|t| t.split_whitespace().take(2).eq(["p", "inccnf"])) {
            let (f, cubes) = Formula::parse_icnf(text)?;
            Ok((f, Some(cubes)))
        } else {
            Ok((Formula::parse(text)?, None))
        }
    }

    /// Reads `p inccnf`, clauses as in DIMACS, then cube lines `a l1 l2 ...
    /// 0`. The header counts nothing: the variables are those the clauses
    /// name, and a cube may name no other. Every clause must come before
    /// the first cube: in the incremental format a later clause holds only
    /// for later cubes, which one formula cannot say. Each cube is checked
    /// here (see [`check_cube_line`]); whether the cubes cover every
    /// assignment is [`crate::cover`]'s question.
    pub fn parse_icnf(text: &str) -> Result<(Formula, Cubes), DimacsError> {
        let mut header = false;
        let mut f = Formula {
            vars: 0,
            lits: Vec::new(),
            starts: vec![0],
        };
        let mut cubes: Vec<Vec<i32>> = Vec::new();
        let mut empty_cube_line = None;
        // The cubes' shares in units of 2^-MAX_CUBE, as the job counts
        // them: overlapping cubes may add up past the whole space, but
        // not past what a u128 holds.
        let mut shares = 0u128;
        let mut open = None;
        for (line, t) in content_lines(text) {
            let fail = |reason: String| DimacsError { line, reason };
            if t.starts_with('p') {
                if header || t.split_whitespace().ne(["p", "inccnf"]) {
                    return Err(fail("expected one header `p inccnf`".into()));
                }
                header = true;
                continue;
            }
            if !header {
                return Err(fail("a line before the header `p inccnf`".into()));
            }
            if let Some(rest) = t.strip_prefix('a') {
                if open.is_some() {
                    return Err(fail("a cube inside an unended clause".into()));
                }
                if cubes.is_empty() {
                    f.vars = f.lits.iter().map(|l| l.unsigned_abs()).max().unwrap_or(0);
                    if f.vars == 0 {
                        return Err(fail("cubes of a formula with no variables".into()));
                    }
                }
                if cubes.len() >= MAX_CUBES {
                    return Err(fail(format!("more than {MAX_CUBES} cubes")));
                }
                let cube = check_cube_line(rest, f.vars).map_err(fail)?;
                shares = shares
                    .checked_add(1 << (crate::MAX_CUBE - cube.len()))
                    .ok_or_else(|| {
                        fail(
                            "the cubes' shares add up beyond 2^8 times every assignment (overlap)"
                                .into(),
                        )
                    })?;
                if cube.is_empty() {
                    empty_cube_line.get_or_insert(line);
                }
                cubes.push(cube);
                continue;
            }
            if !cubes.is_empty() {
                return Err(fail(
                    "a clause after a cube (incremental formulas are not supported: every clause first)"
                        .into(),
                ));
            }
            for w in t.split_whitespace() {
                let lit = w
                    .parse::<i32>()
                    .map_err(|_| fail(format!("{w:?} is not a literal")))?;
                if lit == 0 {
                    f.starts.push(f.lits.len() as u32);
                    open = None;
                } else {
                    if lit.unsigned_abs() > MAX_VARS {
                        return Err(fail(format!(
                            "literal {lit}: 1 to 2^28 variables are allowed"
                        )));
                    }
                    if f.lits.len() >= MAX_LITERALS {
                        return Err(fail(format!("more than {MAX_LITERALS} literals")));
                    }
                    f.lits.push(lit);
                    open = Some(line);
                }
            }
        }
        if !header {
            return Err(DimacsError {
                line: 0,
                reason: "no header `p inccnf`".into(),
            });
        }
        if let Some(line) = open {
            return Err(DimacsError {
                line,
                reason: "a clause not ended by 0".into(),
            });
        }
        if cubes.is_empty() {
            return Err(DimacsError {
                line: 0,
                reason: "no cube lines `a LITERALS 0`".into(),
            });
        }
        if let Some(line) = empty_cube_line.filter(|_| cubes.len() > 1) {
            return Err(DimacsError {
                line,
                reason: "an empty cube (all assignments) beside other cubes".into(),
            });
        }
        Ok((f, cubes))
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

    #[test]
    fn icnf_files_bring_their_cubes() {
        let text = "c cubes of a lookahead tree\np inccnf\n1 -2 0\n2\n3 -1 0\na 1 0\na -1 2 2 0\n\na -1 -2 0\n";
        let (f, cubes) = Formula::parse_input(text).unwrap();
        assert_eq!((f.vars, f.clauses()), (3, 2));
        assert_eq!(f.clause(1), [2, 3, -1]);
        // A literal written twice counts once.
        assert_eq!(cubes, Some(vec![vec![1], vec![-1, 2], vec![-1, -2]]));
        // The empty cube alone: the whole formula as one root cube.
        let (_, cubes) = Formula::parse_input("p inccnf\n1 2 0\na 0\n").unwrap();
        assert_eq!(cubes, Some(vec![vec![]]));
        // A plain CNF has none.
        assert_eq!(Formula::parse_input("p cnf 1 1\n1 0\n").unwrap().1, None);
    }

    #[test]
    fn bad_icnf_files_are_refused_with_their_line() {
        for (bad, line, why) in [
            (
                "p inccnf\n1 2 0\na 3 0\n",
                3,
                "beyond the formula's 2 variables",
            ),
            ("p inccnf\n1 2 0\na 1 -2 -1 0\n", 3, "both -1 and 1"),
            ("p inccnf\n1 2 0\na 1 -2\n", 3, "not ended by 0"),
            ("p inccnf\n1 2 0\na 1 0 2\n", 3, "after the cube's 0"),
            ("p inccnf\n1 2 0\na 1 x 0\n", 3, "not a literal"),
            ("p inccnf\n1 2 0\na1 0\n", 3, "expected a cube line"),
            ("p inccnf\n1 2 0\na 1 0\na 0\n", 4, "empty cube"),
            ("p inccnf\n1 2 0\na 1 0\n-1 0\n", 4, "a clause after a cube"),
            ("p inccnf\n1 2\na 1 0\n", 3, "unended clause"),
            ("p inccnf\n1 2\n", 2, "not ended by 0"),
            ("p inccnf\n1 2 0\n", 0, "no cube lines"),
            ("p inccnf\na 0\n", 2, "no variables"),
            ("a 1 0\np inccnf\n", 1, "header"),
            ("p inccnf\np inccnf\n", 2, "one header"),
            ("p inccnf 2 1\n1 0\n", 1, "header"),
        ] {
            let e = Formula::parse_input(bad).unwrap_err();
            assert!(e.line == line && e.reason.contains(why), "{bad:?}: {e}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        let long = format!(
            "p inccnf\n{} 0\na {} 0\n",
            (1..=130)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            (1..=121)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let e = Formula::parse_input(&long).unwrap_err();
        assert!(e.reason.contains("more than 120 literals"), "{e}");
        // Each cube `1` is half the space: 511 halves fit in the count, the
        // 512th (line 514) would reach 2^8 times the whole.
        let many = format!("p inccnf\n1 2 0\n{}", "a 1 0\n".repeat(600));
        let e = Formula::parse_input(&many).unwrap_err();
        assert!(e.line == 514 && e.reason.contains("beyond 2^8"), "{e}");
        let fits = format!("p inccnf\n1 2 0\n{}", "a 1 0\n".repeat(511));
        assert_eq!(Formula::parse_input(&fits).unwrap().1.unwrap().len(), 511);
    }
}
