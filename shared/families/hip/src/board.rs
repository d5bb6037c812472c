//! Board geometry shared by the two Hip families: cells, every square at any
//! size and tilt, and the board's symmetry group as bitboard transforms.
//!
//! A board has `rows x cols` cells (`2 <= rows <= cols`, at most 64 cells), so
//! any set of cells is one `u64`: cell `(r, c)` is bit `r * cols + c`.
//!
//! A *square* is four cells that are the corners of a geometric square, of any
//! size and any tilt. With `x` the column and `y` the row, every square is
//! `(x, y), (x + a, y + b), (x + a - b, y + b + a), (x - b, y + a)` for exactly
//! one choice of starting corner with `a >= 1, b >= 0` (of the four edge
//! vectors `(a, b)`, `(-b, a)`, `(-a, -b)`, `(b, -a)` of a square walked one
//! way round, exactly one has `a >= 1, b >= 0`), so enumerating that form
//! lists each square once. A square tilted by `b` inside an `s x s` bounding
//! box (`s = a + b`) fits in `(rows - s)(cols - s)` places and there are `s`
//! tilts per box, hence `sum_s s (rows - s)(cols - s)` squares:
//! `n^2 (n^2 - 1) / 12` on an `n x n` board, 105 on 6x6 (Funabiki & Takefuji's
//! Fig. 1 and their `(n^4 - n^2) / 12`).

use crate::square_set::{SquareSet, CAPACITY};

/// Largest number of cells: one `u64` bitboard.
pub const MAX_CELLS: usize = 64;

/// The geometry of one `rows x cols` board. Built once per job or per explore
/// call; everything the inner loops need is in flat arrays.
#[derive(Debug, Clone)]
pub struct Board {
    pub rows: usize,
    pub cols: usize,
    /// Number of cells.
    pub n: usize,
    /// Every cell.
    pub full: u64,
    /// Every square as a 4-cell mask.
    pub squares: Vec<u64>,
    /// The four cells of `squares[i]`, in increasing order (move ordering
    /// scores a square's cells without walking its mask).
    pub square_cells: Vec<[u8; 4]>,
    /// `others[start[c]..start[c + 1]]`: for each square through cell `c`, the
    /// mask of its other three cells. This is what the search loops read.
    start: Vec<usize>,
    others: Vec<u64>,
    /// `squares_through[c]`: the squares through cell `c`, bit `i` for
    /// `squares[i]`: the search keeps the squares still open for each player
    /// as such a set (see [`crate::search::Pos`]). Only the first
    /// [`TRACKED_SQUARES`] squares have a bit. 0 past the last cell, up to
    /// index 64 (`trailing_zeros` of an empty cell set), so that
    /// [`crate::search::Pos::play`] reads the squares through a set's first
    /// cell without testing whether there is one.
    pub squares_through: [SquareSet; MAX_CELLS + 1],
    /// `square_or_none[i]`: `squares[i]` for a tracked square, 0 at index
    /// [`CAPACITY`] (the first member of an empty square set), so that
    /// [`crate::search::Pos::play`] reads the first squares of a set
    /// without testing whether there is one.
    pub square_or_none: [u64; TRACKED_SQUARES + 2],
    /// Every tracked square's bit; on a board with more squares than
    /// [`TRACKED_SQUARES`] (7x7 and up) also the last bit, which no cell's
    /// set holds, so that there no position ever has every square shut.
    pub every_square: SquareSet,
    /// Symmetries as cell permutations: `perms[g][cell]` is the image of `cell`.
    /// `perms[0]` is the identity.
    pub perms: Vec<[u8; MAX_CELLS]>,
    /// `inverse[g]`: the index of the inverse symmetry of `g`.
    pub inverse: Vec<usize>,
    /// Byte lookup tables: `lut[g][chunk][byte]` is the image under `g` of the
    /// cells `8 * chunk ..` whose bits are set in `byte`. A bitboard is
    /// transformed with one lookup per 8 cells instead of one step per cell.
    lut: Vec<Vec<[u64; 256]>>,
    chunks: usize,
    /// `cell_images[cell][g]`: the one-cell set `{cell}` under symmetry `g`
    /// (zero for `g` past the group), so a search can keep every image of a
    /// position up to date with one OR per symmetry per move.
    pub cell_images: Vec<[u64; MAX_SYMMETRIES]>,
    /// The symmetries that pair the cells: involutions without a fixed cell
    /// (the half turn when a side is even; the mirror across an even side).
    /// With one of them the second player of standard Hip can answer every
    /// move by its image and never lose (Gardner's argument: see
    /// [`crate::search`]). None on a board with both sides odd.
    pub pairings: Vec<usize>,
}

