//! A plain second implementation for the tests, written from the paper's
//! text: the `p x p` arrays `d_ij` and `V_ij`, `U_ij` of section 2 (only the
//! upper triangle `i < j` is a neuron; `V_ji` reads `V_ij`), equation (1)
//! summed over every `k` of the row and the column, the hysteresis output;
//! convergence when every row of `V` sums to 2, and the loops counted by
//! union-find (not by walking cycles, as the fast path does).
//!
//! It must reproduce the fast network's trajectory exactly for the same run
//! seed: same outcome, same iteration count, same final outputs.

use super::{run_seed, Init, Update};
use orchard_core::estimate::Rng;

/// How a reference run ended: `Some((iterations, loops))` when every
/// square has two firing moves, `None` when not within the cutoff; and the
/// final outputs of the neurons, in the order of the upper triangle read
/// row by row.
pub fn run(
    rows: usize,
    cols: usize,
    init: Init,
    update: Update,
    seed: u64,
    run: u64,
    max_iterations: u32,
) -> (Option<(u32, u32)>, Vec<u8>) {
    let p = rows * cols;
    let legal = |i: usize, j: usize| {
        let dr = (i / cols).abs_diff(j / cols);
        let dc = (i % cols).abs_diff(j % cols);
        (dr, dc) == (1, 2) || (dr, dc) == (2, 1)
    };
    let d: Vec<Vec<f64>> = (0..p)
        .map(|i| {
            (0..p)
                .map(|j| if legal(i, j) { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    let mut u = vec![vec![0.0f64; p]; p];
    let mut v = vec![vec![0.0f64; p]; p];
    let mut rng = Rng::new(run_seed(seed, run));
    for i in 0..p {
        for j in i + 1..p {
            if d[i][j] == 1.0 {
                let (u0, v0) = init.draw(&mut rng);
                u[i][j] = u0;
                v[i][j] = f64::from(v0);
                v[j][i] = v[i][j];
            }
        }
    }
    // The neurons (i, j), i < j, d_ij = 1, in the array's order; for the
    // sequential variant, shuffled as the fast path does (Fisher-Yates from
    // the last position down, after the start was drawn).
    let mut neurons: Vec<(usize, usize)> = Vec::new();
    for i in 0..p {
        for j in i + 1..p {
            if d[i][j] == 1.0 {
                neurons.push((i, j));
            }
        }
    }
    if update == Update::Sequential {
        for x in (1..neurons.len()).rev() {
            let y = rng.below(x as u64 + 1) as usize;
            neurons.swap(x, y);
        }
    }
    let outputs = |v: &Vec<Vec<f64>>| {
        let mut out = Vec::new();
        for i in 0..p {
            for j in i + 1..p {
                if d[i][j] == 1.0 {
                    out.push(v[i][j] as u8);
                }
            }
        }
        out
    };
    let mut t = 0u32;
    loop {
        let row = |v: &Vec<Vec<f64>>, i: usize| -> f64 { (0..p).map(|k| v[i][k] * d[i][k]).sum() };
        if (0..p).all(|i| row(&v, i) == 2.0) {
            return (Some((t, loops(p, &v))), outputs(&v));
        }
        if t >= max_iterations {
            return (None, outputs(&v));
        }
        let col = |v: &Vec<Vec<f64>>, j: usize| -> f64 { (0..p).map(|k| v[k][j] * d[k][j]).sum() };
        let hysteresis = |u: f64, v: f64| {
            if u > 3.0 {
                1.0
            } else if u < 0.0 {
                0.0
            } else {
                v
            }
        };
        match update {
            Update::Parallel => {
                let mut du = vec![vec![0.0f64; p]; p];
                for &(i, j) in &neurons {
                    du[i][j] = -(row(&v, i) - 2.0) - (col(&v, j) - 2.0);
                }
                for &(i, j) in &neurons {
                    u[i][j] += du[i][j];
                    v[i][j] = hysteresis(u[i][j], v[i][j]);
                    v[j][i] = v[i][j];
                }
            }
            Update::Sequential => {
                for &(i, j) in &neurons {
                    u[i][j] += -(row(&v, i) - 2.0) - (col(&v, j) - 2.0);
                    v[i][j] = hysteresis(u[i][j], v[i][j]);
                    v[j][i] = v[i][j];
                }
            }
        }
        t += 1;
    }
}

/// The number of connected components of the firing moves (every square
/// has two, so each component is one loop), by union-find.
fn loops(p: usize, v: &[Vec<f64>]) -> u32 {
    let mut parent: Vec<usize> = (0..p).collect();
    fn find(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        parent[x] = r;
        r
    }
    for i in 0..p {
        for j in i + 1..p {
            if v[i][j] == 1.0 {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    (0..p).filter(|&i| find(&mut parent, i) == i).count() as u32
}
