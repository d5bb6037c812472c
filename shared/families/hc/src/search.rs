//! The `hc` search loop: a depth-first walk of restricted-growth strings with
//! one bitset pair per column. Nothing here allocates except when a game of
//! the best length is recorded, or when the budget runs out and the rest of
//! the subtree is handed back.
//!
//! Pruning (both sound for every game that reaches the horizon `H`):
//! 1. **Look-ahead**: every number up to `H` must be placed, so if some number
//!    in `(n, H]` is already forbidden in every column, no game below this
//!    node reaches `H`.
//! 2. **Forcing**: a number in `(n, H]` that only one column accepts must go
//!    into that column in every game reaching `H`; so its sums with that
//!    column's members (and with other numbers forced there) are forbidden
//!    there as well. Repeated until nothing new is forced; a number that ends
//!    up forbidden everywhere prunes the node.
//!
//! The search state is therefore *virtual*: each column holds its real members
//! and the numbers forced into it. Deductions made at a node stay true in its
//! whole subtree (a child's games are a subset of its parent's, and the
//! horizon only grows), so the state is passed down incrementally and a child
//! only propagates what its own move changed. Once `n >= H` every forced
//! number has been placed for real and the virtual state is the real one, so
//! games are recognised as ended by the real rules.

use std::sync::atomic::Ordering;

use super::bits::{Bits, Wide};
use super::{HcParams, HcSummary, RgsPrefix, Variant, MAX_LISTED_GAMES};
use orchard_core::Probe;
use orchard_core::{Exploration, ExploreContext, FamilyError, LocalFlags, NodeMeter};

/// How many nodes between two looks at the shared atomics.
const POLL_INTERVAL: u64 = 1 << 14;

/// The largest number a search for `columns` columns can represent.
pub fn capacity(columns: u32) -> u32 {
    match columns {
        0..=4 => <u128 as Bits>::CAPACITY,
        5 => <Wide<4> as Bits>::CAPACITY,
        _ => <Wide<16> as Bits>::CAPACITY,
    }
}

pub fn explore(
    p: &HcParams,
    unit: &RgsPrefix,
    ctx: &ExploreContext<'_>,
) -> Result<Exploration<HcSummary, RgsPrefix>, FamilyError> {
    /// Monomorphises the search for the number of columns and the rule, so
    /// the per-column loops unroll and the state copied per node is minimal.
    macro_rules! by_columns {
        ($rule:ty) => {
            match p.columns {
                1 => Search::<u128, $rule, 1>::run(p, unit, ctx),
                2 => Search::<u128, $rule, 2>::run(p, unit, ctx),
                3 => Search::<u128, $rule, 3>::run(p, unit, ctx),
                4 => Search::<u128, $rule, 4>::run(p, unit, ctx),
                5 => Search::<Wide<4>, $rule, 5>::run(p, unit, ctx),
                6 => Search::<Wide<16>, $rule, 6>::run(p, unit, ctx),
                c => Err(bad_columns(c)),
            }
        };
    }
    match p.variant {
        Variant::Pairs => by_columns!(PairSums),
        Variant::Subsets => by_columns!(SubsetSums),
    }
}

fn bad_columns(c: u32) -> FamilyError {
    FamilyError::Param(orchard_core::ParamError::new(
        "columns",
        format!("must be between 1 and {}, got {c}", super::MAX_COLUMNS),
    ))
}

/// One random walk from `unit` down to a leaf of the tree that [`explore`]
/// would visit with the horizon fixed: at `L` in `--min-length L` mode, at
/// `bound` otherwise (the default mode's horizon only grows as games are
/// found; this walks the tree of a search that knew `bound` from the start).
/// Same replay, look-ahead, forcing and move order as the search, so the
/// walk's nodes are exactly the search's nodes; `pick(n)` chooses a child
/// (uniform in `0..n`).
pub fn probe(
    p: &HcParams,
    unit: &RgsPrefix,
    bound: u64,
    pick: &mut dyn FnMut(u64) -> u64,
) -> Result<Probe, FamilyError> {
    let flags = LocalFlags::with_bound(bound);
    let ctx = flags.context(u64::MAX);
    macro_rules! by_columns {
        ($rule:ty) => {
            match p.columns {
                1 => Search::<u128, $rule, 1>::probe(p, unit, &ctx, pick),
                2 => Search::<u128, $rule, 2>::probe(p, unit, &ctx, pick),
                3 => Search::<u128, $rule, 3>::probe(p, unit, &ctx, pick),
                4 => Search::<u128, $rule, 4>::probe(p, unit, &ctx, pick),
                5 => Search::<Wide<4>, $rule, 5>::probe(p, unit, &ctx, pick),
                6 => Search::<Wide<16>, $rule, 6>::probe(p, unit, &ctx, pick),
                c => Err(bad_columns(c)),
            }
        };
    }
    match p.variant {
        Variant::Pairs => by_columns!(PairSums),
        Variant::Subsets => by_columns!(SubsetSums),
    }
}

