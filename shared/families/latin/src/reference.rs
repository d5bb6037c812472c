//! A deliberately plain second implementation, to check the search against:
//! squares as `Vec<Vec<u8>>` filled one cell at a time in reading order,
//! each symbol checked by scanning its row and column; transversals as the
//! permutations (all `n!` of them) that pick distinct symbols; an orthogonal
//! mate searched for directly, cell by cell, with a table of the pairs used
//! (no transversals); diagonals checked on whole squares. Only usable on
//! small orders.

/// A square: `sq[i][j]` the symbol (0-based) in row `i`, column `j`.
pub type Square = Vec<Vec<u8>>;

/// Every reduced Latin square of order `n` (first row and first column
/// `0 1 ... n-1`), in lexicographic order.
pub fn reduced_squares(n: usize) -> Vec<Square> {
    let mut sq = vec![vec![u8::MAX; n]; n];
    for (i, row) in sq.iter_mut().enumerate() {
        row[0] = i as u8;
    }
    for (j, s) in sq[0].iter_mut().enumerate() {
        *s = j as u8;
    }
    let mut out = Vec::new();
    fill(&mut sq, n + 1, &mut |s| {
        out.push(s.clone());
    });
    out
}

/// Every Latin square of order `n`, in lexicographic order.
pub fn latin_squares(n: usize) -> Vec<Square> {
    let mut sq = vec![vec![u8::MAX; n]; n];
    let mut out = Vec::new();
    fill(&mut sq, 0, &mut |s| out.push(s.clone()));
    out
}

/// The number of diagonal Latin squares (both diagonals carry every
/// symbol) whose first row is `0 1 ... n-1`: every square with that first
/// row, checked when complete.
pub fn diagonal_squares(n: usize) -> u64 {
    let mut sq = vec![vec![u8::MAX; n]; n];
    for (j, s) in sq[0].iter_mut().enumerate() {
        *s = j as u8;
    }
    let mut count = 0;
    fill(&mut sq, n, &mut |s| {
        if is_diagonal(s) {
            count += 1;
        }
    });
    count
}

/// Whether both diagonals of `sq` carry every symbol.
pub fn is_diagonal(sq: &Square) -> bool {
    let n = sq.len();
    let main: Vec<u8> = (0..n).map(|i| sq[i][i]).collect();
    let anti: Vec<u8> = (0..n).map(|i| sq[i][n - 1 - i]).collect();
    all_different(&main) && all_different(&anti)
}

fn all_different(v: &[u8]) -> bool {
    (0..v.len()).all(|i| (i + 1..v.len()).all(|j| v[i] != v[j]))
}

/// Fills the cells from `cell` on (reading order) that hold `u8::MAX`,
/// trying each symbol that its row and column do not already hold, and
/// calls `found` on every complete square.
fn fill(sq: &mut Square, cell: usize, found: &mut dyn FnMut(&Square)) {
    let n = sq.len();
    if cell >= n * n {
        found(sq);
        return;
    }
    let (i, j) = (cell / n, cell % n);
    if sq[i][j] != u8::MAX {
        fill(sq, cell + 1, found);
        return;
    }
    for s in 0..n as u8 {
        let in_row = sq[i].contains(&s);
        let in_col = (0..n).any(|r| sq[r][j] == s);
        if !in_row && !in_col {
            sq[i][j] = s;
            fill(sq, cell + 1, found);
            sq[i][j] = u8::MAX;
        }
    }
}

/// Whether `sq` is a Latin square.
pub fn is_latin(sq: &Square) -> bool {
    let n = sq.len();
    sq.iter()
        .all(|row| row.len() == n && all_different(row) && row.iter().all(|&s| usize::from(s) < n))
        && (0..n).all(|j| all_different(&(0..n).map(|i| sq[i][j]).collect::<Vec<_>>()))
}

/// Whether `a` and `b` are orthogonal Latin squares: both Latin, and the
/// `n^2` pairs `(a[i][j], b[i][j])` all different.
pub fn is_orthogonal(a: &Square, b: &Square) -> bool {
    let n = a.len();
    if !is_latin(a) || !is_latin(b) || b.len() != n {
        return false;
    }
    let mut pairs: Vec<(u8, u8)> = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| (a[i][j], b[i][j]))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.len() == n * n
}

/// The number of transversals of `sq`: the permutations `p` (all `n!`,
/// in turn) for which the symbols `sq[i][p[i]]` are all different.
pub fn transversals(sq: &Square) -> u64 {
    let n = sq.len();
    let mut p: Vec<usize> = (0..n).collect();
    let mut count = 0;
    loop {
        let symbols: Vec<u8> = (0..n).map(|i| sq[i][p[i]]).collect();
        if all_different(&symbols) {
            count += 1;
        }
        if !next_permutation(&mut p) {
            return count;
        }
    }
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(p: &mut [usize]) -> bool {
    let Some(i) = (1..p.len()).rev().find(|&i| p[i - 1] < p[i]) else {
        return false;
    };
    let j = (i..p.len()).rev().find(|&j| p[j] > p[i - 1]).unwrap();
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}

/// An orthogonal mate of `sq` found directly: a Latin square filled cell by
/// cell whose every pair with `sq` is new. Its first row is fixed to
/// `0 1 ... n-1` (relabelling a mate's symbols gives a mate), which only
/// prunes; `None` when there is none.
pub fn find_mate(sq: &Square) -> Option<Square> {
    let n = sq.len();
    let mut mate = vec![vec![u8::MAX; n]; n];
    let mut used = vec![vec![false; n]; n];
    for j in 0..n {
        mate[0][j] = j as u8;
        used[usize::from(sq[0][j])][j] = true;
    }
    if mate_cell(sq, &mut mate, &mut used, n) {
        Some(mate)
    } else {
        None
    }
}

fn mate_cell(sq: &Square, mate: &mut Square, used: &mut [Vec<bool>], cell: usize) -> bool {
    let n = sq.len();
    if cell == n * n {
        return true;
    }
    let (i, j) = (cell / n, cell % n);
    let a = usize::from(sq[i][j]);
    for s in 0..n as u8 {
        let in_row = mate[i].contains(&s);
        let in_col = (0..i).any(|r| mate[r][j] == s);
        if in_row || in_col || used[a][usize::from(s)] {
            continue;
        }
        mate[i][j] = s;
        used[a][usize::from(s)] = true;
        if mate_cell(sq, mate, used, cell + 1) {
            return true;
        }
        used[a][usize::from(s)] = false;
        mate[i][j] = u8::MAX;
    }
    false
}

/// A flat row-after-row copy of `sq`, as the family lists squares.
pub fn flat(sq: &Square) -> Vec<u8> {
    sq.iter().flatten().copied().collect()
}

/// The square whose rows are the `n`-symbol chunks of `symbols`.
pub fn unflat(symbols: &[u8], n: usize) -> Square {
    symbols.chunks(n).map(|r| r.to_vec()).collect()
}
