//! One run of Takefuji & Lee's network, the fast way: one neuron per knight
//! move (an edge of the knight's graph), the degree of every square from
//! the firing neurons, and the synchronous update of equation (1) with the
//! hysteresis output. Buffers are allocated once per [`Network`] and reused
//! by every run; nothing allocates per iteration.

use super::{run_seed, Init, Update};
use orchard_core::estimate::Rng;

/// The eight knight moves, `(row, column)`.
pub const MOVES: [(i32, i32); 8] = [
    (-2, -1),
    (-2, 1),
    (-1, -2),
    (-1, 2),
    (1, -2),
    (1, 2),
    (2, -1),
    (2, 1),
];

/// The knight's graph of a `rows x cols` board: square `r * cols + c`, the
/// paper's numbering less one (left to right, top to bottom).
#[derive(Debug, Clone)]
pub struct Graph {
    pub rows: usize,
    pub cols: usize,
    pub squares: usize,
    /// Every knight move `(i, j)` with `i < j`, sorted: the neurons, in the
    /// order of the paper's upper triangular array read row by row.
    pub edges: Vec<(u16, u16)>,
    /// `incident[start[s]..start[s + 1]]`: the edges at square `s`.
    start: Vec<usize>,
    incident: Vec<u32>,
}

impl Graph {
    pub fn new(rows: usize, cols: usize) -> Graph {
        let squares = rows * cols;
        let mut edges = Vec::new();
        for i in 0..squares {
            let (r, c) = ((i / cols) as i32, (i % cols) as i32);
            let mut js: Vec<usize> = MOVES
                .iter()
                .map(|&(dr, dc)| (r + dr, c + dc))
                .filter(|&(rr, cc)| rr >= 0 && cc >= 0 && rr < rows as i32 && cc < cols as i32)
                .map(|(rr, cc)| rr as usize * cols + cc as usize)
                .filter(|&j| j > i)
                .collect();
            js.sort_unstable();
            edges.extend(js.into_iter().map(|j| (i as u16, j as u16)));
        }
        let mut start = Vec::with_capacity(squares + 1);
        let mut incident = Vec::with_capacity(2 * edges.len());
        for s in 0..squares as u16 {
            start.push(incident.len());
            incident.extend(
                edges
                    .iter()
                    .enumerate()
                    .filter(|(_, &(i, j))| i == s || j == s)
                    .map(|(e, _)| e as u32),
            );
        }
        start.push(incident.len());
        Graph {
            rows,
            cols,
            squares,
            edges,
            start,
            incident,
        }
    }

    /// The edges at square `s`.
    #[inline(always)]
    pub fn incident(&self, s: usize) -> &[u32] {
        &self.incident[self.start[s]..self.start[s + 1]]
    }
}

/// How one run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every square has exactly two firing moves at `t = iterations` (a
    /// fixed point: every `dU` is 0 from then on), and they form one
    /// cycle: `tour` lists the squares along it from square 0.
    Tour { iterations: u32, tour: Vec<u16> },
    /// Every square has two firing moves, forming `loops >= 2` cycles.
    Loops { iterations: u32, loops: u32 },
    /// Not every square had two firing moves at `t = max_iterations`.
    Unconverged,
}

/// The state of one network, reused run after run.
pub struct Network<'g> {
    graph: &'g Graph,
    init: Init,
    update: Update,
    /// `Update::Sequential`: the order of the neurons in a sweep.
    order: Vec<u32>,
    u: Vec<f64>,
    v: Vec<u8>,
    deg: Vec<u8>,
    seen: Vec<bool>,
}

