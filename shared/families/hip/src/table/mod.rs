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
//! How the entries are laid out depends on the board: on boards of at most
//! 40 cells (every board of table B) a key packs into part of one word and a
//! cache line holds eight entries ([`packed`]); larger boards keep the key's
//! two words and two entries a line under a sequence lock ([`wide`]). Both
//! are exact: a probe returns only what was stored for that very position.
//!
//! A large table (a gigabyte or more: the long runs give it 8 GiB) is two:
//! the positions near the end of the game, at most [`NEAR_MAX_EMPTY`] empty
//! cells, in a *near* part of [`NEAR_MIB`], and the rest in the *far* part of
//! the size asked for. Nearly every probe is of a position near the end,
//! and on this project's machines a search with an 8 GiB table took 1.6
//! times as long as with 256 MiB for the same nodes, huge pages or not (the
//! address translations no longer fit the TLB's reach); a position near the end is cheap to
//! search again, so it loses little by a smaller part, while the positions
//! with big subtrees keep the large one to themselves. On 4x9 positions a
//! search took 0.52-0.73 of the time of one 8 GiB table, with at most 5%
//! more nodes (docs/notes/hip-solver.md, "The table's near part").

mod packed;
mod wide;

use crate::search::{BUSY_MIN_WEIGHT, LEMMA_MIN_NODES};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Mutex;

use super::board::Board;
use packed::{PackedBucket, Packing};
use wide::WideBucket;

/// log2 of the number of buckets of a table for a board of `cells` cells,
/// given the memory the host lends a job's cache (`cache_mib`, rounded down
/// to a power of two; see `orchard worker --cache-mib`). By default a table
/// holds `2^(cells - 2)` entries, at most `2^25`: 64-byte buckets of eight
/// entries up to 40 cells (at most 256 MiB), of two beyond (at most 1 GiB),
/// shared by the job's search threads. A table much larger than the search
/// costs more in allocation and cache misses than it saves; too small a one
/// costs nodes (on 4x7, 16 MiB of packed entries searched 1.4 times the
/// nodes of 64 MiB), and searches of billions of nodes (6x6) want as much as
/// the machine can give.
pub fn table_bits(cells: usize, cache_mib: Option<u64>) -> u32 {
    let per_bucket = if cells <= packed::MAX_CELLS { 3 } else { 1 };
    match cache_mib {
        // 1 MiB is 2^14 buckets of 64 bytes.
        Some(mib) => 14 + mib.max(1).ilog2(),
        None => ((cells as u32).saturating_sub(2 + per_bucket)).clamp(10, 25 - per_bucket),
    }
}

/// The size of a large table's near part (see the module doc). Beside an
/// 8 GiB far part on 4x9 positions, 64 MiB searched 5% more nodes, and
/// 1 GiB was nearly as slow as no near part at all.
pub const NEAR_MIB: u64 = 256;

/// The positions with at most this many empty cells go to a large table's
/// near part. 16 took 1.2-1.6 times the time of 20 on 4x9 positions: the
/// enhanced cutoff probes every child of a position above the limit.
pub const NEAR_MAX_EMPTY: u32 = 20;

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

/// A lemma as the table's outbox keeps it: the entry, and the node count
/// of the search that offered it ([`crate::search::Solver::nodes`]) when
/// it did. The stamp never goes on the wire (a receiver has no use for
/// another process's node counts); it tells the replay (`orchard-scale`)
/// *when* in a search each lemma was stored, so that it can publish it
/// then rather than at the search's end, as a real worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StampedLemma {
    pub(crate) entry: TableEntry,
    /// Nodes the storing search had expanded when it stored the entry.
    pub at_node: u64,
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
}

