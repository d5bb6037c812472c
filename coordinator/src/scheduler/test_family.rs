//! A synthetic search family for the scheduler's tests, as small as one can
//! be: the search tree is a row of `leaves` leaves with ids `0..leaves`; a
//! unit is a half-open range `[lo, hi)` of them; exploring a unit within a
//! budget visits that many leaves from `lo` and hands the rest back as one
//! or two units. A summary counts the leaves visited and keeps a bitset of
//! them, so that a leaf merged twice is caught (`twice`) and a leaf never
//! merged shows (`distinct < leaves`).
//!
//! `Leaves<true>` ("leaves-moot") has moot units: once the leaf `target` is
//! merged every other unit is moot (a sibling "won"), and until then units
//! past the target must wait (young brothers wait), a wider one counting as
//! more speculative (more leaves searched in vain). Its last `uncovered`
//! leaves are in no root unit: the family says the answer still needs them
//! (`MootUnits::still_needed`) once the rest is merged, as a family whose
//! pruning argument failed would; `stuck` asks for them even when merged.
//!
//! A unit of one leaf is never asked to split for an idle worker (see
//! `SearchFamily::split_on_idle`).
//!
//! "leaves-moot" takes lemmas of 8 bytes, a leaf number (little-endian),
//! only to observe them (`LemmaExchange::observe`): units above the lowest
//! leaf observed wait too, as a family whose guess of the answer turned,
//! and a unit above both that leaf and the target counts its width twice.
//!
//! Written against the `SearchFamily` trait and erased with `Erased`, like
//! a real family; this is the one file to adapt when that trait changes.

use std::sync::{Arc, Mutex};

