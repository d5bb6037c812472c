//! What is still free below a set of queens ([`Board`], as bits), and the
//! line the search fills next: the empty row or column with the fewest
//! free squares ([`Board::choose`]). The search's inner loop runs on these
//! alone, so they are plain copies of a few words.

/// What is still free below a set of queens. Diagonals are kept as
/// occupied bits: `up` indexes `r + c`, `down` indexes `c - r + m`, and
/// `down_t` the same diagonals as `r - c + m`, so that a row's free
/// columns and a column's free rows are each three shifts away.
#[derive(Clone, Copy, Default)]
pub(super) struct Board {
    /// Inner rows still without a queen.
    pub(super) rows: u64,
    /// Inner columns still without a queen.
    pub(super) cols: u64,
    pub(super) up: u64,
    pub(super) down: u64,
    pub(super) down_t: u64,
}

/// A line to fill: an inner row or column, and its free squares (columns of
/// the row, or rows of the column).
#[derive(Clone, Copy, Default)]
pub(super) struct Line {
    is_row: bool,
    index: u8,
    pub(super) free: u64,
}

impl Line {
    /// The square of this line at position `x` (a column or a row).
    #[inline(always)]
    pub(super) fn square(&self, x: u8) -> (u8, u8) {
        if self.is_row {
            (self.index, x)
        } else {
            (x, self.index)
        }
    }
}

impl Board {
    #[inline(always)]
    fn row_free(&self, r: u32, m: u32) -> u64 {
        self.cols & !(self.up >> r) & !(self.down >> (m - r))
    }

    #[inline(always)]
    fn col_free(&self, c: u32, m: u32) -> u64 {
        self.rows & !(self.up >> c) & !(self.down_t >> (m - c))
    }

    /// Marks a queen on `(r, c)`, which must be free.
    #[inline(always)]
    pub(super) fn place(&self, r: u8, c: u8, m: u8) -> Board {
        let (r, c, m) = (u32::from(r), u32::from(c), u32::from(m));
        Board {
            rows: self.rows & !(1 << r),
            cols: self.cols & !(1 << c),
            up: self.up | 1 << (r + c),
            down: self.down | 1 << (c + m - r),
            down_t: self.down_t | 1 << (r + m - c),
        }
    }

    /// Whether `(r, c)` is attacked along a diagonal.
    pub(super) fn diagonal_taken(&self, r: u8, c: u8, m: u8) -> bool {
        let (r, c, m) = (u32::from(r), u32::from(c), u32::from(m));
        self.up >> (r + c) & 1 == 1 || self.down >> (c + m - r) & 1 == 1
    }

    /// The empty line with the fewest free squares, a row before a column
    /// and the lowest index on ties; the columns are not looked at when a
    /// row has no free square (the node is dead). `None` when every line is
    /// filled. The loops take a minimum of keys, over every row: stopping
    /// at the first line with one free square would miss the emptier (dead)
    /// lines behind it, and on `queens --n 17` visits 1.19 times the nodes
    /// in 1.13 times the CPU (docs/notes/chapter-6.md).
    #[inline(always)]
    pub(super) fn choose(&self, m: u32) -> Option<Line> {
        if self.rows == 0 {
            return None;
        }
        // Each line's key: its free squares' count, then rows before
        // columns, then the index; the least key is the line chosen.
        let mut best = u32::MAX;
        let mut rows = self.rows;
        while rows != 0 {
            let r = rows.trailing_zeros();
            rows &= rows - 1;
            let key = self.row_free(r, m).count_ones() << 7 | r;
            best = best.min(key);
        }
        if best >> 7 != 0 {
            let mut cols = self.cols;
            while cols != 0 {
                let c = cols.trailing_zeros();
                cols &= cols - 1;
                let key = self.col_free(c, m).count_ones() << 7 | 64 | c;
                best = best.min(key);
            }
        }
        let index = best & 63;
        Some(if best & 64 == 0 {
            Line {
                is_row: true,
                index: index as u8,
                free: self.row_free(index, m),
            }
        } else {
            Line {
                is_row: false,
                index: index as u8,
                free: self.col_free(index, m),
            }
        })
    }
}