/// How many squares a board's square sets ([`SquareSet`]) track: all of
/// them on boards of at most 191 squares (6x7 has 140, 6x8 175); on larger
/// boards (7x7 and up), which no search finishes, the rest are treated as
/// open forever.
pub const TRACKED_SQUARES: usize = CAPACITY - 1;

/// The name of `cell` on a board of `cols` columns: column letter and
/// 1-based row (`a1` is the top-left cell).
pub fn cell_name(cols: usize, cell: usize) -> String {
    format!(
        "{}{}",
        char::from(b'a' + (cell % cols) as u8),
        cell / cols + 1
    )
}

/// Largest symmetry group: the eight symmetries of a square board.
pub const MAX_SYMMETRIES: usize = 8;

/// The square corners for one start cell and edge vector, if all on the board.
fn corners(rows: i32, cols: i32, x: i32, y: i32, a: i32, b: i32) -> Option<[(i32, i32); 4]> {
    let v = [
        (x, y),
        (x + a, y + b),
        (x + a - b, y + b + a),
        (x - b, y + a),
    ];
    v.iter()
        .all(|&(cx, cy)| cx >= 0 && cy >= 0 && cx < cols && cy < rows)
        .then_some(v)
}

/// Every square of a `rows x cols` board, each exactly once, as its four
/// cells (`r * cols + c`) in the walk order of [`corners`] (each consecutive
/// pair an edge, the first and third a diagonal). No limit on the number of
/// cells: [`Board::new`] turns this list into bitboards, and families whose
/// boards outgrow one `u64` (`hip-nn`, up to 16 x 16) use it as it is.
pub fn square_corners(rows: usize, cols: usize) -> Vec<[usize; 4]> {
    let (r, c) = (rows as i32, cols as i32);
    let mut squares = Vec::with_capacity(square_count(rows, cols));
    for y in 0..r {
        for x in 0..c {
            for a in 1..c.max(r) {
                for b in 0..c.max(r) {
                    if let Some(v) = corners(r, c, x, y, a, b) {
                        squares.push(v.map(|(cx, cy)| (cy * c + cx) as usize));
                    }
                }
            }
        }
    }
    squares
}

/// The symmetries of a `rows x cols` board as cell permutations
/// (`perms[g][cell]` is the image of `cell`), the identity first: the four
/// of a rectangle (identity, left-right and top-bottom mirrors, the half
/// turn), then on a square board the four that exchange rows and columns
/// (the transpose, the two quarter turns, the anti-transpose). No limit on
/// the number of cells; [`Board::perms`] is this list.
pub fn symmetry_perms(rows: usize, cols: usize) -> Vec<Vec<usize>> {
    let map = |f: &dyn Fn(usize, usize) -> (usize, usize)| {
        let mut p = vec![0; rows * cols];
        for rr in 0..rows {
            for cc in 0..cols {
                let (nr, nc) = f(rr, cc);
                p[rr * cols + cc] = nr * cols + nc;
            }
        }
        p
    };
    let (lr, lc) = (rows - 1, cols - 1);
    let mut perms = vec![
        map(&|r, c| (r, c)),
        map(&|r, c| (r, lc - c)),
        map(&|r, c| (lr - r, c)),
        map(&|r, c| (lr - r, lc - c)),
    ];
    if rows == cols {
        perms.push(map(&|r, c| (c, r)));
        perms.push(map(&|r, c| (c, lr - r)));
        perms.push(map(&|r, c| (lc - c, r)));
        perms.push(map(&|r, c| (lc - c, lr - r)));
    }
    perms
}

