//! The board as the network and the exact check see it, built from the `hip`
//! crate's geometry ([`orchard_hip::board::square_corners`] and
//! [`orchard_hip::board::symmetry_perms`]: every square of any size and tilt,
//! the board's symmetry group), in flat arrays the inner loop reads.
//!
//! Boards here go up to 16 x 16 (256 cells), beyond the one-`u64` bitboards
//! of `orchard_hip::board::Board`, so cells are `u16` indices and a board
//! is one byte (the player) per cell.

use orchard_hip::board::{square_corners, symmetry_perms};

/// The geometry of one `n x n` board.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// Side of the board.
    pub n: usize,
    /// Number of cells, `n * n`; cell `(r, c)` is `r * n + c`.
    pub cells: usize,
    /// Every square, as its four cells (each square once).
    pub squares: Vec<[u16; 4]>,
    /// `others[start[c]..start[c + 1]]`: for each square with a corner on
    /// cell `c`, its other three corners. This is the B-term's sum: each
    /// square through `(i, j)` is exactly one `(p, q)` of equation (4) (the
    /// one whose edge `(p, q)` is followed by the turned edge `(-q, p)`).
    start: Vec<usize>,
    others: Vec<[u16; 3]>,
    /// The board's symmetries as cell permutations, the identity first.
    pub perms: Vec<Vec<u16>>,
}

impl Geometry {
    /// Builds the geometry of an `n x n` board (`2 <= n <= 16`).
    pub fn new(n: usize) -> Geometry {
        assert!((2..=16).contains(&n), "board side {n}");
        let cells = n * n;
        let squares: Vec<[u16; 4]> = square_corners(n, n)
            .into_iter()
            .map(|q| q.map(|c| c as u16))
            .collect();
        let mut start = Vec::with_capacity(cells + 1);
        let mut others = Vec::with_capacity(4 * squares.len());
        for cell in 0..cells as u16 {
            start.push(others.len());
            for q in squares.iter().filter(|q| q.contains(&cell)) {
                let mut rest = [0u16; 3];
                for (slot, &c) in rest.iter_mut().zip(q.iter().filter(|&&c| c != cell)) {
                    *slot = c;
                }
                others.push(rest);
            }
        }
        start.push(others.len());
        let perms = symmetry_perms(n, n)
            .into_iter()
            .map(|p| p.into_iter().map(|c| c as u16).collect())
            .collect();
        Geometry {
            n,
            cells,
            squares,
            start,
            others,
            perms,
        }
    }

    /// For each square through `cell`, its other three corners.
    #[inline(always)]
    pub fn others(&self, cell: usize) -> &[[u16; 3]] {
        &self.others[self.start[cell]..self.start[cell + 1]]
    }

    /// The exact check of a board (one player `0..players` per cell): every
    /// cell held, each player holding `n^2 / players` cells, and no square
    /// of any size or tilt with its four corners held by one player. This
    /// reads only the board and the `hip` geometry, never the network's own
    /// conflict counts.
    pub fn check(&self, board: &[u8], players: usize) -> Result<(), Violation> {
        if board.len() != self.cells {
            return Err(Violation::Size(board.len()));
        }
        let mut held = vec![0usize; players];
        for (cell, &p) in board.iter().enumerate() {
            match held.get_mut(p as usize) {
                Some(h) => *h += 1,
                None => return Err(Violation::Player { cell, player: p }),
            }
        }
        let quota = self.cells / players;
        if let Some(player) = held.iter().position(|&h| h != quota) {
            return Err(Violation::Count {
                player: player as u8,
                held: held[player],
                quota,
            });
        }
        for q in &self.squares {
            let p = board[q[0] as usize];
            if q[1..].iter().all(|&c| board[c as usize] == p) {
                return Err(Violation::Square(*q));
            }
        }
        Ok(())
    }

    /// The canonical form of a board under the board's symmetries: the
    /// lexicographically smallest of its images (`image[g(cell)] =
    /// board[cell]`). Every board of an orbit has the same canonical form,
    /// and boards of different orbits different ones.
    pub fn canonical(&self, board: &[u8]) -> Vec<u8> {
        let mut best = board.to_vec();
        let mut image = vec![0u8; board.len()];
        for p in &self.perms[1..] {
            for (cell, &v) in board.iter().enumerate() {
                image[p[cell] as usize] = v;
            }
            if image < best {
                best.copy_from_slice(&image);
            }
        }
        best
    }

    /// The canonical form up to the board's symmetries *and* renaming the
    /// players: each image's players renumbered in order of first
    /// appearance, the smallest such image.
    pub fn pattern(&self, board: &[u8]) -> Vec<u8> {
        let mut best: Option<Vec<u8>> = None;
        let mut image = vec![0u8; board.len()];
        for p in &self.perms {
            for (cell, &v) in board.iter().enumerate() {
                image[p[cell] as usize] = v;
            }
            let mut names = [u8::MAX; 256];
            let mut next = 0u8;
            for v in image.iter_mut() {
                if names[*v as usize] == u8::MAX {
                    names[*v as usize] = next;
                    next += 1;
                }
                *v = names[*v as usize];
            }
            if best.as_ref().is_none_or(|b| image < *b) {
                best = Some(image.clone());
            }
        }
        best.expect("the identity is a symmetry")
    }
}

/// Why a board fails the exact check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// Not `n^2` cells.
    Size(usize),
    /// A cell held by no valid player.
    Player { cell: usize, player: u8 },
    /// A player does not hold exactly `n^2 / m` cells.
    Count {
        player: u8,
        held: usize,
        quota: usize,
    },
    /// A square whose four corners one player holds.
    Square([u16; 4]),
}

/// A board as text: the players as digits `0..m-1`, rows separated by `/`
/// (the notation of `hip-draws`' results files, so the two compare
/// directly; `0` is the first player).
pub fn render(board: &[u8], n: usize) -> String {
    let mut s = String::with_capacity(board.len() + n);
    for (i, row) in board.chunks(n).enumerate() {
        if i > 0 {
            s.push('/');
        }
        s.extend(
            row.iter()
                .map(|&p| char::from_digit(u32::from(p), 36).unwrap_or('?')),
        );
    }
    s
}

/// The board a [`render`]ed text stands for (`None` if malformed).
pub fn parse(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .filter(|&c| c != '/')
        .map(|c| c.to_digit(36).map(|d| d as u8))
        .collect()
}
