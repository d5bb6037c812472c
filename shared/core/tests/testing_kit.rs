//! The shared checks of `orchard_core::testing` catch what they are for: a
//! merge that depends on the order of the pieces.

use orchard_core::testing::merged_in_any_order;
use orchard_core::{
    Exploration, ExploreContext, FamilyError, FamilyReport, Host, ParamError, SearchFamily,
};

/// Units 0..n, each its own piece; the summary lists the units merged, in
/// the order merged unless `sorted`.
struct Units {
    n: u64,
    sorted: bool,
}

impl SearchFamily for Units {
    const NAME: &'static str = "units";
    const ABOUT: &'static str = "units listed as merged";
    type Params = (u64, bool);
    type Unit = u64;
    type Summary = Vec<u64>;

    fn new((n, sorted): (u64, bool), _: &Host) -> Result<Self, ParamError> {
        Ok(Units { n, sorted })
    }

    fn root_units(&self) -> Vec<u64> {
        (0..self.n).collect()
    }

    fn explore(
        &self,
        unit: &u64,
        _: &ExploreContext<'_>,
    ) -> Result<Exploration<Vec<u64>, u64>, FamilyError> {
        Ok(Exploration::Finished(vec![*unit]))
    }

    fn merge(&self, into: &mut Vec<u64>, other: Vec<u64>) -> Result<(), FamilyError> {
        into.extend(other);
        if self.sorted {
            into.sort_unstable();
        }
        Ok(())
    }

    fn nodes(s: &Vec<u64>) -> u64 {
        s.len() as u64
    }

    fn report(&self, s: &Vec<u64>) -> FamilyReport {
        FamilyReport {
            json: serde_json::json!({ "units": s }),
            text: Vec::new(),
            results_lines: Vec::new(),
        }
    }
}

#[test]
fn an_order_free_merge_passes_and_gives_the_whole() {
    let job = Units::new((9, true), &Host::default()).unwrap();
    for seed in 0..20 {
        let (merged, pieces) = merged_in_any_order(&job, job.root_units(), 1, seed);
        assert_eq!(merged, (0..9).collect::<Vec<_>>());
        assert_eq!(pieces, 9);
    }
}

#[test]
#[should_panic(expected = "differ from search order")]
fn a_merge_that_keeps_the_order_of_arrival_is_caught() {
    let job = Units::new((9, false), &Host::default()).unwrap();
    merged_in_any_order(&job, job.root_units(), 1, 7);
}
