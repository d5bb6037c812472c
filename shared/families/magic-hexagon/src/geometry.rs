//! The hexagon of order `K` (`K` cells a side, `H = 3K(K-1) + 1` cells):
//! its cells in reading order, its lines and its twelve symmetries.
//!
//! A cell has cube coordinates `(x, y, z)` with `x + y + z = 0` and
//! `max(|x|, |y|, |z|) <= K - 1`. The hexagon is drawn with horizontal rows
//! (`z` constant, top row `z = -(K-1)`, `x` growing to the right), as
//! Adams's hexagon is usually printed: rows of `K, K+1, ..., 2K-1, ..., K`
//! cells. *Reading order* numbers the cells row by row, left to right; an
//! arrangement is the vector of its values in that order, which is also the
//! order in which arrangements are compared (see [`crate::Puzzle::is_canonical`]).
//!
//! The straight rows of the three directions are the sets where one of the
//! three coordinates is constant: `2K - 1` parallel rows in each direction,
//! each cell on exactly one row of each direction.
//!
//! The twelve symmetries are the maps `c -> rot^k(refl^f(c))` for `k` in
//! `0..6`, `f` in `0..2`, with the turn by 60 degrees `rot(x, y, z) =
//! (-z, -x, -y)` and the mirror `refl(x, y, z) = (x, z, y)`: both permute
//! (and negate) coordinates, so they keep `max(|x|, |y|, |z|)` and map the
//! hexagon onto itself and every line (a row, a side, a spoke) onto a line
//! of the same kind.

/// Cube coordinates `[x, y, z]`, `x + y + z = 0`.
pub type Cube = [i32; 3];

/// The six unit steps, in turning order: consecutive ones are 60 degrees
/// apart, so `(K-1) * DIRECTIONS[k]` are the six corners in order round
/// the hexagon.
pub const DIRECTIONS: [Cube; 6] = [
    [1, -1, 0],
    [1, 0, -1],
    [0, 1, -1],
    [-1, 1, 0],
    [-1, 0, 1],
    [0, -1, 1],
];

/// The hexagon of one order: its cells in reading order.
#[derive(Debug, Clone)]
pub struct Hexagon {
    order: i32,
    cells: Vec<Cube>,
    /// Index of the first cell of each row.
    row_start: Vec<usize>,
}

fn scale(t: i32, c: Cube) -> Cube {
    [t * c[0], t * c[1], t * c[2]]
}

