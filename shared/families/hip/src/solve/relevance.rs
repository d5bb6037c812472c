//! Which units the root's value may still depend on ([`Relevance`], cached
//! per merged summary in [`RelevanceCache`]), and the [`MootJudge`] answers
//! built on it: `is_moot` cancels units that can no longer matter, and
//! `speculation` holds back young brothers until the eldest is settled (and
//! ranks them by their elders still open). The
//! scheduler asks these questions, not the search, so they stand apart
//! from exploring.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::eval::Eval;
use super::explore::narrow;
use super::game::{Child, Game};
use super::summary::{Key, SolveSummary, SolveUnit, Window};
use super::{Expect, HipSolve};
use crate::search::Pos;
use crate::table::TableEntry;
use orchard_core::{MootJudge, MootUnits};

/// A child as [`Relevance`] sees it: P1's interval, and the position (none
/// when the move ends the game).
type Kid = (i8, i8, Option<(Key, Pos)>);

/// Which positions the root's value may still depend on, for
/// [`HipSolve::is_moot`]; computed once per merged summary (the coordinator
/// asks about every live unit after each merge) by one pass down the
/// recorded tree, level by level (a child has one stone more, so every
/// parent of a level is done before it).
///
/// The root is relevant. A child of a relevant position whose interval is
/// still open is relevant unless its siblings already bound the position at
/// least as well as the child ever could: for the first player to move,
/// `hi(child) <= max lo(sibling)`; for the second, `lo(child) >= min
/// hi(sibling)`; nor is a child whose interval answers the window its
/// parent needs it in (see `windows`; at or below the window's floor, at
/// or above its ceiling), because its parent is needed only in its own
/// window, not exactly. Intervals and windows only narrow as units merge,
/// so such a child can never again change what its parent is needed for; a
/// position every path to which passes through such an edge, or through a
/// settled position, can never change the root's interval, whatever its
/// unit finds. (A parent that appears later, by a split, and needs more of
/// the position makes its own unit of it: see `explore::Harvest`.)
pub(super) struct Relevance {
    /// Every position of the recorded tree (expanding settled ones too).
    reached: HashSet<Key>,
    pub(super) relevant: HashSet<Key>,
    /// The reached positions whose value is known exactly.
    settled: HashSet<Key>,
    /// The window each relevant position is needed in (P1's view, see
    /// [`Window`]): the root's whole range (to the pairing cap), then, from
    /// each relevant parent, the parent's window narrowed by what its
    /// children are known to be (`explore::narrow`), joined over the
    /// parents (the widest any of them needs).
    pub(super) windows: HashMap<Key, (i8, i8)>,
    /// What the recorded tree says of the outcome (see [`Guess`]).
    guess: GuessBasis,
}

impl Relevance {
    /// A unit is moot if the recorded tree reaches it and the root no longer
    /// depends on it (a unit the tree does not reach is never moot).
    fn moot(&self, key: &Key) -> bool {
        self.reached.contains(key) && !self.relevant.contains(key)
    }

