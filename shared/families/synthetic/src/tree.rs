//! The synthetic tree: every node's subtree size and checksum are decided
//! top-down from the seed and the node's path, so both are known in O(1)
//! once the node is reached, and a budgeted depth-first exploration costs
//! O(depth x branching), whatever the budget.
//!
//! **Sizes.** The job's `nodes` are split among the `root_units` top
//! subtrees; a node of size `S > 1` splits its `S - 1` descendants among
//! `min(S - 1, branching)` children. Each child gets one node, and the rest
//! is shared in proportion to weights `u^-tail` (`u` uniform in (0, 1), one
//! per child, from the node's key): a Pareto law of index `1 / tail`, so a
//! few children hold most of their parent's subtree, at every level. The
//! shares are integer (`u128` products, floors, the remainder to the
//! heaviest child), so the sizes always add up exactly; the weights use
//! only `+`, `*` and `/` of `f64`, which IEEE 754 rounds the same way on
//! every machine (no `powf`, whose libm may differ).
//!
//! **Checksums.** Every subtree also gets a pseudo-random 64-bit checksum
//! `C` from its key, and a node's own hash is `C(node) - sum C(children)`
//! (wrapping). The sum of the own hashes over a subtree telescopes to `C` of
//! its root, so a whole subtree is counted in O(1) and the sum over the
//! nodes an exploration visited does not depend on where the tree was cut:
//! merged over a job it is the sum of the top subtrees' `C`, and a subtree
//! counted twice or lost changes it (with probability 1 - 2^-64).

use serde::{Deserialize, Serialize};

/// The most children a node may have.
pub const MAX_BRANCHING: u32 = 64;
/// The heaviest tail accepted (weights `u^-4`).
pub const MAX_TAIL: u32 = 4;
/// The most root units.
pub const MAX_ROOT_UNITS: u64 = 1 << 20;

/// The shape of a tree: what its parameters fix, and its top subtrees
/// (the root units), computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub seed: u64,
    pub nodes: u64,
    pub tail: u32,
    pub branching: u32,
    top: Vec<Node>,
}

/// A node reached in the tree: its key, subtree size and subtree checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub key: u64,
    pub size: u64,
    pub checksum: u64,
}

/// What exploring some nodes found: how many, and the sum of their own
/// hashes (wrapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    pub nodes: u64,
    pub checksum: u64,
}

