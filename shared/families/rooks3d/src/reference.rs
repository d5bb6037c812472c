//! A deliberately plain second implementation, to check the search against:
//! every 3 x 3 matrix with entries `0..=R` whose rows and columns sum to
//! `R` is a candidate layer; every pair of layers whose cell-by-cell rest
//! `R - A - B` is again a layer completes a placement (layers `A, B, C` at
//! `i = 0, 1, 2`). The 27 line sums of every placement are then checked
//! directly, and the distinct ones are found by building each placement's
//! 48 images from coordinates (not from the search's index table) and
//! keeping the set of smallest ones. `(R+1)^9` candidate layers: usable for
//! `R <= 6` or so.

// Coordinates are the point here: lines and symmetries are written as
// index arithmetic on `x[i][j][k]`, as one would by hand.
#![allow(clippy::needless_range_loop)]

use std::collections::{BTreeSet, HashSet};

type Layer = [[u8; 3]; 3];
/// `x[i][j][k]`.
pub type Cube = [[[u8; 3]; 3]; 3];

/// Every placement for `r` rooks to a line, in no particular order.
pub fn placements(r: u8) -> Vec<Cube> {
    let mut layers = Vec::new();
    let base = u32::from(r) + 1;
    for code in 0..base.pow(9) {
        let mut m: Layer = [[0; 3]; 3];
        let mut c = code;
        for cell in m.iter_mut().flatten() {
            *cell = (c % base) as u8;
            c /= base;
        }
        let rows = (0..3).all(|j| m[j].iter().map(|&v| u32::from(v)).sum::<u32>() == u32::from(r));
        let cols = (0..3).all(|k| (0..3).map(|j| u32::from(m[j][k])).sum::<u32>() == u32::from(r));
        if rows && cols {
            layers.push(m);
        }
    }
    let known: HashSet<Layer> = layers.iter().copied().collect();
    let mut out = Vec::new();
    for a in &layers {
        for b in &layers {
            let mut c: Layer = [[0; 3]; 3];
            let mut fits = true;
            for j in 0..3 {
                for k in 0..3 {
                    match r.checked_sub(a[j][k]).and_then(|v| v.checked_sub(b[j][k])) {
                        Some(v) => c[j][k] = v,
                        None => fits = false,
                    }
                }
            }
            if fits && known.contains(&c) {
                let x = [*a, *b, c];
                assert!(is_placement(&x, r));
                out.push(x);
            }
        }
    }
    out
}

/// Every one of the 27 lines (3 directions x 9) holds exactly `r` rooks.
pub fn is_placement(x: &Cube, r: u8) -> bool {
    let r = u32::from(r);
    for p in 0..3 {
        for q in 0..3 {
            let along_i: u32 = (0..3).map(|t| u32::from(x[t][p][q])).sum();
            let along_j: u32 = (0..3).map(|t| u32::from(x[p][t][q])).sum();
            let along_k: u32 = (0..3).map(|t| u32::from(x[p][q][t])).sum();
            if along_i != r || along_j != r || along_k != r {
                return false;
            }
        }
    }
    true
}

/// The 48 images of `x`: every permutation of the axes, every set of
/// reversed axes.
pub fn images(x: &Cube) -> Vec<Cube> {
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut out = Vec::with_capacity(48);
    for perm in perms {
        for flips in 0..8u8 {
            let mut y: Cube = [[[0; 3]; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    for k in 0..3 {
                        let c = [i, j, k];
                        let mut d = [c[perm[0]], c[perm[1]], c[perm[2]]];
                        for (t, dt) in d.iter_mut().enumerate() {
                            if flips >> t & 1 == 1 {
                                *dt = 2 - *dt;
                            }
                        }
                        y[d[0]][d[1]][d[2]] = x[i][j][k];
                    }
                }
            }
            out.push(y);
        }
    }
    out
}

/// The smallest image of every placement: one per class.
pub fn distinct(all: &[Cube]) -> BTreeSet<Cube> {
    all.iter()
        .map(|x| images(x).into_iter().min().expect("48 images"))
        .collect()
}