/// What an entry becomes when its position is stored again: both intervals
/// are facts about the position, so their intersection (disjoint ones cannot
/// come from exact searches; the newer is kept), and the newer move unless
/// it has none. `(lo, hi, mv)` of the entry, then of the store. Both
/// layouts merge with this.
#[inline(always)]
fn merge(old: (i8, i8, u8), new: (i8, i8, u8)) -> (i8, i8, u8) {
    let (lo, hi) = (old.0.max(new.0), old.1.min(new.1));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (new.0, new.1) };
    (lo, hi, if new.2 != 255 { new.2 } else { old.2 })
}

/// The transposition table of one game, safe to share between threads.
pub struct Table {
    tag: Tag,
    /// Every position, or with `near` those with more than
    /// [`NEAR_MAX_EMPTY`] empty cells.
    far: Slots,
    /// On a large table, the positions with at most [`NEAR_MAX_EMPTY`]
    /// empty cells, in [`NEAR_MIB`] of their own (see the module doc).
    near: Option<Slots>,
    /// The board's cells: a key's empty cells are `cells` less its stones.
    cells: u32,
    /// Whether a worker collects this table's lemmas (set by the first
    /// [`Table::take_lemmas`]; until then nothing is collected).
    sharing: AtomicBool,
    /// The fewest nodes a position's search takes for it to be offered as
    /// a lemma (see [`Table::lemma_min_nodes`]).
    lemma_min_nodes: u64,
    /// Lemmas proven since the last [`Table::take_lemmas`], oldest first.
    outbox: Mutex<Vec<StampedLemma>>,
    /// How many searches are inside each position now, by a hash of its
    /// key ([`Table::enter`]): positions of at least `busy_weight` only.
    busy: Box<[AtomicU8]>,
    busy_weight: u32,
}

/// Slots of [`Table`]'s busy marks, 1 MiB: two positions in one slot only
/// defer a move needlessly (a search's own ancestors are about 20 of them).
const BUSY_SLOTS: usize = 1 << 20;

/// At most this many lemmas wait in a table's outbox (32 MiB, 20 on the
/// wire); a worker takes them every few seconds, so the cap only matters
/// if the coordinator is out of reach, and then the newest are not kept.
const OUTBOX_CAP: usize = 1 << 20;

/// The buckets, by layout.
enum Slots {
    /// Boards of at most [`packed::MAX_CELLS`] cells.
    Packed {
        buckets: Buckets<PackedBucket>,
        packing: Packing,
    },
    /// Larger boards.
    Wide {
        buckets: Buckets<WideBucket>,
        mask: usize,
    },
}

impl Slots {
    fn new(cells: usize, bits: u32) -> Slots {
        if cells <= packed::MAX_CELLS {
            let packing = Packing::new(cells, bits);
            Slots::Packed {
                buckets: Buckets::zeroed(1usize << packing.bucket_bits()),
                packing,
            }
        } else {
            Slots::Wide {
                buckets: Buckets::zeroed(1usize << bits),
                mask: (1usize << bits) - 1,
            }
        }
    }

    #[inline(always)]
    fn place(&self, k1: u64, k2: u64, near: bool) -> Place {
        match self {
            Slots::Packed { packing, .. } => {
                let (bucket, tag) = packing.locate(k1, k2);
                Place {
                    bucket,
                    tag,
                    k1,
                    k2,
                    near,
                }
            }
            Slots::Wide { mask, .. } => Place {
                bucket: wide::hash(k1, k2) as usize & mask,
                tag: 0,
                k1,
                k2,
                near,
            },
        }
    }

