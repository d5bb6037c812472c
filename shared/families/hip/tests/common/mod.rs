//! What the `hip-solve` test crates share: a job of given parameters, the
//! winner's code, and the check of a report (its fields, and a principal
//! variation that is a legal line agreeing with the winner). Each test
//! crate uses some of these.
#![allow(dead_code)]

use orchard_core::{Host, ParamError, SearchFamily};
use orchard_hip::{reference, HipSolve, SolveParams, SolveSummary};

pub fn params(rows: u32, cols: u32, double: bool) -> SolveParams {
    SolveParams::new(rows, cols, double)
}

/// Every position counts as a unit root (no internal top tree).
pub fn at_depth0(rows: u32, cols: u32, double: bool) -> SolveParams {
    SolveParams {
        depth: Some(0),
        expect: None,
        ..params(rows, cols, double)
    }
}

/// A job of these parameters, with a transposition table of its own
/// (created on its first search).
pub fn job(p: &SolveParams) -> HipSolve {
    HipSolve::new(p.clone(), &Host::default()).expect("valid parameters")
}

pub fn validate(p: &SolveParams) -> Result<HipSolve, ParamError> {
    HipSolve::new(p.clone(), &Host::default())
}

pub fn winner(p: &SolveParams, s: &SolveSummary) -> serde_json::Value {
    job(p).report(s).json["winner"].clone()
}

pub fn code(v: i8) -> serde_json::Value {
    serde_json::json!(match v {
        1 => 1,
        -1 => 2,
        _ => 0,
    })
}

/// The report's fields, and a principal variation that is a legal line whose
/// end, if it reaches one, agrees with the winner.
pub fn check_report(p: &SolveParams, json: &serde_json::Value) {
    let (r, c) = (p.rows as usize, p.cols as usize);
    assert!(json["nodes"].as_u64().unwrap() > 0);
    let openings = json["openings"].as_array().unwrap();
    assert!(!openings.is_empty());
    let w = json["winner"].as_u64().unwrap();
    let root: i64 = match w {
        1 => 1,
        0 => 0,
        _ => -1,
    };
    // Openings carry intervals (alpha-beta proves only bounds for some): none
    // beats the root's value, and one achieves it exactly.
    let iv: Vec<(i64, i64)> = openings
        .iter()
        .map(|o| {
            (
                o["value"][0].as_i64().unwrap(),
                o["value"][1].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(
        iv.iter()
            .all(|&(lo, hi)| lo <= hi && hi >= -1 && lo <= root),
        "{iv:?}"
    );
    assert!(iv.iter().all(|&(_, hi)| hi <= 1));
    assert!(iv.contains(&(root, root)), "{iv:?}");
    assert!(iv.iter().all(|&(lo, _)| lo <= root));
    let squares = reference::squares_by_subsets(r, c);
    let mut cells = vec![0u8; r * c];
    let pv = json["pv"].as_array().unwrap();
    assert!(!pv.is_empty());
    for (s, name) in pv.iter().enumerate() {
        let name = name.as_str().unwrap().as_bytes();
        let col = (name[0] - b'a') as usize;
        let row: usize = std::str::from_utf8(&name[1..])
            .unwrap()
            .parse::<usize>()
            .unwrap()
            - 1;
        let i = row * c + col;
        assert_eq!(cells[i], 0, "pv plays on an empty cell");
        let who = reference::mover(s, p.double);
        cells[i] = who;
        if squares.iter().any(|q| q.iter().all(|&x| cells[x] == who)) {
            assert_eq!(s + 1, pv.len(), "the pv ends with the losing move");
            assert_eq!(w, if who == 1 { 2 } else { 1 }, "the pv's loser loses");
        }
    }
    let last_lost = !pv.is_empty() && {
        let who = reference::mover(pv.len() - 1, p.double);
        squares.iter().any(|q| q.iter().all(|&x| cells[x] == who))
    };
    if cells.iter().all(|&x| x != 0) && !last_lost {
        assert_eq!(w, 0, "a full board is a draw");
    }
}

/// A tiny deterministic generator for random positions.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}
