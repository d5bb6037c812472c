//! The report of a `hip-solve` job: the root's value by minimax over the
//! recorded tree, each opening's value (with the replies settled so far
//! while a search runs), the principal variation, as text and as JSON.
//! Only presentation lives here; the values come from [`Eval`] and the line
//! from [`super::pv`].

use super::eval::Eval;
use super::game::{Child, Game};
use super::pv::recorded_pv;
use super::summary::SolveSummary;
use super::HipSolve;
use crate::search::Pos;
use orchard_core::{FamilyReport, SearchFamily};

/// The winner as Franke's tables write it: 1 (first player), 2 (second
/// player), 0 (draw).
fn winner_code(v: i8) -> u8 {
    match v {
        1 => 1,
        -1 => 2,
        _ => 0,
    }
}

/// The winner's code when the interval is one value, else `null`.
fn describe(lo: i8, hi: i8) -> serde_json::Value {
    if lo == hi {
        serde_json::Value::from(winner_code(lo))
    } else {
        serde_json::Value::Null
    }
}

/// A value interval (the first player's) in words.
fn value_words(lo: i8, hi: i8) -> &'static str {
    match (lo, hi) {
        (1, 1) => "first player wins",
        (0, 0) => "draw",
        (-1, -1) => "second player wins",
        (-1, 0) => "the first player does not win (a draw or the second player)",
        (0, 1) => "the second player does not win (a draw or the first player)",
        _ => "unknown",
    }
}

/// The family's report (see [`SearchFamily::report`]): the root's value,
/// the openings', the principal variation and the nodes.
pub(super) fn report(job: &HipSolve, s: &SolveSummary) -> FamilyReport {
    let p = &job.params;
    let game = Game::new(p);
    let board = &game.board;
    let mut e = Eval::new(&game, s, p.root_depth());
    let (lo, hi, _) = e.eval(&Pos::EMPTY);
    // Openings: the first stone, one per symmetry class.
    let mut openings = Vec::new();
    let mut opening_lines = Vec::new();
    let mut seen = Vec::new();
    for (c, child) in game.children(&Pos::EMPTY) {
        if let Child::Pos(cp) = child {
            let (k, _) = game.key(&cp);
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            let (clo, chi, _) = e.eval(&cp);
            let mut line = format!("opening {}: {}", board.cell_name(c), value_words(clo, chi));
            if clo < chi {
                // Progress of a long search: the replies settled so far.
                let mut settled = Vec::new();
                let mut seen_replies = Vec::new();
                for (rc, reply) in game.children(&cp) {
                    let Child::Pos(rp) = reply else { continue };
                    let rk = game.key(&rp).0;
                    if game.full(&rp) || seen_replies.contains(&rk) {
                        continue;
                    }
                    seen_replies.push(rk);
                    let (rlo, rhi, _) = e.eval(&rp);
                    // Settled by search, not by the rules alone.
                    if (rlo, rhi) != (-1, game.p1_ceiling(&rp)) {
                        settled.push(format!("{} {}", board.cell_name(rc), value_words(rlo, rhi)));
                    }
                }
                if !settled.is_empty() {
                    line.push_str(&format!("; replies settled: {}", settled.join(", ")));
                }
            }
            opening_lines.push(line);
            openings.push(serde_json::json!({
                "cell": board.cell_name(c),
                "winner": describe(clo, chi),
                "value": [clo, chi],
            }));
        }
    }
    let pv = recorded_pv(&game, &mut e, s, lo, hi);
    let pv_names: Vec<String> = pv.iter().map(|&c| board.cell_name(c as usize)).collect();
    let solved = lo == hi;
    let json = serde_json::json!({
        "family": HipSolve::NAME,
        "rows": board.rows,
        "cols": board.cols,
        "double": p.double,
        "winner": describe(lo, hi),
        "value": [lo, hi],
        "nodes": s.nodes,
        "openings": openings,
        "pv": pv_names,
        "positions_recorded": s.known.len(),
    });
    let variant = if p.double { "Double Hip" } else { "Hip" };
    let mut text = vec![if solved {
        format!(
            "{variant} {}x{}: {}",
            board.rows,
            board.cols,
            value_words(lo, hi)
        )
    } else {
        format!(
            "{variant} {}x{}: not solved yet: {} (first player's value in {lo}..={hi})",
            board.rows,
            board.cols,
            value_words(lo, hi)
        )
    }];
    text.extend(opening_lines);
    if !pv_names.is_empty() {
        text.push(format!("principal variation: {}", pv_names.join(" ")));
    }
    text.push(format!("nodes explored: {}", s.nodes));
    // The results file holds the answer itself (the value, each
    // opening's, the principal variation and the nodes): a game value
    // has no list to write, and the file is what outlives the terminal.
    FamilyReport {
        json,
        results_lines: text.clone(),
        text,
    }
}