/// The number of squares on a `rows x cols` board, by the closed formula
/// (independent of the enumeration, so tests can compare the two).
pub fn square_count(rows: usize, cols: usize) -> usize {
    (1..rows.min(cols))
        .map(|s| s * (rows - s) * (cols - s))
        .sum()
}

impl Board {
    /// Builds the geometry. Panics on dimensions the families' `validate`
    /// rejects (callers validate first).
    pub fn new(rows: usize, cols: usize) -> Board {
        assert!(
            rows >= 1 && cols >= 1 && rows * cols <= MAX_CELLS,
            "board {rows}x{cols}"
        );
        let n = rows * cols;
        let full = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let mut squares: Vec<u64> = square_corners(rows, cols)
            .iter()
            .map(|q| q.iter().fold(0u64, |m, &cell| m | 1u64 << cell))
            .collect();
        squares.sort_unstable();
        debug_assert_eq!(squares.len(), square_count(rows, cols));
        let square_cells = squares
            .iter()
            .map(|&s| {
                let mut cells = [0u8; 4];
                let mut m = s;
                for c in &mut cells {
                    *c = m.trailing_zeros() as u8;
                    m &= m - 1;
                }
                cells
            })
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        let mut others = Vec::new();
        for cell in 0..n {
            start.push(others.len());
            let bit = 1u64 << cell;
            others.extend(squares.iter().filter(|&&s| s & bit != 0).map(|&s| s & !bit));
        }
        start.push(others.len());
        let tracked = squares.len().min(TRACKED_SQUARES);
        let mut squares_through = [SquareSet::EMPTY; MAX_CELLS + 1];
        for (cell, through) in squares_through[..n].iter_mut().enumerate() {
            *through = squares[..tracked]
                .iter()
                .enumerate()
                .filter(|&(_, &s)| s >> cell & 1 == 1)
                .fold(SquareSet::EMPTY, |set, (i, _)| set | SquareSet::single(i));
        }
        let mut square_or_none = [0u64; TRACKED_SQUARES + 2];
        square_or_none[..tracked].copy_from_slice(&squares[..tracked]);
        let every_square = if squares.len() > TRACKED_SQUARES {
            SquareSet::FULL
        } else {
            SquareSet::first(tracked)
        };

        let perms: Vec<[u8; MAX_CELLS]> = symmetry_perms(rows, cols)
            .iter()
            .map(|q| {
                let mut p = [0u8; MAX_CELLS];
                for (cell, &image) in q.iter().enumerate() {
                    p[cell] = image as u8;
                }
                p
            })
            .collect();
        let inverse = perms
            .iter()
            .map(|p| {
                perms
                    .iter()
                    .position(|q| (0..n).all(|i| q[p[i] as usize] as usize == i))
                    .expect("the symmetries form a group")
            })
            .collect();
        let chunks = n.div_ceil(8);
        let lut = perms
            .iter()
            .map(|p| {
                (0..chunks)
                    .map(|ch| {
                        let mut t = [0u64; 256];
                        for (byte, slot) in t.iter_mut().enumerate() {
                            for i in 0..8 {
                                let cell = ch * 8 + i;
                                if byte >> i & 1 == 1 && cell < n {
                                    *slot |= 1u64 << p[cell];
                                }
                            }
                        }
                        t
                    })
                    .collect()
            })
            .collect();
        let cell_images = (0..n)
            .map(|cell| {
                let mut img = [0u64; MAX_SYMMETRIES];
                for (g, p) in perms.iter().enumerate() {
                    img[g] = 1u64 << p[cell];
                }
                img
            })
            .collect();
        let pairings = (1..perms.len())
            .filter(|&g| {
                (0..n).all(|c| {
                    let image = perms[g][c] as usize;
                    image != c && perms[g][image] as usize == c
                })
            })
            .collect();
        Board {
            rows,
            cols,
            n,
            full,
            squares,
            square_cells,
            start,
            others,
            squares_through,
            square_or_none,
            every_square,
            perms,
            inverse,
            lut,
            chunks,
            cell_images,
            pairings,
        }
    }

