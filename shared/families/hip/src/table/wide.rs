//! Three-word entries for boards of more than 40 cells: two to a cache
//! line, guarded by a sequence lock.
//!
//! Each bucket is one cache line with two entries and a sequence lock
//! (a *seqlock*): a reader reads the sequence number, the entries and the
//! sequence number again, and retries if a writer was active (odd) or the
//! number changed; writers take the lock by making the number odd. Readers
//! never write to the line, writers of different buckets never meet, and a
//! torn entry is never used, so a probe is exact, not probabilistic (unlike
//! the XOR-checked lockless tables of chess programs, which can accept a
//! torn entry with a tiny probability). Every field is an atomic, so the
//! races are defined behaviour. Boards of at most 40 cells use
//! [`super::packed`] instead, whose one-word entries need no lock.

use std::hint::spin_loop;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use super::{merge, TableEntry};

#[inline(always)]
pub fn hash(k1: u64, k2: u64) -> u64 {
    let x = k1.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ k2.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    x ^ (x >> 31)
}

impl TableEntry {
    /// The third word of an entry: the fields and a used bit, so that a
    /// zero word (fresh memory) is a vacant slot.
    fn data(&self) -> u64 {
        if !self.used() {
            return 0;
        }
        USED | u64::from(self.lo as u8)
            | u64::from(self.hi as u8) << 8
            | u64::from(self.mv) << 16
            | u64::from(self.empty) << 24
    }

    fn from_words(k1: u64, k2: u64, data: u64) -> TableEntry {
        if data & USED == 0 {
            return TableEntry::VACANT;
        }
        TableEntry {
            k1,
            k2,
            lo: data as u8 as i8,
            hi: (data >> 8) as u8 as i8,
            mv: (data >> 16) as u8,
            empty: (data >> 24) as u8,
        }
    }
}

/// The used bit of an entry's data word.
const USED: u64 = 1 << 32;

/// Two entries (three words each) and their sequence lock, in one cache line.
/// All zeros is a valid, vacant bucket.
#[repr(C, align(64))]
pub struct WideBucket {
    seq: AtomicU32,
    words: [AtomicU64; 6],
}

impl WideBucket {
    fn load(&self) -> [TableEntry; 2] {
        let w = &self.words;
        [
            TableEntry::from_words(
                w[0].load(Ordering::Relaxed),
                w[1].load(Ordering::Relaxed),
                w[2].load(Ordering::Relaxed),
            ),
            TableEntry::from_words(
                w[3].load(Ordering::Relaxed),
                w[4].load(Ordering::Relaxed),
                w[5].load(Ordering::Relaxed),
            ),
        ]
    }

    /// A consistent snapshot of both entries.
    #[inline(always)]
    fn read(&self) -> [TableEntry; 2] {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            if before & 1 == 0 {
                let entries = self.load();
                // Orders the loads above before the check below (Boehm,
                // "Can seqlocks get along with programming language memory
                // models?", 2012): if one of them saw a writer's store, this
                // load sees that writer's odd number or a later one.
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == before {
                    return entries;
                }
            }
            spin_loop();
        }
    }

    /// Runs `f` on the entries with the bucket locked, and stores them back.
    #[inline(always)]
    fn update(&self, f: impl FnOnce(&mut [TableEntry; 2])) {
        let seq = loop {
            let s = self.seq.load(Ordering::Relaxed);
            if s & 1 == 0
                && self
                    .seq
                    .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                break s;
            }
            spin_loop();
        };
        // Readers that see any store below also see the odd number.
        fence(Ordering::Release);
        let mut entries = self.load();
        f(&mut entries);
        for (i, e) in entries.iter().enumerate() {
            self.words[3 * i].store(e.k1, Ordering::Relaxed);
            self.words[3 * i + 1].store(e.k2, Ordering::Relaxed);
            self.words[3 * i + 2].store(e.data(), Ordering::Relaxed);
        }
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}

impl WideBucket {
    /// P1's interval and best move stored for a key.
    #[inline(always)]
    pub fn probe(&self, k1: u64, k2: u64) -> Option<(i8, i8, u8)> {
        self.read()
            .into_iter()
            .find(|e| e.k1 == k1 && e.k2 == k2 && e.used())
            .map(|e| (e.lo, e.hi, e.mv))
    }

    /// Records `new`, intersected with the key's entry if it has one; else
    /// the first slot keeps the larger subtree and the second is replaced.
    #[inline(always)]
    pub fn store(&self, new: TableEntry) {
        self.update(|entries| {
            for e in entries.iter_mut() {
                if e.k1 == new.k1 && e.k2 == new.k2 && e.used() {
                    (e.lo, e.hi, e.mv) = merge((e.lo, e.hi, e.mv), (new.lo, new.hi, new.mv));
                    return;
                }
            }
            if !entries[0].used() || new.empty >= entries[0].empty {
                entries[1] = entries[0];
                entries[0] = new;
            } else {
                entries[1] = new;
            }
        });
    }

    /// The used entries with at least `min_empty` empty cells.
    pub fn entries(&self, min_empty: u8, f: &mut impl FnMut(&TableEntry)) {
        for e in self.read() {
            if e.used() && e.empty >= min_empty {
                f(&e);
            }
        }
    }
}