fn add(a: Cube, b: Cube) -> Cube {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

impl Hexagon {
    /// The hexagon of order `order` (at least 1; the caller bounds it).
    pub fn new(order: u32) -> Hexagon {
        assert!(order >= 1);
        let k = order as i32 - 1;
        let mut cells = Vec::new();
        let mut row_start = Vec::new();
        for z in -k..=k {
            row_start.push(cells.len());
            for x in (-k).max(-k - z)..=k.min(k - z) {
                cells.push([x, -x - z, z]);
            }
        }
        Hexagon {
            order: order as i32,
            cells,
            row_start,
        }
    }

    /// The order `K`: cells on a side.
    pub fn order(&self) -> u32 {
        self.order as u32
    }

    /// Number of cells, `3K(K-1) + 1`.
    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// The coordinates of cell `i` (reading order).
    pub fn coord(&self, i: usize) -> Cube {
        self.cells[i]
    }

    /// The reading index of the cell at `c`, if `c` is on the hexagon.
    pub fn index(&self, c: Cube) -> Option<usize> {
        let k = self.order - 1;
        if c[0] + c[1] + c[2] != 0 || c.iter().any(|v| v.abs() > k) {
            return None;
        }
        let x_min = (-k).max(-k - c[2]);
        Some(self.row_start[(c[2] + k) as usize] + (c[0] - x_min) as usize)
    }

    fn at(&self, c: Cube) -> usize {
        self.index(c).expect("a cell of the hexagon")
    }

    /// The length of each horizontal row, top to bottom.
    pub fn row_lengths(&self) -> Vec<usize> {
        let mut ends = self.row_start[1..].to_vec();
        ends.push(self.cells.len());
        ends.iter()
            .zip(&self.row_start)
            .map(|(e, s)| e - s)
            .collect()
    }

    /// Every straight row of the three directions (`3(2K - 1)` of them),
    /// each as reading indices in increasing order: the horizontal rows
    /// first, then `x` constant, then `y` constant.
    pub fn rows(&self) -> Vec<Vec<usize>> {
        let k = self.order - 1;
        let mut lines = Vec::new();
        for axis in [2, 0, 1] {
            for v in -k..=k {
                lines.push(
                    (0..self.cells())
                        .filter(|&i| self.cells[i][axis] == v)
                        .collect(),
                );
            }
        }
        lines
    }

    /// The six sides (the outer ring from one corner to the next, `K`
    /// cells each) and the six spokes (from the centre straight out to a
    /// corner, `K` cells each): the twelve lines of the chapter's exercise
    /// for `K = 3`. Sides first, in turning order, then spokes. Each line
    /// lists its cells from one end to the other.
    pub fn sides_and_spokes(&self) -> Vec<Vec<usize>> {
        let k = self.order - 1;
        let mut lines = Vec::new();
        for s in 0..6 {
            let (a, b) = (DIRECTIONS[s], DIRECTIONS[(s + 1) % 6]);
            lines.push(
                (0..=k)
                    .map(|t| self.at(add(scale(k - t, a), scale(t, b))))
                    .collect(),
            );
        }
        for d in DIRECTIONS {
            lines.push((0..=k).map(|t| self.at(scale(t, d))).collect());
        }
        lines
    }

    /// The cells of ring `r` (at distance `r` from the centre; ring 0 is
    /// the centre), walked round from the corner `r * DIRECTIONS[0]`.
    pub fn ring(&self, r: u32) -> Vec<usize> {
        let r = r as i32;
        if r == 0 {
            return vec![self.at([0, 0, 0])];
        }
        let mut out = Vec::new();
        for s in 0..6 {
            let (a, b) = (DIRECTIONS[s], DIRECTIONS[(s + 1) % 6]);
            for t in 0..r {
                out.push(self.at(add(scale(r - t, a), scale(t, b))));
            }
        }
        out
    }

    /// The twelve symmetries as permutations of the reading indices:
    /// `perm[i]` is the cell that cell `i` goes to. The identity first.
    pub fn symmetries(&self) -> Vec<Vec<u8>> {
        let rot = |c: Cube| [-c[2], -c[0], -c[1]];
        let refl = |c: Cube| [c[0], c[2], c[1]];
        let mut out = Vec::new();
        for f in 0..2 {
            for k in 0..6 {
                out.push(
                    self.cells
                        .iter()
                        .map(|&c| {
                            let mut c = if f == 1 { refl(c) } else { c };
                            for _ in 0..k {
                                c = rot(c);
                            }
                            self.at(c) as u8
                        })
                        .collect(),
                );
            }
        }
        out
    }

    /// An arrangement (values in reading order) written row by row:
    /// `"3 17 18 / 19 7 1 11 / ..."`.
    pub fn format(&self, values: &[u8]) -> String {
        let mut rows = Vec::new();
        let mut start = 0;
        for len in self.row_lengths() {
            let row: Vec<String> = values[start..start + len]
                .iter()
                .map(u8::to_string)
                .collect();
            rows.push(row.join(" "));
            start += len;
        }
        rows.join(" / ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        for k in 1..=7u32 {
            let h = Hexagon::new(k);
            assert_eq!(h.cells() as u32, 3 * k * (k - 1) + 1);
            for i in 0..h.cells() {
                assert_eq!(h.index(h.coord(i)), Some(i));
            }
            let rows = h.rows();
            assert_eq!(rows.len() as u32, 3 * (2 * k - 1));
            // Each direction's rows partition the cells.
            for dir in rows.chunks(2 * k as usize - 1) {
                let mut all: Vec<usize> = dir.iter().flatten().copied().collect();
                all.sort_unstable();
                assert_eq!(all, (0..h.cells()).collect::<Vec<_>>());
            }
            let rings: usize = (0..k).map(|r| h.ring(r).len()).sum();
            assert_eq!(rings, h.cells());
            let syms = h.symmetries();
            assert_eq!(syms.len(), 12);
            for p in &syms {
                let mut q = p.clone();
                q.sort_unstable();
                assert_eq!(q, (0..h.cells() as u8).collect::<Vec<_>>());
            }
            if k >= 2 {
                // Twelve different maps.
                let mut s = syms.clone();
                s.sort();
                s.dedup();
                assert_eq!(s.len(), 12, "order {k}");
            }
        }
        assert_eq!(Hexagon::new(3).row_lengths(), [3, 4, 5, 4, 3]);
    }

    #[test]
    fn symmetries_map_lines_to_lines() {
        for k in 2..=4u32 {
            let h = Hexagon::new(k);
            let mut kinds = vec![h.rows()];
            if k <= 3 {
                kinds.push(h.sides_and_spokes());
            }
            for lines in kinds {
                let set: Vec<Vec<usize>> = lines
                    .iter()
                    .map(|l| {
                        let mut l = l.clone();
                        l.sort_unstable();
                        l
                    })
                    .collect();
                for p in h.symmetries() {
                    for l in &set {
                        let mut img: Vec<usize> = l.iter().map(|&i| p[i] as usize).collect();
                        img.sort_unstable();
                        assert!(set.contains(&img));
                    }
                }
            }
        }
    }
}
