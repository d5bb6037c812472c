//! The rules of Hip on top of the board ([`Game`]): who moves, canonical
//! keys, the children of a position, replaying a unit's moves, and the
//! frontier of root units. Unit generation, exploring, evaluation and the
//! report all play by these rules, so they are written once, here.

use super::summary::{Key, SolveUnit};
use super::SolveParams;
use crate::board::Board;
use crate::search::{ordered_moves, p1_moves, Moves, Pos};
use orchard_core::FamilyError;

/// The game rules on top of the board, shared by unit generation, explore
/// and report.
pub(super) struct Game {
    pub(super) board: Board,
    double: bool,
}

/// A child of a position.
pub(super) enum Child {
    /// The move completes a square of the mover: he loses.
    Loses,
    Pos(Box<Pos>),
}

impl Game {
    pub(super) fn new(p: &SolveParams) -> Game {
        Game {
            board: p.board(),
            double: p.double,
        }
    }

    /// The safe moves of the player to move, in the search's order under
    /// these rules (the unit tree and the scheduler's eldest child follow it).
    pub(super) fn ordered_moves(&self, pos: &Pos, p1: bool) -> Moves {
        ordered_moves(&self.board, pos, p1, self.double, 0)
    }

    pub(super) fn p1_to_move(&self, pos: &Pos) -> bool {
        p1_moves(pos.stones(), self.double)
    }

    pub(super) fn key(&self, pos: &Pos) -> (Key, usize) {
        let (a, b, g) = self.board.canonical2(pos.p1, pos.p2);
        ((a, b), g)
    }

    /// The most the first player can get from `pos` by the rules alone: a
    /// draw where the second player of standard Hip can pair moves
    /// ([`Pos::p2_can_pair`]), else a win.
    pub(super) fn p1_ceiling(&self, pos: &Pos) -> i8 {
        if !self.double && pos.p2_can_pair(&self.board, self.p1_to_move(pos)) {
            0
        } else {
            1
        }
    }

    pub(super) fn full(&self, pos: &Pos) -> bool {
        (pos.p1 | pos.p2) == self.board.full
    }

    /// Every move of a non-full position, in cell order.
    pub(super) fn children(&self, pos: &Pos) -> Vec<(usize, Child)> {
        let p1 = self.p1_to_move(pos);
        let empty = self.board.full & !(pos.p1 | pos.p2);
        (0..self.board.n)
            .filter(|&c| empty >> c & 1 == 1)
            .map(|c| {
                let child = if pos.loses(c, p1) {
                    Child::Loses
                } else {
                    Child::Pos(Box::new(pos.play(&self.board, c, p1)))
                };
                (c, child)
            })
            .collect()
    }

    /// Replays a move list; errors if a move is off the board, on a stone, or
    /// ends the game (a unit is a position still being played).
    pub(super) fn replay(&self, moves: &[u8]) -> Result<Pos, FamilyError> {
        let pos = self.play_moves(moves)?;
        if self.full(&pos) && !moves.is_empty() {
            return Err(FamilyError::BadUnit(format!("{moves:?} fills the board")));
        }
        Ok(pos)
    }

    /// Plays a move list; errors if a move is off the board, on a stone, or
    /// completes a square of its mover (a full board is a position here).
    fn play_moves(&self, moves: &[u8]) -> Result<Pos, FamilyError> {
        let mut pos = Pos::EMPTY;
        for (i, &m) in moves.iter().enumerate() {
            let c = m as usize;
            let p1 = self.p1_to_move(&pos);
            if c >= self.board.n || (pos.p1 | pos.p2) >> c & 1 == 1 || pos.loses(c, p1) {
                return Err(FamilyError::BadUnit(format!(
                    "move {} ({m}) of {moves:?} is not a playable move",
                    i + 1
                )));
            }
            pos = pos.play(&self.board, c, p1);
        }
        Ok(pos)
    }

    /// The canonical positions after `depth` stones, with a move list each,
    /// in the order a depth-first search with the solver's move ordering
    /// meets them (so the likely principal lines come first and, when units
    /// are leased in order,
    /// [`MootUnits::is_moot`](orchard_core::MootUnits::is_moot) can
    /// cancel their siblings).
    pub(super) fn frontier(&self, depth: u32) -> Vec<SolveUnit> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut moves = Vec::new();
        self.frontier_walk(Pos::EMPTY, depth, &mut moves, &mut seen, &mut out);
        out
    }

    fn frontier_walk(
        &self,
        pos: Pos,
        depth: u32,
        moves: &mut Vec<u8>,
        seen: &mut std::collections::HashSet<Key>,
        out: &mut Vec<SolveUnit>,
    ) {
        if !seen.insert(self.key(&pos).0) {
            return;
        }
        if depth == 0 {
            out.push(SolveUnit::new(moves.clone()));
            return;
        }
        let p1 = self.p1_to_move(&pos);
        let list = self.ordered_moves(&pos, p1);
        for &c in &list.cells[..list.len] {
            let child = pos.play(&self.board, c as usize, p1);
            if self.full(&child) {
                continue;
            }
            moves.push(c);
            self.frontier_walk(child, depth - 1, moves, seen, out);
            moves.pop();
        }
    }
}

/// P1's interval for a mover's-view value interval.
pub(super) fn absolute(lo: i8, hi: i8, p1: bool) -> (i8, i8) {
    if p1 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}

/// A position of the game tree as a scheduler that holds the top of the
/// tree sees it (the replay's proof-number policy): what the rules alone
/// say of it and its children. Read with [`super::HipSolve::tree_node`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    /// The canonical position (equal keys: the same position up to the
    /// board's symmetries).
    pub key: Key,
    pub p1_to_move: bool,
    /// P1's value if the rules alone end the game here: a full board (a
    /// draw), or a mover with no move that does not complete a square of
    /// his (he loses).
    pub over: Option<i8>,
    /// The most P1 can get by the rules alone ([`Game::p1_ceiling`]).
    pub p1_ceiling: i8,
    /// One move list per canonical child reached by a safe move, in the
    /// search's move order (empty when the game is over).
    pub children: Vec<Vec<u8>>,
}

impl super::HipSolve {
    /// The position reached by `moves` as a node of the game tree (see
    /// [`TreeNode`]): the rules of this job's game, the same code the
    /// solver and the units play by.
    pub fn tree_node(&self, moves: &[u8]) -> Result<TreeNode, FamilyError> {
        let game = Game::new(&self.params);
        let pos = game.play_moves(moves)?;
        let p1 = game.p1_to_move(&pos);
        let (key, _) = game.key(&pos);
        let p1_ceiling = game.p1_ceiling(&pos);
        let mut children = Vec::new();
        let over = if game.full(&pos) {
            Some(0)
        } else {
            let list = game.ordered_moves(&pos, p1);
            let mut seen = std::collections::HashSet::new();
            for &c in &list.cells[..list.len] {
                let child = pos.play(&game.board, c as usize, p1);
                if seen.insert(game.key(&child).0) {
                    let mut m = moves.to_vec();
                    m.push(c);
                    children.push(m);
                }
            }
            children.is_empty().then_some(if p1 { -1 } else { 1 })
        };
        Ok(TreeNode {
            key,
            p1_to_move: p1,
            over,
            p1_ceiling,
            children,
        })
    }
}
