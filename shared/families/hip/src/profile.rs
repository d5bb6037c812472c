//! Exact counting of draws without visiting boards one by one: a dynamic
//! programme over the cells in column-major order whose state is what the
//! coloured cells still mean for the uncoloured ones.
//!
//! After cells `0..=t` of the order are coloured, the future only depends on
//! * for each square with one or two coloured cells: whether those are all
//!   one colour `x` (status `1 + x`) or not (status 0, the square can no
//!   longer be monochromatic);
//! * for each uncoloured cell: the set of colours it may not take because
//!   some square through it has its other three cells coloured alike;
//! * (playable counts only) how many stones of each colour were placed.
//!
//! Colourings with the same state have the same completions, so the DP keeps
//! one count per state. Each field gets a slot in a fixed bit layout for its
//! lifetime (slots are reused once a square closes or a cell is coloured, and
//! cleared so that equal states have equal keys). Column-major order closes
//! squares early on wide boards (a square spans at most `rows` columns).
//!
//! Colour symmetry, twice. A unit is a restricted-growth prefix (colours
//! appear in order 0, 1, 2, ...); the family multiplies its count by the
//! size of its orbit under colour permutations (see `draws.rs`). And inside
//! the DP every state is relabelled by [`Profile::canon`] before it is
//! stored: permuting the colours of a state (statuses, forbidden sets and
//! stone counts together) does not change how many completions it has —
//! the rules are colour-blind, and the playable condition ("the counts are a
//! permutation of the playable counts") is too — so states that differ by a
//! permutation share one entry. That divides the widest layers by up to
//! `k!` (about 5.5 for three colours on 5x5).
//!
//! Counting playable boards keeps the stone counts in the state (a histogram
//! per state), which multiplies the widest layer by about five on 5x5; it is
//! a separate unit, so the plain count never pays for it. States that can no
//! longer reach playable counts (a colour exceeds `q + 1`, too many colours
//! at `q + 1`, or too few cells left to bring every colour to `q`) are
//! dropped.

use std::sync::atomic::Ordering;

use super::layer::{Count, Layer};

use super::board::Board;
use super::dfs::{playable_target, MAX_COLORS};
use orchard_core::{ExploreContext, FamilyError};

/// Bits of a stone count (counts are at most 64).
const COUNT_BITS: usize = 7;

/// Most 64-bit words in a state key.
pub const MAX_WORDS: usize = 4;

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// First coloured cell of a square: status becomes `1 + x`.
    New,
    /// Second cell: the status stays `1 + x` only if it was.
    Cont,
    /// Third cell: the slot closes; if still `1 + x`, the fourth cell may not
    /// take `x`.
    Close,
}

#[derive(Debug, Clone, Copy)]
struct Op {
    kind: Kind,
    /// Bit offset of the square's status.
    off: u16,
    /// For `Close`: bit offset of the fourth cell's forbidden-colour set.
    f_off: u16,
}

#[derive(Debug, Clone, Default)]
struct Step {
    /// Bit offset of this cell's forbidden-colour set, if it has one.
    f_check: Option<u16>,
    ops: Vec<Op>,
}

/// The DP's layout for one board, colour count and mode.
pub struct Profile {
    k: usize,
    /// The cells in column-major order.
    pub order: Vec<usize>,
    steps: Vec<Step>,
    sbits: usize,
    /// First word of the stone counts (playable mode).
    count_off: Option<usize>,
    target: [u32; MAX_COLORS],
    pub words: usize,
    /// Words of square statuses, then of forbidden sets.
    sq_words: usize,
    f_words: usize,
    /// The lowest bit of every status field of a word, and of every
    /// forbidden-set field.
    status_lows: u64,
    f_lows: u64,
}

/// What one DP run measured, besides its count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measure {
    /// States times colours, summed over the steps.
    pub nodes: u64,
    /// The most states one layer held.
    pub widest: usize,
    /// The most bytes the live layers held at once (two, or three while
    /// the next one doubles).
    pub peak_bytes: usize,
}