    fn compute(game: &Game, summary: &SolveSummary, root_depth: u32) -> Relevance {
        let mut e = Eval::new(game, summary, root_depth);
        let root = Pos::EMPTY;
        let root_key = game.key(&root).0;
        let mut reached = HashSet::from([root_key]);
        let mut relevant = HashSet::from([root_key]);
        let mut level = vec![root];
        let mut kids: Vec<Kid> = Vec::new();
        let mut guess = Guess::new(root_key);
        // Where the second player can pair moves from the empty board, the
        // root is capped at a draw and a unit settles only whether the first
        // player reaches one: "at least a draw" is a draw for the root.
        let paired = game.p1_ceiling(&root) == 0;
        let mut windows = HashMap::from([(root_key, (-1, game.p1_ceiling(&root)))]);
        while !level.is_empty() {
            let mut next = Vec::new();
            for pos in level {
                if game.full(&pos) {
                    continue;
                }
                let key = game.key(&pos).0;
                if !e.expands(&pos, summary.known.get(&key)) {
                    continue;
                }
                let (lo, hi, _) = e.eval(&pos);
                let open = lo < hi && relevant.contains(&key);
                let p1 = game.p1_to_move(&pos);
                let list = game.ordered_moves(&pos, p1);
                if list.len > 0 {
                    let eldest = pos.play(&game.board, list.cells[0] as usize, p1);
                    if !game.full(&eldest) {
                        let (a, b, _) = e.eval(&eldest);
                        let decided = decides(a, b, paired);
                        guess.eldest(
                            key,
                            game.key(&eldest).0,
                            pos.stones() + 1,
                            decided.then_some(a),
                        );
                    }
                }
                kids.clear();
                for (_, child) in game.children(&pos) {
                    kids.push(match child {
                        Child::Loses => {
                            let v = if p1 { -1 } else { 1 };
                            (v, v, None)
                        }
                        Child::Pos(cp) => {
                            let (a, b, _) = e.eval(&cp);
                            let ck = (!game.full(&cp)).then(|| (game.key(&cp).0, *cp));
                            (a, b, ck)
                        }
                    });
                }
                // The best two bounds the children guarantee to the mover
                // (P1's lo for a maximiser, P1's hi for a minimiser), so that
                // each child can be compared with the best of the others.
                let guarantee = |k: &Kid| if p1 { k.0 } else { -k.1 };
                let (mut best, mut best_at, mut second) = (-2i8, usize::MAX, -2i8);
                for (i, k) in kids.iter().enumerate() {
                    let g = guarantee(k);
                    if g > best {
                        second = best;
                        best = g;
                        best_at = i;
                    } else if g > second {
                        second = g;
                    }
                }
                let window = windows
                    .get(&key)
                    .map(|&w| narrow(w, p1, kids.iter().map(|k| (k.0, k.1))));
                for (i, k) in kids.iter().enumerate() {
                    let Some((ck, cp)) = k.2 else { continue };
                    if reached.insert(ck) {
                        next.push(cp);
                    }
                    let others = if i == best_at { second } else { best };
                    let could = if p1 { k.1 } else { -k.0 };
                    if !open || could <= others {
                        continue;
                    }
                    // The window this parent needs the child in; a child
                    // whose interval already answers it (at or below its
                    // floor, at or above its ceiling) cannot change what
                    // this parent needs, however its search ends.
                    let Some((lo, hi)) = window.filter(|w| w.0 < w.1) else {
                        continue;
                    };
                    if k.1 <= lo || k.0 >= hi {
                        continue;
                    }
                    relevant.insert(ck);
                    let w = windows.entry(ck).or_insert((lo, hi));
                    *w = (w.0.min(lo), w.1.max(hi));
                }
            }
            level = next;
        }
        let settled = e
            .memo
            .iter()
            .filter(|(_, v)| v.0 == v.1)
            .map(|(k, _)| *k)
            .collect();
        Relevance {
            reached,
            relevant,
            settled,
            windows,
            guess: guess.basis,
        }
    }
}

/// The job's own guess of the outcome, for scheduling only, when the user
/// gave none (`--expect`): from the eldest children (first in search
/// order) that are settled (or, where the second player can pair moves
/// from the empty board, known to give the first player at least a draw,
/// all that a unit settles there: a draw for the root). The eldest line (the first move at every
/// position from the root) is the search's principal variation: its
/// shallowest settled position gives the guess. Failing that, the values of
/// the settled eldest children anywhere in the recorded tree vote (the
/// first reply in search order is usually the mover's best, so its value is
/// usually its parent's). With nothing settled, a second player's win: the
/// only winner of the standard boards solved beyond 4x5 (5x5, 4x7, 5x6;
/// 4x6 and 3x8 are draws) and of Double 5x6.
///
/// The workers' lemmas go first when they are shallower ([`EldestLemmas`]):
/// the search of the eldest unit settles the deep positions of the eldest
/// line within seconds, long before any unit ends.
struct Guess {
    /// The positions of the eldest line reached so far.
    line: HashSet<Key>,
    basis: GuessBasis,
}

/// What a [`Guess`] is made of, kept with the [`Relevance`] it was found in.
#[derive(Debug, Clone, Copy, Default)]
struct GuessBasis {
    /// The shallowest settled position of the eldest line: stones and value.
    on_line: Option<(u32, i8)>,
    /// Settled eldest children, by value (-1, 0, 1).
    votes: [u32; 3],
}

