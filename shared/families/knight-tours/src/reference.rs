//! A plain second implementation for the tests: depth-first search over the
//! knight's paths from a fixed square, a different algorithm from the
//! frontier sweep (it builds every tour one move at a time and never merges
//! anything).
//!
//! Every closed tour passes through square 0; walked from square 0 it gives
//! two directed cycles (one per direction), so the undirected count is half
//! the directed one. The only pruning is plain: a square not yet visited
//! that has fewer than two neighbours left to be joined to (unvisited ones,
//! the current end, square 0) cannot be on the tour.

/// The knight's neighbours of every square of an `rows x cols` board
/// (square `r * cols + c`), as bit masks.
pub fn neighbours(rows: usize, cols: usize) -> Vec<u64> {
    assert!(
        rows * cols <= 64,
        "the reference handles at most 64 squares"
    );
    let mut adj = vec![0u64; rows * cols];
    for r in 0..rows as isize {
        for c in 0..cols as isize {
            for (dr, dc) in [
                (1, 2),
                (2, 1),
                (-1, 2),
                (-2, 1),
                (1, -2),
                (2, -1),
                (-1, -2),
                (-2, -1),
            ] {
                let (rr, cc) = (r + dr, c + dc);
                if rr >= 0 && cc >= 0 && rr < rows as isize && cc < cols as isize {
                    adj[(r * cols as isize + c) as usize] |= 1 << (rr * cols as isize + cc);
                }
            }
        }
    }
    adj
}

struct Dfs<'a> {
    adj: &'a [u64],
    all: u64,
    directed: u64,
    /// Every directed tour from square 0, when listing.
    tours: Option<Vec<Vec<u8>>>,
    path: Vec<u8>,
}

impl Dfs<'_> {
    fn walk(&mut self, end: usize, visited: u64) {
        if visited == self.all {
            if self.adj[end] & 1 != 0 {
                self.directed += 1;
                if let Some(t) = &mut self.tours {
                    t.push(self.path.clone());
                }
            }
            return;
        }
        let mut next = self.adj[end] & !visited;
        while next != 0 {
            let y = next.trailing_zeros() as usize;
            next &= next - 1;
            let vis = visited | 1 << y;
            // Squares that just lost `end` as a possible neighbour.
            let open = !vis | 1 << y | 1;
            let mut ok = self.adj[0] & (!vis | 1 << y) != 0;
            let mut check = self.adj[end] & !vis;
            while ok && check != 0 {
                let z = check.trailing_zeros() as usize;
                check &= check - 1;
                ok = (self.adj[z] & open).count_ones() >= 2;
            }
            if ok {
                self.path.push(y as u8);
                self.walk(y, vis);
                self.path.pop();
            }
        }
    }
}

fn run(rows: usize, cols: usize, list: bool) -> (u64, Option<Vec<Vec<u8>>>) {
    let n = rows * cols;
    if n < 3 {
        return (0, list.then(Vec::new));
    }
    let adj = neighbours(rows, cols);
    let mut d = Dfs {
        adj: &adj,
        all: if n == 64 { u64::MAX } else { (1 << n) - 1 },
        directed: 0,
        tours: list.then(Vec::new),
        path: vec![0],
    };
    d.walk(0, 1);
    (d.directed, d.tours)
}

/// The number of undirected closed knight's tours of a `rows x cols` board.
pub fn count(rows: usize, cols: usize) -> u64 {
    let (directed, _) = run(rows, cols, false);
    assert!(directed.is_multiple_of(2), "directed tours come in pairs");
    directed / 2
}

/// Every undirected closed tour, as the squares (`r * cols + c`) from square
/// 0, in the direction whose second square is the smaller of the two
/// neighbours of square 0 on the tour.
pub fn tours(rows: usize, cols: usize) -> Vec<Vec<u8>> {
    let (_, t) = run(rows, cols, true);
    t.unwrap()
        .into_iter()
        .filter(|t| t[1] < t[t.len() - 1])
        .collect()
}