/// Assigns slots to lifetimes `[start, end]` (inclusive steps) greedily; a
/// slot freed at step `s` is reusable from step `s + 1`.
fn allocate(intervals: &[(usize, usize)], steps: usize) -> (Vec<usize>, usize) {
    let mut slot = vec![usize::MAX; intervals.len()];
    let mut free: Vec<usize> = Vec::new();
    let mut used = 0;
    let mut starting: Vec<Vec<usize>> = vec![Vec::new(); steps];
    let mut ending: Vec<Vec<usize>> = vec![Vec::new(); steps];
    for (i, &(s, e)) in intervals.iter().enumerate() {
        starting[s].push(i);
        ending[e].push(i);
    }
    for t in 0..steps {
        for &i in &starting[t] {
            slot[i] = free.pop().unwrap_or_else(|| {
                used += 1;
                used - 1
            });
        }
        for &i in &ending[t] {
            free.push(slot[i]);
        }
    }
    (slot, used)
}

/// Bit offset of slot `i` of width `w` in a region starting at word `base`,
/// packing whole fields into each word.
fn offset(base_word: usize, i: usize, w: usize) -> usize {
    let per = 64 / w;
    (base_word + i / per) * 64 + (i % per) * w
}

/// The lowest bit of every whole `w`-bit field of a word.
fn lows(w: usize) -> u64 {
    (0..64 / w).fold(0, |m, i| m | 1 << (i * w))
}

fn words_for(slots: usize, w: usize) -> usize {
    slots.div_ceil(64 / w)
}

#[inline(always)]
fn get<const W: usize>(key: &[u64; W], off: usize, w: usize) -> u64 {
    (key[off / 64] >> (off % 64)) & ((1u64 << w) - 1)
}

#[inline(always)]
fn set<const W: usize>(key: &mut [u64; W], off: usize, w: usize, v: u64) {
    let m = ((1u64 << w) - 1) << (off % 64);
    key[off / 64] = (key[off / 64] & !m) | (v << (off % 64));
}

impl Profile {
    /// The layout, or `None` if a state does not fit [`MAX_WORDS`] words.
    pub fn new(board: &Board, k: usize, playable: bool) -> Option<Profile> {
        let n = board.n;
        let order: Vec<usize> = (0..board.cols)
            .flat_map(|c| (0..board.rows).map(move |r| r * board.cols + c))
            .collect();
        let mut step_of = [0usize; 64];
        for (t, &cell) in order.iter().enumerate() {
            step_of[cell] = t;
        }
        // Each square: its cells sorted by step.
        let sq_steps: Vec<[usize; 4]> = board
            .squares
            .iter()
            .map(|&sq| {
                let mut v = [0usize; 4];
                let mut m = sq;
                for slot in v.iter_mut() {
                    *slot = step_of[m.trailing_zeros() as usize];
                    m &= m - 1;
                }
                v.sort_unstable();
                v
            })
            .collect();
        let sq_life: Vec<(usize, usize)> = sq_steps.iter().map(|s| (s[0], s[2])).collect();
        // A cell's forbidden set lives from the first close of a square it
        // completes to its own step.
        let mut f_start = vec![usize::MAX; n];
        for s in &sq_steps {
            f_start[s[3]] = f_start[s[3]].min(s[2]);
        }
        let f_cells: Vec<usize> = (0..n).filter(|&t| f_start[t] != usize::MAX).collect();
        let f_life: Vec<(usize, usize)> = f_cells.iter().map(|&t| (f_start[t], t)).collect();
        let (sq_slot, sq_used) = allocate(&sq_life, n);
        let (f_slot, f_used) = allocate(&f_life, n);
        let sbits = (usize::BITS - k.leading_zeros()) as usize; // holds 0..=k
        let sq_words = words_for(sq_used, sbits);
        let f_words = words_for(f_used, k);
        let count_words = if playable {
            words_for(k, COUNT_BITS)
        } else {
            0
        };
        let words = (sq_words + f_words + count_words).max(1);
        if words > MAX_WORDS {
            return None;
        }
        let mut f_off_of_step = vec![None; n];
        for (i, &t) in f_cells.iter().enumerate() {
            f_off_of_step[t] = Some(offset(sq_words, f_slot[i], k) as u16);
        }
        let mut steps = vec![Step::default(); n];
        for (t, step) in steps.iter_mut().enumerate() {
            step.f_check = f_off_of_step[t];
        }
        for (i, s) in sq_steps.iter().enumerate() {
            let off = offset(0, sq_slot[i], sbits) as u16;
            steps[s[0]].ops.push(Op {
                kind: Kind::New,
                off,
                f_off: 0,
            });
            steps[s[1]].ops.push(Op {
                kind: Kind::Cont,
                off,
                f_off: 0,
            });
            let f_off = f_off_of_step[s[3]].expect("a completing cell has a forbidden set");
            steps[s[2]].ops.push(Op {
                kind: Kind::Close,
                off,
                f_off,
            });
        }
        Some(Profile {
            k,
            order,
            steps,
            sbits,
            count_off: playable.then_some(sq_words + f_words),
            target: playable_target(n, k),
            words,
            sq_words,
            f_words,
            status_lows: lows(sbits),
            f_lows: lows(k),
        })
    }

