//! A deliberately plain second implementation, to check the search against:
//! every permutation of the columns in turn (so rows and columns are safe
//! by construction), diagonals checked pair by pair, and the symmetries
//! applied to a grid of squares. Only usable on small boards (n! work).

use std::collections::BTreeSet;

/// Every solution on an `n x n` board (`s[row]` = 0-based column), in
/// lexicographic order.
pub fn solutions(n: usize) -> Vec<Vec<u8>> {
    let mut p: Vec<u8> = (0..n as u8).collect();
    let mut out = Vec::new();
    loop {
        if diagonals_safe(&p) {
            out.push(p.clone());
        }
        if !next_permutation(&mut p) {
            return out;
        }
    }
}

/// No two queens share a diagonal.
fn diagonals_safe(p: &[u8]) -> bool {
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if (i32::from(p[i]) - i32::from(p[j])).unsigned_abs() as usize == j - i {
                return false;
            }
        }
    }
    true
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(p: &mut [u8]) -> bool {
    let Some(i) = (1..p.len()).rev().find(|&i| p[i - 1] < p[i]) else {
        return false;
    };
    let j = (i..p.len()).rev().find(|&j| p[j] > p[i - 1]).unwrap();
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}

/// The distinct solutions: for each solution, the smallest of its eight
/// images, collected in a set.
pub fn distinct(solutions: &[Vec<u8>]) -> BTreeSet<Vec<u8>> {
    solutions
        .iter()
        .map(|s| images(s).into_iter().min().unwrap())
        .collect()
}

/// The eight images of a solution: four quarter turns of the grid, each
/// also mirrored.
fn images(s: &[u8]) -> Vec<Vec<u8>> {
    let n = s.len();
    let mut grid = vec![vec![false; n]; n];
    for (r, &c) in s.iter().enumerate() {
        grid[r][c as usize] = true;
    }
    let mut out = Vec::new();
    for _ in 0..4 {
        grid = rotate(&grid);
        out.push(read(&grid));
        let mirrored: Vec<Vec<bool>> = grid
            .iter()
            .map(|row| row.iter().rev().copied().collect())
            .collect();
        out.push(read(&mirrored));
    }
    out
}

/// The grid turned a quarter clockwise.
fn rotate(grid: &[Vec<bool>]) -> Vec<Vec<bool>> {
    let n = grid.len();
    (0..n)
        .map(|r| (0..n).map(|c| grid[n - 1 - c][r]).collect())
        .collect()
}

/// The column of the queen in each row.
fn read(grid: &[Vec<bool>]) -> Vec<u8> {
    grid.iter()
        .map(|row| row.iter().position(|&q| q).unwrap() as u8)
        .collect()
}
