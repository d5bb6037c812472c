//! The `hip-solve` transposition table of one job, shared by every search
//! thread of the process that works on the job (the job owns it, see
//! [`super::HipSolve`]).
//!
//! Values are facts about positions (the first player's value lies in
//! `lo..=hi`), true whichever unit, thread or job found them, so one table
//! serves every unit of the job. Sharing it between threads matters for
//! scaling: the units a split hands back usually go to another thread, which
//! with a private table would search them cold.
//!
//! Each bucket is one cache line with two entries and a sequence lock
//! (a *seqlock*): a reader reads the sequence number, the entries and the
//! sequence number again, and retries if a writer was active (odd) or the
//! number changed; writers take the lock by making the number odd. Readers
//! never write to the line, writers of different buckets never meet, and a
//! torn entry is never used, so a probe is exact, not probabilistic (unlike
//! the XOR-checked lockless tables of chess programs, which can accept a
//! torn entry with a tiny probability). Every field is an atomic, so the
//! races are defined behaviour.

use std::hint::spin_loop;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use super::board::Board;

/// log2 of the number of buckets of a table for a board of `cells` cells,
/// given the memory the host lends a job's cache (`cache_mib`, rounded down
/// to a power of two; see `orchard worker --cache-mib`). By default a table
/// has `2^(cells - 3)` buckets of 64 bytes, at most `2^24` (1 GiB, shared by
/// the job's search threads). A table much larger than the search costs
/// more in allocation and cache misses than it saves; too small a one costs
/// nodes (on 5x6, 2^20 buckets searched 2.3 times the nodes of 2^23), and
/// searches of billions of nodes (6x6) want as much as the machine can give.
pub fn table_bits(cells: usize, cache_mib: Option<u64>) -> u32 {
    match cache_mib {
        // 1 MiB is 2^14 buckets of 64 bytes.
        Some(mib) => 14 + mib.max(1).ilog2(),
        None => (cells as u32).saturating_sub(3).clamp(10, 24),
    }
}

/// The game a table serves: rows, columns, Double Hip.
pub type Tag = (usize, usize, bool);

/// One entry as the search sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableEntry {
    /// The canonical key: P1's and P2's stones.
    pub k1: u64,
    pub k2: u64,
    /// P1's value lies in `lo..=hi`; `lo > hi` marks an empty slot.
    pub lo: i8,
    pub hi: i8,
    /// Best move in the canonical frame (255: none).
    pub mv: u8,
    /// Empty cells of the position: the replacement priority.
    pub empty: u8,
}

impl TableEntry {
    const VACANT: TableEntry = TableEntry {
        k1: 0,
        k2: 0,
        lo: 2,
        hi: -2,
        mv: 255,
        empty: 0,
    };

    fn used(&self) -> bool {
        self.lo <= self.hi
    }

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
/// All zeros is a valid, vacant bucket (see [`Buckets`]).
#[repr(C, align(64))]
struct Bucket {
    seq: AtomicU32,
    words: [AtomicU64; 6],
}

impl Bucket {
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

/// The transposition table of one game: two-entry buckets (one kept for the
/// larger subtree, one always replaced), safe to share between threads.
pub struct Table {
    tag: Tag,
    buckets: Buckets,
    mask: usize,
    /// Whether a worker collects this table's lemmas (set by the first
    /// [`Table::take_lemmas`]; until then nothing is collected).
    sharing: AtomicBool,
    /// Lemmas proven since the last [`Table::take_lemmas`], oldest first.
    outbox: Mutex<Vec<TableEntry>>,
}

/// At most this many lemmas wait in a table's outbox (20 MiB); a worker
/// takes them every few seconds, so the cap only matters if the coordinator
/// is out of reach, and then the newest are not kept.
const OUTBOX_CAP: usize = 1 << 20;

#[inline(always)]
fn hash(k1: u64, k2: u64) -> u64 {
    let x = k1.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ k2.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    x ^ (x >> 31)
}

impl Table {
    /// An empty table sized for `board` and `cache_mib` (see
    /// [`table_bits`]). Costs nothing until used (see [`Buckets`]).
    pub fn new(board: &Board, double: bool, cache_mib: Option<u64>) -> Table {
        let bits = table_bits(board.n, cache_mib);
        Table {
            tag: (board.rows, board.cols, double),
            buckets: Buckets::zeroed(1usize << bits),
            mask: (1usize << bits) - 1,
            sharing: AtomicBool::new(false),
            outbox: Mutex::new(Vec::new()),
        }
    }

