//! The `rooks3d` search loop: backtracking over the eight free cells.
//!
//! Every constraint on a placement is linear, and each one becomes fully
//! decided when the last of the free cells it involves is assigned. So the
//! values a free cell may take, given the cells before it, form an interval
//! ([`range`]), and the loop never visits a value that breaks a decided
//! constraint: every node satisfies every constraint its cells decide
//! (a deeper cell may still find its interval empty: that node is a dead
//! end, but no node is spent on an already violated cell). Nothing
//! allocates in the loop except when the budget runs out and the rest is
//! handed back.

use super::{Prefix, Rooks3dSummary};
use orchard_core::{Exploration, ExploreContext, FamilyError, NodeMeter};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// The free cells, in search order, as indices `9i + 3j + k` of the array.
pub const FREE_CELLS: [usize; 8] = [0, 1, 3, 4, 9, 10, 12, 13];

/// The values the next free cell may take after `p` (at most 7 cells), as
/// an inclusive interval, possibly empty (`lo > hi`). Writing the free
/// cells of layer `i` as `a b / c d` (its 2 x 2 corner), the layer is
///
/// ```text
///   a      b      R-a-b
///   c      d      R-c-d
///   R-a-c  R-b-d  a+b+c+d-R
/// ```
///
/// and layer 2 is `R` minus layers 0 and 1, cell by cell. The bounds below
/// are exactly "every cell decided by `p` and the new value is >= 0".
pub fn range(r: u8, p: &[u8]) -> (i32, i32) {
    let r = i32::from(r);
    let v = |i: usize| i32::from(p[i]);
    match p.len() {
        0 => (0, r),
        // b: x[0][0][2] = R-a-b.
        1 => (0, r - v(0)),
        // c: x[0][2][0] = R-a-c.
        2 => (0, r - v(0)),
        // d: x[0][1][2] = R-c-d, x[0][2][1] = R-b-d, x[0][2][2] = a+b+c+d-R.
        3 => (0.max(r - v(0) - v(1) - v(2)), (r - v(1)).min(r - v(2))),
        // a1: x[2][0][0] = R-a0-a1.
        4 => (0, r - v(0)),
        // b1: x[1][0][2] = R-a1-b1, x[2][0][1] = R-b0-b1,
        // x[2][0][2] = R - (R-a0-b0) - (R-a1-b1) = a0+b0+a1+b1-R.
        5 => (0.max(r - v(0) - v(1) - v(4)), (r - v(4)).min(r - v(1))),
        // c1: x[1][2][0] = R-a1-c1, x[2][1][0] = R-c0-c1,
        // x[2][2][0] = a0+c0+a1+c1-R.
        6 => (0.max(r - v(0) - v(2) - v(4)), (r - v(4)).min(r - v(2))),
        // d1: x[1][1][2] = R-c1-d1, x[1][2][1] = R-b1-d1,
        // x[1][2][2] = a1+b1+c1+d1-R, x[2][1][1] = R-d0-d1,
        // x[2][1][2] = c0+d0+c1+d1-R, x[2][2][1] = b0+d0+b1+d1-R,
        // x[2][2][2] = R - (s0-R) - (s1-R) = 3R - s0 - s1.
        7 => {
            let s0 = v(0) + v(1) + v(2) + v(3);
            let lo = 0
                .max(r - v(4) - v(5) - v(6))
                .max(r - v(2) - v(3) - v(6))
                .max(r - v(1) - v(3) - v(5));
            let hi = (r - v(6))
                .min(r - v(5))
                .min(r - v(3))
                .min(3 * r - s0 - v(4) - v(5) - v(6));
            (lo, hi)
        }
        n => panic!("no free cell after {n}"),
    }
}

/// The whole array `x[9i + 3j + k]` decided by the eight free cells.
/// Meaningful (all cells >= 0) when each free cell lies in the interval
/// the search allows it (`range`).
pub fn complete(r: u8, free: &[u8; 8]) -> [u8; 27] {
    let mut x = [0u8; 27];
    for layer in 0..2 {
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| free[4 * layer + i]);
        let o = 9 * layer;
        x[o..o + 9].copy_from_slice(&[a, b, r - a - b, c, d, r - c - d, r - a - c, r - b - d, {
            a + b + c + d - r
        }]);
    }
    for n in 0..9 {
        x[18 + n] = r - x[n] - x[9 + n];
    }
    x
}

