//! Plain second implementations for the tests, written from the paper's
//! text with nothing shared with the fast path but the random numbers:
//!
//! * [`run`]: the procedure of section 3 literally, 1-based indices, nested
//!   `Vec`s, every neuron of the board updated by equations (8)/(9) with
//!   the B-term summed over every `(p, q)` of equation (4), then (10)-(13).
//!   It must reproduce the fast network's trajectory exactly (same board,
//!   same iteration count, same final inputs) for the same run seed.
//! * [`squares_by_distances`] and [`has_one_player_square`]: the squares
//!   of a board found among all 4-cell subsets by their distances, and the
//!   exact check by brute force over them.

use super::network::Outcome;
use super::{run_seed, uniform, Constants, Update};
use orchard_core::estimate::Rng;

/// One run of the network on the `m`-player `n x n` game, literally. Also
/// returns the inputs `U` at the end, flattened as `(i, j, k)`.
pub fn run(
    n: usize,
    m: usize,
    k: Constants,
    update: Update,
    seed: u64,
    run: u64,
    max_iterations: u32,
) -> (Outcome, Vec<f64>) {
    let nn = n as i64;
    // 1-based: u[i][j][k], i, j in 1..=n, k in 1..=m.
    let mut u = vec![vec![vec![0.0f64; m + 1]; n + 1]; n + 1];
    let mut v = vec![vec![vec![0u8; m + 1]; n + 1]; n + 1];
    let mut rng = Rng::new(run_seed(seed, run));
    for i in 1..=n {
        for j in 1..=n {
            for kk in 1..=m {
                u[i][j][kk] = k.u_min * uniform(&mut rng);
            }
        }
    }
    let quota = (n * n / m) as f64;
    let mut t: u32 = 0;
    loop {
        // Step 2, equation (7).
        for i in 1..=n {
            for j in 1..=n {
                let max = (1..=m)
                    .map(|r| u[i][j][r])
                    .fold(f64::NEG_INFINITY, f64::max);
                for kk in 1..=m {
                    v[i][j][kk] = u8::from(u[i][j][kk] > 0.0 && u[i][j][kk] == max);
                }
            }
        }
        // The three sums of equation (5) on V(t).
        let row_sum = |v: &Vec<Vec<Vec<u8>>>, i: usize, j: usize| -> f64 {
            (1..=m).map(|r| f64::from(v[i][j][r])).sum()
        };
        let b_sum = |v: &Vec<Vec<Vec<u8>>>, i: usize, j: usize, kk: usize| -> f64 {
            let mut total = 0.0;
            let inside = |x: i64, y: i64| x >= 1 && x <= nn && y >= 1 && y <= nn;
            for p in -(nn - 1)..=(nn - 1) {
                for q in -(nn - 1)..=(nn - 1) {
                    if (p, q) == (0, 0) {
                        continue;
                    }
                    let (i, j) = (i as i64, j as i64);
                    let cells = [(i + p, j + q), (i - q, j + p), (i + p - q, j + p + q)];
                    if cells.iter().all(|&(x, y)| inside(x, y)) {
                        total += cells
                            .iter()
                            .map(|&(x, y)| f64::from(v[x as usize][y as usize][kk]))
                            .product::<f64>();
                    }
                }
            }
            total
        };
        let player_sum = |v: &Vec<Vec<Vec<u8>>>, kk: usize| -> f64 {
            let mut total = 0.0;
            for p in 1..=n {
                for q in 1..=n {
                    total += f64::from(v[p][q][kk]);
                }
            }
            total
        };
        // Step 7 on V(t): all conflicts resolved?
        let mut resolved = true;
        for i in 1..=n {
            for j in 1..=n {
                if row_sum(&v, i, j) != 1.0 {
                    resolved = false;
                }
                for kk in 1..=m {
                    if v[i][j][kk] == 1 && b_sum(&v, i, j, kk) != 0.0 {
                        resolved = false;
                    }
                }
            }
        }
        for kk in 1..=m {
            if player_sum(&v, kk) != quota {
                resolved = false;
            }
        }
        if resolved {
            let mut board = Vec::with_capacity(n * n);
            for i in 1..=n {
                for j in 1..=n {
                    let p = (1..=m).find(|&r| v[i][j][r] == 1).expect("one player");
                    board.push((p - 1) as u8);
                }
            }
            return (
                Outcome::Converged {
                    iterations: t,
                    board,
                },
                flatten(&u, n, m),
            );
        }
        if t >= max_iterations {
            return (Outcome::Unconverged, flatten(&u, n, m));
        }
        // Step 3: equation (8) if t mod 10 < 2, else (9).
        let boost = if t % 10 < 2 { 3.0 } else { 1.0 };
        let delta = |v: &Vec<Vec<Vec<u8>>>, i: usize, j: usize, kk: usize| -> f64 {
            let s = row_sum(v, i, j);
            let h = if s == 0.0 { 1.0 } else { 0.0 };
            let x = player_sum(v, kk) - quota;
            let g = if x.abs() <= 3.0 {
                x
            } else if x > 3.0 {
                3.0
            } else {
                -3.0
            };
            -k.a * (s - 1.0) - k.b * b_sum(v, i, j, kk) * boost - k.c * g * boost + k.d * h
        };
        // Steps 4 and 5: equations (10), (11), (12).
        let euler = |u: &mut f64, du: f64| {
            *u += du;
            if *u > k.u_max {
                *u = k.u_max;
            }
            if *u < k.u_min {
                *u = k.u_min;
            }
        };
        match update {
            Update::Parallel => {
                let mut du = vec![vec![vec![0.0f64; m + 1]; n + 1]; n + 1];
                for i in 1..=n {
                    for j in 1..=n {
                        for kk in 1..=m {
                            du[i][j][kk] = delta(&v, i, j, kk);
                        }
                    }
                }
                for i in 1..=n {
                    for j in 1..=n {
                        for kk in 1..=m {
                            euler(&mut u[i][j][kk], du[i][j][kk]);
                        }
                    }
                }
                // Step 6: equation (13).
                for i in 1..=n / 2 {
                    for j in 1..=n {
                        for kk in 1..=m {
                            u[n + 1 - i][n + 1 - j][kk] = u[i][j][kk];
                        }
                    }
                }
            }
            Update::Sequential => {
                for i in 1..=n / 2 {
                    for j in 1..=n {
                        let du: Vec<f64> = (0..=m)
                            .map(|kk| if kk == 0 { 0.0 } else { delta(&v, i, j, kk) })
                            .collect();
                        for kk in 1..=m {
                            euler(&mut u[i][j][kk], du[kk]);
                            u[n + 1 - i][n + 1 - j][kk] = u[i][j][kk];
                        }
                        for (x, y) in [(i, j), (n + 1 - i, n + 1 - j)] {
                            let max = (1..=m)
                                .map(|r| u[x][y][r])
                                .fold(f64::NEG_INFINITY, f64::max);
                            for kk in 1..=m {
                                v[x][y][kk] = u8::from(u[x][y][kk] > 0.0 && u[x][y][kk] == max);
                            }
                        }
                    }
                }
            }
        }
        t += 1;
    }
}