    /// Whether every square has a bit in the square sets (boards up to
    /// 6x6 and table B's): then the searches can count stones per square
    /// as sets ([`crate::order::SquareCounts`]) instead of walking squares.
    #[inline(always)]
    pub fn tracks_every_square(&self) -> bool {
        self.every_square != SquareSet::FULL
    }

    /// For each square through `cell`, the mask of its other three cells.
    #[inline(always)]
    pub fn others(&self, cell: usize) -> &[u64] {
        &self.others[self.start[cell]..self.start[cell + 1]]
    }

    /// Number of symmetries (8 on square boards, 4 on rectangles).
    pub fn symmetries(&self) -> usize {
        self.perms.len()
    }

    /// The image of the cell set `bits` under symmetry `g`.
    #[inline(always)]
    pub fn transform(&self, g: usize, bits: u64) -> u64 {
        let t = &self.lut[g];
        let mut out = 0;
        for (ch, table) in t.iter().enumerate().take(self.chunks) {
            out |= table[(bits >> (8 * ch) & 0xff) as usize];
        }
        out
    }

    /// The canonical form of a two-colour position: the lexicographically
    /// smallest `(g(a), g(b))` over the symmetries, and the `g` that gives it.
    #[inline]
    pub fn canonical2(&self, a: u64, b: u64) -> (u64, u64, usize) {
        let mut best = (a, b, 0);
        for g in 1..self.perms.len() {
            let ta = self.transform(g, a);
            if ta > best.0 {
                continue;
            }
            let tb = self.transform(g, b);
            if ta < best.0 || tb < best.1 {
                best = (ta, tb, g);
            }
        }
        best
    }

    /// Whether any square lies entirely inside `bits`.
    pub fn has_square(&self, bits: u64) -> bool {
        self.squares.iter().any(|&s| s & !bits == 0)
    }

    /// Cell name: column letter and 1-based row (`a1` is the top-left cell).
    pub fn cell_name(&self, cell: usize) -> String {
        cell_name(self.cols, cell)
    }

    /// A board as text: one character per cell (`symbol(cell)`), rows
    /// separated by `/`.
    pub fn render(&self, symbol: impl Fn(usize) -> char) -> String {
        let mut s = String::with_capacity(self.n + self.rows);
        for r in 0..self.rows {
            if r > 0 {
                s.push('/');
            }
            for c in 0..self.cols {
                s.push(symbol(r * self.cols + c));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every square is in the sets of its four cells and no other; past
    /// [`TRACKED_SQUARES`] squares (7x7) the last bit is in every position's
    /// open set for good, so nothing is ever counted as having no open
    /// square.
    #[test]
    fn square_sets_hold_each_tracked_square_at_its_cells() {
        for (rows, cols) in [(4, 4), (5, 6), (6, 6), (6, 7), (6, 8), (7, 7), (8, 8)] {
            let board = Board::new(rows, cols);
            let tracked = board.squares.len().min(TRACKED_SQUARES);
            for (i, &square) in board.squares.iter().enumerate().take(tracked) {
                for cell in 0..board.n {
                    let through = board.squares_through[cell].contains(i);
                    assert_eq!(through, square >> cell & 1 == 1, "{rows}x{cols}");
                }
            }
            let union = board
                .squares_through
                .iter()
                .fold(SquareSet::EMPTY, |u, &s| u | s);
            if board.squares.len() > TRACKED_SQUARES {
                assert_eq!(union, SquareSet::first(TRACKED_SQUARES));
                assert_eq!(board.every_square, SquareSet::FULL);
            } else {
                assert_eq!(union, board.every_square);
                assert!(board.tracks_every_square(), "{rows}x{cols}");
            }
        }
    }
}