    /// Whether [`Table::offer_lemma`] keeps what it is given: a worker
    /// shares this table's lemmas with other workers.
    #[inline(always)]
    pub fn wants_lemmas(&self) -> bool {
        self.sharing.load(Ordering::Relaxed)
    }

    /// Queues an entry whose subtree was expensive to search, for other
    /// workers (see [`Table::take_lemmas`]).
    pub fn offer_lemma(&self, e: TableEntry) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if outbox.len() < OUTBOX_CAP {
            outbox.push(e);
        }
    }

    /// The oldest `max` lemmas offered since the last call; from the first
    /// call on, the table keeps what is offered.
    pub fn take_lemmas(&self, max: usize) -> Vec<TableEntry> {
        self.sharing.store(true, Ordering::Relaxed);
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        let n = max.min(outbox.len());
        let rest = outbox.split_off(n);
        std::mem::replace(&mut *outbox, rest)
    }

    /// Asks the CPU to start loading the bucket of a canonical key into the
    /// cache, so that a probe of it soon after does not wait for memory (on
    /// large boards the table is gigabytes and most probes miss the cache).
    /// A hint only: it changes no state and cannot fault.
    #[inline(always)]
    pub fn prefetch(&self, k1: u64, k2: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let bucket: *const Bucket = &self.buckets[hash(k1, k2) as usize & self.mask];
            // SAFETY: `_mm_prefetch` only hints the cache; SSE is in the
            // x86-64 baseline, and the address is that of a live bucket.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    bucket.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (k1, k2);
    }

    /// P1's interval and best canonical move for a canonical key.
    #[inline(always)]
    pub fn probe(&self, k1: u64, k2: u64) -> Option<(i8, i8, u8)> {
        let bucket = &self.buckets[hash(k1, k2) as usize & self.mask];
        bucket
            .read()
            .into_iter()
            .find(|e| e.k1 == k1 && e.k2 == k2 && e.used())
            .map(|e| (e.lo, e.hi, e.mv))
    }

    /// The game the table serves: rows, columns, Double Hip.
    pub fn tag(&self) -> Tag {
        self.tag
    }

    /// How many used entries there are of each number of empty cells.
    pub fn count_by_empty(&self) -> [u64; 65] {
        let mut counts = [0u64; 65];
        self.for_each_entry(0, |e| counts[usize::from(e.empty).min(64)] += 1);
        counts
    }

    /// Calls `f` on every used entry with at least `min_empty` empty cells,
    /// each read consistently (searches may go on meanwhile).
    pub fn for_each_entry(&self, min_empty: u8, mut f: impl FnMut(&TableEntry)) {
        for bucket in self.buckets.iter() {
            for e in bucket.read() {
                if e.used() && e.empty >= min_empty {
                    f(&e);
                }
            }
        }
    }