    #[inline(always)]
    fn prefetch(&self, place: &Place) {
        #[cfg(target_arch = "x86_64")]
        {
            let bucket: *const u8 = match self {
                Slots::Packed { buckets, .. } => {
                    let at: *const PackedBucket = &buckets[place.bucket];
                    at.cast()
                }
                Slots::Wide { buckets, .. } => {
                    let at: *const WideBucket = &buckets[place.bucket];
                    at.cast()
                }
            };
            // SAFETY: `_mm_prefetch` only hints the cache; SSE is in the
            // x86-64 baseline, and the address is that of a live bucket.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    bucket.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = place;
    }

    #[inline(always)]
    fn probe_at(&self, place: &Place) -> Option<(i8, i8, u8)> {
        match self {
            Slots::Packed { buckets, .. } => buckets[place.bucket].probe(place.tag),
            Slots::Wide { buckets, .. } => buckets[place.bucket].probe(place.k1, place.k2),
        }
    }

    #[inline(always)]
    fn store_at(&self, place: &Place, lo: i8, hi: i8, mv: u8, empty: u8) {
        match self {
            Slots::Packed { buckets, .. } => {
                buckets[place.bucket].store(place.tag, lo, hi, mv, empty)
            }
            Slots::Wide { buckets, .. } => buckets[place.bucket].store(TableEntry {
                k1: place.k1,
                k2: place.k2,
                lo,
                hi,
                mv,
                empty,
            }),
        }
    }

    fn count_by_empty(&self, counts: &mut [u64; 65]) {
        match self {
            Slots::Packed { buckets, .. } => {
                buckets.iter().for_each(|b| b.count_by_empty(counts));
            }
            Slots::Wide { .. } => {
                self.for_each_entry(0, &mut |e| counts[usize::from(e.empty).min(64)] += 1);
            }
        }
    }

    fn for_each_entry(&self, min_empty: u8, f: &mut impl FnMut(&TableEntry)) {
        match self {
            Slots::Packed { buckets, packing } => {
                for (i, b) in buckets.iter().enumerate() {
                    b.entries(packing, i, min_empty, &mut *f);
                }
            }
            Slots::Wide { buckets, .. } => {
                for b in buckets.iter() {
                    b.entries(min_empty, &mut *f);
                }
            }
        }
    }
}

impl Table {
    /// An empty table sized for `board` and `cache_mib` (see
    /// [`table_bits`]). Costs nothing until used (see [`Buckets`]).
    pub fn new(board: &Board, double: bool, cache_mib: Option<u64>) -> Table {
        let bits = table_bits(board.n, cache_mib);
        let near_bits = table_bits(board.n, Some(NEAR_MIB));
        let near = (bits >= near_bits + 2).then(|| Slots::new(board.n, near_bits));
        Table {
            tag: (board.rows, board.cols, double),
            far: Slots::new(board.n, bits),
            near,
            cells: board.n as u32,
            sharing: AtomicBool::new(false),
            lemma_min_nodes: LEMMA_MIN_NODES,
            outbox: Mutex::new(Vec::new()),
            busy: (0..BUSY_SLOTS).map(|_| AtomicU8::new(0)).collect(),
            busy_weight: BUSY_MIN_WEIGHT,
        }
    }

    /// The fewest [`crate::last_moves::plain_weight`] of a position whose
    /// searches mark it busy ([`BUSY_MIN_WEIGHT`] unless set otherwise).
    #[inline(always)]
    pub fn busy_weight(&self) -> u32 {
        self.busy_weight
    }

    /// The table with [`Table::busy_weight`] set, before any search uses
    /// it (`u32::MAX`: no busy marks).
    #[cfg(test)]
    pub(crate) fn with_busy_weight(mut self, weight: u32) -> Table {
        self.busy_weight = weight;
        self
    }