    /// Relabels the colours of `key` by their first appearance among the
    /// square statuses (slot order): the colour of the first monochromatic
    /// status becomes 0, the next new one 1, ...; colours without a status
    /// keep their relative order after those. Statuses, forbidden sets and
    /// stone counts are permuted together, so the result is in the state's
    /// orbit under colour permutations and has as many completions. States
    /// of one orbit whose statuses show at least `k - 1` colours get the
    /// same key; the others may not, which costs merges, not exactness.
    #[inline(always)]
    fn canon<const W: usize>(&self, key: &mut [u64; W]) {
        let k = self.k;
        let mut first = [u32::MAX; MAX_COLORS];
        let mut found = 0;
        for (w, &word) in key.iter().enumerate().take(self.sq_words) {
            if word == 0 {
                continue;
            }
            for (x, pos) in first.iter_mut().enumerate().take(k) {
                if *pos == u32::MAX {
                    let e = self.status_eq(word, x as u64 + 1);
                    if e != 0 {
                        *pos = (w * 64) as u32 + e.trailing_zeros();
                        found += 1;
                    }
                }
            }
            if found + 1 >= k {
                break;
            }
        }
        // perm[x]: the new label of colour x (a stable sort by first place).
        let mut by_place = [0usize; MAX_COLORS];
        for (i, slot) in by_place.iter_mut().enumerate().take(k) {
            *slot = i;
        }
        by_place[..k].sort_by_key(|&x| first[x]);
        let mut perm = [0usize; MAX_COLORS];
        let mut identity = true;
        for (label, &x) in by_place.iter().enumerate().take(k) {
            perm[x] = label;
            identity &= x == label;
        }
        if identity {
            return;
        }
        for word in key.iter_mut().take(self.sq_words) {
            if *word == 0 {
                continue;
            }
            let mut out = 0;
            for (x, &px) in perm.iter().enumerate().take(k) {
                let e = self.status_eq(*word, x as u64 + 1);
                let code = px as u64 + 1;
                let mut b = 0;
                while code >> b != 0 {
                    if code >> b & 1 == 1 {
                        out |= e << b;
                    }
                    b += 1;
                }
            }
            *word = out;
        }
        for word in key.iter_mut().skip(self.sq_words).take(self.f_words) {
            let mut out = 0;
            for (x, &px) in perm.iter().enumerate().take(k) {
                out |= ((*word >> x) & self.f_lows) << px;
            }
            *word = out;
        }
        if let Some(base) = self.count_off {
            let mut c = [0u64; MAX_COLORS];
            for (x, cx) in c.iter_mut().enumerate().take(k) {
                *cx = get(key, offset(base, x, COUNT_BITS), COUNT_BITS);
            }
            for x in 0..k {
                set(key, offset(base, perm[x], COUNT_BITS), COUNT_BITS, c[x]);
            }
        }
    }

    /// The lowest bit of each status field of `word` that equals `v`.
    #[inline(always)]
    fn status_eq(&self, word: u64, v: u64) -> u64 {
        let t = word ^ (v * self.status_lows);
        let mut any = t;
        for b in 1..self.sbits {
            any |= t >> b;
        }
        !any & self.status_lows
    }

