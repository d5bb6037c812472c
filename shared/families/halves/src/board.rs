//! The geometry of the board, computed once per job: the grid points a cut
//! walks through, their neighbours, the half-turn, the eight symmetries of
//! the square acting on points and on directions, and which moves the
//! orderly walk may take under a given stabilizer (see the crate
//! documentation). Also the conversion of a walk into the two pieces it
//! cuts, for the results file and the tests (that part allocates; the search
//! never calls it).
//!
//! Coordinates: grid points `(r, c)` with `0 <= r, c <= n`, `r` growing
//! downwards (south), `c` eastwards; the cell `(i, j)` (`0 <= i, j < n`) has
//! corners `(i, j)` and `(i + 1, j + 1)`. A walk never stands on the outer
//! boundary except at its last step, so only the `(n - 1)^2` interior points
//! get an index (`(r - 1) * (n - 1) + (c - 1)`), and a set of them fits a
//! `u128` up to `n = 12`.

/// Largest board: `(n - 1)^2 <= 128` interior grid points, one bit each.
pub const MAX_N: u32 = 12;

/// Marks a move that reaches the outer boundary (the walk ends there).
pub const BOUNDARY: u8 = u8::MAX;

/// The four moves, in the order the search tries them (and in which the
/// orderly walk keeps the smallest of a set of mirror images).
pub const DIRECTIONS: [(i32, i32); 4] = [(-1, 0), (0, 1), (1, 0), (0, -1)];

/// The letters of the moves in a walk as the results file writes it.
pub const LETTERS: [char; 4] = ['N', 'E', 'S', 'W'];

/// Interior grid points at most.
const MAX_POINTS: usize = ((MAX_N - 1) * (MAX_N - 1)) as usize;

/// The eight symmetries of the square `[0, m]^2` acting on a grid point:
/// 0 the identity, 1 and 3 the quarter turns, 2 the half turn, 4 and 5 the
/// mirrors in the vertical and horizontal midlines, 6 and 7 the mirrors in
/// the two diagonals.
pub fn symmetry(g: usize, m: i32, (r, c): (i32, i32)) -> (i32, i32) {
    match g {
        0 => (r, c),
        1 => (c, m - r),
        2 => (m - r, m - c),
        3 => (m - c, r),
        4 => (r, m - c),
        5 => (m - r, c),
        6 => (c, r),
        _ => (m - c, m - r),
    }
}

/// Index of the half turn among the symmetries.
pub const HALF_TURN: usize = 2;

/// The tables of one board.
#[derive(Debug, Clone)]
pub struct Board {
    /// Side of the board.
    pub n: usize,
    /// Whether the centre cell is removed (odd `n`).
    pub holed: bool,
    /// Interior points per row: `n - 1`.
    side: usize,
    /// Where every walk starts: the centre point (even `n`), or the north-east
    /// corner of the removed centre cell (odd `n`).
    pub start: u8,
    /// The points no walk may enter: the start and its half-turn image;
    /// for odd `n` the four corners of the removed cell.
    pub initial: u128,
    /// The symmetries fixing the start (a bit per symmetry).
    pub start_fix: u8,
    /// `next[p][d]`: the interior point one move `d` from interior point
    /// `p`, or [`BOUNDARY`].
    pub next: [[u8; 4]; MAX_POINTS],
    /// `turn[p]`: the half-turn image of interior point `p`.
    pub turn: [u8; MAX_POINTS],
    /// `fix[p]`: the symmetries fixing interior point `p`.
    pub fix: [u8; MAX_POINTS],
    /// `edge_fix[p][d]`: the symmetries fixing the boundary point one move
    /// `d` from `p` (when `next[p][d]` is [`BOUNDARY`]).
    pub edge_fix: [[u8; 4]; MAX_POINTS],
    /// `allowed[h]`: the moves a walk whose points are all fixed by the
    /// symmetries `h` may take: those that are the smallest of their images
    /// under `h`.
    pub allowed: [u8; 256],
}

