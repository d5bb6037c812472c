//! The bytes of an audit file (version 1, see [`crate::audit`]): records
//! encoded into a buffer, and a streaming reader over the zstd stream.

use std::io::{BufReader, ErrorKind, Read};

use crate::audit::MAX_CERTIFICATE_DFA;
use crate::audit::{AuditError, MAGIC, VERSION};
use crate::cps::Augment;
use crate::machine::{Table, MAX_STATES};
use crate::wfar::{self, Wdfa, MAX_CERTIFICATE_WDFA};
use crate::{BbUnit, BusyBeaverParams, Decider};

/// The history byte of an LRU closed position set.
pub(crate) const LRU: u8 = 255;

const HALTS: u8 = 0x00;
const CYCLER: u8 = 0x10;
const TRANSLATED: u8 = 0x11;
const BACKWARD: u8 = 0x12;
const NGRAM: u8 = 0x13;
const CPS: u8 = 0x14;
const REPWL: u8 = 0x15;
const FAR: u8 = 0x16;
const WFAR: u8 = 0x17;
const FAR_DFA: u8 = 0x18;
const UNDECIDED: u8 = 0x20;
const UNIT: u8 = b'U';
const END: u8 = b'E';

/// What a re-check of a nonhalting verdict needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Certificate {
    /// The configuration after `preperiod` steps comes back `period` steps
    /// later.
    Cycler { preperiod: u32, period: u32 },
    /// The configurations at `t1 < t2` are records on the same side, in
    /// the same state, equal on the cells the head went back over between
    /// them.
    TranslatedCycler { t1: u32, t2: u32 },
    /// Backward reasoning to this depth.
    Backward { depth: u8 },
    /// The plain stage's n-gram closed position set with n-grams of `k`.
    NGram { k: u8 },
    /// A closed position set of [`crate::cps`]: visit history (`255`:
    /// LRU), n-gram length, most local configurations.
    Cps { history: u8, k: u8, gas: u32 },
    /// A repeated word list: word length, threshold, macro steps, most
    /// configurations.
    RepWl {
        len: u8,
        threshold: u8,
        steps: u32,
        gas: u32,
    },
    /// Finite automata reduction with at most `dfa` states, `gas` prefixes.
    Far { dfa: u8, gas: u32 },
    /// A weighted finite automata reduction certificate.
    Wfar(wfar::Certificate),
    /// A finite automata reduction certificate: the DFA itself
    /// ([`super::dfa`]), `states` states, `δ(q, b)` at `2 q + b`, read
    /// over the mirrored machine when `mirror`.
    FarDfa {
        mirror: bool,
        states: u8,
        dfa: [u8; 2 * MAX_CERTIFICATE_DFA],
    },
}

impl Certificate {
    /// The augmentation of a [`Certificate::Cps`] history byte.
    pub fn augment(history: u8) -> Augment {
        if history == LRU {
            Augment::Lru
        } else {
            Augment::History(u32::from(history))
        }
    }

    /// The history byte of an augmentation.
    pub fn history(how: Augment) -> u8 {
        match how {
            Augment::History(h) => h as u8,
            Augment::Lru => LRU,
        }
    }
}

/// A machine's verdict, with what a re-check needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Halts { steps: u32, ones: u32, at: u8 },
    Never(Certificate),
    Undecided,
}

/// One machine of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub table: Table,
    pub entry: Entry,
}

/// The counts of the end record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub machines: u64,
    pub halting: u64,
    pub never: [u64; Decider::COUNT],
    pub undecided: u64,
}

impl Totals {
    pub fn add(&mut self, e: &Entry) {
        self.machines += 1;
        match e {
            Entry::Halts { .. } => self.halting += 1,
            Entry::Never(c) => self.never[c.decider() as usize] += 1,
            Entry::Undecided => self.undecided += 1,
        }
    }

    pub fn nonhalting(&self) -> u64 {
        self.never.iter().sum()
    }
}

/// The header: the magic, the version, the job's parameters.
pub(crate) fn header(p: &BusyBeaverParams) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(VERSION);
    out.push(p.states as u8);
    for x in [
        p.step_limit,
        p.depth,
        p.ngram,
        p.long_limit,
        p.halt_horizon,
        p.deep_gas,
    ] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.push(u8::from(p.last_resort));
    out.push(u8::from(p.mitm_wfar));
    out
}

/// Appends a unit's opening.
pub(crate) fn put_unit(out: &mut Vec<u8>, unit: &BbUnit, n: usize) {
    out.push(UNIT);
    out.push(u8::from(unit.subtree));
    out.extend_from_slice(&unit.table[..2 * n]);
}