    /// The state after colouring the step-`t` cell `x`, or `None` if that
    /// completes a monochromatic square (or, counting playable boards, puts
    /// more stones of some colour than a playable board can hold).
    #[inline(always)]
    fn step<const W: usize>(&self, t: usize, key: &[u64; W], x: usize) -> Option<[u64; W]> {
        self.step_with(t, key, x, true)
    }

    #[inline(always)]
    fn step_with<const W: usize>(
        &self,
        t: usize,
        key: &[u64; W],
        x: usize,
        counts: bool,
    ) -> Option<[u64; W]> {
        let st = &self.steps[t];
        let mut nk = *key;
        let k = self.k;
        if let Some(f) = st.f_check {
            let f = f as usize;
            if get(key, f, k) >> x & 1 == 1 {
                return None;
            }
            set(&mut nk, f, k, 0);
        }
        let mono = 1 + x as u64;
        for op in &st.ops {
            let off = op.off as usize;
            match op.kind {
                Kind::New => set(&mut nk, off, self.sbits, mono),
                Kind::Cont => {
                    if get(key, off, self.sbits) != mono {
                        set(&mut nk, off, self.sbits, 0);
                    }
                }
                Kind::Close => {
                    let s = get(key, off, self.sbits);
                    set(&mut nk, off, self.sbits, 0);
                    if s == mono {
                        let f = op.f_off as usize;
                        let cur = get(&nk, f, k);
                        set(&mut nk, f, k, cur | 1 << x);
                    }
                }
            }
        }
        if let Some(base) = self.count_off.filter(|_| counts) {
            // Stones per colour: at most q + 1, at most r colours at q + 1
            // (q, r: the playable split), and enough cells left to bring
            // every colour to q, so that only boards whose counts are a
            // permutation of the playable counts survive to the end.
            let big = self.target[0];
            let small = self.target[k - 1];
            let r = (0..k).filter(|&j| self.target[j] == big).count();
            let small_only = small == big; // r == 0: all hold q
            let off = offset(base, x, COUNT_BITS);
            let c = get(&nk, off, COUNT_BITS) as u32 + 1;
            if c > big {
                return None;
            }
            set(&mut nk, off, COUNT_BITS, u64::from(c));
            let mut at_big = 0;
            let mut short = 0;
            for j in 0..k {
                let cj = get(&nk, offset(base, j, COUNT_BITS), COUNT_BITS) as u32;
                at_big += usize::from(cj == big);
                short += small.saturating_sub(cj) as usize;
            }
            if (!small_only && at_big > r) || short > self.order.len() - t - 1 {
                return None;
            }
        }
        Some(nk)
    }

    /// Whether `prefix` colours its cells without a monochromatic square.
    pub fn valid_prefix(&self, prefix: &[u8]) -> bool {
        let mut key = [0u64; MAX_WORDS];
        for (t, &x) in prefix.iter().enumerate() {
            if t >= self.order.len() || x as usize >= self.k {
                return false;
            }
            match self.step_with(t, &key, x as usize, false) {
                Some(nk) => key = nk,
                None => return false,
            }
        }
        true
    }

    /// The number of completions of `prefix` (colours of the first cells of
    /// [`Profile::order`]) without a monochromatic square (and, in playable
    /// mode, with stone counts a permutation of the playable ones).
    /// `Stopped`: the node budget ran out, a stop was requested, or the next
    /// layer would not fit `memory_limit` bytes.
    pub fn count(
        &self,
        prefix: &[u8],
        ctx: &ExploreContext<'_>,
        memory_limit: Option<usize>,
    ) -> Result<Outcome, FamilyError> {
        // Every count is at most the colourings of the free cells.
        let free = self.order.len().saturating_sub(prefix.len());
        let narrow = (self.k as u64).checked_pow(free as u32).is_some();
        match (self.words, narrow) {
            (0..=1, true) => self.count_w::<1, u64>(prefix, ctx, memory_limit),
            (2, true) => self.count_w::<2, u64>(prefix, ctx, memory_limit),
            (3, true) => self.count_w::<3, u64>(prefix, ctx, memory_limit),
            (_, true) => self.count_w::<4, u64>(prefix, ctx, memory_limit),
            (0..=2, false) => self.count_w::<2, u128>(prefix, ctx, memory_limit),
            (_, false) => self.count_w::<4, u128>(prefix, ctx, memory_limit),
        }
    }

