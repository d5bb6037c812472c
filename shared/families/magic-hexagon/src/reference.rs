//! A deliberately plain second implementation, to check the search against,
//! with its own geometry and another algorithm: the chapter's own idea
//! ("the hexagon is completely defined by cells A-G") made general. Free
//! cells are chosen one at a time and every value is tried in each; after
//! each choice, every line with a single empty cell fixes that cell (the
//! line's sum minus the rest), repeated until nothing changes, and every
//! full line is checked. No bounds on partial sums, no incremental state:
//! the whole grid is copied at each step and every line rescanned. The
//! next free cell is the first empty cell (reading order) of a line with
//! the fewest empty cells, chosen afresh at each node (the search uses a
//! fixed order).
//!
//! Cells are in axial coordinates `(q, r)` (`s = -q - r`), read row by row
//! (`r` from top to bottom, `q` left to right), the same reading order as
//! [`crate::geometry`] uses, so that arrangements compare directly. The
//! distinct arrangements are the smallest images, each image built by
//! turning the coordinates (not through the search's permutation tables),
//! kept in a set.

use std::collections::BTreeSet;

/// The cells of the hexagon of order `k`, reading order, as `(q, r)`.
pub fn cells(k: i32) -> Vec<(i32, i32)> {
    let m = k - 1;
    let mut out = Vec::new();
    for r in -m..=m {
        for q in -m..=m {
            if (q + r).abs() <= m {
                out.push((q, r));
            }
        }
    }
    out
}

fn index(cells: &[(i32, i32)], c: (i32, i32)) -> usize {
    cells.iter().position(|&x| x == c).expect("on the hexagon")
}

/// The straight rows: `r`, `q` or `s` constant.
pub fn rows(k: i32) -> Vec<Vec<usize>> {
    let m = k - 1;
    let cs = cells(k);
    let coord = |c: (i32, i32), axis: usize| match axis {
        0 => c.0,
        1 => c.1,
        _ => -c.0 - c.1,
    };
    let mut out = Vec::new();
    for axis in 0..3 {
        for v in -m..=m {
            out.push((0..cs.len()).filter(|&i| coord(cs[i], axis) == v).collect());
        }
    }
    out
}

/// The six sides (a coordinate at `+-(k-1)`: the outer cells from one
/// corner to the next) and the six spokes (the cells on the segment from
/// the centre to a corner, the corners being the cells with two
/// coordinates at `+-(k-1)`).
pub fn sides_and_spokes(k: i32) -> Vec<Vec<usize>> {
    let m = k - 1;
    let cs = cells(k);
    let s = |c: (i32, i32)| -c.0 - c.1;
    let mut out: Vec<Vec<usize>> = Vec::new();
    for v in [m, -m] {
        out.push((0..cs.len()).filter(|&i| cs[i].0 == v).collect());
        out.push((0..cs.len()).filter(|&i| cs[i].1 == v).collect());
        out.push((0..cs.len()).filter(|&i| s(cs[i]) == v).collect());
    }
    for &corner in &cs {
        let big = [corner.0, corner.1, s(corner)]
            .iter()
            .filter(|v| v.abs() == m)
            .count();
        if big < 2 {
            continue;
        }
        // c = (t / m) * corner for some t in 0..=m.
        out.push(
            (0..cs.len())
                .filter(|&i| {
                    let c = cs[i];
                    (0..=m).any(|t| m * c.0 == t * corner.0 && m * c.1 == t * corner.1)
                })
                .collect(),
        );
    }
    out
}

/// Every arrangement of `1..=H` on the hexagon of order `k` in which every
/// line of `lines` sums to `sum`, values in reading order.
pub fn arrangements(k: i32, lines: &[Vec<usize>], sum: i64) -> Vec<Vec<u8>> {
    let n = cells(k).len();
    let mut out = Vec::new();
    extend(n, lines, sum, vec![0; n], vec![false; n + 1], &mut out);
    out
}

fn extend(
    n: usize,
    lines: &[Vec<usize>],
    sum: i64,
    mut grid: Vec<u8>,
    mut used: Vec<bool>,
    out: &mut Vec<Vec<u8>>,
) {
    // Fix every cell a line forces, until nothing changes; check full lines.
    loop {
        let mut changed = false;
        for line in lines {
            let empty: Vec<usize> = line.iter().copied().filter(|&c| grid[c] == 0).collect();
            let have: i64 = line.iter().map(|&c| i64::from(grid[c])).sum();
            match empty.len() {
                0 if have != sum => return,
                1 => {
                    let v = sum - have;
                    if v < 1 || v > n as i64 || used[v as usize] {
                        return;
                    }
                    grid[empty[0]] = v as u8;
                    used[v as usize] = true;
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    // The next free cell: on a line with the fewest empty cells.
    let next = lines
        .iter()
        .filter_map(|line| {
            let empty: Vec<usize> = line.iter().copied().filter(|&c| grid[c] == 0).collect();
            empty.first().map(|&c| (empty.len(), c))
        })
        .min()
        .map(|(_, c)| c)
        .or_else(|| grid.iter().position(|&v| v == 0));
    let Some(cell) = next else {
        out.push(grid);
        return;
    };
    for v in 1..=n {
        if !used[v] {
            let mut g = grid.clone();
            let mut u = used.clone();
            g[cell] = v as u8;
            u[v] = true;
            extend(n, lines, sum, g, u, out);
        }
    }
}

/// The twelve images of an arrangement: the grid turned by 60 degrees
/// `(q, r) -> (-r, q + r)` six times, and each turn mirrored
/// `(q, r) -> (r, q)`.
pub fn images(k: i32, values: &[u8]) -> Vec<Vec<u8>> {
    let cs = cells(k);
    let mut out = Vec::new();
    for mirror in [false, true] {
        for turns in 0..6 {
            let mut img = vec![0; cs.len()];
            for (i, &c) in cs.iter().enumerate() {
                let mut c = if mirror { (c.1, c.0) } else { c };
                for _ in 0..turns {
                    c = (-c.1, c.0 + c.1);
                }
                img[index(&cs, c)] = values[i];
            }
            out.push(img);
        }
    }
    out
}

/// The distinct arrangements: the smallest image of each, in a set.
pub fn distinct(k: i32, arrangements: &[Vec<u8>]) -> BTreeSet<Vec<u8>> {
    arrangements
        .iter()
        .map(|a| images(k, a).into_iter().min().expect("twelve images"))
        .collect()
}
