//! A plain frontier dynamic programme for the draws of Hip: the k-colourings
//! of an R x C board with no monochromatic square (any tilt), and the
//! balanced ("playable") ones, whose colour j holds q + 1 stones for j < r and
//! q otherwise (N = qk + r cells). The yardstick `bench/hip-draws3.sh` times
//! `orchard run hip-draws` against; nothing of the orchard crates is used.
//!
//! Cells are coloured in column-major order. After step t the state is, for
//! every square with one or two coloured cells, 0 if they are mixed and
//! 1 + x if they are all colour x; for every uncoloured cell, the set of
//! colours it may not take (some square through it has its three other
//! cells coloured alike); and in the balanced pass the stone count of each
//! colour so far. Fields have fixed slots, reused once free. One u64 count per
//! state (k^N < 2^64 is checked), in a std HashMap with a multiplicative
//! hash. No colour symmetry, no splitting: the whole board in one process,
//! one core.
//!
//! Build: rustc -O bench/hip-draws-plain.rs -o hip-draws-plain
//! Usage: hip-draws-plain ROWS COLS [COLOURS]   (prints: draws playable nodes)

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
struct Mul(u64);

impl Hasher for Mul {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(26);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0 ^ self.0 >> 31
    }
}

/// A state: its words hashed one by one (an array would be hashed as bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key<const W: usize>([u64; W]);

impl<const W: usize> std::hash::Hash for Key<W> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for &w in &self.0 {
            h.write_u64(w);
        }
    }
}

type Map<const W: usize> = HashMap<Key<W>, u64, BuildHasherDefault<Mul>>;

/// Every square of the board as four cell indices `r * cols + c`: corner p,
/// side v = (a, b) with a >= 1, b >= 0 (each square has exactly one such
/// side), the other side v rotated by 90 degrees.
fn squares(rows: i32, cols: i32) -> Vec<[usize; 4]> {
    let mut out = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            for a in 1..rows.max(cols) {
                for b in 0..rows.max(cols) {
                    let pts = [(r, c), (r + a, c + b), (r + a - b, c + b + a), (r - b, c + a)];
                    if pts.iter().all(|&(x, y)| x >= 0 && x < rows && y >= 0 && y < cols) {
                        let cell = |(x, y): (i32, i32)| (x * cols + y) as usize;
                        out.push([cell(pts[0]), cell(pts[1]), cell(pts[2]), cell(pts[3])]);
                    }
                }
            }
        }
    }
    out
}

/// What colouring the cell of one step does to the state.
#[derive(Clone, Copy)]
enum Op {
    /// The square's first cell: its slot becomes 1 + x.
    First(usize),
    /// Its second cell: the slot stays 1 + x only if it was.
    Second(usize),
    /// Its third cell: the slot closes; if it was 1 + x, the square's last
    /// cell (whose forbidden set is at the second offset) may not be x.
    Third(usize, usize),
}

struct Layout {
    k: usize,
    n: usize,
    sbits: usize,
    /// Per step: the bit offset of the cell's own forbidden set (if some
    /// square ends at it), and what it does to the squares through it.
    steps: Vec<(Option<usize>, Vec<Op>)>,
    /// Bit offset of the stone counts (4 bits per colour).
    count_off: usize,
    /// Words of a key without and with the stone counts.
    words: usize,
    bal_words: usize,
    target: Vec<u64>,
}

/// Gives each lifetime `[start, end]` (steps, inclusive) a slot; a slot
/// freed at step `s` is taken again from step `s + 1` on.
fn slots(lives: &[(usize, usize)], n: usize) -> (Vec<usize>, usize) {
    let mut slot = vec![0; lives.len()];
    let mut free: Vec<usize> = Vec::new();
    let mut used = 0;
    for t in 0..n {
        for (i, &(s, _)) in lives.iter().enumerate() {
            if s == t {
                slot[i] = free.pop().unwrap_or_else(|| {
                    used += 1;
                    used - 1
                });
            }
        }
        for (i, &(_, e)) in lives.iter().enumerate() {
            if e == t {
                free.push(slot[i]);
            }
        }
    }
    (slot, used)
}

