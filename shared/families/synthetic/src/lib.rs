//! `synthetic`: a seeded random tree whose exact size and checksum are
//! known, for measuring the cluster rather than a search.
//!
//! Real families cost CPU per node and their answers take a reference run
//! to check. This one costs nothing to explore (a budgeted exploration is
//! O(depth x branching), see [`tree`]), its node count is `--nodes` by
//! construction, and its checksum (a sum of per-node hashes that does not
//! depend on where the tree was cut) is known in advance: so a job's answer
//! says by itself whether the cluster lost or double-counted a subtree
//! ([`SyntheticReport::exact`]). Its subtree sizes are heavy-tailed (a few
//! subtrees hold most of the work at every depth, like the game trees of
//! `hc` and `hip`), which is what makes dynamic splitting matter.
//!
//! Time: the scale harness (`scale/`) simulates workers that wait a virtual
//! time per node after exploring; a real worker can be made to spend real
//! time with `--node-cost-ns` (it sleeps, polling its stop flag, so it
//! honours split requests and shutdown like a real search), which makes the
//! family usable for fault tests with real processes.

pub mod reference;
pub mod tree;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use orchard_core::merge::checked_add;
use orchard_core::{
    pieces_within, Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError,
    SearchFamily,
};

pub use tree::{Count, Node, Tree, MAX_BRANCHING, MAX_ROOT_UNITS, MAX_TAIL, SHALLOW_LEVELS};

/// Parameters of a `synthetic` job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct SyntheticParams {
    /// Seed of the tree's shape.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The tree's exact number of nodes.
    #[arg(long)]
    pub nodes: u64,
    /// Heaviness of the subtree sizes' tail, 0..=4: children share their
    /// parent's nodes in proportion to u^-tail (0: evenly; 1: a Pareto law
    /// of index 1; 2, the default: the largest 1% of the subtrees 6 levels
    /// down hold 88% of the nodes, as in hc's h(4)).
    #[arg(long, default_value_t = 2)]
    pub tail: u32,
    /// Most children of a node (2..=64).
    #[arg(long, default_value_t = 8)]
    pub branching: u32,
    /// Top subtrees, the job's first units.
    #[arg(long, default_value_t = 1)]
    pub root_units: u64,
    /// Real time a worker spends per node (it sleeps, checking for stop
    /// requests); 0: none (the scale harness adds virtual time instead).
    #[arg(long, default_value_t = 0)]
    pub node_cost_ns: u64,
}

/// A unit: the nodes of the subtree at `root` (child indices, the first
/// among the root units) from the node `root ++ from` on, in depth-first
/// order (`from` empty: the whole subtree). The nodes before it, and its
/// ancestors below `root`, belong to other units.
///
/// Why not only subtrees: a heavy-tailed tree cut after a budget of nodes
/// leaves its later siblings at each of dozens of levels, most of them
/// tiny. Handed back as subtrees, that is 20-40 units per budget of work,
/// each a lease, a report and a commit at the coordinator. Handed back as
/// one piece per level (the later siblings of the level as one range, a
/// piece whose `from` is one index below its root), it is at most one unit
/// per level. (The rest as ONE piece resuming where the walk stopped, the
/// fewest units, starved a thousand workers of work: bench/scale.sh 1000
/// --rtt-ms 50 ran at 8.3% efficiency that way and 13.3% fanned out per
/// level; see docs/notes/scale.md, "Coordinator throughput". `Tree::explore`
/// keeps both.)
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Piece {
    pub root: Vec<u32>,
    pub from: Vec<u32>,
}

impl Piece {
    /// The whole subtree at `root`.
    pub fn subtree(root: Vec<u32>) -> Piece {
        Piece {
            root,
            from: Vec::new(),
        }
    }
}

/// What exploring some units found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntheticSummary {
    pub nodes: u64,
    /// The sum of the visited nodes' own hashes, wrapping.
    pub checksum: u64,
}

/// The job's answer as JSON, with the figures a check needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntheticReport {
    pub family: String,
    pub nodes: u64,
    pub expected_nodes: u64,
    pub checksum: String,
    pub expected_checksum: String,
    /// The merged count and checksum are the tree's: nothing was lost or
    /// counted twice.
    pub exact: bool,
}

/// The `synthetic` family: one job of it.
#[derive(Debug, Clone)]
pub struct Synthetic {
    tree: Tree,
    node_cost: Duration,
}

/// How long a real-time exploration sleeps between two looks at its stop
/// flag.
const POLL: Duration = Duration::from_millis(10);

