//! Deliberately plain implementations of the Hip rules, to check the real
//! searches against: squares found by testing every 4-cell subset with
//! distances, colourings checked one by one, games searched by plain minimax
//! without pruning, symmetry or tables. Only usable on small boards.

/// Every square of a `rows x cols` board as four cell indices
/// (`r * cols + c`), found by testing all 4-cell subsets: four points are the
/// corners of a square iff, of their six pairwise squared distances, four are
/// equal and positive (the sides) and two are twice that (the diagonals).
pub fn squares_by_subsets(rows: usize, cols: usize) -> Vec<[usize; 4]> {
    let n = rows * cols;
    let pt = |i: usize| ((i / cols) as i64, (i % cols) as i64);
    let d2 = |a: usize, b: usize| {
        let (p, q) = (pt(a), pt(b));
        (p.0 - q.0).pow(2) + (p.1 - q.1).pow(2)
    };
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let v = [a, b, c, d];
                    let mut ds = Vec::new();
                    for i in 0..4 {
                        for j in i + 1..4 {
                            ds.push(d2(v[i], v[j]));
                        }
                    }
                    ds.sort_unstable();
                    if ds[0] > 0 && ds[0] == ds[3] && ds[4] == ds[5] && ds[4] == 2 * ds[0] {
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

/// The symmetries of the board as maps on cell indices, written out from
/// coordinates (independently of `board.rs`).
pub fn symmetries(rows: usize, cols: usize) -> Vec<Vec<usize>> {
    let (lr, lc) = (rows - 1, cols - 1);
    type Map = Box<dyn Fn(usize, usize) -> (usize, usize)>;
    let mut maps: Vec<Map> = vec![
        Box::new(|r, c| (r, c)),
        Box::new(move |r, c| (lr - r, c)),
        Box::new(move |r, c| (r, lc - c)),
        Box::new(move |r, c| (lr - r, lc - c)),
    ];
    if rows == cols {
        maps.push(Box::new(|r, c| (c, r)));
        maps.push(Box::new(move |r, c| (lc - c, r)));
        maps.push(Box::new(move |r, c| (c, lr - r)));
        maps.push(Box::new(move |r, c| (lc - c, lr - r)));
    }
    maps.iter()
        .map(|f| {
            (0..rows * cols)
                .map(|i| {
                    let (r, c) = f(i / cols, i % cols);
                    r * cols + c
                })
                .collect()
        })
        .collect()
}

/// Draw counts of a board by checking all `k^N` colourings one by one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrawCounts {
    pub draws: u64,
    pub playable: u64,
    pub distinct: u64,
    pub distinct_playable: u64,
    /// Every draw: rows separated by `/`, colours as digits.
    pub boards: Vec<String>,
}

/// Counts the full `k`-colourings of `rows x cols` without a monochromatic
/// square, which of them have the playable stone counts (colour `j` is player
/// `j + 1`; with `N = qk + r` the first `r` players hold `q + 1`), and how
/// many orbits under the board's symmetries.
pub fn draws(rows: usize, cols: usize, k: usize) -> DrawCounts {
    let n = rows * cols;
    let squares = squares_by_subsets(rows, cols);
    let syms = symmetries(rows, cols);
    let total = (k as u64).pow(n as u32);
    assert!(
        total <= 1 << 26,
        "reference implementation only for small cases"
    );
    let mut out = DrawCounts::default();
    let (q, r) = (n / k, n % k);
    let mut colour = vec![0usize; n];
    let mut draws = std::collections::BTreeSet::new();
    for code in 0..total {
        let mut x = code;
        for cell in colour.iter_mut() {
            *cell = (x % k as u64) as usize;
            x /= k as u64;
        }
        if squares
            .iter()
            .any(|s| s.iter().all(|&c| colour[c] == colour[s[0]]))
        {
            continue;
        }
        out.draws += 1;
        let playable =
            (0..k).all(|j| colour.iter().filter(|&&c| c == j).count() == q + usize::from(j < r));
        out.playable += u64::from(playable);
        draws.insert(colour.clone());
        let mut s = String::new();
        for row in 0..rows {
            if row > 0 {
                s.push('/');
            }
            for col in 0..cols {
                s.push(char::from(b'0' + colour[row * cols + col] as u8));
            }
        }
        out.boards.push(s);
        // Orbits: count each draw whose orbit's smallest member it is.
        let images: Vec<Vec<usize>> = syms
            .iter()
            .map(|m| {
                let mut img = vec![0; n];
                for i in 0..n {
                    img[m[i]] = colour[i];
                }
                img
            })
            .collect();
        if images.iter().all(|img| *img >= colour) {
            out.distinct += 1;
            out.distinct_playable += u64::from(playable);
        }
    }
    out.boards.sort();
    out
}

/// Whether the stones `mine` (cell flags) contain a square.
fn has_square(squares: &[[usize; 4]], cells: &[u8], who: u8) -> bool {
    squares.iter().any(|s| s.iter().all(|&c| cells[c] == who))
}

/// Who places the stone after `stones` stones: 1 or 2.
pub fn mover(stones: usize, double: bool) -> u8 {
    if !double {
        return if stones.is_multiple_of(2) { 1 } else { 2 };
    }
    if stones == 0 {
        return 1;
    }
    if ((stones - 1) / 2).is_multiple_of(2) {
        2
    } else {
        1
    }
}

/// The value for player 1 (1 win, 0 draw, -1 loss) of the position where
/// `cells[i]` is 0 (empty), 1 or 2, by plain minimax: the mover tries every
/// empty cell; completing a square of his colour loses; a full board without
/// one is a draw.
pub fn minimax(rows: usize, cols: usize, double: bool, cells: &mut [u8]) -> i8 {
    let squares = squares_by_subsets(rows, cols);
    mm(&squares, double, cells)
}

fn mm(squares: &[[usize; 4]], double: bool, cells: &mut [u8]) -> i8 {
    let stones = cells.iter().filter(|&&c| c != 0).count();
    if stones == cells.len() {
        return 0;
    }
    let who = mover(stones, double);
    let mut best: Option<i8> = None;
    for i in 0..cells.len() {
        if cells[i] != 0 {
            continue;
        }
        cells[i] = who;
        let v = if has_square(squares, cells, who) {
            if who == 1 {
                -1
            } else {
                1
            }
        } else {
            mm(squares, double, cells)
        };
        cells[i] = 0;
        best = Some(match best {
            None => v,
            Some(b) if who == 1 => b.max(v),
            Some(b) => b.min(v),
        });
    }
    best.expect("a non-full board has a move")
}