fn put_u32(out: &mut Vec<u8>, x: u32) {
    out.extend_from_slice(&x.to_le_bytes());
}

fn put_wdfa(out: &mut Vec<u8>, w: &Wdfa) {
    out.push(w.states() as u8);
    for q in 0..w.states() {
        out.extend_from_slice(&[
            w.next[q][0],
            w.weight[q][0] as u8,
            w.next[q][1],
            w.weight[q][1] as u8,
        ]);
    }
}

/// Appends one record.
pub(crate) fn put_record(out: &mut Vec<u8>, r: &Record, n: usize) {
    let tag = match &r.entry {
        Entry::Halts { .. } => HALTS,
        Entry::Undecided => UNDECIDED,
        Entry::Never(c) => match c {
            Certificate::Cycler { .. } => CYCLER,
            Certificate::TranslatedCycler { .. } => TRANSLATED,
            Certificate::Backward { .. } => BACKWARD,
            Certificate::NGram { .. } => NGRAM,
            Certificate::Cps { .. } => CPS,
            Certificate::RepWl { .. } => REPWL,
            Certificate::Far { .. } => FAR,
            Certificate::Wfar(_) => WFAR,
            Certificate::FarDfa { .. } => FAR_DFA,
        },
    };
    out.push(tag);
    out.extend_from_slice(&r.table[..2 * n]);
    match r.entry {
        Entry::Halts { steps, ones, at } => {
            put_u32(out, steps);
            put_u32(out, ones);
            out.push(at);
        }
        Entry::Undecided => {}
        Entry::Never(ref c) => match *c {
            Certificate::Cycler { preperiod, period } => {
                put_u32(out, preperiod);
                put_u32(out, period);
            }
            Certificate::TranslatedCycler { t1, t2 } => {
                put_u32(out, t1);
                put_u32(out, t2);
            }
            Certificate::Backward { depth } => out.push(depth),
            Certificate::NGram { k } => out.push(k),
            Certificate::Cps { history, k, gas } => {
                out.extend_from_slice(&[history, k]);
                put_u32(out, gas);
            }
            Certificate::RepWl {
                len,
                threshold,
                steps,
                gas,
            } => {
                out.extend_from_slice(&[len, threshold]);
                put_u32(out, steps);
                put_u32(out, gas);
            }
            Certificate::Far { dfa, gas } => {
                out.push(dfa);
                put_u32(out, gas);
            }
            Certificate::Wfar(ref w) => {
                out.extend_from_slice(&w.max_d.to_le_bytes());
                put_wdfa(out, &w.left);
                put_wdfa(out, &w.right);
            }
            Certificate::FarDfa {
                mirror,
                states,
                dfa,
            } => {
                out.extend_from_slice(&[states, u8::from(mirror)]);
                out.extend_from_slice(&dfa[..2 * usize::from(states)]);
            }
        },
    }
}