impl Board {
    /// The tables for an `n x n` board, `2 <= n <= MAX_N`.
    pub fn new(n: usize) -> Board {
        assert!((2..=MAX_N as usize).contains(&n), "board side {n}");
        let m = n as i32;
        let side = n - 1;
        let holed = n % 2 == 1;
        let mut b = Board {
            n,
            holed,
            side,
            start: 0,
            initial: 0,
            start_fix: 0,
            next: [[BOUNDARY; 4]; MAX_POINTS],
            turn: [0; MAX_POINTS],
            fix: [0; MAX_POINTS],
            edge_fix: [[0; 4]; MAX_POINTS],
            allowed: [0; 256],
        };
        let fixers = |p: (i32, i32)| -> u8 {
            (0..8)
                .filter(|&g| symmetry(g, m, p) == p)
                .fold(0u8, |acc, g| acc | 1 << g)
        };
        for r in 1..m {
            for c in 1..m {
                let p = b.index(r, c).unwrap();
                let (tr, tc) = symmetry(HALF_TURN, m, (r, c));
                b.turn[p as usize] = b.index(tr, tc).unwrap();
                b.fix[p as usize] = fixers((r, c));
                for (d, (dr, dc)) in DIRECTIONS.iter().enumerate() {
                    let q = (r + dr, c + dc);
                    match b.index(q.0, q.1) {
                        Some(i) => b.next[p as usize][d] = i,
                        None => b.edge_fix[p as usize][d] = fixers(q),
                    }
                }
            }
        }
        // How each symmetry permutes the moves: the image of a step from
        // an interior point.
        let mut image = [[0usize; 4]; 8];
        for (g, row) in image.iter_mut().enumerate() {
            for (d, &(dr, dc)) in DIRECTIONS.iter().enumerate() {
                let (r0, c0) = symmetry(g, m, (1, 1));
                let (r1, c1) = symmetry(g, m, (1 + dr, 1 + dc));
                row[d] = DIRECTIONS
                    .iter()
                    .position(|&v| v == (r1 - r0, c1 - c0))
                    .unwrap();
            }
        }
        for (h, allowed) in b.allowed.iter_mut().enumerate() {
            *allowed = (0..4)
                .filter(|&d| (0..8).all(|g| h & (1 << g) == 0 || image[g][d] >= d))
                .fold(0, |acc, d| acc | 1 << d);
        }
        let half = m / 2;
        let start = if holed {
            // The corners of the centre cell (half, half)-(half+1, half+1).
            for (r, c) in [
                (half, half),
                (half, half + 1),
                (half + 1, half),
                (half + 1, half + 1),
            ] {
                b.initial |= 1u128 << b.index(r, c).unwrap();
            }
            (half, half + 1)
        } else {
            (half, half)
        };
        b.start = b.index(start.0, start.1).unwrap();
        b.start_fix = fixers(start);
        b.initial |= 1u128 << b.start | 1u128 << b.turn[b.start as usize];
        b
    }

    /// Number of interior grid points.
    pub fn points(&self) -> usize {
        self.side * self.side
    }

    /// The index of interior point `(r, c)`, `None` on or off the boundary.
    pub fn index(&self, r: i32, c: i32) -> Option<u8> {
        let m = self.n as i32;
        if 0 < r && r < m && 0 < c && c < m {
            Some(((r - 1) as usize * self.side + (c - 1) as usize) as u8)
        } else {
            None
        }
    }

    /// The coordinates of interior point `p`.
    pub fn coords(&self, p: u8) -> (i32, i32) {
        let p = p as usize;
        ((p / self.side) as i32 + 1, (p % self.side) as i32 + 1)
    }

