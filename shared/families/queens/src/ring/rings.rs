//! The rings: the three or four queens of a solution's border lines, the
//! ones that are the smallest of their images (the root rings) and the
//! groups of them the root units are. A ring is checked here once, from
//! its four numbers, so that the search below it starts from queens that
//! attack no other and knows the symmetries the ring keeps.

use orchard_core::FamilyError;

use super::bad;
use super::symmetry::image;

/// The queens of the border lines: `[a, b, c, d]` = the column of the queen
/// in row 0, of the queen in row `n - 1`, the row of the queen in column 0,
/// of the queen in column `n - 1`.
pub type Ring = [u8; 4];

/// The squares of ring `t`, one per border line (a corner queen twice), or
/// `None` when `t` does not describe one queen per border line.
fn ring_squares(t: Ring, n: u8) -> Option<[(u8, u8); 4]> {
    let m = n.checked_sub(1)?;
    let [a, b, c, d] = t;
    if a > m || b > m || c > m || d > m {
        return None;
    }
    // A corner queen is named by both of its lines, or by neither.
    if (a == 0) != (c == 0) || (a == m) != (d == 0) || (b == 0) != (c == m) || (b == m) != (d == m)
    {
        return None;
    }
    Some([(0, a), (m, b), (c, 0), (d, m)])
}

fn attack(p: (u8, u8), q: (u8, u8)) -> bool {
    p.0 == q.0 || p.1 == q.1 || p.0.abs_diff(q.0) == p.1.abs_diff(q.1)
}

/// The ring of a set of squares holding one queen per border line.
fn ring_of(squares: &[(u8, u8)], m: u8) -> Ring {
    let mut t = [0; 4];
    for &(r, c) in squares {
        if r == 0 {
            t[0] = c;
        }
        if r == m {
            t[1] = c;
        }
        if c == 0 {
            t[2] = r;
        }
        if c == m {
            t[3] = r;
        }
    }
    t
}

/// A ring checked: one queen per border line, none attacking another.
pub(super) struct CheckedRing {
    /// One per border line: a corner queen is there twice.
    pub(super) squares: [(u8, u8); 4],
    /// The symmetries (bit `g`) that map the ring onto itself.
    pub(super) stabiliser: u8,
    /// Whether the ring is the smallest of its images.
    pub(super) canonical: bool,
}

pub(super) fn check_ring(t: Ring, n: u8) -> Option<CheckedRing> {
    let squares = ring_squares(t, n)?;
    for (i, &p) in squares.iter().enumerate() {
        if squares[i + 1..].iter().any(|&q| q != p && attack(p, q)) {
            return None;
        }
    }
    let m = n - 1;
    let mut stabiliser = 0u8;
    let mut canonical = true;
    for g in 0..8 {
        let u = ring_of(&squares.map(|(r, c)| image(g, r, c, m)), m);
        if u < t {
            canonical = false;
        }
        if u == t {
            stabiliser |= 1 << g;
        }
    }
    Some(CheckedRing {
        squares,
        stabiliser,
        canonical,
    })
}

/// The root units of the `ring` method: `[a, b]` for every pair of border
/// queens (row 0, last row) that begins a ring in [`root_rings`], in
/// increasing order. A unit per ring would be thousands of units of
/// milliseconds on boards that take seconds. A board without a ring (2 x 2,
/// 3 x 3: no solution) has the one group `[0, 0]`, which holds no ring: a
/// job needs a unit to finish (the coordinator finishes a job when its
/// last unit is done).
pub fn root_units(n: u32) -> Vec<Vec<u8>> {
    let mut units: Vec<Vec<u8>> = root_rings(n).iter().map(|t| t[..2].to_vec()).collect();
    units.dedup();
    if units.is_empty() {
        units.push(vec![0, 0]);
    }
    units
}

/// Every ring that is the smallest of its images, in increasing order.
/// Empty for n = 2 and 3 (no solutions).
pub fn root_rings(n: u32) -> Vec<Ring> {
    let n = n as u8;
    let mut rings = Vec::new();
    for a in 0..n {
        for b in 0..n {
            for c in 0..n {
                for d in 0..n {
                    let t = [a, b, c, d];
                    if check_ring(t, n).is_some_and(|r| r.canonical) {
                        rings.push(t);
                    }
                }
            }
        }
    }
    rings
}

/// The rings of a group unit, `[a, b]` or `[a, b, c]`: the rings of
/// [`root_rings`] that begin with it, in increasing order, by `c` (only the
/// `c` with rings).
pub(super) fn rings_of_group(n: u32, group: &[u8]) -> Result<Vec<Vec<Ring>>, FamilyError> {
    if group.len() < 2 || group.iter().any(|&x| u32::from(x) >= n) {
        return Err(bad(format!(
            "a ring group is 2 or 3 entries below {n}, got {group:?}"
        )));
    }
    let n8 = n as u8;
    let (a, b) = (group[0], group[1]);
    let cs = match group.get(2) {
        Some(&c) => c..=c,
        None => 0..=n8 - 1,
    };
    let mut by_c = Vec::new();
    for c in cs {
        let rings: Vec<Ring> = (0..n8)
            .map(|d| [a, b, c, d])
            .filter(|&t| check_ring(t, n8).is_some_and(|r| r.canonical))
            .collect();
        if !rings.is_empty() {
            by_c.push(rings);
        }
    }
    Ok(by_c)
}