impl Guess {
    fn new(root: Key) -> Guess {
        Guess {
            line: HashSet::from([root]),
            basis: GuessBasis::default(),
        }
    }

    /// Records the eldest child (`child`, with `stones` stones, its value
    /// if settled) of `parent`.
    fn eldest(&mut self, parent: Key, child: Key, stones: u32, value: Option<i8>) {
        let b = &mut self.basis;
        if self.line.contains(&parent) {
            self.line.insert(child);
            if let Some(v) = value {
                if b.on_line.is_none_or(|(d, _)| stones < d) {
                    b.on_line = Some((stones, v));
                }
            }
        }
        if let Some(v) = value {
            b.votes[(v + 1) as usize] += 1;
        }
    }
}

impl GuessBasis {
    /// The guess, with `lemma` (the shallowest position of the eldest line
    /// a lemma decided, [`EldestLemmas`]) in place of the recorded tree's
    /// when it is shallower.
    fn outcome(&self, lemma: Option<(u32, i8)>) -> Expect {
        let of = |v: i8| match v {
            1 => Expect::First,
            0 => Expect::Draw,
            _ => Expect::Second,
        };
        let on_line = match (self.on_line, lemma) {
            (Some(r), Some(l)) if l.0 < r.0 => Some(l),
            (r, l) => r.or(l),
        };
        if let Some((_, v)) = on_line {
            return of(v);
        }
        // Ties go to the second player, then to a draw.
        let [p2, draw, p1] = self.votes;
        if p1 > p2 && p1 > draw {
            Expect::First
        } else if draw > p2 {
            Expect::Draw
        } else {
            Expect::Second
        }
    }
}

/// Whether P1's interval `lo..=hi` gives the [`Guess`] a value: exact, or,
/// where the second player can pair moves from the empty board (`paired`),
/// at least a draw (all a unit settles there: a draw for the root).
fn decides(lo: i8, hi: i8, paired: bool) -> bool {
    lo == hi || (paired && lo == 0)
}

/// The positions of the eldest line (the first move in search order at
/// every position from the root, to the end of the game), and the
/// shallowest of them the workers' lemmas decided: what the coordinator's
/// job learns from [`orchard_core::LemmaExchange::observe`] for its
/// [`Guess`]. Why: the eldest unit's worker searches the eldest line first
/// and settles it from the deepest position up, a few seconds a level,
/// while no unit of a large board ends for minutes; a lemma of the eldest
/// line at 5 to 12 stones gives the winner on most boards of the ledger
/// (`docs/notes/hip-across-machines.md`, "The guess from lemmas").
///
/// Only the first [`LEMMA_GUESS_PLIES`] positions of the line below the root
/// units count: deeper, the eldest line's value is too often not the root's.
pub(super) struct EldestLemmas {
    /// Each position of the line, by key: its stones.
    line: HashMap<Key, u32>,
    /// Where the second player can pair moves from the empty board, "at
    /// least a draw" decides (as in [`Guess`]).
    paired: bool,
    /// The shallowest position of the line a lemma decided: stones, value.
    shallowest: Mutex<Option<(u32, i8)>>,
}

/// How many plies below the root units a lemma of the eldest line counts
/// for the guess. The eldest line's value turns from the root's where a
/// player's first move in search order is not his best: on Double 5x6
/// (the second player wins) every position of the line from 6 to 20
/// stones is a first player's win, from 5 up the second's; on most other
/// boards of the ledger the line holds the root's value up to 8 stones or
/// more, on Double 4x9 at no depth measured (`hip_one_core eldest`, in
/// `docs/notes/hip-across-machines.md`, "The guess from lemmas"). With
/// root units at 2 stones, 3 plies stop at 5.
pub(super) const LEMMA_GUESS_PLIES: u32 = 3;