    /// A key's slot of the busy marks: the top 20 bits of a multiplicative
    /// hash (the table's own index bits would make a position's slot and
    /// its bucket collide together).
    #[inline(always)]
    fn busy_slot(k1: u64, k2: u64) -> usize {
        ((k1 ^ k2.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44) as usize
    }

    /// A search enters the position of key `(k1, k2)`; it calls
    /// [`Table::leave`] once for it, however it returns. Up to 255 searches
    /// at once in one slot.
    #[inline(always)]
    pub fn enter(&self, k1: u64, k2: u64) {
        self.busy[Self::busy_slot(k1, k2)].fetch_add(1, Ordering::Relaxed);
    }

    /// A search leaves it.
    #[inline(always)]
    pub fn leave(&self, k1: u64, k2: u64) {
        self.busy[Self::busy_slot(k1, k2)].fetch_sub(1, Ordering::Relaxed);
    }

    /// Every busy mark now, summed over the slots.
    #[cfg(test)]
    pub(crate) fn busy_marks(&self) -> u64 {
        self.busy
            .iter()
            .map(|b| u64::from(b.load(Ordering::Relaxed)))
            .sum()
    }

    /// Whether some search is inside the position now.
    #[inline(always)]
    pub fn is_busy(&self, k1: u64, k2: u64) -> bool {
        self.busy[Self::busy_slot(k1, k2)].load(Ordering::Relaxed) != 0
    }

    /// The part of the table a place is in.
    #[inline(always)]
    fn slots(&self, near: bool) -> &Slots {
        match &self.near {
            Some(slots) if near => slots,
            _ => &self.far,
        }
    }

    /// Whether [`Table::offer_lemma`] keeps what it is given: a worker
    /// shares this table's lemmas with other workers.
    #[inline(always)]
    pub fn wants_lemmas(&self) -> bool {
        self.sharing.load(Ordering::Relaxed)
    }

    /// The fewest nodes a position's search takes for the search to offer
    /// it as a lemma ([`LEMMA_MIN_NODES`] unless the job says otherwise).
    #[inline(always)]
    pub fn lemma_min_nodes(&self) -> u64 {
        self.lemma_min_nodes
    }

    /// The table with [`Table::lemma_min_nodes`] set (at least 1), before
    /// any search shares it.
    pub fn with_lemma_min_nodes(mut self, nodes: u64) -> Table {
        self.lemma_min_nodes = nodes.max(1);
        self
    }

    /// Queues an entry whose subtree was expensive to search, for other
    /// workers (see [`Table::take_lemmas`]); `at_node`: the offering
    /// search's node count (see [`StampedLemma`]).
    pub fn offer_lemma(&self, entry: TableEntry, at_node: u64) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if outbox.len() < OUTBOX_CAP {
            outbox.push(StampedLemma { entry, at_node });
        }
    }

    /// The oldest `max` lemmas offered since the last call; from the first
    /// call on, the table keeps what is offered.
    pub fn take_lemmas(&self, max: usize) -> Vec<TableEntry> {
        self.take_stamped_lemmas(max)
            .into_iter()
            .map(|l| l.entry)
            .collect()
    }

    /// [`Table::take_lemmas`] with each lemma's stamp.
    pub fn take_stamped_lemmas(&self, max: usize) -> Vec<StampedLemma> {
        self.sharing.store(true, Ordering::Relaxed);
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        let n = max.min(outbox.len());
        let rest = outbox.split_off(n);
        std::mem::replace(&mut *outbox, rest)
    }

    /// Where a canonical key's entry lives: computed once, for a probe and
    /// the store that follows it.
    #[inline(always)]
    pub fn place(&self, k1: u64, k2: u64) -> Place {
        // The key holds every stone, so it tells the number of empty cells.
        match &self.near {
            Some(slots) if self.cells - (k1 | k2).count_ones() <= NEAR_MAX_EMPTY => {
                slots.place(k1, k2, true)
            }
            _ => self.far.place(k1, k2, false),
        }
    }

    /// Asks the CPU to start loading the bucket of a key into the cache, so
    /// that a probe of it soon after does not wait for memory (on large
    /// boards the table is gigabytes and most probes miss the cache). A hint
    /// only: it changes no state and cannot fault.
    #[inline(always)]
    pub fn prefetch(&self, place: &Place) {
        self.slots(place.near).prefetch(place)
    }

    /// P1's interval and best canonical move for the key at `place`.
    #[inline(always)]
    pub fn probe_at(&self, place: &Place) -> Option<(i8, i8, u8)> {
        self.slots(place.near).probe_at(place)
    }

    /// P1's interval and best canonical move for a canonical key.
    pub fn probe(&self, k1: u64, k2: u64) -> Option<(i8, i8, u8)> {
        self.probe_at(&self.place(k1, k2))
    }

