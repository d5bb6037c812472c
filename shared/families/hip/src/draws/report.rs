//! What a `hip-draws` job reports: the counts as text and JSON (with the
//! counts up to symmetry from Burnside's lemma where the method counts fixed
//! colourings), the listed boards for the results file, and the first draw
//! boards as figures for the dashboard.

use super::{DrawsSummary, HipDraws, Method};
use crate::dfs;
use orchard_core::figure::{Boards, Cell, Figure, Grid, Swatch, Tone};
use orchard_core::{FamilyReport, SearchFamily};

/// Draw boards drawn on the dashboard (the first of the sorted list).
const FIGURE_BOARDS: usize = 6;

/// A board as the results file writes it (one digit per cell, rows
/// separated by `/`) as a grid of cells whose state is the colour digit;
/// `None` if the text is not a rectangle of digits.
fn board_grid(caption: &str, board: &str) -> Option<Grid> {
    let rows: Vec<&str> = board.split('/').collect();
    let cols = rows.first()?.len();
    if rows
        .iter()
        .any(|r| r.len() != cols || !r.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let cells = rows
        .iter()
        .flat_map(|r| r.chars())
        .map(|c| Cell {
            state: c.to_string(),
            label: String::new(),
        })
        .collect();
    Grid::new(caption, rows.len() as u32, cols as u32, cells).ok()
}

/// A count as JSON: a number when it fits `u64`, else a decimal string.
fn json_count(v: u128) -> serde_json::Value {
    match u64::try_from(v) {
        Ok(x) => serde_json::Value::from(x),
        Err(_) => serde_json::Value::from(v.to_string()),
    }
}

impl HipDraws {
    /// Burnside: `(draws + sum of fixed counts) / |G|`, if the summary is
    /// complete enough to divide exactly.
    fn burnside(sum: u128, fixed: &[u128], g: usize) -> Option<u128> {
        let mut total = sum;
        for &f in fixed.iter().skip(1) {
            total = total.checked_add(f)?;
        }
        total.is_multiple_of(g as u128).then_some(total / g as u128)
    }

    pub(super) fn report_of(&self, s: &DrawsSummary) -> FamilyReport {
        let p = &self.params;
        let board = p.board();
        let k = p.colors as usize;
        let method = p.resolved_method();
        let g = board.symmetries();
        let (distinct, distinct_playable) = match method {
            Method::Profile | Method::Sandwich => (
                Self::burnside(s.draws, &s.fixed_draws, g),
                Self::burnside(s.playable, &s.fixed_playable, g),
            ),
            _ => (Some(s.distinct), Some(s.distinct_playable)),
        };
        let stones: Vec<u32> = dfs::playable_target(board.n, k)[..k].to_vec();
        let mut boards = s.boards.clone();
        boards.sort();
        let listed = !s.unlisted;
        let json = serde_json::json!({
            "family": <HipDraws as SearchFamily>::NAME,
            "rows": board.rows,
            "cols": board.cols,
            "colors": k,
            "method": method,
            "squares": board.squares.len(),
            "symmetries": g,
            "draws": json_count(s.draws),
            "playable": json_count(s.playable),
            "playable_stones": stones,
            "distinct": distinct.map(json_count),
            "distinct_playable": distinct_playable.map(json_count),
            "listed": listed,
            "nodes": s.nodes,
            "peak_dp_bytes": s.peak_dp_bytes,
            "widest_layer": s.widest_layer,
            "memory_limit_mib": p.memory_limit,
            "memory_splits": s.memory_splits,
        });
        let mut text = vec![
            format!(
                "{}x{} board, {k} colours, {} squares: {} draws, {} playable (stones {:?})",
                board.rows,
                board.cols,
                board.squares.len(),
                s.draws,
                s.playable,
                stones
            ),
            format!(
                "up to the {g} symmetries: {} draws, {} playable",
                distinct.map_or("?".into(), |v| v.to_string()),
                distinct_playable.map_or("?".into(), |v| v.to_string())
            ),
        ];
        if listed {
            text.push(format!(
                "{} boards listed in the results file",
                boards.len()
            ));
        }
        if method == Method::Profile {
            text.push(format!(
                "DP: widest layer {} states, at most {:.1} MiB in one unit (limit: {}), {} units split to fit",
                s.widest_layer,
                s.peak_dp_bytes as f64 / f64::from(1 << 20),
                p.memory_limit.map_or("none".to_string(), |m| format!("{m} MiB")),
                s.memory_splits
            ));
        }
        if method == Method::Sandwich {
            text.push(format!(
                "sandwich: inner rows walked, outer rows counted per leaf; {:.1} MiB of tables per unit",
                s.peak_dp_bytes as f64 / f64::from(1 << 20)
            ));
        }
        text.push(format!("nodes explored: {}", s.nodes));
        FamilyReport {
            json,
            text,
            results_lines: if listed { boards } else { Vec::new() },
        }
    }

    /// The first draw boards found, as grids of colours (sorted, as in the
    /// results file); none when the boards are not listed (too many, or the
    /// profile method, which counts without visiting boards).
    pub(super) fn figures_of(&self, s: &DrawsSummary) -> Vec<Figure> {
        let k = self.params.colors as usize;
        let legend = (0..k)
            .map(|c| Swatch {
                state: c.to_string(),
                text: format!("colour {}", c + 1),
                tone: Tone::DISTINCT[c % Tone::DISTINCT.len()],
            })
            .collect();
        let (note, grids) = if s.unlisted {
            (
                "not listed: too many draws, or a method that only counts".to_string(),
                Vec::new(),
            )
        } else {
            let mut boards: Vec<&String> = s.boards.iter().collect();
            boards.sort();
            let grids = boards
                .iter()
                .take(FIGURE_BOARDS)
                .enumerate()
                .filter_map(|(i, b)| board_grid(&format!("draw {}", i + 1), b))
                .collect::<Vec<_>>();
            let note = if boards.is_empty() {
                "none found so far".to_string()
            } else {
                format!(
                    "the first {} of {} (in the results file's order)",
                    grids.len(),
                    boards.len()
                )
            };
            (note, grids)
        };
        vec![Figure::Boards(Boards {
            title: "draw boards found".to_string(),
            note,
            legend,
            grids,
        })]
    }
}