use orchard_core::{
    Capabilities, DynExploration, DynFamily, Erased, Exploration, ExploreContext, FamilyError,
    FamilyReport, Host, LemmaExchange, LocalFlags, MootJudge, MootUnits, ParamError, PreparedJob,
    SearchFamily,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeafParams {
    pub leaves: u64,
    pub roots: u64,
    pub target: Option<u64>,
    /// The last leaves, in no root unit (see the module's doc).
    #[serde(default)]
    pub uncovered: u64,
    #[serde(default)]
    pub stuck: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub lo: u64,
    pub hi: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Visited {
    pub leaves: u64,
    pub bits: Vec<u64>,
    /// Leaves merged more than once.
    pub twice: u64,
}

impl Visited {
    fn has(&self, leaf: u64) -> bool {
        self.bits
            .get((leaf / 64) as usize)
            .is_some_and(|w| w >> (leaf % 64) & 1 == 1)
    }
}

pub struct Leaves<const MOOT: bool>(LeafParams, Observed);

/// The lowest leaf observed in lemmas (see the module's doc).
type Observed = Mutex<Option<u64>>;

impl<const MOOT: bool> SearchFamily for Leaves<MOOT> {
    const NAME: &'static str = if MOOT { "leaves-moot" } else { "leaves" };
    const ABOUT: &'static str = "a row of leaves (tests)";
    type Params = LeafParams;
    type Unit = Range;
    type Summary = Visited;

    fn new(p: LeafParams, _: &Host) -> Result<Self, ParamError> {
        if p.uncovered >= p.leaves {
            return Err(ParamError::new("uncovered", "below --leaves"));
        }
        if p.roots == 0 || p.roots > p.leaves - p.uncovered {
            return Err(ParamError::new("roots", "between 1 and the covered leaves"));
        }
        Ok(Leaves(p, Mutex::new(None)))
    }

    fn root_units(&self) -> Vec<Range> {
        let p = &self.0;
        let cut = |i: u64| (p.leaves - p.uncovered) * i / p.roots;
        (0..p.roots)
            .map(|i| Range {
                lo: cut(i),
                hi: cut(i + 1),
            })
            .collect()
    }

    fn explore(
        &self,
        u: &Range,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<Visited, Range>, FamilyError> {
        let end = u.hi.min(u.lo.saturating_add(ctx.budget.max(1)));
        let mut v = Visited {
            leaves: end - u.lo,
            bits: vec![0; u.hi.div_ceil(64) as usize],
            twice: 0,
        };
        for leaf in u.lo..end {
            v.bits[(leaf / 64) as usize] |= 1 << (leaf % 64);
        }
        if end == u.hi {
            return Ok(Exploration::Finished(v));
        }
        let mid = end + (u.hi - end) / 2;
        let rest = if mid == end {
            vec![Range { lo: end, hi: u.hi }]
        } else {
            vec![Range { lo: end, hi: mid }, Range { lo: mid, hi: u.hi }]
        };
        Ok(Exploration::Split { explored: v, rest })
    }

    fn merge(&self, into: &mut Visited, other: Visited) -> Result<(), FamilyError> {
        into.leaves += other.leaves;
        into.twice += other.twice;
        if into.bits.len() < other.bits.len() {
            into.bits.resize(other.bits.len(), 0);
        }
        for (a, b) in into.bits.iter_mut().zip(other.bits) {
            into.twice += u64::from((*a & b).count_ones());
            *a |= b;
        }
        Ok(())
    }

    fn nodes(s: &Visited) -> u64 {
        s.leaves
    }

    fn report(&self, s: &Visited) -> FamilyReport {
        let distinct: u32 = s.bits.iter().map(|w| w.count_ones()).sum();
        FamilyReport {
            json: serde_json::json!({ "leaves": s.leaves, "distinct": distinct, "twice": s.twice }),
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }

    fn unit_label(&self, u: &Range) -> String {
        format!("{}..{}", u.lo, u.hi)
    }

    /// A one-leaf unit has no rest to hand back.
    fn split_on_idle(&self, u: &Range) -> bool {
        u.hi - u.lo > 1
    }

    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            moot_units: MOOT.then_some(self as &dyn MootUnits<Self>),
            lemmas: MOOT.then_some(self as &dyn LemmaExchange),
            ..Capabilities::default()
        }
    }
}

impl<const MOOT: bool> MootUnits<Leaves<MOOT>> for Leaves<MOOT> {
    fn judge(&self, merged: &Visited) -> Box<dyn MootJudge<Range>> {
        Box::new(LeavesJudge {
            waits_above: [self.0.target, *self.1.lock().unwrap()],
            target_merged: self.0.target.is_some_and(|t| merged.has(t)),
        })
    }

    /// The uncovered leaves, as one unit, while the last is not merged (or
    /// always, if `stuck`) and the target has not decided.
    fn still_needed(&self, merged: &Visited) -> Vec<Range> {
        let p = &self.0;
        let decided = p.target.is_some_and(|t| merged.has(t));
        if p.uncovered == 0 || decided || (merged.has(p.leaves - 1) && !p.stuck) {
            return Vec::new();
        }
        vec![Range {
            lo: p.leaves - p.uncovered,
            hi: p.leaves,
        }]
    }
}

/// Once `target` is merged every unit is moot; until then the units above
/// it (or above the lowest leaf observed) wait, by their width times the
/// leaves of the two they are above.
struct LeavesJudge {
    /// The target and the lowest leaf observed.
    waits_above: [Option<u64>; 2],
    target_merged: bool,
}

impl MootJudge<Range> for LeavesJudge {
    fn is_moot(&self, _: &Range) -> bool {
        self.target_merged
    }

    fn speculation(&self, u: &Range) -> u32 {
        let above = self.waits_above.iter().flatten().filter(|&&t| u.lo > t);
        let times = above.count() as u32;
        if times > 0 && !self.target_merged {
            u32::try_from(u.hi - u.lo).unwrap_or(u32::MAX).max(1) * times
        } else {
            0
        }
    }
}

impl<const MOOT: bool> LemmaExchange for Leaves<MOOT> {
    fn take(&self, _: usize) -> Vec<u8> {
        Vec::new()
    }

    fn check(&self, lemmas: &[u8]) -> Result<(), FamilyError> {
        match lemmas.len() {
            8 => Ok(()),
            n => Err(FamilyError::BadLemmas(format!("{n} bytes, not 8"))),
        }
    }

    fn learn(&self, lemmas: &[u8]) -> Result<u64, FamilyError> {
        self.check(lemmas).map(|()| 0)
    }

    /// The lowest leaf observed; true when it moved down.
    fn observe(&self, lemmas: &[u8]) -> bool {
        let Ok(bytes) = <[u8; 8]>::try_from(lemmas) else {
            return false;
        };
        let leaf = u64::from_le_bytes(bytes);
        let mut low = self.1.lock().unwrap();
        if low.is_some_and(|l| l <= leaf) {
            return false;
        }
        *low = Some(leaf);
        true
    }
}

/// The family lookup of the tests: `leaves` and `leaves-moot`.
pub fn prepare(family: &str, params_json: &str) -> Result<Arc<dyn PreparedJob>, String> {
    let f: &dyn DynFamily = match family {
        "leaves" => &Erased::<Leaves<false>>::new(),
        "leaves-moot" => &Erased::<Leaves<true>>::new(),
        _ => return Err(format!("unknown search family '{family}'")),
    };
    f.prepare(params_json, &Host::default())
        .map_err(|e| e.to_string())
}

/// The canonical parameters of a job of `leaves` leaves in `roots` roots.
pub fn params(leaves: u64, roots: u64, target: Option<u64>) -> String {
    serde_json::to_string(&LeafParams {
        leaves,
        roots,
        target,
        uncovered: 0,
        stuck: false,
    })
    .expect("parameters serialise")
}

/// The range a unit covers.
pub fn range(payload: &[u8]) -> Range {
    orchard_core::codec::decode(payload).expect("a unit of the leaves family")
}

/// Explores `payload` within `budget` leaves, as a worker would.
pub fn explore(job: &dyn PreparedJob, payload: &[u8], budget: u64) -> DynExploration {
    let flags = LocalFlags::default();
    job.explore(payload, &flags.context(budget))
        .expect("leaves explore")
}