    /// The game the table serves: rows, columns, Double Hip.
    pub fn tag(&self) -> Tag {
        self.tag
    }

    /// How many used entries there are of each number of empty cells.
    pub fn count_by_empty(&self) -> [u64; 65] {
        let mut counts = [0u64; 65];
        self.far.count_by_empty(&mut counts);
        if let Some(near) = &self.near {
            near.count_by_empty(&mut counts);
        }
        counts
    }

    /// Calls `f` on every used entry with at least `min_empty` empty cells,
    /// each read consistently (searches may go on meanwhile).
    pub fn for_each_entry(&self, min_empty: u8, mut f: impl FnMut(&TableEntry)) {
        self.far.for_each_entry(min_empty, &mut f);
        if let Some(near) = &self.near {
            near.for_each_entry(min_empty, &mut f);
        }
    }

    /// Records that P1's value lies in `lo..=hi` for the key at `place`
    /// (intersected with what the table knew).
    #[inline(always)]
    pub fn store_at(&self, place: &Place, lo: i8, hi: i8, mv: u8, empty: u8) {
        self.slots(place.near).store_at(place, lo, hi, mv, empty)
    }

    /// Records that P1's value lies in `lo..=hi` for a canonical key.
    pub fn store(&self, k1: u64, k2: u64, lo: i8, hi: i8, mv: u8, empty: u8) {
        self.store_at(&self.place(k1, k2), lo, hi, mv, empty);
    }
}

/// Where a key's entry lives in one table ([`Table::place`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Place {
    bucket: usize,
    /// The packed layout's tag.
    tag: u64,
    /// The key (the wide layout compares it whole).
    k1: u64,
    k2: u64,
    /// In the table's near part.
    near: bool,
}

/// The buckets of a table, in zeroed memory. The table is probed at random,
/// so with 4 KiB pages nearly every probe of a large table also misses the
/// TLB; on Linux the memory is mapped directly and the kernel is asked for
/// transparent huge pages (`MADV_HUGEPAGE`: one TLB entry per 2 MiB). A
/// fresh mapping is zero pages until written, so a table costs nothing to
/// create and only the touched part becomes resident.
///
/// `B` is a [`ZeroedBucket`]: all-zero memory is a valid, vacant bucket.
struct Buckets<B: ZeroedBucket> {
    ptr: std::ptr::NonNull<B>,
    len: usize,
}

/// A bucket type that [`Buckets`] may hand out from zeroed memory and share
/// between threads.
///
/// # Safety
///
/// All-zero bytes must be a valid value of the type (a vacant bucket), and
/// the type must be `Send + Sync` by its fields (atomics), so that the
/// buckets a `Buckets` owns may be read and written from any thread.
unsafe trait ZeroedBucket: Send + Sync {}

// SAFETY: arrays of atomic integers, for which zero is a value; vacant
// when zero (see each type's doc).
unsafe impl ZeroedBucket for PackedBucket {}
unsafe impl ZeroedBucket for WideBucket {}

// SAFETY: a `Buckets` owns its memory, as a `Box<[B]>` would, and `B` is
// `Send + Sync` (the bound of `ZeroedBucket`).
unsafe impl<B: ZeroedBucket> Send for Buckets<B> {}
unsafe impl<B: ZeroedBucket> Sync for Buckets<B> {}

impl<B: ZeroedBucket> Buckets<B> {
    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::array::<B>(len).expect("table size fits the address space")
    }

    fn zeroed(len: usize) -> Buckets<B> {
        let layout = Self::layout(len);
        #[cfg(target_os = "linux")]
        // SAFETY: an anonymous private mapping of `layout.size()` bytes,
        // checked for failure; page-aligned, so aligned for a bucket.
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
            p.cast::<B>()
        };
        #[cfg(not(target_os = "linux"))]
        // SAFETY: `layout` has a non-zero size (at least one bucket).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout).cast::<B>() };
        let ptr =
            std::ptr::NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Buckets { ptr, len }
    }
}

