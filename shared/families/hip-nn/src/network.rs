//! One run of Funabiki & Takefuji's network, the fast way: flat arrays, a
//! bitmask of firing players per cell, the B-term from the precomputed
//! squares through each cell, and only the upper half of the board updated
//! (the lower half is overwritten by the symmetry step (13) right after, so
//! computing it would be wasted). Buffers are allocated once per
//! [`Network`] and reused by every run; nothing allocates per iteration.
//!
//! Every floating-point operation on a neuron that survives a step is the
//! one of the paper's procedure, in its order: `reference::run` computes
//! the whole board literally and must give the same trajectory bit for bit
//! (the tests compare them).

use super::geometry::Geometry;
use super::{run_seed, uniform, Constants, Update};
use orchard_core::estimate::Rng;

/// Most players: one bit each in a cell's firing mask.
pub const MAX_PLAYERS: usize = 16;

/// How one run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `V(t)` had no conflict at `t = iterations`: every cell held by
    /// exactly one player, `n^2/m` cells each, no one-player square by the
    /// network's own B-term. `board[cell]` is the player holding it.
    Converged { iterations: u32, board: Vec<u8> },
    /// Still conflicts at `t = max_iterations`.
    Unconverged,
}

/// The state of one network, reused run after run.
pub struct Network<'g> {
    geo: &'g Geometry,
    m: usize,
    k: Constants,
    /// `u[cell * m + k]`: the input `U_ijk`.
    u: Vec<f64>,
    /// `fire[cell]`: bit `k` set if `V_ijk = 1`.
    fire: Vec<u16>,
    /// `b[k]`: the B-term's sum for the cell being updated.
    b: [u32; MAX_PLAYERS],
    /// `counts[k]`: the cells where `V_ijk = 1`.
    counts: [i64; MAX_PLAYERS],
    /// Cells of the upper half (rows `0..n/2`).
    top: usize,
    update: Update,
    /// Whether a conflict-free state needs `n^2/m` cells per player (the
    /// crate's reading, always set by the family; cleared only by the
    /// `readings` example, which measures the other reading).
    pub stop_counts: bool,
}

