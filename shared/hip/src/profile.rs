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
//! Colour symmetry: a unit is a restricted-growth prefix (colours appear in
//! order 0, 1, 2, ...); the family multiplies its count by the size of its
//! orbit under colour permutations (see `draws.rs`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;

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
    /// Start of the stone counts (playable mode).
    count_off: Option<usize>,
    target: [u32; MAX_COLORS],
    pub words: usize,
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
            count_off: playable.then_some((sq_words + f_words) * 64),
            target: playable_target(n, k),
            words,
        })
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
            // Stones per colour: at most q + 1, and at most r colours at q + 1
            // (q, r: the playable split), so that only boards whose counts are
            // a permutation of the playable counts survive to the end.
            let big = self.target[0];
            let r = (0..k).filter(|&j| self.target[j] == big).count();
            let small_only = self.target[k - 1] == big; // r == 0: all hold q
            let off = base + x * COUNT_BITS;
            let c = get(&nk, off, COUNT_BITS) as u32 + 1;
            if c > big {
                return None;
            }
            if c == big && !small_only {
                let at_big = (0..k)
                    .filter(|&j| get(&nk, base + j * COUNT_BITS, COUNT_BITS) as u32 == big)
                    .count();
                if at_big + 1 > r {
                    return None;
                }
            }
            set(&mut nk, off, COUNT_BITS, u64::from(c));
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
    /// `Ok(None)`: the budget ran out or a stop was requested.
    pub fn count(
        &self,
        prefix: &[u8],
        ctx: &ExploreContext<'_>,
        nodes: &mut u64,
    ) -> Result<Option<u128>, FamilyError> {
        match self.words {
            0..=2 => self.count_w::<2>(prefix, ctx, nodes),
            _ => self.count_w::<4>(prefix, ctx, nodes),
        }
    }

    fn count_w<const W: usize>(
        &self,
        prefix: &[u8],
        ctx: &ExploreContext<'_>,
        nodes: &mut u64,
    ) -> Result<Option<u128>, FamilyError> {
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
        let mut key = [0u64; W];
        for (t, &x) in prefix.iter().enumerate() {
            key = match self.step(t, &key, x as usize) {
                Some(nk) => nk,
                None => return Ok(Some(0)),
            };
        }
        let mut cur: HashMap<[u64; W], u128, BuildHasherDefault<Mix>> = HashMap::default();
        let mut next: HashMap<[u64; W], u128, BuildHasherDefault<Mix>> = HashMap::default();
        cur.insert(key, 1);
        for t in prefix.len()..n {
            if t > prefix.len() && (*nodes >= ctx.budget.max(1) || ctx.stop_requested()) {
                return Ok(None);
            }
            next.clear();
            for (key, &c) in &cur {
                for x in 0..self.k {
                    if let Some(nk) = self.step(t, key, x) {
                        let slot = next.entry(nk).or_insert(0);
                        *slot = slot
                            .checked_add(c)
                            .ok_or(FamilyError::Overflow("hip-draws profile count"))?;
                    }
                }
            }
            *nodes += (cur.len() * self.k) as u64;
            ctx.progress.store(*nodes, Ordering::Relaxed);
            std::mem::swap(&mut cur, &mut next);
        }
        let mut total: u128 = 0;
        for &c in cur.values() {
            total = total
                .checked_add(c)
                .ok_or(FamilyError::Overflow("hip-draws profile count"))?;
        }
        Ok(Some(total))
    }
}

/// A small multiplicative hasher for the DP's fixed-width keys (the standard
/// SipHash costs more than the rest of a DP step).
#[derive(Default, Clone, Copy)]
struct Mix(u64);

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline(always)]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    #[inline(always)]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    #[inline(always)]
    fn finish(&self) -> u64 {
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
    }
}