impl<'g> Network<'g> {
    pub fn new(graph: &'g Graph, init: Init, update: Update) -> Network<'g> {
        Network {
            graph,
            init,
            update,
            order: (0..graph.edges.len() as u32).collect(),
            u: vec![0.0; graph.edges.len()],
            v: vec![0; graph.edges.len()],
            deg: vec![0; graph.squares],
            seen: vec![false; graph.squares],
        }
    }

    /// The outputs at the end of the last run, one per edge.
    pub fn outputs(&self) -> &[u8] {
        &self.v
    }

    /// The inputs at the end of the last run, one per edge.
    pub fn inputs(&self) -> &[f64] {
        &self.u
    }

    /// Run `run` of the job seeded `seed`, at most `max_iterations` steps.
    pub fn run(&mut self, seed: u64, run: u64, max_iterations: u32) -> Outcome {
        let mut rng = Rng::new(run_seed(seed, run));
        for (u, v) in self.u.iter_mut().zip(self.v.iter_mut()) {
            let (u0, v0) = self.init.draw(&mut rng);
            *u = u0;
            *v = v0;
        }
        if self.update == Update::Sequential {
            // The sweep order: a uniform shuffle (Fisher-Yates, from the
            // last position down), drawn after the start.
            for (x, o) in self.order.iter_mut().enumerate() {
                *o = x as u32;
            }
            for x in (1..self.order.len()).rev() {
                let y = rng.below(x as u64 + 1) as usize;
                self.order.swap(x, y);
            }
        }
        let edges = &self.graph.edges;
        let mut t: u32 = 0;
        loop {
            self.deg.fill(0);
            for (&(i, j), &v) in edges.iter().zip(&self.v) {
                self.deg[i as usize] += v;
                self.deg[j as usize] += v;
            }
            if self.deg.iter().all(|&d| d == 2) {
                return self.classify(t);
            }
            if t >= max_iterations {
                return Outcome::Unconverged;
            }
            match self.update {
                Update::Parallel => {
                    // Equation (1), one Euler step of size 1, every
                    // neuron from V(t): dU_ij = -(sum_k V_ik - 2) -
                    // (sum_k V_kj - 2), then the hysteresis output: 1
                    // above 3, 0 below 0, else unchanged.
                    for ((&(i, j), u), v) in
                        edges.iter().zip(self.u.iter_mut()).zip(self.v.iter_mut())
                    {
                        let du = -(f64::from(self.deg[i as usize]) - 2.0)
                            - (f64::from(self.deg[j as usize]) - 2.0);
                        *u += du;
                        if *u > 3.0 {
                            *v = 1;
                        } else if *u < 0.0 {
                            *v = 0;
                        }
                    }
                }
                Update::Sequential => {
                    // The same, one neuron at a time in the run's order,
                    // each seeing the outputs changed before it.
                    for &e in &self.order {
                        let e = e as usize;
                        let (i, j) = (edges[e].0 as usize, edges[e].1 as usize);
                        let du = -(f64::from(self.deg[i]) - 2.0) - (f64::from(self.deg[j]) - 2.0);
                        self.u[e] += du;
                        let old = self.v[e];
                        if self.u[e] > 3.0 {
                            self.v[e] = 1;
                        } else if self.u[e] < 0.0 {
                            self.v[e] = 0;
                        }
                        if self.v[e] != old {
                            if old == 0 {
                                self.deg[i] += 1;
                                self.deg[j] += 1;
                            } else {
                                self.deg[i] -= 1;
                                self.deg[j] -= 1;
                            }
                        }
                    }
                }
            }
            t += 1;
        }
    }

    /// The cycles of a state where every square has degree 2.
    fn classify(&mut self, iterations: u32) -> Outcome {
        let g = self.graph;
        self.seen.fill(false);
        let mut loops = 0u32;
        let mut tour = Vec::new();
        for s0 in 0..g.squares {
            if self.seen[s0] {
                continue;
            }
            loops += 1;
            let (mut prev, mut cur) = (usize::MAX, s0);
            loop {
                self.seen[cur] = true;
                if loops == 1 {
                    tour.push(cur as u16);
                }
                let next = g
                    .incident(cur)
                    .iter()
                    .filter(|&&e| self.v[e as usize] == 1)
                    .map(|&e| {
                        let (i, j) = g.edges[e as usize];
                        if i as usize == cur {
                            j as usize
                        } else {
                            i as usize
                        }
                    })
                    .find(|&x| x != prev)
                    .expect("degree 2");
                prev = cur;
                cur = next;
                if cur == s0 {
                    break;
                }
            }
        }
        if loops == 1 {
            Outcome::Tour { iterations, tour }
        } else {
            Outcome::Loops { iterations, loops }
        }
    }
}