impl<'g> Network<'g> {
    pub fn new(geo: &'g Geometry, players: usize, k: Constants, update: Update) -> Network<'g> {
        assert!((1..=MAX_PLAYERS).contains(&players));
        Network {
            geo,
            m: players,
            k,
            u: vec![0.0; geo.cells * players],
            fire: vec![0; geo.cells],
            b: [0; MAX_PLAYERS],
            counts: [0; MAX_PLAYERS],
            top: geo.n / 2 * geo.n,
            update,
            stop_counts: true,
        }
    }

    /// The inputs `U` at the end of the last run (`u[cell * m + k]`).
    pub fn inputs(&self) -> &[f64] {
        &self.u
    }

    /// Run `run` of the job seeded `seed`: at most `max_iterations` Euler
    /// steps.
    pub fn run(&mut self, seed: u64, run: u64, max_iterations: u32) -> Outcome {
        let m = self.m;
        let k = self.k;
        let quota = (self.geo.cells / m) as i64;
        // Step 1: U(0) uniform in (U_min, 0], neuron by neuron in the order
        // (i, j, k).
        let mut rng = Rng::new(run_seed(seed, run));
        for u in self.u.iter_mut() {
            *u = k.u_min * uniform(&mut rng);
        }
        let mut t: u32 = 0;
        loop {
            // Step 2: V(t), equation (7).
            self.counts[..m].fill(0);
            self.fire.fill(0);
            let mut all_single = true;
            for cell in 0..self.geo.cells {
                let f = self.firing(cell);
                all_single &= f.count_ones() == 1;
                self.set_fire(cell, f);
            }
            // Step 7 (done first on V(t)): stop when no conflict is left.
            let counts_ok = !self.stop_counts || self.counts[..m].iter().all(|&c| c == quota);
            if all_single && counts_ok && self.no_square() {
                let board = self.fire.iter().map(|f| f.trailing_zeros() as u8).collect();
                return Outcome::Converged {
                    iterations: t,
                    board,
                };
            }
            if t >= max_iterations {
                return Outcome::Unconverged;
            }
            let boost = if t % 10 < 2 { 3.0 } else { 1.0 };
            match self.update {
                Update::Parallel => {
                    // Steps 3-5 on the upper half, all from V(t); then step 6.
                    for cell in 0..self.top {
                        self.step(cell, boost, quota);
                    }
                    for cell in 0..self.top {
                        self.mirror(cell);
                    }
                }
                Update::Sequential => {
                    // Cell by cell: steps 3-6 for the cell and its mirror
                    // image, whose outputs (and the players' counts) change
                    // at once, before the next cell is updated.
                    for cell in 0..self.top {
                        self.step(cell, boost, quota);
                        self.mirror(cell);
                        let twin = self.geo.cells - 1 - cell;
                        for c in [cell, twin] {
                            let f = self.firing(c);
                            self.set_fire(c, f);
                        }
                    }
                }
            }
            t += 1;
        }
    }

    /// Equation (7) for `cell`: the players tying at a positive maximum.
    #[inline(always)]
    fn firing(&self, cell: usize) -> u16 {
        let m = self.m;
        let us = &self.u[cell * m..cell * m + m];
        let max = us.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut f = 0u16;
        if max > 0.0 {
            for (r, &x) in us.iter().enumerate() {
                if x == max {
                    f |= 1 << r;
                }
            }
        }
        f
    }

    /// Sets the outputs of `cell`, keeping the players' counts.
    #[inline(always)]
    fn set_fire(&mut self, cell: usize, f: u16) {
        let old = self.fire[cell];
        let mut x = old & !f;
        while x != 0 {
            self.counts[x.trailing_zeros() as usize] -= 1;
            x &= x - 1;
        }
        let mut x = f & !old;
        while x != 0 {
            self.counts[x.trailing_zeros() as usize] += 1;
            x &= x - 1;
        }
        self.fire[cell] = f;
    }

    /// Steps 3-5 for the neurons of `cell`: `dU` by equation (8) or (9)
    /// from the current outputs and counts, the Euler step, the clipping.
    #[inline(always)]
    fn step(&mut self, cell: usize, boost: f64, quota: i64) {
        let (m, k) = (self.m, self.k);
        let f = self.fire[cell];
        self.b[..m].fill(0);
        for o in self.geo.others(cell) {
            let mut common =
                self.fire[o[0] as usize] & self.fire[o[1] as usize] & self.fire[o[2] as usize];
            while common != 0 {
                self.b[common.trailing_zeros() as usize] += 1;
                common &= common - 1;
            }
        }
        let s = f64::from(f.count_ones());
        let h = if f == 0 { 1.0 } else { 0.0 };
        for r in 0..m {
            let du = -k.a * (s - 1.0)
                - k.b * f64::from(self.b[r]) * boost
                - k.c * g(self.counts[r] - quota) * boost
                + k.d * h;
            let u = &mut self.u[cell * m + r];
            *u += du;
            if *u > k.u_max {
                *u = k.u_max;
            }
            if *u < k.u_min {
                *u = k.u_min;
            }
        }
    }

    /// Step 6, equation (13), for one cell of the upper half: its image
    /// through the centre, `(n-1-i, n-1-j)` = `cells - 1 - (i n + j)`, takes
    /// its inputs.
    #[inline(always)]
    fn mirror(&mut self, cell: usize) {
        let m = self.m;
        let (lo, hi) = (cell * m, (self.geo.cells - 1 - cell) * m);
        let (head, tail) = self.u.split_at_mut(hi);
        tail[..m].copy_from_slice(&head[lo..lo + m]);
    }

    /// No player holds all four corners of a square, by the network's own
    /// B-term: no firing neuron whose other three corners fire for the same
    /// player (only called when every cell has exactly one firing neuron).
    fn no_square(&self) -> bool {
        (0..self.geo.cells).all(|cell| {
            let f = self.fire[cell];
            self.geo.others(cell).iter().all(|o| {
                f & self.fire[o[0] as usize] & self.fire[o[1] as usize] & self.fire[o[2] as usize]
                    == 0
            })
        })
    }
}

/// The paper's `g`: `x` clipped to `[-3, 3]`.
#[inline(always)]
pub fn g(x: i64) -> f64 {
    x.clamp(-3, 3) as f64
}