/// How a column's forbidden numbers grow when a member is added.
trait Rule {
    /// Adds member `m` to a column with `forbidden` numbers and sum base `grow`.
    fn add<B: Bits>(forbidden: &mut B, grow: &mut B, m: u32);
}

/// `pairs`: `grow` is the member set; a new member forbids its sums with
/// every other member.
struct PairSums;

impl Rule for PairSums {
    #[inline(always)]
    fn add<B: Bits>(forbidden: &mut B, grow: &mut B, m: u32) {
        *forbidden |= grow.shl(m);
        *grow |= B::bit(m);
    }
}

/// `subsets`: `grow` is every sum of one or more members; a new member forbids
/// its sums with all of them.
struct SubsetSums;

impl Rule for SubsetSums {
    #[inline(always)]
    fn add<B: Bits>(forbidden: &mut B, grow: &mut B, m: u32) {
        let shifted = grow.shl(m);
        *forbidden |= shifted;
        *grow |= shifted | B::bit(m);
    }
}

struct Search<'c, 'a, B: Bits, R: Rule, const C: usize> {
    /// Per column: the numbers that may not go there (real and forced
    /// members: pairs of distinct ones for `pairs`, two or more for `subsets`).
    forbidden: [B; C],
    /// Per column: what a new member's sums are formed with (`pairs`: the
    /// members; `subsets`: every sum of one or more members).
    grow: [B; C],
    /// Numbers above the current one already forced into some column.
    forced: B,
    /// Columns used so far (the RGS bound).
    used: usize,
    /// The current game, 0-based columns.
    path: Vec<u8>,
    /// Games shorter than this are not counted; see the module docs.
    horizon: u32,
    /// `Some(L)` in `--min-length` mode: horizon fixed, histogram kept.
    min_length: Option<u32>,
    meter: NodeMeter<'c, 'a>,
    overflow: bool,
    summary: HcSummary,
    rest: Vec<RgsPrefix>,
    rule: std::marker::PhantomData<R>,
}

/// Raises `horizon` to the job-wide best length in `ctx.bound` (none in
/// `--min-length` mode, where the horizon is fixed).
fn raise_horizon(horizon: &mut u32, min_length: Option<u32>, ctx: &ExploreContext<'_>) {
    if min_length.is_none() {
        let shared = ctx.bound.load(Ordering::Relaxed);
        let shared = u32::try_from(shared).unwrap_or(u32::MAX);
        if shared > *horizon {
            *horizon = shared;
        }
    }
}

impl<'c, 'a, B: Bits, R: Rule, const C: usize> Search<'c, 'a, B, R, C> {
    /// The search state at `unit`'s root: the prefix replayed by the real rules.
    fn start(
        p: &HcParams,
        unit: &RgsPrefix,
        ctx: &'c ExploreContext<'a>,
    ) -> Result<Self, FamilyError> {
        let columns = C;
        let mut s = Search::<B, R, C> {
            forbidden: [B::ZERO; C],
            grow: [B::ZERO; C],
            forced: B::ZERO,
            used: 0,
            path: Vec::with_capacity(B::CAPACITY as usize),
            horizon: p.min_length.unwrap_or(0),
            min_length: p.min_length,
            meter: NodeMeter::new(ctx, POLL_INTERVAL),
            overflow: false,
            summary: HcSummary::default(),
            rest: Vec::new(),
            rule: std::marker::PhantomData,
        };
        // Replay the prefix by the real rules: nothing is forced yet, so the
        // state stays the real one until the root's first propagation.
        for (i, &col) in unit.0.iter().enumerate() {
            let col = col as usize;
            let n = i as u32 + 1;
            if n + 1 >= B::CAPACITY {
                return Err(FamilyError::BadUnit(format!(
                    "prefix of {} moves is too long",
                    unit.0.len()
                )));
            }
            if col >= columns || col > s.used {
                return Err(FamilyError::BadUnit(format!(
                    "prefix {} is not a restricted-growth string over {columns} columns",
                    unit.to_digits()
                )));
            }
            if s.forbidden[col].test(n) {
                return Err(FamilyError::BadUnit(format!(
                    "prefix {} is not a legal game: {n} is forbidden in column {}",
                    unit.to_digits(),
                    col + 1
                )));
            }
            s.place(col, n);
            s.path.push(col as u8);
        }
        raise_horizon(&mut s.horizon, s.min_length, ctx);
        Ok(s)
    }

    fn capacity_error() -> FamilyError {
        FamilyError::Capacity(format!(
            "a game of {} columns outgrew {} numbers",
            C,
            B::CAPACITY - 1
        ))
    }

    fn run(
        p: &HcParams,
        unit: &RgsPrefix,
        ctx: &'c ExploreContext<'a>,
    ) -> Result<Exploration<HcSummary, RgsPrefix>, FamilyError> {
        let mut s = Self::start(p, unit, ctx)?;
        s.visit();
        if s.overflow {
            return Err(Self::capacity_error());
        }
        s.summary.nodes = s.meter.finish();
        Ok(Exploration::new(s.summary, s.rest))
    }