impl Synthetic {
    /// The job's tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Explores `unit` within `budget` nodes with no time cost: what a
    /// worker of any speed would have visited after `budget` nodes. The
    /// rest is handed back as one piece per level (see [`Piece`]).
    pub fn explore_budget(
        &self,
        unit: &Piece,
        budget: u64,
        stop: &dyn Fn() -> bool,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        self.explore_pieces(unit, budget, stop, true)
    }

    /// Explores the first `nodes` nodes of `unit`, as a search asked to
    /// stop after them would have: the rest fanned out (see [`Piece`]).
    pub fn explore_cut(
        &self,
        unit: &Piece,
        nodes: u64,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        self.explore_pieces(unit, nodes, &|| false, true)
    }

    /// [`Synthetic::explore_cut`] with the rest cut into at least `pieces`
    /// units where the tree allows (the k-way hand-back, see
    /// [`Tree::refine`]): what a search stopped after `nodes` nodes by a
    /// split request for `pieces` idle workers hands back.
    pub fn explore_cut_into(
        &self,
        unit: &Piece,
        nodes: u64,
        pieces: u32,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        let x = self.explore_cut(unit, nodes)?;
        self.refine(x, pieces)
    }

    /// [`Synthetic::explore_cut_into`] for a unit of `budget` nodes: the
    /// rest cut into the pieces asked for, but none smaller than the piece
    /// floor (`orchard_core::pieces_within`): what a worker stopped by a
    /// split request hands back.
    pub fn explore_split(
        &self,
        unit: &Piece,
        nodes: u64,
        pieces: u32,
        budget: u64,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        let x = self.explore_cut(unit, nodes)?;
        self.refine_within(x, pieces, budget)
    }

    /// A split's rest cut into `pieces` units, or fewer where the rest is
    /// too small for pieces of at least the floor of a `budget`.
    fn refine_within(
        &self,
        x: Exploration<SyntheticSummary, Piece>,
        pieces: u32,
        budget: u64,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        let Exploration::Split { rest, .. } = &x else {
            return Ok(x);
        };
        if pieces as usize <= rest.len() {
            return Ok(x);
        }
        let mut rest_nodes = 0u64;
        for p in rest {
            // A hint's arithmetic: saturating is exact enough.
            rest_nodes = rest_nodes.saturating_add(
                self.tree
                    .piece_size(&p.root, &p.from)
                    .map_err(FamilyError::BadUnit)?,
            );
        }
        self.refine(x, pieces_within(pieces, rest_nodes, budget))
    }

    /// A split's rest cut into at least `pieces` units where it can be.
    fn refine(
        &self,
        x: Exploration<SyntheticSummary, Piece>,
        pieces: u32,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        match x {
            Exploration::Split { explored, rest } if (pieces as usize) > rest.len() => {
                let spans = rest.into_iter().map(|p| (p.root, p.from)).collect();
                let (visited, spans) = self
                    .tree
                    .refine(spans, pieces as usize)
                    .map_err(FamilyError::BadUnit)?;
                Ok(Exploration::new(
                    SyntheticSummary {
                        nodes: explored.nodes + visited.nodes,
                        checksum: explored.checksum.wrapping_add(visited.checksum),
                    },
                    spans
                        .into_iter()
                        .map(|(root, from)| Piece { root, from })
                        .collect(),
                ))
            }
            x => Ok(x),
        }
    }

    fn explore_pieces(
        &self,
        unit: &Piece,
        budget: u64,
        stop: &dyn Fn() -> bool,
        fan_out: bool,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        let (count, rest) = self
            .tree
            .explore(&unit.root, &unit.from, budget, stop, fan_out)
            .map_err(FamilyError::BadUnit)?;
        Ok(Exploration::new(
            SyntheticSummary {
                nodes: count.nodes,
                checksum: count.checksum,
            },
            rest.into_iter()
                .map(|(root, from)| Piece { root, from })
                .collect(),
        ))
    }

    /// The answer as its JSON structure.
    pub fn answer(&self, s: &SyntheticSummary) -> SyntheticReport {
        let expected = self.tree.expected_checksum();
        SyntheticReport {
            family: Self::NAME.to_string(),
            nodes: s.nodes,
            expected_nodes: self.tree.nodes,
            checksum: format!("{:016x}", s.checksum),
            expected_checksum: format!("{expected:016x}"),
            exact: s.nodes == self.tree.nodes && s.checksum == expected,
        }
    }
}

impl SearchFamily for Synthetic {
    const NAME: &'static str = "synthetic";
    const ABOUT: &'static str =
        "a seeded heavy-tailed random tree of known size, for scale and fault tests";

    type Params = SyntheticParams;
    type Unit = Piece;
    type Summary = SyntheticSummary;

