//! The report of a `busy-beaver` job: the counts per decider and per
//! stage, the champions, the undecided machines with what was tried on
//! them, and the results file's lines (one per machine up to
//! [`crate::LISTED_STATES`] states, totals and listings beyond).

use orchard_core::FamilyReport;

use crate::{
    decide, far_sat, BbSummary, BusyBeaver, Decider, Leaf, Stage, MAX_LISTED_UNDECIDED,
    RECHECK_STEPS, TOTALS_LINE,
};

impl BusyBeaver {
    /// The stages this job tries on a machine, with their limits, in order.
    pub fn stages_tried(&self) -> Vec<String> {
        let mut v = vec![format!("run of {} steps", self.step_limit)];
        if self.depth > 0 {
            v.push(format!("backward reasoning to depth {}", self.depth));
        }
        if self.ngram > 0 {
            v.push(format!("n-gram closed position sets, n <= {}", self.ngram));
            v.push("augmented closed position sets".into());
        }
        if self.long_limit > self.step_limit {
            v.push(format!("run of {} steps", self.long_limit));
        }
        v.push("repeated word lists".into());
        if self.deep_gas > 0 {
            v.push(format!(
                "deep: long n-grams, long repeated words, finite automata reduction, {} \
                 configurations each",
                self.deep_gas
            ));
            v.push(format!(
                "weighted finite automata reduction, {} abstract configurations",
                u64::from(self.deep_gas) * decide::WFAR_GAS_FACTOR
            ));
        }
        if self.halt_horizon > self.step_limit.max(self.long_limit) {
            v.push(format!("plain run to {} steps", self.halt_horizon));
        }
        if self.last_resort && self.halt_horizon > self.step_limit.max(self.long_limit) {
            let far = match &self.far_solver {
                None => format!(
                    "DFAs of {} to {} states, {} prefixes each",
                    decide::LAST_FAR_DFA.0,
                    decide::LAST_FAR_DFA.1,
                    decide::LAST_FAR_GAS
                ),
                Some((r, _)) => format!(
                    "DFAs of {} states found by the SAT solver {} (sha256 {}...), {} conflicts \
                     a formula",
                    far_sat::SIZES.map(|d| d.to_string()).join(", "),
                    r.name,
                    &r.sha256[..12],
                    far_sat::CONFLICTS
                ),
            };
            let mitm = if self.mitm_wfar {
                format!(
                    "meet-in-the-middle weighted automata on DFA pairs of up to {} \
                     transitions, {} abstract configurations, ",
                    decide::LAST_MITM.transitions,
                    decide::LAST_MITM.gas,
                )
            } else {
                String::new()
            };
            let supplied = match &self.certificates {
                Some((c, _)) => format!(
                    "the supplied weighted-automata certificate of the machine ({} machines, \
                     file {}, each verified when the job was checked), ",
                    c.entries.len(),
                    c.name
                ),
                None => String::new(),
            };
            v.push(format!(
                "last resort: {supplied}translated cyclers over {} steps, weighted finite \
                 automata reduction with automata of up to 5 states, {} abstract \
                 configurations, {mitm}finite automata reduction with {far}",
                decide::LAST_LOOP.0,
                decide::LAST_WFAR_GAS,
            ));
        }
        v
    }