fn layout(rows: usize, cols: usize, k: usize) -> Layout {
    let n = rows * cols;
    let order: Vec<usize> = match std::env::var("PLAIN_ORDER").as_deref() {
        Ok("diag") => {
            let mut v: Vec<usize> = (0..n).collect();
            v.sort_by_key(|&i| (i / cols + i % cols, i % cols));
            v
        }
        Ok("spiral-in") | Ok("spiral-out") => {
            let mut v: Vec<usize> = (0..n).collect();
            let ring = |i: usize| {
                let (r, c) = (i / cols, i % cols);
                r.min(c).min(rows - 1 - r).min(cols - 1 - c)
            };
            v.sort_by_key(|&i| ring(i));
            if std::env::var("PLAIN_ORDER").unwrap() == "spiral-out" {
                v.reverse();
            }
            v
        }
        Ok(s) if s.starts_with("list:") => s[5..].split(',').map(|x| x.parse().unwrap()).collect(),
        _ => (0..cols).flat_map(|c| (0..rows).map(move |r| r * cols + c)).collect(),
    };
    let mut step_of = vec![0; n];
    for (t, &cell) in order.iter().enumerate() {
        step_of[cell] = t;
    }
    let sq: Vec<[usize; 4]> = squares(rows as i32, cols as i32)
        .iter()
        .map(|s| {
            let mut t = s.map(|c| step_of[c]);
            t.sort();
            t
        })
        .collect();
    // Square status slots live from the first to the third cell; a cell's
    // forbidden set from the first third cell of a square it ends to itself.
    let (sq_slot, sq_used) = slots(&sq.iter().map(|s| (s[0], s[2])).collect::<Vec<_>>(), n);
    let mut f_from = vec![usize::MAX; n];
    for s in &sq {
        f_from[s[3]] = f_from[s[3]].min(s[2]);
    }
    let f_cells: Vec<usize> = (0..n).filter(|&t| f_from[t] != usize::MAX).collect();
    let (f_slot, f_used) = slots(&f_cells.iter().map(|&t| (f_from[t], t)).collect::<Vec<_>>(), n);
    let sbits = 64 - (k as u64).leading_zeros() as usize;
    // Whole fields per word: statuses first, then forbidden sets, then counts.
    let mut bit = 0;
    let place = |bit: &mut usize, w: usize| {
        if *bit % 64 + w > 64 {
            *bit = bit.div_ceil(64) * 64;
        }
        *bit += w;
        *bit - w
    };
    let sq_off: Vec<usize> = (0..sq_used).map(|_| place(&mut bit, sbits)).collect();
    let f_off: Vec<usize> = (0..f_used).map(|_| place(&mut bit, k)).collect();
    let words = bit.div_ceil(64).max(1);
    let count_off = place(&mut bit, 4 * k);
    let bal_words = bit.div_ceil(64);
    let mut f_of_step = vec![None; n];
    for (i, &t) in f_cells.iter().enumerate() {
        f_of_step[t] = Some(f_off[f_slot[i]]);
    }
    let mut steps: Vec<(Option<usize>, Vec<Op>)> = f_of_step.iter().map(|&f| (f, Vec::new())).collect();
    for (i, s) in sq.iter().enumerate() {
        let o = sq_off[sq_slot[i]];
        steps[s[0]].1.push(Op::First(o));
        steps[s[1]].1.push(Op::Second(o));
        steps[s[2]].1.push(Op::Third(o, f_of_step[s[3]].unwrap()));
    }
    let (q, r) = (n / k, n % k);
    assert!(q < 15, "stone counts must fit 4 bits");
    Layout {
        k,
        n,
        sbits,
        steps,
        count_off,
        words,
        bal_words,
        target: (0..k).map(|j| (q + usize::from(j < r)) as u64).collect(),
    }
}

#[inline(always)]
fn get<const W: usize>(key: &[u64; W], off: usize, w: usize) -> u64 {
    (key[off / 64] >> (off % 64)) & ((1 << w) - 1)
}

#[inline(always)]
fn put<const W: usize>(key: &mut [u64; W], off: usize, w: usize, v: u64) {
    let m = ((1u64 << w) - 1) << (off % 64);
    key[off / 64] = (key[off / 64] & !m) | (v << (off % 64));
}

/// Runs the DP; with `balanced`, only colourings with exactly the target
/// stone counts survive. Returns (count, nodes).
fn run<const W: usize>(l: &Layout, balanced: bool) -> (u64, u64) {
    let (k, sbits) = (l.k, l.sbits);
    let verbose = std::env::var_os("PLAIN_VERBOSE").is_some();
    let mut cur: Map<W> = Map::default();
    cur.insert(Key([0; W]), 1);
    let mut nodes = 0u64;
    for t in 0..l.n {
        let mut next: Map<W> = Map::with_capacity_and_hasher(cur.len() * 2, Default::default());
        let (own, ops) = &l.steps[t];
        for (key, &count) in &cur {
            for x in 0..k {
                let mut nk = key.0;
                if let Some(f) = *own {
                    if get(&key.0, f, k) >> x & 1 == 1 {
                        continue;
                    }
                    put(&mut nk, f, k, 0);
                }
                let mono = x as u64 + 1;
                for &op in ops {
                    match op {
                        Op::First(o) => put(&mut nk, o, sbits, mono),
                        Op::Second(o) => {
                            if get(&key.0, o, sbits) != mono {
                                put(&mut nk, o, sbits, 0)
                            }
                        }
                        Op::Third(o, f) => {
                            if get(&key.0, o, sbits) == mono {
                                let v = get(&nk, f, k) | 1 << x;
                                put(&mut nk, f, k, v);
                            }
                            put(&mut nk, o, sbits, 0);
                        }
                    }
                }
                if balanced {
                    let off = l.count_off + 4 * x;
                    let c = get(&nk, off, 4) + 1;
                    if c > l.target[x] {
                        continue;
                    }
                    put(&mut nk, off, 4, c);
                }
                *next.entry(Key(nk)).or_insert(0) += count;
            }
        }
        nodes += (cur.len() * k) as u64;
        if verbose {
            eprintln!("step {t}: {} states", next.len());
        }
        cur = next;
    }
    (cur.values().sum(), nodes)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let (rows, cols) = (args[0].min(args[1]), args[0].max(args[1]));
    let k = args.get(2).copied().unwrap_or(3);
    assert!((2..=7).contains(&k) && rows >= 2 && rows * cols <= 64);
    assert!(
        (k as f64).powi((rows * cols) as i32) < 1.8e19,
        "k^N must fit a u64 count"
    );
    let l = layout(rows, cols, k);
    let pass = |words: usize, balanced: bool| match words {
        0..=2 => run::<2>(&l, balanced),
        3 => run::<3>(&l, balanced),
        _ => run::<4>(&l, balanced),
    };
    let (draws, n1) = pass(l.words, false);
    let (playable, n2) = if std::env::var_os("PLAIN_DRAWS_ONLY").is_some() {
        (0, 0)
    } else {
        pass(l.bal_words, true)
    };
    println!("{draws} {playable} {}", n1 + n2);
}