    /// The cells of the two pieces a complete walk cuts the board into: 0
    /// for the piece holding cell `(0, 0)`, 1 for the other, 2 for the
    /// removed centre; `cells[i * n + j]` is cell `(i, j)`. `None` if `moves`
    /// is not a complete walk of this board (it must start at [`Board::start`],
    /// avoid its own half-turn image and end on the boundary).
    pub fn pieces(&self, moves: &[u8]) -> Option<Vec<u8>> {
        let n = self.n;
        let m = n as i32;
        let points = self.walk_points(moves)?;
        // The cut: every step of the walk and of its half-turn image.
        let mut cut = std::collections::HashSet::new();
        for w in points.windows(2) {
            let (a, b) = (w[0], w[1]);
            let ta = symmetry(HALF_TURN, m, a);
            let tb = symmetry(HALF_TURN, m, b);
            cut.insert((a.min(b), a.max(b)));
            cut.insert((ta.min(tb), ta.max(tb)));
        }
        let hole = if self.holed {
            Some((n / 2, n / 2))
        } else {
            None
        };
        let mut label = vec![u8::MAX; n * n];
        if let Some((i, j)) = hole {
            label[i * n + j] = 2;
        }
        // The grid segment between two cells sharing a side.
        let wall = |(i, j): (usize, usize), (k, l): (usize, usize)| -> ((i32, i32), (i32, i32)) {
            let (i, j, k, l) = (i as i32, j as i32, k as i32, l as i32);
            if i == k {
                let c = j.max(l);
                ((i, c), (i + 1, c))
            } else {
                let r = i.max(k);
                ((r, j), (r, j + 1))
            }
        };
        let mut piece = 0;
        for first in 0..n * n {
            if label[first] != u8::MAX {
                continue;
            }
            if piece == 2 {
                return None; // more than two pieces
            }
            let mut stack = vec![(first / n, first % n)];
            label[first] = piece;
            while let Some((i, j)) = stack.pop() {
                let around = [
                    (i.wrapping_sub(1), j),
                    (i + 1, j),
                    (i, j.wrapping_sub(1)),
                    (i, j + 1),
                ];
                for (k, l) in around {
                    if k >= n || l >= n || label[k * n + l] != u8::MAX {
                        continue;
                    }
                    if cut.contains(&wall((i, j), (k, l))) {
                        continue;
                    }
                    label[k * n + l] = piece;
                    stack.push((k, l));
                }
            }
            piece += 1;
        }
        Some(label)
    }

    /// The grid points of a complete walk, from its start to the boundary,
    /// checked; `None` if it is not one.
    pub fn walk_points(&self, moves: &[u8]) -> Option<Vec<(i32, i32)>> {
        let mut visited = self.initial;
        let mut at = self.start;
        let mut points = vec![self.coords(at)];
        for (k, &d) in moves.iter().enumerate() {
            if d >= 4 {
                return None;
            }
            let to = self.next[at as usize][d as usize];
            if to == BOUNDARY {
                if k + 1 != moves.len() {
                    return None;
                }
                let (r, c) = self.coords(at);
                let (dr, dc) = DIRECTIONS[d as usize];
                points.push((r + dr, c + dc));
                return Some(points);
            }
            if visited & (1u128 << to) != 0 {
                return None;
            }
            visited |= 1u128 << to | 1u128 << self.turn[to as usize];
            points.push(self.coords(to));
            at = to;
        }
        None
    }

    /// A walk and its pieces as the results file writes them: the moves
    /// from the start (`N`, `E`, `S`, `W`), then the rows of the board from
    /// north to south separated by `/`, `A` the piece holding the
    /// north-west corner, `B` the other, `.` the removed centre.
    pub fn render(&self, moves: &[u8]) -> String {
        let mut out: String = moves
            .iter()
            .map(|&d| LETTERS.get(d as usize).copied().unwrap_or('?'))
            .collect();
        out.push(' ');
        match self.pieces(moves) {
            Some(cells) => {
                for (i, row) in cells.chunks(self.n).enumerate() {
                    if i > 0 {
                        out.push('/');
                    }
                    out.extend(row.iter().map(|&x| ['A', 'B', '.'][x as usize]));
                }
            }
            None => out.push('?'),
        }
        out
    }
}