    /// The report of `s` ([`orchard_core::SearchFamily::report`]).
    pub(crate) fn build_report(&self, s: &BbSummary) -> FamilyReport {
        let n = self.n;
        let texts = |v: &[Leaf]| v.iter().map(|l| l.text(n)).collect::<Vec<_>>();
        let undecided: Vec<String> = s
            .undecided_machines
            .iter()
            .take(MAX_LISTED_UNDECIDED)
            .map(|l| l.text(n))
            .collect();
        let mut deciders = serde_json::Map::new();
        deciders.insert("halt".into(), s.halting.into());
        for d in Decider::ALL {
            deciders.insert(d.name().into(), s.never[d as usize].into());
        }
        let stages: Vec<serde_json::Value> = Stage::ALL
            .iter()
            .map(|&st| {
                serde_json::json!({
                    "stage": st.name(),
                    "settled": s.settled_by[st as usize],
                    "halting": s.halted_by[st as usize],
                    "effort": s.effort[st as usize],
                    "effort_unit": st.unit(),
                })
            })
            .collect();
        let histogram: Vec<serde_json::Value> = s
            .steps_histogram
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(i, &c)| {
                serde_json::json!({
                    "from": 1u64 << i,
                    "to": (1u64 << (i + 1)) - 1,
                    "machines": c,
                })
            })
            .collect();
        let exact = s.undecided == 0 && s.recheck_failures.is_empty();
        let json = serde_json::json!({
            "family": "busy-beaver",
            "states": n,
            "step_limit": self.step_limit,
            "depth": self.depth,
            "ngram": self.ngram,
            "long_limit": self.long_limit,
            "halt_horizon": self.halt_horizon,
            "deep_gas": self.deep_gas,
            "last_resort": self.last_resort,
            "mitm_wfar": self.mitm_wfar,
            "far_solver": self.far_solver.as_ref().map(|(r, _)| serde_json::json!({
                "name": r.name,
                "sha256": r.sha256,
            })),
            "certificates": self.certificates.as_ref().map(|(c, _)| serde_json::json!({
                "file": c.name,
                "kind": "wfar",
                "machines": c.machines(),
            })),
            "enumerated": "machines of the tree normal form (Brady; bbchallenge's enumeration: \
                the root, halting machines as inner nodes, decided machines as leaves, first \
                move to the right, new states in order, fully defined machines left out)",
            "machines": s.machines(),
            "halting": s.halting,
            "nonhalting": s.nonhalting(),
            "undecided": s.undecided,
            "deciders": deciders,
            "stages": stages,
            "steps_histogram": histogram,
            "exact": exact,
            "max_ones": s.max_ones,
            "max_steps": s.max_steps,
            "ones_champions": texts(&s.ones_champions),
            "steps_champions": texts(&s.steps_champions),
            "undecided_machines": undecided,
            "recheck": {
                "halting": s.rechecked_halting,
                "nonhalting": s.rechecked_nonhalting,
                "nonhalting_steps": RECHECK_STEPS,
                "failures": texts(&s.recheck_failures),
            },
            "nodes": s.nodes,
        });
        let bound = if exact { "" } else { " at least" };
        let settled: Vec<String> = Decider::ALL
            .iter()
            .map(|&d| format!("{} {}", s.never[d as usize], d.name()))
            .collect();
        let mut text = vec![
            format!(
                "busy beaver, {n} cards: {} machines in tree normal form: {} halt, {} never halt \
                 ({}), {} undecided",
                s.machines(),
                s.halting,
                s.nonhalting(),
                settled.join(", "),
                s.undecided
            ),
            format!(
                "most ones:{bound} {} ({}); most steps:{bound} {} ({})",
                s.max_ones,
                texts(&s.ones_champions).join(", "),
                s.max_steps,
                texts(&s.steps_champions).join(", ")
            ),
        ];
        if !exact {
            text.push(format!(
                "{} machines no decider settled (each watched for {} steps, run plainly to {}): \
                 the maxima are lower bounds",
                s.undecided,
                self.step_limit.max(self.long_limit),
                self.halt_horizon.max(self.step_limit.max(self.long_limit))
            ));
        }
        text.push(format!(
            "re-checked by plain simulation: {} halting verdicts, {} nonhalting ones (no halt \
             within {RECHECK_STEPS} steps); {} disagreed",
            s.rechecked_halting,
            s.rechecked_nonhalting,
            s.recheck_failures.len()
        ));
        for l in &s.recheck_failures {
            text.push(format!("re-check failed: {}", l.line(n)));
        }
        let supplied = self.certificates.as_ref().map(|(c, _)| {
            format!(
                "supplied certificates: {} weighted-automata certificates (file {}), each \
                 verified when the job was checked; a machine of the list that reaches the last \
                 resort is settled by its own and counted under {}: {}",
                c.entries.len(),
                c.name,
                Decider::WeightedFiniteAutomataReduction.name(),
                c.machines().join(", ")
            )
        });
        text.extend(supplied.clone());
        text.push(format!("nodes explored: {}", s.nodes));
        let results_lines = if self.lists_machines() {
            s.leaves.iter().map(|l| l.line(n)).collect()
        } else {
            // 181 million lines at 5 states: the champions, every undecided
            // machine and the histogram instead.
            let mut lines = vec![format!(
                "{TOTALS_LINE} {} machines, {} halt, {} never halt ({}), {} undecided",
                s.machines(),
                s.halting,
                s.nonhalting(),
                settled.join(", "),
                s.undecided
            )];
            let mut champions: Vec<&Leaf> =
                s.steps_champions.iter().chain(&s.ones_champions).collect();
            champions.sort();
            champions.dedup();
            lines.extend(champions.iter().map(|l| format!("champion {}", l.line(n))));
            lines.extend(supplied);
            let tried = self.stages_tried().join(", ");
            lines.extend(s.undecided_machines.iter().map(|l| {
                format!(
                    "{} (tried: {tried}; the subtree below it, the ways of defining its \
                     undefined transitions, is not enumerated)",
                    l.line(n)
                )
            }));
            lines.extend(histogram.iter().map(|h| {
                format!(
                    "halting after {} to {} steps: {} machines",
                    h["from"], h["to"], h["machines"]
                )
            }));
            lines
        };
        FamilyReport {
            json,
            text,
            results_lines,
        }
    }
}