impl<B: ZeroedBucket> std::ops::Deref for Buckets<B> {
    type Target = [B];

    fn deref(&self) -> &[B] {
        // SAFETY: `len` buckets of zeroed memory, a valid (vacant) bucket
        // each, owned until drop; only ever accessed through atomics.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<B: ZeroedBucket> Drop for Buckets<B> {
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
    use crate::search::solve_empty_board;
    use crate::search::tests::below;
    use std::sync::atomic::AtomicU64;

    /// The bucket a key falls in.
    fn bucket_of(table: &Table, k1: u64, k2: u64) -> usize {
        table.place(k1, k2).bucket
    }

    /// `n` positions of `board` that fall in one bucket of `table`.
    fn crowd(board: &Board, table: &Table, n: usize) -> Vec<(u64, u64)> {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut position = move || {
            let (mut p1, mut p2) = (0u64, 0u64);
            for c in 0..board.n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                match seed % 3 {
                    1 => p1 |= 1 << c,
                    2 => p2 |= 1 << c,
                    _ => {}
                }
            }
            (p1, p2)
        };
        let first = position();
        let mut keys = vec![first];
        while keys.len() < n {
            let k = position();
            if bucket_of(table, k.0, k.1) == bucket_of(table, first.0, first.1)
                && !keys.contains(&k)
            {
                keys.push(k);
            }
        }
        keys
    }

