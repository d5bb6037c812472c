//! What a job's table shares outside the job: lemmas with other workers
//! ([`LemmaExchange`], see [`crate::lemmas`]) and snapshots with the
//! worker's later runs ([`CacheSnapshot`], see [`crate::snapshot`]). Both
//! are thin wrappers over the table; they are kept together because they
//! are the table's only way in and out of the process.

use super::relevance::{EldestLemmas, LEMMA_GUESS_PLIES};
use super::HipSolve;
use crate::table::StampedLemma;
use orchard_core::{CacheSnapshot, FamilyError, LemmaExchange};

/// Values of positions whose search was expensive (see [`crate::lemmas`]).
/// Taking or learning lemmas creates the job's table (only workers do).
impl LemmaExchange for HipSolve {
    fn take(&self, max_bytes: usize) -> Vec<u8> {
        crate::lemmas::take(self.table(), max_bytes)
    }

    fn check(&self, lemmas: &[u8]) -> Result<(), FamilyError> {
        crate::lemmas::decode_all(&self.params.board(), lemmas).map(drop)
    }

    fn learn(&self, lemmas: &[u8]) -> Result<u64, FamilyError> {
        let entries = crate::lemmas::decode_all(&self.params.board(), lemmas)?;
        Ok(crate::lemmas::learn_into(self.table(), &entries))
    }

    /// The shallowest position of the eldest line the lemmas decide, for
    /// the job's own guess of the winner (none with `--expect`). Creates
    /// no table.
    fn observe(&self, lemmas: &[u8]) -> bool {
        if self.params.expect.is_some() {
            return false;
        }
        let Ok(entries) = crate::lemmas::decode_all(&self.params.board(), lemmas) else {
            return false;
        };
        self.eldest_lemmas
            .get_or_init(|| {
                let plies = self.params.root_depth() + LEMMA_GUESS_PLIES;
                EldestLemmas::new(self.game(), plies)
            })
            .observe(&entries)
    }
}

/// Lemmas with the node count at which their search stored them, for the
/// replay (`orchard-scale`), which publishes each a fixed delay after it
/// was stored, as a worker that sends them while it searches does. The
/// wire ([`LemmaExchange`]) carries the same lemmas without the stamps.
impl HipSolve {
    /// What [`LemmaExchange::take`] would send (every lemma, unencoded),
    /// each with its stamp ([`StampedLemma::at_node`]): the node count of
    /// the solver that stored it, which for a lemma stored during one
    /// `explore` (one solver) is the nodes that search had expanded.
    /// Taking creates the job's table and makes it keep lemmas from now on.
    pub fn take_stamped_lemmas(&self) -> Vec<StampedLemma> {
        self.table().take_stamped_lemmas(usize::MAX)
    }

    /// Learns lemmas taken from a job of the same game by
    /// [`HipSolve::take_stamped_lemmas`], each checked as a lemma off the
    /// wire is: one of another game is refused, with nothing learnt.
    pub fn learn_stamped_lemmas(&self, lemmas: &[StampedLemma]) -> Result<u64, FamilyError> {
        let board = self.params.board();
        let entries: Vec<_> = lemmas.iter().map(|l| l.entry).collect();
        for (i, e) in entries.iter().enumerate() {
            crate::snapshot::check_entry(&board, e)
                .map_err(|why| FamilyError::BadLemmas(format!("lemma {i}: {why}")))?;
        }
        Ok(crate::lemmas::learn_into(self.table(), &entries))
    }
}

/// The table's expensive entries, kept by the worker across restarts (see
/// [`crate::snapshot`]).
impl CacheSnapshot for HipSolve {
    /// `hip-RxC` or `hip-RxC-double` (rows <= columns): every job of one
    /// game shares its snapshot, whatever its other parameters.
    fn cache_name(&self) -> String {
        let board = self.params.board();
        let suffix = if self.params.double { "-double" } else { "" };
        format!("hip-{}x{}{suffix}", board.rows, board.cols)
    }

    /// Nothing before the job's first search (or restore).
    fn snapshot(&self) -> Option<Vec<u8>> {
        let table = self.table.get()?;
        Some(crate::snapshot::encode_table(
            table,
            crate::snapshot::MAX_ENTRIES,
        ))
    }

    /// Checks the whole snapshot before storing any entry; each entry is
    /// intersected with what the table knows.
    fn restore(&self, snapshot: &[u8]) -> Result<u64, FamilyError> {
        let entries =
            crate::snapshot::decode_snapshot(&self.params.board(), self.params.double, snapshot)?;
        Ok(crate::lemmas::learn_into(self.table(), &entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{SolveParams, SolveUnit, Window};
    use orchard_core::{Exploration, Host, LocalFlags, SearchFamily};

    /// Stamped lemmas go from one job to another of the same game (the
    /// second then solves the same unit in fewer nodes) and are refused,
    /// whole, by a job of another game.
    #[test]
    fn stamped_lemmas_are_learnt_by_the_same_game_only() {
        let params = SolveParams::new(3, 4, false);
        let host = Host::default();
        let unit = SolveUnit {
            moves: Vec::new(),
            window: Window::FULL,
        };
        let nodes = |job: &HipSolve| match job
            .explore(&unit, &LocalFlags::default().context(u64::MAX))
            .unwrap()
        {
            Exploration::Finished(s) => s.nodes,
            Exploration::Split { .. } => panic!("no budget, no split"),
        };
        let source = HipSolve::new(params.clone(), &host).unwrap();
        assert!(source.take_stamped_lemmas().is_empty());
        let cold = nodes(&source);
        let lemmas = source.take_stamped_lemmas();
        assert!(!lemmas.is_empty());
        let other = HipSolve::new(SolveParams::new(4, 5, false), &host).unwrap();
        let err = other.learn_stamped_lemmas(&lemmas).unwrap_err();
        assert!(err.to_string().contains("lemma 0"), "{err}");
        let fresh = HipSolve::new(params, &host).unwrap();
        assert_eq!(
            fresh.learn_stamped_lemmas(&lemmas).unwrap(),
            lemmas.len() as u64
        );
        assert!(nodes(&fresh) < cold);
    }
}
