//! A move that keeps a bound, found by the fast solver ([`KeepingMoves`]):
//! what the proof checker (`crate::proof`) asks at the prover's positions
//! of its extension. One solver and the job's table serve every question,
//! so what one question searched answers its neighbours' from the table.
//!
//! A question is answered by a null-window search of the position itself
//! for the bound, whose cutoff leaves the move that refuted the window in
//! the table (the principal move); that move is checked by a null-window
//! search of its child, which the parent's search has just filled in. Only
//! where the table has no move (a position settled by counting, by the
//! rules, by the plain last moves) or its move does not keep the bound are
//! the candidates searched one by one, in the solver's move order. Every
//! search asks only for the bound (never the exact value), which is what
//! the proof needs.

use super::game::Game;
use super::HipSolve;
use crate::search::{Pos, Solver};
use crate::table::Table;
use orchard_core::FamilyError;

/// The solver kept across questions about one job's positions.
pub struct KeepingMoves<'j> {
    game: &'j Game,
    solver: Solver<'j, 'j>,
    /// Questions asked ([`KeepingMoves::find`]).
    pub questions: u64,
    /// Searches run: of positions asked about and of their children.
    pub searches: u64,
    /// Answers that were the table's move after the position's search.
    pub principal: u64,
}

impl<'j> KeepingMoves<'j> {
    /// With the job's table (kept warm across questions and shared with
    /// anything else that searches the job in this process).
    pub fn new(job: &'j HipSolve) -> KeepingMoves<'j> {
        KeepingMoves::with_table(job, job.table())
    }

    /// With a table of the caller's (the tests hand it one of another game
    /// to make the answers wrong).
    pub(crate) fn with_table(job: &'j HipSolve, table: &'j Table) -> KeepingMoves<'j> {
        let game = job.game();
        KeepingMoves {
            game,
            solver: Solver::new(&game.board, job.params.double, table, None),
            questions: 0,
            searches: 0,
            principal: 0,
        }
    }

    /// Nodes the solver has searched for every question so far.
    pub fn nodes(&self) -> u64 {
        self.solver.nodes
    }

    /// Among `candidates` (moves of the position reached by `moves` that do
    /// not end the game), one after which the value of the player to move
    /// is at least `at_least` (-1, 0 or 1), as far as the solver finds;
    /// `None` when it finds none.
    pub fn find(
        &mut self,
        moves: &[u8],
        candidates: &[u8],
        at_least: i8,
    ) -> Result<Option<u8>, FamilyError> {
        self.questions += 1;
        let pos = self.game.replay(moves)?;
        let p1 = self.game.p1_to_move(&pos);
        if at_least <= -1 {
            return Ok(candidates.first().copied());
        }
        // The position's own null-window search, for its principal move.
        self.searches += 1;
        let holds = self.search(&pos, at_least - 1, at_least) >= at_least;
        let principal = if holds { self.table_move(&pos) } else { None };
        if let Some(c) = principal.filter(|c| candidates.contains(c)) {
            if self.keeps(&pos, p1, c, at_least) {
                self.principal += 1;
                return Ok(Some(c));
            }
        }
        // Every candidate in the solver's order, the unsafe ones (the
        // solver's order leaves out moves that lose at once) last.
        let ordered = self.solver.moves(&pos, p1, 0);
        let listed = &ordered.cells[..ordered.len];
        let rest = candidates.iter().filter(|c| !listed.contains(c));
        for &c in listed.iter().filter(|c| candidates.contains(c)).chain(rest) {
            if Some(c) != principal && self.keeps(&pos, p1, c, at_least) {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    /// The table's best move at `pos`, in `pos`'s own cells.
    fn table_move(&self, pos: &Pos) -> Option<u8> {
        let board = &self.game.board;
        let (k1, k2, g) = pos.key(board);
        match self.solver.table.probe(k1, k2) {
            Some((_, _, mv)) if usize::from(mv) < board.n => {
                Some(board.perms[board.inverse[g]][usize::from(mv)])
            }
            _ => None,
        }
    }

    /// Whether the mover (`p1`) keeps at least `v` by playing `c` at `pos`.
    fn keeps(&mut self, pos: &Pos, p1: bool, c: u8, v: i8) -> bool {
        let child = pos.play(&self.game.board, usize::from(c), p1);
        if self.game.full(&child) {
            return v <= 0;
        }
        self.searches += 1;
        if self.game.p1_to_move(&child) == p1 {
            self.search(&child, v - 1, v) >= v
        } else {
            self.search(&child, -v, 1 - v) <= -v
        }
    }

    /// The mover's value at `pos` in the window `(alpha, beta)`.
    fn search(&mut self, pos: &Pos, alpha: i8, beta: i8) -> i8 {
        self.solver
            .search(pos, alpha, beta)
            .expect("a search without a budget or a stop does not abort")
    }
}
