//! A deliberately plain second implementation, from the definition and
//! nothing else: every set `A` of half the cells that holds the north-west
//! cell and is edge-connected (grown cell by cell, Redelmeier's way, so each
//! such set comes once), whose complement `B` is edge-connected too, and
//! that some isometry maps onto `B`: one of the 8 orientations of the
//! square applied to `A`, then any translation (both sets moved to the
//! corner of their bounding box and compared). No walk, no half turn, no
//! cut: the tests use it to check the family's counts, its witnesses, and
//! the theorem that every division is a half-turn pair. Cells are bits of a
//! `u64`, so `n <= 8`; the work grows like the connected sets of half the
//! board, feasible up to `n = 6`.

use std::collections::BTreeSet;

/// What the enumeration found on one board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Divisions {
    /// Divisions into two connected congruent pieces (each orientation).
    pub divisions: u64,
    /// Those whose pieces are each other's image by the half turn about
    /// the centre.
    pub half_turn: u64,
    /// Those whose pieces are also each other's image by a translation
    /// alone, by a quarter turn (about some point), and by a mirror (a
    /// reflection in some line, possibly followed by a translation).
    pub by_translation: u64,
    pub by_quarter_turn: u64,
    pub by_mirror: u64,
    /// One canonical form per division up to the square's 8 symmetries:
    /// of the 8 images of the division, the piece holding cell 0 of each,
    /// as a mask of cells `i * n + j`, the smallest.
    pub distinct: BTreeSet<u64>,
    /// Connected sets of cells the enumeration grew.
    pub sets: u64,
}

/// The cells of the board: all `n * n`, minus the centre for odd `n`.
pub fn cells(n: usize) -> u64 {
    assert!((2..=8).contains(&n), "the reference takes 2 <= n <= 8");
    let all = if n == 8 {
        u64::MAX
    } else {
        (1u64 << (n * n)) - 1
    };
    if n % 2 == 1 {
        all & !(1u64 << ((n / 2) * n + n / 2))
    } else {
        all
    }
}

/// Every division of the `n x n` board (centre removed for odd `n`).
pub fn divisions(n: usize) -> Divisions {
    let board = cells(n);
    let half = board.count_ones() as usize / 2;
    let mut out = Divisions::default();
    let mut visit = |a: u64| {
        let b = board & !a;
        if !connected(n, b) {
            return;
        }
        let images =
            |set: u64| -> Vec<u64> { (0..8).map(|g| normal(n, transform(n, g, set))).collect() };
        let of_a = images(a);
        let nb = normal(n, b);
        // Which orientations, followed by a translation, map A onto B.
        let maps: Vec<usize> = (0..8).filter(|&g| of_a[g] == nb).collect();
        if maps.is_empty() {
            return;
        }
        out.divisions += 1;
        if transform(n, 2, a) == b {
            out.half_turn += 1;
        }
        out.by_translation += u64::from(maps.contains(&0));
        out.by_quarter_turn += u64::from(maps.contains(&1) || maps.contains(&3));
        out.by_mirror += u64::from(maps.iter().any(|&g| g >= 4));
        out.distinct.insert(canonical(n, a));
    };
    // Redelmeier: grow connected sets holding cell 0, each exactly once.
    let mut grower = Grower {
        n,
        board,
        half,
        sets: 0,
        visit: &mut visit,
    };
    grower.grow(0, 0, 1, 1);
    let sets = grower.sets;
    out.sets = sets;
    out
}

/// Redelmeier's enumeration of the connected sets of `half` cells that hold
/// cell 0.
struct Grower<'a> {
    n: usize,
    board: u64,
    half: usize,
    /// Connected sets grown (of every size up to `half`).
    sets: u64,
    visit: &'a mut dyn FnMut(u64),
}

impl Grower<'_> {
    /// Every connected set that adds to `set` (of `size` cells) cells of
    /// `untried`, then their neighbours outside `seen`: `untried` are the
    /// cells this level may add, `seen` every cell ever offered on the way
    /// here (never offered again below). A cell tried at this level stays
    /// out for its later siblings, so each set comes exactly once.
    fn grow(&mut self, set: u64, size: usize, untried: u64, seen: u64) {
        let mut untried = untried;
        while untried != 0 {
            let cell = untried & untried.wrapping_neg();
            untried ^= cell;
            let grown = set | cell;
            self.sets += 1;
            if size + 1 == self.half {
                (self.visit)(grown);
            } else {
                let new = neighbours(self.n, cell) & self.board & !seen;
                self.grow(grown, size + 1, untried | new, seen | new);
            }
        }
    }
}

/// The cells sharing a side with those of `set`.
fn neighbours(n: usize, set: u64) -> u64 {
    let mut left_col = 0u64; // cells in column 0
    for i in 0..n {
        left_col |= 1 << (i * n);
    }
    let right_col = left_col << (n - 1);
    let all = if n == 8 {
        u64::MAX
    } else {
        (1u64 << (n * n)) - 1
    };
    ((set << 1) & !left_col | (set >> 1) & !right_col | set << n | set >> n) & all
}

/// Whether `set` is non-empty and edge-connected.
pub fn connected(n: usize, set: u64) -> bool {
    if set == 0 {
        return false;
    }
    let mut reached = set & set.wrapping_neg();
    loop {
        let more = (reached | neighbours(n, reached)) & set;
        if more == reached {
            return reached == set;
        }
        reached = more;
    }
}

/// The image of a set of cells under symmetry `g` of the square (the same
/// numbering as [`crate::board::symmetry`], acting on cells).
pub fn transform(n: usize, g: usize, set: u64) -> u64 {
    let m = n as i32 - 1;
    let mut out = 0;
    let mut rest = set;
    while rest != 0 {
        let k = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let (i, j) = crate::board::symmetry(g, m, ((k / n) as i32, (k % n) as i32));
        out |= 1u64 << (i as usize * n + j as usize);
    }
    out
}

/// `set` moved up and left until it touches row 0 and column 0.
fn normal(n: usize, set: u64) -> u64 {
    if set == 0 {
        return 0;
    }
    let mut rows = 0;
    while (set >> (rows * n)) & ((1u64 << n) - 1) == 0 {
        rows += 1;
    }
    let mut set = set >> (rows * n);
    let mut col = 0u64;
    for i in 0..n {
        col |= 1 << (i * n);
    }
    while set & col == 0 {
        set >>= 1;
    }
    set
}

/// The canonical form of the division of the board into `a` and its
/// complement: of its 8 images, the piece holding cell 0 of each, the
/// smallest mask.
pub fn canonical(n: usize, a: u64) -> u64 {
    let board = cells(n);
    (0..8)
        .map(|g| {
            let image = transform(n, g, a);
            if image & 1 != 0 {
                image
            } else {
                board & !image
            }
        })
        .min()
        .unwrap()
}
