//! The certificate of a nonhalting verdict: what a re-check needs, found
//! after [`Workspace::decide`] settled the machine. The deciders say only
//! which of them settled a machine; the parameters are found again by
//! trying the stage's attempts in the pipeline's order (the first that
//! settles it is the one the pipeline took), the two loops of the watched
//! run are measured on the tape ([`super::tape`]), and the last-resort
//! stage's automata are the ones it kept ([`Workspace::last_resort`]).

use crate::audit::tape::{Config, Step};
use crate::audit::Certificate;
use crate::audit::MAX_CERTIFICATE_DFA;
use crate::cps::Augment;
use crate::decide::{
    Attempt, LastResort, Stage, Workspace, AUGMENTED, CPS_GAS, DEEP, DEEPER, DEEPER_GAS_FACTOR,
    REPWL, REPWL_NODES, REPWL_STEPS, WFAR_GAS_FACTOR,
};
use crate::machine::Table;
use crate::{BusyBeaver, Decider, Outcome};

/// The buffers of the certificate search, made once per thread.
#[derive(Default)]
pub(crate) struct Finder {
    a: Config,
    b: Config,
    /// The head's position after each step (translated cyclers).
    heads: Vec<i64>,
    /// Records of the run so far: (time, head, state, the 128 cells
    /// behind, right side).
    records: Vec<(u32, i64, u8, u128, bool)>,
}

/// The 128 cells behind the head of a record (bit `i`: `i` cells back).
fn behind(c: &Config, right: bool) -> u128 {
    let p = c.head();
    (0..128).fold(0u128, |acc, i| {
        let cell = if right { c.cell(p - i) } else { c.cell(p + i) };
        acc | (u128::from(cell) << i)
    })
}

impl Finder {
    /// The certificate of `table`, which `ws` just settled as
    /// `Never(decider)` ([`Workspace::last_stage`] says which stage).
    pub fn certificate(
        &mut self,
        job: &BusyBeaver,
        ws: &mut Workspace,
        table: &Table,
        decider: Decider,
    ) -> Option<Certificate> {
        let n = job.n;
        match ws.last_stage {
            Stage::Run | Stage::LongRun => {
                let limit = if ws.last_stage == Stage::Run {
                    ws.steps
                } else {
                    ws.long
                };
                match decider {
                    Decider::Cycler => self.cycler(table, u64::from(limit)),
                    _ => {
                        let (outcome, t2) = ws.run(table, n, limit);
                        debug_assert_eq!(outcome, Outcome::Never(Decider::TranslatedCycler));
                        self.translated(table, t2)
                    }
                }
            }
            Stage::Backward => Some(Certificate::Backward {
                depth: job.depth as u8,
            }),
            Stage::NGramCps => (1..=job.ngram)
                .find(|&k| ws.ngram_cps(table, k))
                .map(|k| Certificate::NGram { k: k as u8 }),
            Stage::Augmented => AUGMENTED
                .iter()
                .filter(|&&(_, k)| k <= job.ngram)
                .find(|&&(how, k)| ws.try_augmented(table, k, how, CPS_GAS).0)
                .map(|&(how, k)| cps(how, k, CPS_GAS)),
            Stage::RepWl => REPWL
                .iter()
                .find(|&&(l, t)| ws.try_repwl(table, l, t, REPWL_STEPS, REPWL_NODES).0)
                .map(|&(l, t)| repwl(l, t, REPWL_NODES)),
            Stage::Deep => {
                let gas = job.deep_gas as usize;
                let deeper = gas.saturating_mul(DEEPER_GAS_FACTOR);
                DEEP.iter()
                    .map(|&a| (a, gas))
                    .chain(DEEPER.iter().map(|&a| (a, deeper)))
                    .find(|&(a, gas)| ws.try_attempt(table, n, a, gas))
                    .map(|(a, gas)| match a {
                        Attempt::Far(d) => Certificate::Far {
                            dfa: d as u8,
                            gas: gas as u32,
                        },
                        Attempt::Cps(how, k) => cps(how, k, gas),
                        Attempt::RepWl(l, t) => repwl(l, t, gas),
                    })
            }
            Stage::Wfar => {
                let gas = u64::from(job.deep_gas).saturating_mul(WFAR_GAS_FACTOR);
                ws.try_wfar(table, n, gas).map(Certificate::Wfar)
            }
            Stage::Horizon => match ws.last_resort.clone()? {
                LastResort::TranslatedCycler { t1, t2 } => {
                    Some(Certificate::TranslatedCycler { t1, t2 })
                }
                LastResort::Far { mirror, dfa } => {
                    let mut table = [0u8; 2 * MAX_CERTIFICATE_DFA];
                    table.get_mut(..dfa.len())?.copy_from_slice(&dfa);
                    Some(Certificate::FarDfa {
                        mirror,
                        states: (dfa.len() / 2) as u8,
                        dfa: table,
                    })
                }
                LastResort::Wfar(w) => Some(Certificate::Wfar(w)),
            },
            Stage::Undecided => None,
        }
    }

