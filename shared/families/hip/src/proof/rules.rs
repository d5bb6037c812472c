//! The rules of Hip as the proof checker plays them: plain cell arrays
//! (`0` empty, `1` and `2` the players' stones), squares and symmetries
//! from [`crate::reference`], the mover from [`reference::mover`]. Nothing
//! here comes from the solver's board or game code, so a bug there cannot
//! make the checker agree with it.

use crate::reference;

/// A position: one entry a cell, `r * cols + c` on the board as solved
/// (rows <= columns), `0` empty, `1` or `2` the stone of that player.
pub(super) type Cells = Vec<u8>;

/// A position's canonical number: the smallest base-3 number of its images
/// under the board's symmetries (at most 64 cells: `3^64 < 2^128`).
pub(super) type Canon = u128;

/// What a move leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The game is over: the first player's value (the mover completed a
    /// square of his colour, or the board is full).
    Over(i8),
    /// The game goes on from this position.
    Open(Cells),
}

/// The board's rules: its squares, its symmetries, who moves.
pub(super) struct Rules {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) double: bool,
    /// For each cell, the other three corners of every square through it.
    through: Vec<Vec<[usize; 3]>>,
    /// The board's symmetries as cell maps (`syms[g][cell]` is the image).
    syms: Vec<Vec<usize>>,
    /// The symmetries that pair the cells (involutions without a fixed
    /// cell), for Gardner's argument ([`Rules::second_player_pairs`]).
    pairings: Vec<usize>,
}

impl Rules {
    /// The rules of a `rows x cols` board (`rows <= cols`), Double Hip or not.
    pub(super) fn new(rows: usize, cols: usize, double: bool) -> Rules {
        let n = rows * cols;
        let mut through = vec![Vec::new(); n];
        for s in reference::squares_by_subsets(rows, cols) {
            for (i, &c) in s.iter().enumerate() {
                let mut others = [0; 3];
                let mut k = 0;
                for (j, &o) in s.iter().enumerate() {
                    if j != i {
                        others[k] = o;
                        k += 1;
                    }
                }
                through[c].push(others);
            }
        }
        let syms = reference::symmetries(rows, cols);
        let pairings = (0..syms.len())
            .filter(|&g| (0..n).all(|c| syms[g][c] != c && syms[g][syms[g][c]] == c))
            .collect();
        Rules {
            rows,
            cols,
            double,
            through,
            syms,
            pairings,
        }
    }

    pub(super) fn cells(&self) -> usize {
        self.rows * self.cols
    }

    pub(super) fn empty_count(&self, cells: &[u8]) -> usize {
        cells.iter().filter(|&&c| c == 0).count()
    }

    /// Who places the next stone: 1 or 2.
    pub(super) fn mover(&self, cells: &[u8]) -> u8 {
        reference::mover(self.cells() - self.empty_count(cells), self.double)
    }

    /// Whether a stone of `who` on `cell` completes a square of his.
    pub(super) fn completes(&self, cells: &[u8], cell: usize, who: u8) -> bool {
        self.through[cell]
            .iter()
            .any(|o| o.iter().all(|&c| cells[c] == who))
    }

    /// The mover's stone on the empty `cell`, judged by the rules.
    pub(super) fn play(&self, cells: &[u8], cell: usize) -> Outcome {
        if let Some(value) = self.ends(cells, cell) {
            return Outcome::Over(value);
        }
        let mut next = cells.to_vec();
        next[cell] = self.mover(cells);
        Outcome::Open(next)
    }

    /// The first player's value if the mover's stone on the empty `cell`
    /// ends the game: he completes a square of his (he loses), or it is
    /// the last empty cell (a draw).
    pub(super) fn ends(&self, cells: &[u8], cell: usize) -> Option<i8> {
        let who = self.mover(cells);
        if self.completes(cells, cell, who) {
            Some(if who == 1 { -1 } else { 1 })
        } else if self.empty_count(cells) == 1 {
            Some(0)
        } else {
            None
        }
    }

