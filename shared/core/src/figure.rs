//! Figures: pictures of a job's answer that a family describes and the
//! dashboard draws without knowing the family.
//!
//! A family knows what is worth looking at in its summary (`hc`: how many
//! games end at each length; `hip-solve`: the board, each opening coloured
//! by what is known of it; `hip-draws`: the draw boards themselves), but the
//! coordinator and its page must stay family-agnostic: adding a family must
//! not touch them. So a family returns [`Figure`]s — a histogram, or a few
//! grids of labelled cells — in this small, family-neutral vocabulary (see
//! [`crate::SearchFamily::figures`]), and the page renders any of them the
//! same way. Colours are named from a fixed palette ([`Tone`]), never given
//! as CSS, so a figure cannot inject anything into the page.

use serde::{Deserialize, Serialize};

/// One picture of a job's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Figure {
    Histogram(Histogram),
    Boards(Boards),
}

/// Bars, one per label, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub title: String,
    /// What the labels are (`game length`).
    pub x_label: String,
    /// What the values count (`games`).
    pub y_label: String,
    pub bars: Vec<Bar>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bar {
    pub label: String,
    pub value: u64,
}

/// A few grids of cells (boards), with the meaning of each cell state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boards {
    pub title: String,
    /// One line under the title (e.g. "the first 6 of 52 boards"); may be
    /// empty.
    pub note: String,
    /// Every state a cell of these grids may have, with its colour.
    pub legend: Vec<Swatch>,
    pub grids: Vec<Grid>,
}

/// A cell state, how it is named for people and its colour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Swatch {
    pub state: String,
    pub text: String,
    pub tone: Tone,
}

/// The colours a figure may use: the page maps each to one colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tone {
    Green,
    Red,
    Blue,
    Amber,
    Purple,
    Teal,
    Orange,
    Pink,
    Brown,
    Olive,
    /// Nothing known yet.
    Grey,
    /// Not part of the answer.
    Light,
}

impl Tone {
    /// Ten tones that are easy to tell apart, for the colours of a board
    /// (`hip-draws` has up to ten).
    pub const DISTINCT: [Tone; 10] = [
        Tone::Blue,
        Tone::Orange,
        Tone::Green,
        Tone::Red,
        Tone::Purple,
        Tone::Brown,
        Tone::Pink,
        Tone::Olive,
        Tone::Teal,
        Tone::Amber,
    ];
}

/// A `rows x cols` grid of cells, row-major.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub caption: String,
    pub rows: u32,
    pub cols: u32,
    /// `rows * cols` cells, row by row.
    pub cells: Vec<Cell>,
}

/// One cell: its state (a [`Swatch::state`] of the figure's legend) and a
/// short label drawn in it (may be empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    pub state: String,
    pub label: String,
}

/// A grid whose cell count is not `rows * cols`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {rows} x {cols} grid needs {} cells, got {cells}", rows * cols)]
pub struct GridShapeError {
    pub rows: u32,
    pub cols: u32,
    pub cells: u32,
}

impl Grid {
    /// A grid of `cells`, row by row; refused unless there are exactly
    /// `rows * cols` of them (the page draws what the shape says).
    pub fn new(
        caption: impl Into<String>,
        rows: u32,
        cols: u32,
        cells: Vec<Cell>,
    ) -> Result<Grid, GridShapeError> {
        if u64::from(rows) * u64::from(cols) != cells.len() as u64 {
            return Err(GridShapeError {
                rows,
                cols,
                cells: cells.len().try_into().unwrap_or(u32::MAX),
            });
        }
        Ok(Grid {
            caption: caption.into(),
            rows,
            cols,
            cells,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_has_rows_times_cols_cells() {
        let cell = || Cell {
            state: "x".into(),
            label: String::new(),
        };
        assert!(Grid::new("", 2, 3, (0..6).map(|_| cell()).collect()).is_ok());
        let e = Grid::new("", 2, 3, (0..5).map(|_| cell()).collect()).unwrap_err();
        assert_eq!(e.to_string(), "a 2 x 3 grid needs 6 cells, got 5");
    }

    #[test]
    fn figures_serialise_with_their_kind_and_tone_names() {
        let f = Figure::Histogram(Histogram {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            bars: vec![Bar {
                label: "3".into(),
                value: 7,
            }],
        });
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["kind"], "histogram");
        assert_eq!(v["bars"][0]["value"], 7);
        let s = Swatch {
            state: "win".into(),
            text: "first player wins".into(),
            tone: Tone::Green,
        };
        assert_eq!(serde_json::to_value(&s).unwrap()["tone"], "green");
        let back: Figure = serde_json::from_value(v).unwrap();
        assert_eq!(back, f);
    }
}