/// The 48 symmetries of the cube as maps on cell indices: the image of `x`
/// under symmetry `g` is `y[n] = x[SYMMETRIES[g][n]]`. Symmetry `g` permutes
/// the axes by the `g / 8`-th permutation and reverses axis `t` when bit `t`
/// of `g % 8` is set; `SYMMETRIES[0]` is the identity.
pub const SYMMETRIES: [[u8; 27]; 48] = symmetries();

const fn symmetries() -> [[u8; 27]; 48] {
    const PERMS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut table = [[0u8; 27]; 48];
    let mut g = 0;
    while g < 48 {
        let perm = PERMS[g / 8];
        let flips = g % 8;
        let mut n = 0;
        while n < 27 {
            let image = [n / 9, n / 3 % 3, n % 3];
            // Image coordinate t is source coordinate perm[t], reversed if
            // flip t is set.
            let mut source = [0usize; 3];
            let mut t = 0;
            while t < 3 {
                source[perm[t]] = if flips >> t & 1 == 1 {
                    2 - image[t]
                } else {
                    image[t]
                };
                t += 1;
            }
            table[g][n] = (9 * source[0] + 3 * source[1] + source[2]) as u8;
            n += 1;
        }
        g += 1;
    }
    table
}

/// Whether placement `x` is the lexicographically smallest of its 48
/// images. Most images differ from `x` within a cell or two, so the
/// comparison with each stops early.
pub fn is_canonical(x: &[u8; 27]) -> bool {
    for map in &SYMMETRIES[1..] {
        for (n, &m) in map.iter().enumerate() {
            let (image, own) = (x[m as usize], x[n]);
            if image != own {
                if image < own {
                    return false;
                }
                break;
            }
        }
    }
    true
}

/// Checks that `prefix` is a node of the search tree: at most eight cells,
/// each in its range.
fn replay(r: u8, prefix: &Prefix) -> Result<(), FamilyError> {
    if prefix.0.len() > 8 {
        return Err(FamilyError::BadUnit(format!(
            "prefix of {} cells; a placement has 8 free cells",
            prefix.0.len()
        )));
    }
    for (depth, &value) in prefix.0.iter().enumerate() {
        let (lo, hi) = range(r, &prefix.0[..depth]);
        if !(lo..=hi).contains(&i32::from(value)) {
            return Err(FamilyError::BadUnit(format!(
                "cell {} of the prefix is {value}, outside {lo}..={hi} for R = {r}",
                depth + 1
            )));
        }
    }
    Ok(())
}

pub fn explore(
    per_line: u32,
    unit: &Prefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<Rooks3dSummary, Prefix>, FamilyError> {
    let r = u8::try_from(per_line).expect("per_line checked by Rooks3d::new");
    replay(r, unit)?;
    let mut path = Vec::with_capacity(8);
    path.extend_from_slice(&unit.0);
    let mut s = Search {
        r,
        path,
        meter: NodeMeter::new(ctx, POLL_INTERVAL),
        summary: Rooks3dSummary::default(),
        rest: Vec::new(),
    };
    s.visit();
    s.summary.nodes = s.meter.finish();
    Ok(Exploration::new(s.summary, s.rest))
}

struct Search<'c, 'a> {
    r: u8,
    /// The values of the free cells assigned so far.
    path: Vec<u8>,
    meter: NodeMeter<'c, 'a>,
    summary: Rooks3dSummary,
    rest: Vec<Prefix>,
}

impl Search<'_, '_> {
    /// Visits the node for the current `path`. Once stopping, every node
    /// not entered goes to `rest` instead, in search order; together they
    /// cover exactly what was not visited.
    fn visit(&mut self) {
        if !self.meter.enter() {
            self.rest.push(Prefix(self.path.clone()));
            return;
        }
        if self.path.len() == 8 {
            self.placement();
            return;
        }
        // Smallest value first: placements come in lexicographic order of
        // their free cells.
        let (lo, hi) = range(self.r, &self.path);
        for value in lo..=hi {
            self.path.push(value as u8);
            if self.meter.stopping() {
                self.rest.push(Prefix(self.path.clone()));
            } else {
                self.visit();
            }
            self.path.pop();
        }
    }

    fn placement(&mut self) {
        // Cannot overflow: bounded by the node budget, itself a u64.
        self.summary.count += 1;
        let free: [u8; 8] = self.path[..].try_into().expect("eight free cells");
        if is_canonical(&complete(self.r, &free)) {
            self.summary.distinct += 1;
        }
    }
}