/// Appends the end record.
pub(crate) fn put_end(out: &mut Vec<u8>, t: &Totals) {
    out.push(END);
    for x in [t.machines, t.halting]
        .into_iter()
        .chain(t.never)
        .chain([t.undecided])
    {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// What comes next in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Unit(BbUnit),
    Record(Record),
    End(Totals),
}

/// Reads an audit file item by item, checking its framing.
pub struct Reader<R: Read> {
    inner: BufReader<zstd::stream::read::Decoder<'static, BufReader<R>>>,
    /// The job's parameters, from the header.
    pub params: BusyBeaverParams,
    n: usize,
    /// Records read so far.
    pub machines: u64,
    ended: bool,
}

impl<R: Read> Reader<R> {
    /// Opens a stream: reads and checks the header.
    pub fn new(source: R) -> Result<Reader<R>, AuditError> {
        let decoder = zstd::stream::read::Decoder::new(source)?;
        let mut r = Reader {
            inner: BufReader::with_capacity(1 << 16, decoder),
            params: BusyBeaverParams {
                states: 0,
                step_limit: 0,
                depth: 0,
                ngram: 0,
                long_limit: 0,
                halt_horizon: 0,
                deep_gas: 0,
                far_solver: None,
                certificates: None,
                last_resort: false,
                mitm_wfar: false,
            },
            n: 0,
            machines: 0,
            ended: false,
        };
        let mut magic = [0u8; 16];
        r.inner.read_exact(&mut magic).map_err(|e| match e.kind() {
            ErrorKind::UnexpectedEof => r.io(e),
            _ => AuditError::NotAnAuditFile(e.to_string()),
        })?;
        if &magic != MAGIC {
            return Err(AuditError::NotAnAuditFile(format!(
                "it starts with {:?}",
                String::from_utf8_lossy(&magic)
            )));
        }
        let version = r.byte()?;
        if !(1..=VERSION).contains(&version) {
            return Err(AuditError::Version(version));
        }
        let states = r.byte()?;
        if states == 0 || states as usize > MAX_STATES {
            return Err(r.corrupt(format!("{states} states")));
        }
        r.n = states as usize;
        r.params = BusyBeaverParams {
            states: u32::from(states),
            step_limit: r.u32()?,
            depth: r.u32()?,
            ngram: r.u32()?,
            long_limit: r.u32()?,
            halt_horizon: r.u32()?,
            deep_gas: r.u32()?,
            far_solver: None,
            certificates: None,
            last_resort: false,
            mitm_wfar: false,
        };
        if version >= 2 {
            r.params.last_resort = match r.byte()? {
                0 => false,
                1 => true,
                b => return Err(r.corrupt(format!("--last-resort byte {b}"))),
            };
        }
        if version >= 3 {
            r.params.mitm_wfar = match r.byte()? {
                0 => false,
                1 => true,
                b => return Err(r.corrupt(format!("--mitm-wfar byte {b}"))),
            };
        }
        Ok(r)
    }

    /// Number of states.
    pub fn states(&self) -> usize {
        self.n
    }

    fn io(&self, e: std::io::Error) -> AuditError {
        match e.kind() {
            ErrorKind::UnexpectedEof => AuditError::Truncated {
                machines: self.machines,
            },
            // The decoder's own complaints: a bad frame, a checksum that
            // does not match, a stream cut inside a block.
            _ => self.corrupt(e.to_string()),
        }
    }

    fn corrupt(&self, what: String) -> AuditError {
        AuditError::Corrupt {
            machines: self.machines,
            what,
        }
    }

    fn byte(&mut self) -> Result<u8, AuditError> {
        let mut b = [0u8; 1];
        self.inner.read_exact(&mut b).map_err(|e| self.io(e))?;
        Ok(b[0])
    }

    fn u32(&mut self) -> Result<u32, AuditError> {
        let mut b = [0u8; 4];
        self.inner.read_exact(&mut b).map_err(|e| self.io(e))?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, AuditError> {
        let mut b = [0u8; 8];
        self.inner.read_exact(&mut b).map_err(|e| self.io(e))?;
        Ok(u64::from_le_bytes(b))
    }

    fn table(&mut self) -> Result<Table, AuditError> {
        let mut t = [0u8; 2 * MAX_STATES];
        self.inner
            .read_exact(&mut t[..2 * self.n])
            .map_err(|e| self.io(e))?;
        if !crate::machine::is_well_formed(&t, self.n) {
            return Err(self.corrupt(format!("{t:?} is not a table of {} states", self.n)));
        }
        Ok(t)
    }

    fn wdfa(&mut self) -> Result<Wdfa, AuditError> {
        let len = self.byte()? as usize;
        if len == 0 || len > MAX_CERTIFICATE_WDFA {
            return Err(self.corrupt(format!("a weighted DFA of {len} states")));
        }
        let mut w = Wdfa {
            next: Vec::with_capacity(len),
            weight: Vec::with_capacity(len),
        };
        for _ in 0..len {
            let mut b = [0u8; 4];
            self.inner.read_exact(&mut b).map_err(|e| self.io(e))?;
            w.next.push([b[0], b[2]]);
            w.weight.push([b[1] as i8, b[3] as i8]);
        }
        Ok(w)
    }

    /// The next item; after [`Item::End`], checks that nothing follows
    /// (which also makes the decoder check zstd's checksum).
    pub fn next_item(&mut self) -> Result<Item, AuditError> {
        if self.ended {
            return Err(self.corrupt("read past the end record".into()));
        }
        let tag = self.byte()?;
        let certificate = match tag {
            UNIT => {
                let subtree = match self.byte()? {
                    0 => false,
                    1 => true,
                    b => return Err(self.corrupt(format!("unit flag {b}"))),
                };
                let table = self.table()?;
                return Ok(Item::Unit(BbUnit { table, subtree }));
            }
            END => {
                let mut t = Totals {
                    machines: self.u64()?,
                    halting: self.u64()?,
                    ..Totals::default()
                };
                for d in 0..Decider::COUNT {
                    t.never[d] = self.u64()?;
                }
                t.undecided = self.u64()?;
                let mut rest = Vec::new();
                self.inner
                    .read_to_end(&mut rest)
                    .map_err(|e| self.corrupt(e.to_string()))?;
                if !rest.is_empty() {
                    return Err(self.corrupt(format!("{} bytes after the end", rest.len())));
                }
                self.ended = true;
                return Ok(Item::End(t));
            }
            HALTS | UNDECIDED | CYCLER..=FAR_DFA => tag,
            _ => return Err(self.corrupt(format!("unknown tag 0x{tag:02x}"))),
        };
        let table = self.table()?;
        let entry = match certificate {
            HALTS => Entry::Halts {
                steps: self.u32()?,
                ones: self.u32()?,
                at: self.byte()?,
            },
            UNDECIDED => Entry::Undecided,
            CYCLER => Entry::Never(Certificate::Cycler {
                preperiod: self.u32()?,
                period: self.u32()?,
            }),
            TRANSLATED => Entry::Never(Certificate::TranslatedCycler {
                t1: self.u32()?,
                t2: self.u32()?,
            }),
            BACKWARD => Entry::Never(Certificate::Backward {
                depth: self.byte()?,
            }),
            NGRAM => Entry::Never(Certificate::NGram { k: self.byte()? }),
            CPS => Entry::Never(Certificate::Cps {
                history: self.byte()?,
                k: self.byte()?,
                gas: self.u32()?,
            }),
            REPWL => Entry::Never(Certificate::RepWl {
                len: self.byte()?,
                threshold: self.byte()?,
                steps: self.u32()?,
                gas: self.u32()?,
            }),
            FAR => Entry::Never(Certificate::Far {
                dfa: self.byte()?,
                gas: self.u32()?,
            }),
            FAR_DFA => {
                let states = self.byte()?;
                if states == 0 || usize::from(states) > MAX_CERTIFICATE_DFA {
                    return Err(self.corrupt(format!("a DFA of {states} states")));
                }
                let mirror = match self.byte()? {
                    0 => false,
                    1 => true,
                    b => return Err(self.corrupt(format!("DFA direction {b}"))),
                };
                let mut dfa = [0u8; 2 * MAX_CERTIFICATE_DFA];
                self.inner
                    .read_exact(&mut dfa[..2 * usize::from(states)])
                    .map_err(|e| self.io(e))?;
                Entry::Never(Certificate::FarDfa {
                    mirror,
                    states,
                    dfa,
                })
            }
            _ => {
                let max_d = self.u32()? as i32;
                let left = self.wdfa()?;
                let right = self.wdfa()?;
                Entry::Never(Certificate::Wfar(wfar::Certificate { max_d, left, right }))
            }
        };
        self.machines += 1;
        Ok(Item::Record(Record { table, entry }))
    }
}

/// Every unit and record of a file, and its end totals (for tests and
/// small trees: 858,909 records at 4 states).
#[allow(clippy::type_complexity)]
pub fn read_all<R: Read>(
    source: R,
) -> Result<(BusyBeaverParams, Vec<(BbUnit, Vec<Record>)>, Totals), AuditError> {
    let mut r = Reader::new(source)?;
    let mut units: Vec<(BbUnit, Vec<Record>)> = Vec::new();
    loop {
        match r.next_item()? {
            Item::Unit(u) => units.push((u, Vec::new())),
            Item::Record(rec) => match units.last_mut() {
                Some((_, v)) => v.push(rec),
                None => return Err(r.corrupt("a machine before the first unit".into())),
            },
            Item::End(t) => return Ok((r.params, units, t)),
        }
    }
}

/// The compressed bytes of a file of these units and records, the end
/// record counted from them: [`read_all`]'s inverse (for tests, and for
/// files edited by hand).
pub fn write_all(
    params: &BusyBeaverParams,
    units: &[(BbUnit, Vec<Record>)],
    level: i32,
) -> Result<Vec<u8>, AuditError> {
    let n = params.states as usize;
    let mut raw = header(params);
    let mut totals = Totals::default();
    for (unit, records) in units {
        put_unit(&mut raw, unit, n);
        for r in records {
            totals.add(&r.entry);
            put_record(&mut raw, r, n);
        }
    }
    put_end(&mut raw, &totals);
    let mut z = zstd::stream::write::Encoder::new(Vec::new(), level)?;
    z.include_checksum(true)?;
    std::io::Write::write_all(&mut z, &raw)?;
    Ok(z.finish()?)
}