impl Count {
    /// A whole subtree.
    pub fn subtree(node: &Node) -> Count {
        Count {
            nodes: node.size,
            checksum: node.checksum,
        }
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mix.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Domain separators: the same key never feeds two uses.
const ROOT: u64 = 0x0000_0000_726f_6f74; // "root"
const CHILD: u64 = 0x0000_0063_6869_6c64; // "child"
const WEIGHT: u64 = 0x0000_7765_6967_6874; // "weight"
const CHECKSUM: u64 = 0x0000_0063_6865_636b; // "check"

impl Tree {
    /// The tree of `nodes` nodes in `root_units` top subtrees (the caller
    /// checks `1 <= root_units <= nodes`, `branching >= 2`, `tail <= MAX_TAIL`).
    pub fn new(seed: u64, nodes: u64, tail: u32, branching: u32, root_units: u64) -> Tree {
        let mut tree = Tree {
            seed,
            nodes,
            tail,
            branching,
            top: Vec::new(),
        };
        tree.top = tree.nodes_of(mix(seed ^ ROOT), nodes, root_units as usize);
        tree
    }

    /// The top subtrees: the root units, in order.
    pub fn top(&self) -> &[Node] {
        &self.top
    }

    /// The sum of every node's own hash: the checksum a complete
    /// exploration of the job merges to.
    pub fn expected_checksum(&self) -> u64 {
        self.top
            .iter()
            .fold(0u64, |a, c| a.wrapping_add(c.checksum))
    }

    /// The children of `node`, in search order (empty for a leaf): at most
    /// `branching`, their sizes adding up to `node.size - 1`.
    pub fn children(&self, node: &Node) -> Vec<Node> {
        let k = (node.size - 1).min(u64::from(self.branching)) as usize;
        if k == 0 {
            return Vec::new();
        }
        self.nodes_of(node.key, node.size - 1, k)
    }

    /// `k` nodes of `total` nodes in all below the node `key`.
    fn nodes_of(&self, key: u64, total: u64, k: usize) -> Vec<Node> {
        self.split(key, total, k)
            .into_iter()
            .enumerate()
            .map(|(i, size)| {
                let key = mix(key ^ mix(CHILD.wrapping_add(i as u64)));
                Node {
                    key,
                    size,
                    checksum: mix(key ^ CHECKSUM),
                }
            })
            .collect()
    }

    /// `total` nodes split among `k <= total` children of the node `key`:
    /// one each, the rest in proportion to heavy-tailed weights.
    fn split(&self, key: u64, total: u64, k: usize) -> Vec<u64> {
        debug_assert!(k as u64 <= total && k > 0);
        let weights: Vec<f64> = (0..k)
            .map(|i| {
                let bits = mix(key ^ mix(WEIGHT.wrapping_add(i as u64))) >> 11;
                // Uniform in (0, 1), never 0.
                let u = (bits as f64 + 0.5) / (1u64 << 53) as f64;
                let inv = 1.0 / u;
                (0..self.tail).fold(1.0, |w, _| w * inv)
            })
            .collect();
        let sum: f64 = weights.iter().sum();
        // Integer weights: the shares below are exact integer arithmetic.
        let q: Vec<u64> = weights
            .iter()
            .map(|w| (w / sum * (1u64 << 40) as f64) as u64)
            .collect();
        let q_sum: u128 = q.iter().map(|&x| u128::from(x)).sum::<u128>().max(1);
        let spare = u128::from(total - k as u64);
        let mut sizes: Vec<u64> = q
            .iter()
            .map(|&x| 1 + (spare * u128::from(x) / q_sum) as u64)
            .collect();
        let given: u64 = sizes.iter().sum();
        let heaviest = (0..k)
            .max_by_key(|&i| (q[i], std::cmp::Reverse(i)))
            .unwrap();
        sizes[heaviest] += total - given;
        sizes
    }

    /// The node at `path` (child indices, the first among the root
    /// units), checked.
    pub fn locate(&self, path: &[u32]) -> Result<Node, String> {
        let (&first, below) = path
            .split_first()
            .ok_or("the empty path is above the root units, not a unit")?;
        let mut node = *self
            .top
            .get(first as usize)
            .ok_or_else(|| format!("root unit {first} of {}", self.top.len()))?;
        for (depth, &i) in below.iter().enumerate() {
            let children = self.children(&node);
            node = *children.get(i as usize).ok_or_else(|| {
                format!(
                    "child {i} at depth {} of a node with {} children",
                    depth + 1,
                    children.len()
                )
            })?;
        }
        Ok(node)
    }

    /// Explores the piece of the tree at `root` that starts at the node
    /// `root ++ from` (see [`Piece`](crate::Piece)) depth first, visiting at
    /// most `budget` nodes (at least one, unless `stop` says so first).
    /// Returns what was visited and the unvisited rest of the piece, as
    /// pieces in search order: when the budget ran out, one piece that
    /// resumes where the walk stopped (or, with `fan_out`, one piece per
    /// level of the path, see `fan_out`); when `stop` asked, always fanned out, since a
    /// stop is how the coordinator asks for work for idle workers. A child
    /// that fits in the budget left is counted whole without being entered.
    pub fn explore(
        &self,
        root: &[u32],
        from: &[u32],
        budget: u64,
        stop: &dyn Fn() -> bool,
        fan_out: bool,
    ) -> Result<(Count, Vec<Span>), String> {
        let node = self.locate(root)?;
        let mut start = root.to_vec();
        start.extend_from_slice(from);
        self.locate(&start)?;
        let mut walk = Walk {
            tree: self,
            path: Vec::new(),
            left: budget.max(1),
            count: Count::default(),
            stopped: None,
            stop,
        };
        walk.resume(node, from);
        let rest = match walk.stopped {
            None => Vec::new(),
            Some((at, requested)) if requested || fan_out => self.fan_out(root, node, &at),
            Some((at, _)) => vec![(root.to_vec(), at)],
        };
        Ok((walk.count, rest))
    }

    /// The rest of a piece at `root` (the node `node`) whose walk stopped
    /// before the node `root ++ at`, as one piece per level: the stopped
    /// node and its later siblings, then the later siblings of each of its
    /// ancestors below `root`, deepest first (the search order). Each is a
    /// range of siblings, so a cut hands back at most one piece per level
    /// of the path, however many siblings each level has.
    fn fan_out(&self, root: &[u32], node: Node, at: &[u32]) -> Vec<Span> {
        let Some((&last, _)) = at.split_last() else {
            return vec![(root.to_vec(), Vec::new())];
        };
        if at.len() > SHALLOW_LEVELS + 1 {
            // Below the shallowest levels, the rest of the node at depth
            // SHALLOW_LEVELS on the path as ONE piece resuming at `at`,
            // then a range per level above it.
            let (above, below) = at.split_at(SHALLOW_LEVELS);
            let mut deep_root = root.to_vec();
            deep_root.extend_from_slice(above);
            let mut pieces = vec![(deep_root, below.to_vec())];
            let mut n = node;
            let mut parent = root.to_vec();
            let mut ranges = Vec::with_capacity(SHALLOW_LEVELS);
            for &i in above {
                let children = self.children(&n);
                if i + 1 < children.len() as u32 {
                    ranges.push((parent.clone(), vec![i + 1]));
                }
                parent.push(i);
                n = children[i as usize];
            }
            pieces.extend(ranges.into_iter().rev());
            return pieces;
        }
        self.ranges_per_level(root, node, at, last)
    }

    /// The piece at `root` (the node `node`) from `root ++ at` on as one
    /// range of siblings per level of `at` (non-empty, `last` its last
    /// index), deepest first: the stopped node and its later siblings,
    /// then the later siblings of each of its ancestors below `root`.
    fn ranges_per_level(&self, root: &[u32], node: Node, at: &[u32], last: u32) -> Vec<Span> {
        // The number of children of each node on the path, root first.
        let mut counts = Vec::with_capacity(at.len());
        let mut n = node;
        for &i in at {
            let children = self.children(&n);
            counts.push(children.len() as u32);
            n = children[i as usize];
        }
        let mut pieces = Vec::with_capacity(at.len());
        let mut parent = root.to_vec();
        parent.extend_from_slice(&at[..at.len() - 1]);
        pieces.push((parent.clone(), vec![last]));
        for level in (0..at.len() - 1).rev() {
            parent.pop();
            let next = at[level] + 1;
            if next < counts[level] {
                pieces.push((parent.clone(), vec![next]));
            }
        }
        pieces
    }
}

impl Tree {
    /// The number of nodes of the piece at `root` from `root ++ from` on
    /// (see [`Piece`](crate::Piece)): the subtree at `root ++ from` and the
    /// later siblings of it and of each of its ancestors below `root`.
    pub fn piece_size(&self, root: &[u32], from: &[u32]) -> Result<u64, String> {
        let mut node = self.locate(root)?;
        let mut total = 0u64;
        for (depth, &i) in from.iter().enumerate() {
            let children = self.children(&node);
            let Some(&child) = children.get(i as usize) else {
                return Err(format!(
                    "child {i} at depth {} below the piece's root, of a node with {} children",
                    depth + 1,
                    children.len()
                ));
            };
            total += children[i as usize + 1..]
                .iter()
                .map(|c| c.size)
                .sum::<u64>();
            node = child;
        }
        Ok(total + node.size)
    }

    /// The k-way hand-back: the pieces `rest` (a unit's unexplored rest, in
    /// search order) cut further until there are at least `k` of them or
    /// none can be cut (every piece one node), the largest first, so that
    /// `k` idle workers get one piece each of similar size. Returns the
    /// nodes visited to do it (a whole subtree is cut below its root, which
    /// is counted here rather than handed back) and the pieces, still in
    /// search order and covering exactly the nodes of `rest` less those.
    /// Cuts: a range of siblings `(p, [i])` into the subtree `p.i` and the
    /// range `(p, [i + 1])`; a subtree into its root (visited) and the range
    /// of its children; a deeper piece into one range per level of its path
    /// (`ranges_per_level`, as `fan_out` cuts a shallow path). Costs O(k x depth x
    /// branching).
    pub fn refine(&self, rest: Vec<Span>, k: usize) -> Result<(Count, Vec<Span>), String> {
        let mut visited = Count::default();
        let mut sizes = rest
            .iter()
            .map(|(root, from)| self.piece_size(root, from))
            .collect::<Result<Vec<u64>, String>>()?;
        let mut pieces = rest;
        // Each step adds a piece, or makes one piece's path shorter or its
        // subtree smaller: bounded, but capped anyway.
        let mut steps = 0usize;
        while pieces.len() < k && steps < 64 * k + 4096 {
            steps += 1;
            let Some((at, &size)) = sizes
                .iter()
                .enumerate()
                .max_by_key(|&(i, s)| (*s, std::cmp::Reverse(i)))
            else {
                break;
            };
            if size <= 1 {
                break;
            }
            let (root, from) = pieces[at].clone();
            let parts: Vec<Span> = match from.len() {
                0 => {
                    // A whole subtree: its root visited, its children a range.
                    let node = self.locate(&root)?;
                    let children = self.children(&node);
                    let own = children
                        .iter()
                        .fold(node.checksum, |h, c| h.wrapping_sub(c.checksum));
                    visited.nodes += 1;
                    visited.checksum = visited.checksum.wrapping_add(own);
                    vec![(root, vec![0])]
                }
                1 => {
                    let node = self.locate(&root)?;
                    let n = self.children(&node).len() as u32;
                    let mut first = root.clone();
                    first.push(from[0]);
                    if from[0] + 1 < n {
                        vec![(first, Vec::new()), (root, vec![from[0] + 1])]
                    } else {
                        vec![(first, Vec::new())]
                    }
                }
                n => {
                    // One range per level of the path, deepest first.
                    let node = self.locate(&root)?;
                    self.ranges_per_level(&root, node, &from, from[n - 1])
                }
            };
            let part_sizes = parts
                .iter()
                .map(|(r, f)| self.piece_size(r, f))
                .collect::<Result<Vec<u64>, String>>()?;
            pieces.splice(at..=at, parts);
            sizes.splice(at..=at, part_sizes);
        }
        Ok((visited, pieces))
    }
}

/// How many levels of a cut path, from the piece's root down, hand back
/// their later siblings as a range each; the rest below them goes back as
/// one piece resuming where the walk stopped. Ranges at every level (a
/// path is 20-40 levels deep) made most units tiny: at 1,000 workers and
/// 50 ms a unit averaged 0.15 s of work against 0.3-0.5 s of round trips,
/// commit and lease wait (docs/notes/scale.md, "Fan-out, unit size, the
/// table at 60 s"), while the
/// heavy-tailed tree keeps most of a rest's work at the shallowest levels,
/// which stay shareable as ranges. The deep rest is one unit that split
/// requests can cut again.
pub const SHALLOW_LEVELS: usize = 4;

/// A piece of the tree as `(root, from)`: the subtree at `root` from its
/// node `root ++ from` on (see [`Piece`](crate::Piece)).
pub type Span = (Vec<u32>, Vec<u32>);

struct Walk<'a> {
    tree: &'a Tree,
    /// The path from the piece's root to the node being visited.
    path: Vec<u32>,
    left: u64,
    count: Count,
    /// Where the walk stopped (the first node not visited, from the
    /// piece's root), and whether `stop` asked for it.
    stopped: Option<(Vec<u32>, bool)>,
    stop: &'a dyn Fn() -> bool,
}

impl Walk<'_> {
    /// Visits the nodes of `node`'s subtree from the node at `from` on;
    /// false once stopped.
    fn resume(&mut self, node: Node, from: &[u32]) -> bool {
        let Some((&first, deeper)) = from.split_first() else {
            return self.visit(node);
        };
        let children = self.tree.children(&node);
        for (i, child) in children.into_iter().enumerate().skip(first as usize) {
            self.path.push(i as u32);
            let go = if i == first as usize {
                self.resume(child, deeper)
            } else {
                self.visit(child)
            };
            self.path.pop();
            if !go {
                return false;
            }
        }
        true
    }

    /// Visits `node`'s subtree; false once stopped.
    fn visit(&mut self, node: Node) -> bool {
        let requested = self.left > 0 && (self.stop)();
        if self.left == 0 || requested {
            self.stopped = Some((self.path.clone(), requested));
            return false;
        }
        if node.size <= self.left {
            self.left -= node.size;
            self.add(Count::subtree(&node));
            return true;
        }
        // Enter the node: count it alone, then its children in order.
        let children = self.tree.children(&node);
        let own = children
            .iter()
            .fold(node.checksum, |h, c| h.wrapping_sub(c.checksum));
        self.left -= 1;
        self.add(Count {
            nodes: 1,
            checksum: own,
        });
        for (i, child) in children.into_iter().enumerate() {
            self.path.push(i as u32);
            let go = self.visit(child);
            self.path.pop();
            if !go {
                return false;
            }
        }
        true
    }

    fn add(&mut self, c: Count) {
        self.count.nodes += c.nodes;
        self.count.checksum = self.count.checksum.wrapping_add(c.checksum);
    }
}