impl EldestLemmas {
    /// The eldest line of `game` to `max_stones` stones.
    pub(super) fn new(game: &Game, max_stones: u32) -> EldestLemmas {
        let mut line = HashMap::new();
        let mut pos = Pos::EMPTY;
        while !game.full(&pos) && pos.stones() <= max_stones {
            line.insert(game.key(&pos).0, pos.stones());
            let p1 = game.p1_to_move(&pos);
            let list = game.ordered_moves(&pos, p1);
            if list.len == 0 {
                break;
            }
            pos = pos.play(&game.board, list.cells[0] as usize, p1);
        }
        EldestLemmas {
            line,
            paired: game.p1_ceiling(&Pos::EMPTY) == 0,
            shallowest: Mutex::new(None),
        }
    }

    /// Takes in lemmas (checked ones); true if the shallowest decided
    /// position of the line changed.
    pub(super) fn observe(&self, lemmas: &[TableEntry]) -> bool {
        let mut found: Option<(u32, i8)> = None;
        for e in lemmas {
            let Some(&stones) = self.line.get(&(e.k1, e.k2)) else {
                continue;
            };
            if decides(e.lo, e.hi, self.paired) && found.is_none_or(|(d, _)| stones < d) {
                found = Some((stones, e.lo));
            }
        }
        let Some(found) = found else {
            return false;
        };
        let mut slot = self.shallowest.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_some_and(|(d, _)| d <= found.0) {
            return false;
        }
        *slot = Some(found);
        true
    }