fn flatten(u: &[Vec<Vec<f64>>], n: usize, m: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n * n * m);
    for row in u.iter().take(n + 1).skip(1) {
        for cell in row.iter().take(n + 1).skip(1) {
            out.extend_from_slice(&cell[1..=m]);
        }
    }
    out
}

/// Every square of an `n x n` board, as the sorted cells of each 4-subset
/// whose six distances are four equal sides and two diagonals of twice
/// the squared side.
pub fn squares_by_distances(n: usize) -> Vec<[usize; 4]> {
    let cells = n * n;
    let d2 = |a: usize, b: usize| {
        let (ar, ac) = ((a / n) as i64, (a % n) as i64);
        let (br, bc) = ((b / n) as i64, (b % n) as i64);
        (ar - br).pow(2) + (ac - bc).pow(2)
    };
    let mut out = Vec::new();
    for a in 0..cells {
        for b in a + 1..cells {
            for c in b + 1..cells {
                for d in c + 1..cells {
                    let q = [a, b, c, d];
                    let mut ds = Vec::with_capacity(6);
                    for x in 0..4 {
                        for y in x + 1..4 {
                            ds.push(d2(q[x], q[y]));
                        }
                    }
                    ds.sort_unstable();
                    if ds[0] > 0 && ds[0] == ds[3] && ds[4] == ds[5] && ds[4] == 2 * ds[0] {
                        out.push(q);
                    }
                }
            }
        }
    }
    out
}

/// Whether one player holds the four corners of a square of `squares`.
pub fn has_one_player_square(board: &[u8], squares: &[[usize; 4]]) -> bool {
    squares
        .iter()
        .any(|q| q.iter().all(|&c| board[c] == board[q[0]]))
}