    fn new(p: SyntheticParams, _: &Host) -> Result<Self, ParamError> {
        if p.nodes == 0 {
            return Err(ParamError::new("nodes", "must be at least 1"));
        }
        if p.root_units == 0 || p.root_units > p.nodes.min(MAX_ROOT_UNITS) {
            return Err(ParamError::new(
                "root-units",
                format!(
                    "must be between 1 and min(--nodes, {MAX_ROOT_UNITS}), got {}",
                    p.root_units
                ),
            ));
        }
        if !(2..=MAX_BRANCHING).contains(&p.branching) {
            return Err(ParamError::new(
                "branching",
                format!("must be between 2 and {MAX_BRANCHING}, got {}", p.branching),
            ));
        }
        if p.tail > MAX_TAIL {
            return Err(ParamError::new(
                "tail",
                format!("must be between 0 and {MAX_TAIL}, got {}", p.tail),
            ));
        }
        if p.node_cost_ns > 1_000_000_000 {
            return Err(ParamError::new(
                "node-cost-ns",
                "must be at most 1000000000 (one second a node)",
            ));
        }
        Ok(Synthetic {
            tree: Tree::new(p.seed, p.nodes, p.tail, p.branching, p.root_units),
            node_cost: Duration::from_nanos(p.node_cost_ns),
        })
    }

    fn root_units(&self) -> Vec<Piece> {
        (0..self.tree.top().len() as u32)
            .map(|i| Piece::subtree(vec![i]))
            .collect()
    }

    /// Without a node cost: at once. With one: the nodes the budget allows
    /// are planned, then paid for in real time; a stop request in the
    /// meantime cuts the exploration to the nodes paid for so far. A stop
    /// that asks for k pieces (`ExploreContext::pieces`) gets the rest in
    /// at least k units where the tree allows (`Tree::refine`), fewer if
    /// the rest is too small for k pieces of at least the piece floor
    /// (`orchard_core::pieces_within`: an eighth of the budget).
    fn explore(
        &self,
        unit: &Piece,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<SyntheticSummary, Piece>, FamilyError> {
        let stop = || ctx.stop_requested();
        if self.node_cost.is_zero() {
            let mut x = self.explore_budget(unit, ctx.budget, &stop)?;
            if ctx.stop_requested() {
                x = self.refine_within(x, ctx.pieces_wanted(), ctx.budget)?;
            }
            ctx.progress.store(nodes_of(&x), Ordering::Relaxed);
            return Ok(x);
        }
        let never = || false;
        let planned = self.explore_budget(unit, ctx.budget, &never)?;
        let total = nodes_of(&planned);
        let cost = self.node_cost.as_nanos();
        let started = Instant::now();
        loop {
            let paid = (started.elapsed().as_nanos() / cost).min(u128::from(total)) as u64;
            ctx.progress.store(paid, Ordering::Relaxed);
            if paid >= total {
                return Ok(planned);
            }
            if stop() {
                // What was paid for (the same nodes, in the same order, as
                // the plan's first ones), and the rest handed back.
                // Cut into as many pieces as the split request asked for,
                // none below the piece floor.
                return self.explore_split(unit, paid.max(1), ctx.pieces_wanted(), ctx.budget);
            }
            let left = self.node_cost * (total - paid).min(u32::MAX as u64) as u32;
            std::thread::sleep(left.min(POLL));
        }
    }

    fn merge(
        &self,
        into: &mut SyntheticSummary,
        other: SyntheticSummary,
    ) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "synthetic node count")?;
        into.checksum = into.checksum.wrapping_add(other.checksum);
        Ok(())
    }

    fn nodes(s: &SyntheticSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &SyntheticSummary) -> FamilyReport {
        let answer = self.answer(s);
        let text = vec![
            format!(
                "synthetic tree of {} nodes (seed {}, tail {}, branching {}): {} counted, checksum {} ({})",
                self.tree.nodes,
                self.tree.seed,
                self.tree.tail,
                self.tree.branching,
                s.nodes,
                answer.checksum,
                if answer.exact { "exact" } else { "NOT exact" }
            ),
            format!("nodes explored: {}", s.nodes),
        ];
        FamilyReport {
            json: serde_json::to_value(&answer).expect("the report serialises"),
            text,
            results_lines: Vec::new(),
        }
    }

    /// The root's path, and where the piece starts below it ("0.3" is a
    /// whole subtree, "0.3 from 2.1" the rest of it from its node 2.1 on).
    fn unit_label(&self, u: &Piece) -> String {
        let dotted = |p: &[u32]| {
            p.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(".")
        };
        if u.from.is_empty() {
            dotted(&u.root)
        } else {
            format!("{} from {}", dotted(&u.root), dotted(&u.from))
        }
    }
}

fn nodes_of(x: &Exploration<SyntheticSummary, Piece>) -> u64 {
    match x {
        Exploration::Finished(s) | Exploration::Split { explored: s, .. } => s.nodes,
    }
}