    /// Brent's cycle detection on the whole configuration gives the
    /// period; a run `period` steps ahead of another gives the pre-period.
    fn cycler(&mut self, table: &Table, limit: u64) -> Option<Certificate> {
        // Brent meets the cycle within twice the steps the watched run
        // took, which was at most `limit`.
        let room = 4 * limit + 4;
        let (a, b) = (&mut self.a, &mut self.b);
        a.reset(room);
        b.copy_from(a);
        let (mut power, mut lam) = (1u64, 0u64);
        let period = loop {
            if a.time >= room || a.step(table) == Step::Halted {
                return None;
            }
            lam += 1;
            if a.same(b) {
                break lam;
            }
            if lam == power {
                b.copy_from(a);
                power *= 2;
                lam = 0;
            }
        };
        a.reset(room);
        b.reset(room);
        for _ in 0..period {
            b.step(table);
        }
        while !a.same(b) {
            a.step(table);
            b.step(table);
        }
        Some(Certificate::Cycler {
            preperiod: u32::try_from(a.time).ok()?,
            period: u32::try_from(period).ok()?,
        })
    }

    /// The record at `t2`, where the watched run stopped, and the latest
    /// earlier record it repeats.
    fn translated(&mut self, table: &Table, t2: u32) -> Option<Certificate> {
        let c = &mut self.a;
        c.reset(u64::from(t2) + 1);
        self.heads.clear();
        self.records.clear();
        self.heads.push(0);
        while c.time < u64::from(t2) {
            let step = c.step(table);
            self.heads.push(c.head());
            let right = match step {
                Step::Halted => return None,
                Step::Moved => continue,
                Step::RightRecord => true,
                Step::LeftRecord => false,
            };
            self.records
                .push((c.time as u32, c.head(), c.state, behind(c, right), right));
        }
        let &(time, p2, state, cells, right) = self.records.last()?;
        if time != t2 {
            return None;
        }
        // The farthest the head went back from each earlier record until
        // t2, kept while walking back in time.
        let mut back = p2;
        let mut t = t2 as usize;
        for &(t1, p1, s1, cells1, right1) in self.records.iter().rev().skip(1) {
            while t > t1 as usize {
                t -= 1;
                let h = self.heads[t];
                back = if right { back.min(h) } else { back.max(h) };
            }
            let span = (p1 - back).unsigned_abs();
            if right1 == right && s1 == state && span < 128 {
                let mask = if span == 127 {
                    u128::MAX
                } else {
                    (1u128 << (span + 1)) - 1
                };
                if (cells ^ cells1) & mask == 0 {
                    return Some(Certificate::TranslatedCycler { t1, t2 });
                }
            }
        }
        None
    }
}

fn cps(how: Augment, k: u32, gas: usize) -> Certificate {
    Certificate::Cps {
        history: Certificate::history(how),
        k: k as u8,
        gas: gas as u32,
    }
}

fn repwl(l: u32, t: u8, gas: usize) -> Certificate {
    Certificate::RepWl {
        len: l as u8,
        threshold: t,
        steps: REPWL_STEPS,
        gas: gas as u32,
    }
}