    pub(super) fn shallowest(&self) -> Option<(u32, i8)> {
        *self.shallowest.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The last [`Relevance`] computed for a job, with what it was computed
/// from (compared in full, so a changed summary is never served stale data).
pub(super) struct RelevanceCache {
    nodes: u64,
    snapshot: Vec<(Key, i8, i8, bool)>,
    pub(super) game: Game,
    pub(super) relevance: Relevance,
}

impl RelevanceCache {
    fn matches(&self, s: &SolveSummary) -> bool {
        self.nodes == s.nodes
            && self.snapshot.len() == s.known.len()
            && self
                .snapshot
                .iter()
                .zip(&s.known)
                .all(|(a, (k, v))| a.0 == *k && a.1 == v.lo && a.2 == v.hi && a.3 == v.expanded)
    }
}

impl HipSolve {
    /// The [`Relevance`] of `s`, computed or cached (one unit at a time,
    /// callers such as the tests ask about one summary many times). The
    /// check that the cache holds `s` costs a pass over `s.known`.
    pub(super) fn relevance_of(&self, s: &SolveSummary) -> Arc<RelevanceCache> {
        let mut slot = self.relevance.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = slot.as_ref().filter(|c| c.matches(s)) {
            return Arc::clone(c);
        }
        let p = &self.params;
        let game = Game::new(p);
        let relevance = Relevance::compute(&game, s, p.root_depth());
        let fresh = Arc::new(RelevanceCache {
            nodes: s.nodes,
            snapshot: s
                .known
                .iter()
                .map(|(k, v)| (*k, v.lo, v.hi, v.expanded))
                .collect(),
            game,
            relevance,
        });
        *slot = Some(Arc::clone(&fresh));
        fresh
    }
}

impl MootUnits<HipSolve> for HipSolve {
    fn judge(&self, merged: &SolveSummary) -> Box<dyn MootJudge<SolveUnit>> {
        let cache = self.relevance_of(merged);
        let lemma = self.eldest_lemmas.get().and_then(EldestLemmas::shallowest);
        Box::new(SolveJudge {
            expect: (self.params.expect).unwrap_or_else(|| cache.relevance.guess.outcome(lemma)),
            paired_root: cache.game.p1_ceiling(&Pos::EMPTY) == 0,
            spread: self.params.spread_speculation,
            cache,
        })
    }

    /// See `unsettled`.
    fn still_needed(&self, merged: &SolveSummary) -> Vec<SolveUnit> {
        super::unsettled::still_needed(self, merged)
    }
}

/// [`HipSolve`]'s answers against one merged summary.
struct SolveJudge {
    /// The user's guess (`--expect`), else the job's own ([`Guess`]).
    expect: Expect,
    /// Whether the second player can pair moves from the empty board
    /// (Gardner's bound caps the first player at a draw).
    paired_root: bool,
    /// Rank waiting units by their elders still open
    /// (`--spread-speculation`), else all alike (search order).
    spread: bool,
    cache: Arc<RelevanceCache>,
}

impl MootJudge<SolveUnit> for SolveJudge {
    /// Young brothers wait: a unit waits while, at some position on its
    /// line, the first move in search order leads elsewhere, to a position
    /// not yet settled and still relevant. Searched first, that position
    /// may decide its parent and make the unit moot; once it is settled
    /// without doing so, all its younger siblings may run in parallel.
    /// Only positions whose mover is expected to win make units wait (the
    /// guess is the user's `--expect`, else the job's own, see [`Guess`]):
    /// where the mover is expected to lose, every child has to be searched
    /// anyway, so siblings are searched side by side. A draw where the
    /// second player can pair moves from the empty board is the first
    /// player's to prove: the root is capped at a draw, so only "the first
    /// player reaches a draw" is ever searched for, and it needs one drawing
    /// move of the first player (his younger moves wait) and every move of
    /// the second refuted (side by side), the pattern of a first player's
    /// win. A draw elsewhere needs both players' bounds, every child of
    /// every position: nobody waits.
    ///
    /// With `--spread-speculation` a unit that waits counts every elder
    /// sibling of its line still open at those positions (at least 1): each
    /// is a way for it to become moot. So an idle worker speculates on the
    /// second move of several positions before the third of one. Without
    /// it every waiting unit is 1, and they go in search order, which loses
    /// less when the guess is wrong (`docs/notes/hip-across-machines.md`,
    /// "Speculation spread").
    fn speculation(&self, unit: &SolveUnit) -> u32 {
        let (game, r) = (&self.cache.game, &self.cache.relevance);
        if game.replay(&unit.moves).is_err() {
            return 0; // a malformed unit never waits
        }
        let board = &game.board;
        let open = |p: &Pos, k: &Key| !game.full(p) && !r.settled.contains(k) && !r.moot(k);
        let mut waits = false;
        let mut elders_open = 0u32;
        let mut pos = Pos::EMPTY;
        for &m in &unit.moves {
            let p1 = game.p1_to_move(&pos);
            let mover_expected_to_win = match self.expect {
                Expect::First => p1,
                Expect::Second => !p1,
                Expect::Draw => p1 && self.paired_root,
            };
            let child = pos.play(board, m as usize, p1);
            if mover_expected_to_win {
                let list = game.ordered_moves(&pos, p1);
                let key = game.key(&child).0;
                // Elders by position: symmetric moves are one sibling.
                let mut elders = Vec::new();
                for &c in &list.cells[..list.len] {
                    let elder = pos.play(board, c as usize, p1);
                    let k = game.key(&elder).0;
                    if k == key {
                        break; // the unit's own move, or one symmetric to it
                    }
                    if elders.contains(&k) {
                        continue;
                    }
                    if open(&elder, &k) {
                        if elders.is_empty() && !self.spread {
                            return 1; // all the order of before needs
                        }
                        waits |= elders.is_empty();
                        elders_open += 1;
                    }
                    if !self.spread {
                        break; // only the eldest makes a unit wait
                    }
                    elders.push(k);
                }
            }
            pos = child;
        }
        if waits {
            elders_open.max(1)
        } else {
            0
        }
    }

    /// The unit's window narrowed to what its relevant parents need of its
    /// position now (see `Relevance::windows`). The unit's own window was
    /// what its parent needed when it was made, and a parent only ever
    /// needs less as its children settle, so both hold and so does their
    /// intersection; a parent that appears later makes its own unit of the
    /// position where it needs more (see `explore::Harvest`).
    fn narrow(&self, unit: &SolveUnit) -> Option<SolveUnit> {
        let game = &self.cache.game;
        let pos = game.replay(&unit.moves).ok()?;
        let &(lo, hi) = self.cache.relevance.windows.get(&game.key(&pos).0)?;
        let w = Window::new(lo.max(unit.window.lo), hi.min(unit.window.hi))?;
        (w != unit.window).then(|| SolveUnit {
            moves: unit.moves.clone(),
            window: w,
        })
    }

    fn is_moot(&self, unit: &SolveUnit) -> bool {
        let game = &self.cache.game;
        let Ok(pos) = game.replay(&unit.moves) else {
            return false;
        };
        self.cache.relevance.moot(&game.key(&pos).0)
    }
}