    /// Every move of a position (not full), in cell order, with what it
    /// leads to.
    pub(super) fn children(&self, cells: &[u8]) -> Vec<(u8, Outcome)> {
        (0..self.cells())
            .filter(|&c| cells[c] == 0)
            .map(|c| (c as u8, self.play(cells, c)))
            .collect()
    }

    /// The base-3 number of the image of `cells` under symmetry `g`.
    fn image_number(&self, cells: &[u8], g: usize) -> u128 {
        let mut img = [0u8; 64];
        for (c, &v) in cells.iter().enumerate() {
            img[self.syms[g][c]] = v;
        }
        img[..cells.len()]
            .iter()
            .fold(0u128, |acc, &v| acc * 3 + u128::from(v))
    }

    /// The canonical number of a position (see [`Canon`]).
    pub(super) fn canon(&self, cells: &[u8]) -> Canon {
        (0..self.syms.len())
            .map(|g| self.image_number(cells, g))
            .min()
            .expect("the identity is a symmetry")
    }

    /// Whether two positions are the same up to the board's symmetries.
    pub(super) fn same_up_to_symmetry(&self, a: &[u8], b: &[u8]) -> bool {
        let target: Vec<u8> = b.to_vec();
        (0..self.syms.len()).any(|g| {
            let mut img = vec![0u8; a.len()];
            for (c, &v) in a.iter().enumerate() {
                img[self.syms[g][c]] = v;
            }
            img == target
        })
    }

    /// Gardner's pairing argument, checked on the cells: in standard Hip,
    /// a position with the first player to move whose second player's
    /// stones are the image of the first player's under a pairing `g` (an
    /// involution of the board without a fixed cell) is worth at most a
    /// draw to the first player. The second player answers every move `m`
    /// by `g(m)`, empty because the position was symmetric and `g(m) != m`,
    /// and never completes a square first: a square `S` of his would have
    /// its image `g(S)` all the first player's, completed by `m` one move
    /// earlier; and if `g(S) = S`, `S` holds `m` itself. The board cannot
    /// fill on the first player's move (an even number of empty cells).
    pub(super) fn second_player_pairs(&self, cells: &[u8]) -> bool {
        if self.double || self.mover(cells) != 1 {
            return false;
        }
        let swap = |v: u8| [0, 2, 1][usize::from(v)];
        self.pairings.iter().any(|&g| {
            cells
                .iter()
                .enumerate()
                .all(|(c, &v)| cells[self.syms[g][c]] == swap(v))
        })
    }

    /// The second player's move, if any, that leaves a position where he
    /// pairs ([`Rules::second_player_pairs`]).
    pub(super) fn pairing_reply(&self, cells: &[u8]) -> Option<u8> {
        if self.double || self.mover(cells) != 2 || self.pairings.is_empty() {
            return None;
        }
        (0..self.cells())
            .filter(|&c| cells[c] == 0)
            .find(|&c| {
                matches!(self.play(cells, c), Outcome::Open(next) if self.second_player_pairs(&next))
            })
            .map(|c| c as u8)
    }
}

/// The stones of `cells` as the solver's two bitboards (bit `c` for cell `c`).
pub(super) fn bitboards(cells: &[u8]) -> (u64, u64) {
    let mut p = (0u64, 0u64);
    for (c, &v) in cells.iter().enumerate() {
        match v {
            1 => p.0 |= 1 << c,
            2 => p.1 |= 1 << c,
            _ => {}
        }
    }
    p
}

/// The position of two bitboards as cells (the inverse of [`bitboards`]),
/// or `None` if they overlap or leave the board.
pub(super) fn from_bitboards(n: usize, p1: u64, p2: u64) -> Option<Cells> {
    let on_board = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    if p1 & p2 != 0 || (p1 | p2) & !on_board != 0 {
        return None;
    }
    Some(
        (0..n)
            .map(|c| u8::from(p1 >> c & 1 == 1) + 2 * u8::from(p2 >> c & 1 == 1))
            .collect(),
    )
}