    /// Records that P1's value lies in `lo..=hi` (intersected with what the
    /// table knew).
    #[inline(always)]
    pub fn store(&self, k1: u64, k2: u64, lo: i8, hi: i8, mv: u8, empty: u8) {
        let bucket = &self.buckets[hash(k1, k2) as usize & self.mask];
        bucket.update(|entries| {
            for e in entries.iter_mut() {
                if e.k1 == k1 && e.k2 == k2 && e.used() {
                    let (nlo, nhi) = (e.lo.max(lo), e.hi.min(hi));
                    if nlo <= nhi {
                        e.lo = nlo;
                        e.hi = nhi;
                    } else {
                        // Cannot happen with exact searches; keep the newer.
                        e.lo = lo;
                        e.hi = hi;
                    }
                    if mv != 255 {
                        e.mv = mv;
                    }
                    return;
                }
            }
            let new = TableEntry {
                k1,
                k2,
                lo,
                hi,
                mv,
                empty,
            };
            if !entries[0].used() || empty >= entries[0].empty {
                entries[1] = entries[0];
                entries[0] = new;
            } else {
                entries[1] = new;
            }
        });
    }
}

/// The buckets of a table, in zeroed memory. The table is probed at random,
/// so with 4 KiB pages nearly every probe of a large table also misses the
/// TLB; on Linux the memory is mapped directly and the kernel is asked for
/// transparent huge pages (`MADV_HUGEPAGE`: one TLB entry per 2 MiB). A
/// fresh mapping is zero pages until written, so a table costs nothing to
/// create and only the touched part becomes resident.
struct Buckets {
    ptr: std::ptr::NonNull<Bucket>,
    len: usize,
}

// SAFETY: a `Buckets` owns its memory, and `Bucket` is made of atomics.
unsafe impl Send for Buckets {}
unsafe impl Sync for Buckets {}

impl Buckets {
    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::array::<Bucket>(len).expect("table size fits the address space")
    }

    fn zeroed(len: usize) -> Buckets {
        let layout = Self::layout(len);
        #[cfg(target_os = "linux")]
        // SAFETY: an anonymous private mapping of `layout.size()` bytes,
        // checked for failure; page-aligned, so aligned for `Bucket`.
        let ptr = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                std::alloc::handle_alloc_error(layout);
            }
            // Advice only: without huge pages the table works the same.
            libc::madvise(p, layout.size(), libc::MADV_HUGEPAGE);
            p.cast::<Bucket>()
        };
        #[cfg(not(target_os = "linux"))]
        // SAFETY: `layout` has a non-zero size (at least one bucket).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout).cast::<Bucket>() };
        let ptr =
            std::ptr::NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Buckets { ptr, len }
    }
}

impl std::ops::Deref for Buckets {
    type Target = [Bucket];

    fn deref(&self) -> &[Bucket] {
        // SAFETY: `len` buckets of zeroed memory, a valid (vacant) bucket
        // each, owned until drop; only ever accessed through atomics.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buckets {
    fn drop(&mut self) {
        let layout = Self::layout(self.len);
        // SAFETY: the mapping or allocation made in `zeroed`, with its size.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), layout.size());
        }
        #[cfg(not(target_os = "linux"))]
        unsafe {
            std::alloc::dealloc(self.ptr.as_ptr().cast(), layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads storing keys that share one bucket (so every store moves
    /// entries between its slots) while two others probe them: every probe
    /// finds the data stored with that key, never another key's (a torn
    /// read), and intervals only narrow.
    #[test]
    fn concurrent_stores_and_probes_never_tear() {
        let board = Board::new(2, 3);
        let table = Table::new(&board, false, None);
        let bucket = |k: u64| hash(k, !k) as usize & table.mask;
        let keys: Vec<u64> = (1..).filter(|&k| bucket(k) == bucket(1)).take(6).collect();
        // Each key's data is a function of the key, so a torn read (key of
        // one store, data of another) is detectable.
        let data_of = |k: u64| ((k % 3) as i8 - 1, (k % 251) as u8, (k % 7) as u8 + 4);
        let seen = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4usize {
                let (table, keys, seen) = (&table, &keys, &seen);
                s.spawn(move || {
                    for i in 0..2_000_000usize {
                        let k = keys[(i * 7 + t) % keys.len()];
                        let (v, mv, empty) = data_of(k);
                        if t < 2 {
                            table.store(k, !k, v, v, mv, empty);
                        } else if let Some(got) = table.probe(k, !k) {
                            assert_eq!(got, (v, v, mv), "key {k}");
                            seen.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert!(seen.load(Ordering::Relaxed) > 0, "no probe ever hit");
        // Narrowing: a bound then the other bound gives the exact value.
        table.store(7, 8, -1, 0, 255, 9);
        table.store(7, 8, 0, 1, 3, 9);
        assert_eq!(table.probe(7, 8), Some((0, 0, 3)));
    }
}