    /// Adds number `m` to column `j`'s (virtual) members.
    #[inline(always)]
    fn add(&mut self, j: usize, m: u32) {
        R::add(&mut self.forbidden[j], &mut self.grow[j], m);
    }

    /// Places number `n` in column `col` for real.
    #[inline(always)]
    fn place(&mut self, col: usize, n: u32) {
        // A forced number is already a member of the only column that
        // accepts it, with its sums.
        if !self.forced.test(n) {
            self.add(col, n);
        }
        if col == self.used {
            self.used += 1;
        }
    }

    /// Walks one random path from the unit's root to a leaf, choosing among
    /// the children [`Search::visit`] would visit, with the horizon read
    /// once from `ctx.bound` (or fixed by `--min-length`). Must mirror
    /// `visit` step for step; the tests check that the probes' expected
    /// estimate equals the search's node count exactly.
    fn probe(
        p: &HcParams,
        unit: &RgsPrefix,
        ctx: &'c ExploreContext<'a>,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Result<Probe, FamilyError> {
        let mut s = Self::start(p, unit, ctx)?;
        let mut branching = Vec::new();
        loop {
            let n = s.path.len() as u32;
            let next = n + 1;
            if next + 1 >= B::CAPACITY {
                return Err(Self::capacity_error());
            }
            if s.horizon > n && !s.propagate(n) {
                break;
            }
            let open = (s.used + 1).min(C);
            let mut children = [0usize; C];
            let mut k = 0;
            for col in 0..open {
                if !s.forbidden[col].test(next) {
                    children[k] = col;
                    k += 1;
                }
            }
            if k == 0 {
                break;
            }
            branching.push(k as u32);
            let i = pick(k as u64) as usize;
            assert!(i < k, "pick({k}) returned {i}");
            let col = children[i];
            s.place(col, next);
            s.path.push(col as u8);
        }
        Ok(Probe { branching })
    }

    /// Visits the node for the current `path` (its numbers already placed).
    fn visit(&mut self) {
        let (horizon, min_length) = (&mut self.horizon, self.min_length);
        if !self
            .meter
            .enter_with(|ctx| raise_horizon(horizon, min_length, ctx))
        {
            self.rest.push(RgsPrefix(self.path.clone()));
            return;
        }
        let n = self.path.len() as u32;
        let next = n + 1;
        if next + 1 >= B::CAPACITY {
            self.overflow = true;
            self.meter.stop();
            return;
        }
        if self.horizon > n && !self.propagate(n) {
            return;
        }
        let open = (self.used + 1).min(C);
        let mut extended = false;
        for col in 0..open {
            if self.forbidden[col].test(next) {
                continue;
            }
            extended = true;
            self.path.push(col as u8);
            if self.meter.stopping() {
                self.rest.push(RgsPrefix(self.path.clone()));
            } else {
                let saved = (self.forbidden, self.grow, self.forced, self.used);
                self.place(col, next);
                self.visit();
                (self.forbidden, self.grow, self.forced, self.used) = saved;
            }
            self.path.pop();
        }
        if !extended {
            self.game_ends(n);
        }
    }

    /// The current game cannot be extended: it ends after `n` moves.
    #[cold]
    fn game_ends(&mut self, n: u32) {
        if n < self.horizon {
            return;
        }
        if self.min_length.is_some() {
            *self.summary.histogram.entry(n).or_insert(0) += 1;
        }
        if n > self.summary.best {
            self.summary.best = n;
            self.summary.best_count = 0;
            self.summary.best_games.clear();
            self.summary.best_games_dropped = false;
        }
        if n == self.summary.best {
            // Cannot overflow: bounded by the node budget, itself a u64.
            self.summary.best_count += 1;
            if self.summary.best_games.len() < MAX_LISTED_GAMES {
                self.summary.best_games.push(self.path.clone());
            } else {
                self.summary.best_games_dropped = true;
            }
        }
        if self.min_length.is_none() && n > self.horizon {
            self.horizon = n;
            self.meter
                .ctx()
                .bound
                .fetch_max(u64::from(n), Ordering::Relaxed);
        }
    }

    /// Forces numbers of the window `(n, H]` into the only column that
    /// accepts them, until nothing changes. Returns false if some number of
    /// the window fits in no column: no game below this node reaches `H`.
    #[inline]
    fn propagate(&mut self, n: u32) -> bool {
        // Two empty columns accept any number: nothing can be forbidden or forced.
        if self.used + 2 <= C {
            return true;
        }
        let window = B::range(n + 1, self.horizon.min(B::CAPACITY - 1));
        loop {
            let mut once = B::ZERO;
            let mut twice = B::ZERO;
            for f in self.forbidden.iter() {
                let allowed = window & !*f;
                twice |= once & allowed;
                once |= allowed;
            }
            if !(window & !once).is_zero() {
                return false;
            }
            let single = once & !twice & !self.forced;
            if single.is_zero() {
                return true;
            }
            self.forced |= single;
            for j in 0..C {
                let mut mine = single & !self.forbidden[j];
                while let Some(m) = mine.lowest() {
                    mine = mine.without_lowest();
                    self.add(j, m);
                }
            }
        }
    }
}