    /// Two threads storing positions that share one bucket (more of them
    /// than it has slots, so every store moves or evicts entries) while two
    /// others probe them: every probe finds the data stored with that
    /// position, never another's (a torn read), and intervals only narrow;
    /// on a board of each layout (4x4 packed, 7x7 wide).
    #[test]
    fn concurrent_stores_and_probes_never_tear() {
        for (rows, cols, mib) in [(4, 4, None), (7, 7, Some(1))] {
            let board = Board::new(rows, cols);
            let table = Table::new(&board, false, mib);
            let keys = crowd(&board, &table, 12);
            // Each key's data is a function of the key, so a torn read (key
            // of one store, data of another) is detectable.
            let data_of = |k: u64| ((k % 3) as i8 - 1, (k % 40) as u8, (k % 7) as u8 + 4);
            let seen = AtomicU64::new(0);
            std::thread::scope(|s| {
                for t in 0..4usize {
                    let (table, keys, seen) = (&table, &keys, &seen);
                    s.spawn(move || {
                        for i in 0..1_000_000usize {
                            let (k1, k2) = keys[(i * 7 + t) % keys.len()];
                            let (v, mv, empty) = data_of(k1 ^ k2);
                            if t < 2 {
                                table.store(k1, k2, v, v, mv, empty);
                            } else if let Some(got) = table.probe(k1, k2) {
                                assert_eq!(got, (v, v, mv), "{rows}x{cols}, key {k1} {k2}");
                                seen.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
            assert!(seen.load(Ordering::Relaxed) > 0, "no probe ever hit");
            // Narrowing: a bound then the other bound gives the exact value.
            let (k1, k2) = keys[0];
            table.store(k1, k2, -1, 0, 255, 9);
            table.store(k1, k2, 0, 1, 3, 9);
            assert_eq!(table.probe(k1, k2), Some((0, 0, 3)), "{rows}x{cols}");
            // What the walk over the table gives back is what was stored.
            let mut walked = 0;
            table.for_each_entry(0, |e| {
                assert_eq!(table.probe(e.k1, e.k2), Some((e.lo, e.hi, e.mv)));
                assert!(
                    keys.contains(&(e.k1, e.k2)),
                    "{rows}x{cols}: a key never stored"
                );
                walked += 1;
            });
            assert!(walked > 0);
            assert_eq!(table.count_by_empty().iter().sum::<u64>(), walked);
        }
    }

    /// Eight entries a bucket where a key packs, two where it does not: a
    /// bucket crowded with twelve positions keeps eight of them, or two.
    #[test]
    fn a_packed_bucket_holds_four_times_the_entries() {
        for (rows, cols, kept) in [(6, 6, 8), (5, 8, 8), (6, 7, 2)] {
            let board = Board::new(rows, cols);
            let table = Table::new(&board, false, Some(1));
            let keys = crowd(&board, &table, 12);
            for (i, &(k1, k2)) in keys.iter().enumerate() {
                table.store(k1, k2, 0, 0, 255, 30 - i as u8);
            }
            let found = keys
                .iter()
                .filter(|k| table.probe(k.0, k.1).is_some())
                .count();
            assert_eq!(found, kept, "{rows}x{cols}");
        }
    }

    /// A table of a gigabyte or more is two parts: on a board of each
    /// layout, positions with at most [`NEAR_MAX_EMPTY`] empty cells go to
    /// the near part and the others to the far one, each probe finds what
    /// was stored for its position, and the walk over the entries and
    /// their count see both parts. A smaller table is one part.
    #[test]
    fn a_large_table_keeps_the_end_apart() {
        for (rows, cols) in [(6, 6), (6, 7)] {
            let board = Board::new(rows, cols);
            assert!(Table::new(&board, false, Some(512)).near.is_none());
            let table = Table::new(&board, false, Some(1024));
            assert!(table.near.is_some());
            let mut below = below(0x2545_f491_4f6c_dd1du64);
            let mut stored = std::collections::BTreeMap::new();
            let mut near = 0;
            for i in 0..2000u64 {
                // 0 to 35 stones, each cell P1's or P2's at random.
                let stones = (i % 36) as usize;
                let (mut k1, mut k2) = (0u64, 0u64);
                let mut cells: Vec<usize> = (0..board.n).collect();
                for s in 0..stones {
                    let c = cells.swap_remove(below(cells.len()));
                    if s % 2 == 0 {
                        k1 |= 1 << c;
                    } else {
                        k2 |= 1 << c;
                    }
                }
                if stored.contains_key(&(k1, k2)) {
                    continue; // a second store would merge with the first
                }
                let empty = (board.n - stones) as u8;
                let place = table.place(k1, k2);
                assert_eq!(place.near, u32::from(empty) <= NEAR_MAX_EMPTY);
                near += usize::from(place.near);
                let (lo, hi, mv) = [(-1, 0, 3), (0, 0, 7), (0, 1, 255)][below(3)];
                table.store_at(&place, lo, hi, mv, empty);
                stored.insert((k1, k2), (lo, hi, mv, empty));
            }
            assert!(near > 500 && near < 1500, "{near} of 2000 near");
            for (&(k1, k2), &(lo, hi, mv, _)) in &stored {
                assert_eq!(table.probe(k1, k2), Some((lo, hi, mv)), "{k1:x} {k2:x}");
            }
            let mut walked = std::collections::BTreeMap::new();
            table.for_each_entry(0, |e| {
                walked.insert((e.k1, e.k2), (e.lo, e.hi, e.mv, e.empty));
            });
            assert_eq!(walked, stored);
            assert_eq!(
                table.count_by_empty().iter().sum::<u64>(),
                stored.len() as u64
            );
        }
        // A search through both parts gives table B's values: standard 4x6
        // is a draw, Double 4x6 a first player win.
        for (double, value) in [(false, 0), (true, 1)] {
            let board = Board::new(4, 6);
            let split = Table::new(&board, double, Some(1024));
            assert!(split.near.is_some());
            assert_eq!(solve_empty_board(&board, &split, double).0, value);
            let mut parts = [0; 2];
            split.for_each_entry(0, |e| {
                parts[usize::from(u32::from(e.empty) <= NEAR_MAX_EMPTY)] += 1
            });
            assert!(parts[0] > 0 && parts[1] > 0, "{parts:?}");
        }
    }
}