    fn count_w<const W: usize, V: Count>(
        &self,
        prefix: &[u8],
        ctx: &ExploreContext<'_>,
        memory_limit: Option<usize>,
    ) -> Result<Outcome, FamilyError> {
        let n = self.order.len();
        if prefix.len() > n {
            return Err(FamilyError::BadUnit(format!(
                "prefix of {} cells, board has {n}",
                prefix.len()
            )));
        }
        // The prefix must be a partial draw; in playable mode it may still
        // have too many stones of a colour, and then counts nothing.
        let mut key = [0u64; W];
        for (t, &x) in prefix.iter().enumerate() {
            let x = x as usize;
            key = match (x < self.k)
                .then(|| self.step_with(t, &key, x, false))
                .flatten()
            {
                Some(nk) => nk,
                None => {
                    return Err(FamilyError::BadUnit(format!(
                        "prefix {prefix:?} is not a colouring without monochromatic squares"
                    )))
                }
            };
        }
        let mut m = Measure::default();
        let mut key = [0u64; W];
        for (t, &x) in prefix.iter().enumerate() {
            key = match self.step(t, &key, x as usize) {
                Some(nk) => nk,
                None => return Ok(Outcome::Done(0, m)),
            };
        }
        let overflow = || FamilyError::Overflow("hip-draws profile count");
        let mut cur: Layer<W, V> = Layer::with_states(1);
        let mut next: Layer<W, V> = Layer::with_states(1);
        cur.add(key, V::ONE).ok_or_else(overflow)?;
        for t in prefix.len()..n {
            if t > prefix.len() && (m.nodes >= ctx.budget.max(1) || ctx.stop_requested()) {
                return Ok(Outcome::Stopped(Stop::Budget, m));
            }
            // The next layer is sized like this one (the widest layers grow
            // by less than 1.5x a step), within the memory limit; it grows if
            // it must.
            let mut guess = cur.len() + cur.len() / 2;
            if let Some(limit) = memory_limit {
                while guess > 16 && cur.bytes() + Layer::<W, V>::bytes_for(guess) > limit {
                    guess /= 2;
                }
            }
            next.reset(guess);
            m.peak_bytes = m.peak_bytes.max(cur.bytes() + next.bytes());
            for (i, (key, c)) in cur.iter().enumerate() {
                // A wide layer takes minutes: look for a stop (shutdown,
                // cancellation) inside it too.
                if i % (1 << 16) == 0 && i > 0 && ctx.stop_requested() {
                    return Ok(Outcome::Stopped(Stop::Budget, m));
                }
                for x in 0..self.k {
                    if let Some(mut nk) = self.step(t, key, x) {
                        self.canon(&mut nk);
                        if next.grows_on_add() {
                            let need = cur.bytes() + 3 * next.bytes();
                            if memory_limit.is_some_and(|limit| need > limit) {
                                return Ok(Outcome::Stopped(Stop::Memory, m));
                            }
                            m.peak_bytes = m.peak_bytes.max(need);
                        }
                        next.add(nk, c).ok_or_else(overflow)?;
                    }
                }
            }
            m.nodes += (cur.len() * self.k) as u64;
            m.widest = m.widest.max(next.len());
            ctx.progress.store(m.nodes, Ordering::Relaxed);
            std::mem::swap(&mut cur, &mut next);
        }
        let mut total: u128 = 0;
        for (_, c) in cur.iter() {
            total = total.checked_add(c.wide()).ok_or_else(overflow)?;
        }
        Ok(Outcome::Done(total, m))
    }
}

/// Why a DP stopped before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The node budget ran out or a stop was requested.
    Budget,
    /// Two layers would not fit the memory limit.
    Memory,
}

/// How a DP run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done(u128, Measure),
    Stopped(Stop, Measure),
}
