//! The `sat` family: cube-and-conquer. A CNF formula is split into cubes
//! (every sign pattern of K chosen variables); each cube is solved by a
//! SAT solver the worker's operator allows (CaDiCaL's command line, e.g.
//! Debian's `cadical`), run as an external program with the formula and the
//! cube's literals as unit clauses. The job's answer: the satisfiable
//! cubes, each with a model checked against the formula before it counts,
//! the unsatisfiable ones, and the formula's verdict.
//!
//! **Dynamic splitting.** Each call is limited to `--conflicts` conflicts
//! (CaDiCaL's `-c`): a cube the solver leaves undecided is split on the
//! next variable of the job's order (most frequent first) into two cubes,
//! which go back to the cluster. The limit is counted in conflicts, not
//! time, so the cut is the same on every machine and replicas agree.
//!
//! **The verdict.** Satisfiable as soon as one model checks. Unsatisfiable
//! only when the decided cubes cover every assignment: each cube of length
//! `d` covers `2^-d` of them and the cubes of a job are disjoint by
//! construction (sign patterns, then splits), so the sum of the covered
//! shares ([`FULL`] when whole) says whether all are decided. The solver's
//! "unsatisfiable" is trusted as the solver's word (no proof is checked);
//! a model never is.
//!
//! **The user's cubes.** An iCNF file (`p inccnf`: the clauses, then cube
//! lines `a l1 l2 ... 0`, as a lookahead cuber writes them) brings its own
//! root cubes instead of the sign patterns. They need not be disjoint, so
//! "all cubes decided" no longer follows from the shares adding up to the
//! whole space: the command line first checks that the cubes cover every
//! assignment ([`cover`]; or, on request, every model of the formula, the
//! gaps refuted by the solver) and refuses the job otherwise, and the job's
//! total becomes the sum of its root cubes' shares. Every root cube's
//! splits still halve its share, so the decided shares reach that total
//! exactly when every root cube is decided.
//!
//! The solver is found, hashed and run exactly as `exec` runs a program
//! ([`orchard_exec::program`], [`orchard_exec::run::call_raw`]): only from
//! the worker's `--programs` directory, only if its SHA-256 is the job's.

pub mod cover;
pub mod dimacs;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use orchard_core::merge::checked_add;
use orchard_core::{
    Capabilities, Exploration, ExploreContext, FamilyError, FamilyReport, Host, MootJudge,
    MootUnits, ParamError, SearchFamily,
};
use orchard_exec::program::{sha256_bytes, sha256_file, JobProgram};
use orchard_exec::run::{call_raw, Limits};

use dimacs::Formula;

/// Longest cube: coverage shares are counted in units of `2^-MAX_CUBE`.
pub const MAX_CUBE: usize = 120;
/// The share of every assignment: all cubes decided.
pub const FULL: u128 = 1 << MAX_CUBE;
/// Most variables to cube on at the start (2^20 root units).
pub const MAX_CUBE_VARS: usize = 20;
/// Models kept: those of the smallest cubes.
pub const MODELS_KEPT: usize = 10;
/// Root cubes' variables when neither `--cubes` nor `--cube-vars` says.
pub const DEFAULT_CUBES: u32 = 6;
/// Default conflicts per solver call before a cube is split.
pub const DEFAULT_CONFLICTS: u64 = 200_000;

/// Parameters of a `sat` job, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SatParams {
    /// The formula, DIMACS CNF, or iCNF with the job's root cubes (checked
    /// to cover every assignment before the job is made).
    pub cnf: String,
    /// SHA-256 of `cnf`: the formula's name in reports.
    pub cnf_sha256: String,
    /// The variables of the root cubes (every sign pattern of them).
    pub cube_vars: Vec<u32>,
    /// The solver's file name in each worker's `--programs` directory.
    pub solver: String,
    pub solver_sha256: String,
    /// Arguments of every solver call, before the conflict limit.
    #[serde(default)]
    pub solver_args: Vec<String>,
    /// Conflicts per call (CaDiCaL's `-c`); 0: no limit, cubes never split.
    pub conflicts: u64,
    /// An iCNF's cubes were accepted as covering every model of the
    /// formula, the gaps between them refuted by the solver at submission.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cover_with_formula: bool,
    pub timeout_secs: u64,
    /// The job ends at its first checked model: the verdict is all it
    /// asks, and every cube still live is cancelled as moot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first_model: bool,
}

/// The `sat` subcommand's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct SatArgs {
    /// The formula, a DIMACS CNF file; or an iCNF file (header `p
    /// inccnf`), whose cube lines `a LITERALS 0` are the root cubes instead,
    /// refused unless they cover every assignment.
    #[arg(long, value_name = "FILE")]
    pub cnf: PathBuf,
    /// Cube on the K variables that occur in the most clauses (2^K root
    /// cubes) [default: 6, not with an iCNF].
    #[arg(long, value_name = "K", conflicts_with = "cube_vars")]
    pub cubes: Option<u32>,
    /// Cube on these variables instead (comma-separated).
    #[arg(long, value_name = "VARS", value_delimiter = ',')]
    pub cube_vars: Vec<u32>,
    /// The SAT solver, as a file on this machine (CaDiCaL's command line:
    /// `-c N` limits conflicts, `s`/`v` lines answer). Every worker runs its
    /// own copy of that name from its --programs directory, only if the
    /// SHA-256 matches.
    #[arg(long, value_name = "FILE")]
    pub solver: PathBuf,
    /// An argument of every solver call (repeat for several).
    #[arg(long = "solver-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub solver_args: Vec<String>,
    /// Conflicts per call before an undecided cube is split in two (0: no
    /// limit).
    #[arg(long, default_value_t = DEFAULT_CONFLICTS)]
    pub conflicts: u64,
    /// Seconds one call may run before the attempt fails.
    #[arg(long, default_value_t = 3600)]
    pub timeout_secs: u64,
    /// With an iCNF: accept cubes that leave gaps if the solver refutes the
    /// formula in them (the formula with every cube's negation), as a
    /// lookahead cuber leaves out the branches it refuted. One solver run
    /// at submission, without a conflict limit.
    #[arg(long)]
    pub cover_with_formula: bool,
    /// Stop at the first model: the verdict `satisfiable` with one checked
    /// model, the cubes not yet decided cancelled (a satisfiable formula's
    /// other cubes may be as hard as an unsatisfiable one's).
    #[arg(long)]
    pub first_model: bool,
}

impl SatArgs {
    /// The stored parameters: the formula read and checked, the cube
    /// variables chosen, the solver hashed.
    pub fn resolve(self) -> Result<SatParams, String> {
        let cnf = std::fs::read_to_string(&self.cnf)
            .map_err(|e| format!("--cnf {}: {e}", self.cnf.display()))?;
        let (formula, cubes) =
            Formula::parse_input(&cnf).map_err(|e| format!("--cnf {}: {e}", self.cnf.display()))?;
        let cube_vars = match cubes {
            Some(_) if self.cubes.is_some() || !self.cube_vars.is_empty() => {
                return Err(format!(
                    "--cnf {}: an iCNF brings its own cubes: --cubes and --cube-vars do not apply",
                    self.cnf.display()
                ))
            }
            Some(_) => Vec::new(),
            None if self.cover_with_formula => {
                return Err("--cover-with-formula: only with an iCNF's cubes".into())
            }
            None if self.cube_vars.is_empty() => {
                let k = (self.cubes.unwrap_or(DEFAULT_CUBES) as usize).min(formula.vars as usize);
                formula.split_order()[..k].to_vec()
            }
            None => self.cube_vars,
        };
        let solver = self
            .solver
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("--solver {}: not a file name", self.solver.display()))?
            .to_string();
        let solver_sha256 = sha256_file(&self.solver)
            .map_err(|e| format!("--solver {}: {e}", self.solver.display()))?;
        if let Some(cubes) = &cubes {
            // Before anything is stored: an UNSAT verdict on cubes with a
            // gap would be false.
            let cover = if self.cover_with_formula {
                cover::Cover::Models
            } else {
                cover::Cover::Assignments
            };
            // The solver runs in a directory of its own: a relative path
            // would not name it there.
            let solver = std::fs::canonicalize(&self.solver)
                .map_err(|e| format!("--solver {}: {e}", self.solver.display()))?;
            cover::check(
                cubes,
                &formula,
                cover,
                &solver,
                Duration::from_secs(self.timeout_secs),
            )
            .map_err(|e| format!("--cnf {}: {e}", self.cnf.display()))?;
        }
        Ok(SatParams {
            cnf_sha256: sha256_bytes(cnf.as_bytes()),
            cnf,
            cube_vars,
            solver,
            solver_sha256,
            solver_args: self.solver_args,
            conflicts: self.conflicts,
            cover_with_formula: self.cover_with_formula,
            timeout_secs: self.timeout_secs,
            first_model: self.first_model,
        })
    }
}

orchard_core::params_from_flags!(SatArgs => SatParams);

/// A cube: literals assumed true.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cube(pub Vec<i32>);

/// A satisfiable cube and the model that proves it, checked.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Model {
    pub cube: Vec<i32>,
    /// The true variables.
    pub true_vars: Vec<u32>,
}

/// What solving some cubes found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SatSummary {
    /// Conflicts the solver reported, plus one a call.
    pub nodes: u64,
    pub calls: u64,
    pub sat_cubes: u64,
    pub unsat_cubes: u64,
    /// Cubes left undecided at the conflict limit, split in two.
    pub split_cubes: u64,
    /// The decided cubes' shares (`2^-length` each), in units of
    /// `2^-MAX_CUBE`: the share of assignments they cover ([`FULL`]: all)
    /// when the root cubes are disjoint; the job's total when every root
    /// cube is decided.
    pub covered: u128,
    /// The models of the [`MODELS_KEPT`] smallest satisfiable cubes.
    pub models: Vec<Model>,
}

/// One `sat` job.
pub struct Sat {
    params: SatParams,
    formula: Arc<Formula>,
    /// An iCNF's cubes, in its order; `None`: the sign patterns of
    /// `cube_vars`.
    user_cubes: Option<Vec<Cube>>,
    /// The root cubes' shares added up: [`FULL`] for sign patterns, at
    /// least that for covering user cubes (more where they overlap).
    total: u128,
    order: Vec<u32>,
    solver: JobProgram,
}

impl std::fmt::Debug for Sat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sat")
            .field("cnf_sha256", &self.params.cnf_sha256)
            .field("solver", &self.params.solver)
            .finish()
    }
}

impl Sat {
    fn check_cube(&self, cube: &Cube) -> Result<(), FamilyError> {
        if cube.0.len() > MAX_CUBE {
            return Err(FamilyError::BadUnit(format!(
                "a cube of {} literals, over {MAX_CUBE}",
                cube.0.len()
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for &l in &cube.0 {
            if l == 0 || l.unsigned_abs() > self.formula.vars || !seen.insert(l.unsigned_abs()) {
                return Err(FamilyError::BadUnit(format!("bad literal {l} in cube")));
            }
        }
        Ok(())
    }

    /// The two halves of an undecided cube: the next variable of the split
    /// order it does not fix, false then true.
    fn halves(&self, cube: &Cube) -> Option<[Cube; 2]> {
        let v = *self
            .order
            .iter()
            .find(|v| !cube.0.iter().any(|l| l.unsigned_abs() == **v))?;
        let with = |lit: i32| {
            let mut c = cube.0.clone();
            c.push(lit);
            Cube(c)
        };
        Some([with(-(v as i32)), with(v as i32)])
    }
}

fn share(cube: &Cube) -> u128 {
    1u128 << (MAX_CUBE - cube.0.len())
}

/// What the solver said about one cube.
#[derive(Debug)]
pub enum Answer {
    Sat(Vec<bool>),
    Unsat,
    Unknown,
}

/// Reads CaDiCaL's answer: `s` line, exit code, `v` lines, conflicts.
/// Public so that `bench/sat-inprocess` reads a solver's answer exactly as
/// the family does.
pub fn read_answer(vars: u32, code: Option<i32>, out: &str) -> Result<(Answer, u64), String> {
    let mut status = None;
    let mut assignment = vec![false; vars as usize + 1];
    let mut conflicts = 0u64;
    for line in out.lines() {
        if let Some(s) = line.strip_prefix("s ") {
            status = Some(s.trim().to_string());
        } else if let Some(v) = line.strip_prefix("v ") {
            for w in v.split_whitespace() {
                let l: i64 = w.parse().map_err(|_| format!("bad value line {line:?}"))?;
                if l.unsigned_abs() > u64::from(vars) {
                    return Err(format!("value {l} beyond {vars} variables"));
                }
                if l > 0 {
                    assignment[l as usize] = true;
                }
            }
        } else if let Some(c) = line.strip_prefix("c conflicts:") {
            conflicts = c
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    let answer = match (status.as_deref(), code) {
        (Some("SATISFIABLE"), Some(10)) => Answer::Sat(assignment),
        (Some("UNSATISFIABLE"), Some(20)) => Answer::Unsat,
        (None | Some("UNKNOWN"), Some(0)) => Answer::Unknown,
        (s, c) => {
            return Err(format!(
                "the solver answered {s:?} with exit code {c:?} (expected SATISFIABLE/10, UNSATISFIABLE/20 or none/0)"
            ))
        }
    };
    Ok((answer, conflicts))
}

impl SearchFamily for Sat {
    const NAME: &'static str = "sat";
    const ABOUT: &'static str =
        "cube-and-conquer: a CNF formula's cubes each solved by a SAT solver the workers allow";

    type Params = SatParams;
    type Unit = Cube;
    type Summary = SatSummary;

    fn new(params: SatParams, host: &Host) -> Result<Self, ParamError> {
        let (formula, user_cubes) =
            Formula::parse_input(&params.cnf).map_err(|e| ParamError::new("cnf", e.to_string()))?;
        if user_cubes.is_some() && !params.cube_vars.is_empty() {
            return Err(ParamError::new(
                "cube-vars",
                "an iCNF brings its own cubes: no cube variables",
            ));
        }
        if user_cubes.is_none() && params.cover_with_formula {
            return Err(ParamError::new(
                "cover-with-formula",
                "only with an iCNF's cubes",
            ));
        }
        let user_cubes: Option<Vec<Cube>> =
            user_cubes.map(|cubes| cubes.into_iter().map(Cube).collect());
        let total = match &user_cubes {
            None => FULL,
            // The parser refuses cubes whose shares overflow.
            Some(cubes) => cubes.iter().map(share).sum(),
        };
        if sha256_bytes(params.cnf.as_bytes()) != params.cnf_sha256 {
            return Err(ParamError::new(
                "cnf",
                "the formula's SHA-256 does not match it",
            ));
        }
        orchard_exec::program::check_name(&params.solver)
            .map_err(|e| ParamError::new("solver", e.to_string()))?;
        if params.cube_vars.len() > MAX_CUBE_VARS {
            return Err(ParamError::new(
                "cube-vars",
                format!(
                    "at most {MAX_CUBE_VARS} variables, got {}",
                    params.cube_vars.len()
                ),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for &v in &params.cube_vars {
            if v == 0 || v > formula.vars || !seen.insert(v) {
                return Err(ParamError::new(
                    "cube-vars",
                    format!(
                        "{v} is not a distinct variable of the formula's {}",
                        formula.vars
                    ),
                ));
            }
        }
        if !(1..=7 * 86_400).contains(&params.timeout_secs) {
            return Err(ParamError::new(
                "timeout-secs",
                "must be between 1 and 604800",
            ));
        }
        let order = formula.split_order();
        Ok(Sat {
            solver: JobProgram::new(host.programs.clone(), &params.solver, &params.solver_sha256),
            formula: Arc::new(formula),
            user_cubes,
            total,
            order,
            params,
        })
    }

    fn root_units(&self) -> Vec<Cube> {
        if let Some(cubes) = &self.user_cubes {
            return cubes.clone();
        }
        let vars = &self.params.cube_vars;
        (0..1u64 << vars.len())
            .map(|bits| {
                Cube(
                    vars.iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            let v = v as i32;
                            if bits >> (vars.len() - 1 - i) & 1 == 1 {
                                v
                            } else {
                                -v
                            }
                        })
                        .collect(),
                )
            })
            .collect()
    }

    fn explore(
        &self,
        cube: &Cube,
        ctx: &ExploreContext<'_>,
    ) -> Result<Exploration<SatSummary, Cube>, FamilyError> {
        self.check_cube(cube)?;
        let solver = self.solver.path().map_err(FamilyError::Attempt)?;
        let mut args = self.params.solver_args.clone();
        if self.params.conflicts > 0 {
            args.extend(["-c".to_string(), self.params.conflicts.to_string()]);
        }
        let limits = Limits {
            timeout: Duration::from_secs(self.params.timeout_secs),
            max_output: 1 << 30,
            grace: Duration::ZERO,
        };
        let attempt = |e: String| {
            FamilyError::Attempt(format!(
                "solver '{}' on cube {:?}: {e}",
                self.params.solver, cube.0
            ))
        };
        let out = call_raw(
            solver,
            &args,
            self.formula.with_units(&cube.0),
            limits,
            ctx.stop,
        )
        .map_err(|e| attempt(e.to_string()))?;
        let Some(out) = out else {
            // Stopped: the cube goes back whole.
            return Ok(Exploration::Split {
                explored: SatSummary::default(),
                rest: vec![cube.clone()],
            });
        };
        let (answer, conflicts) =
            read_answer(self.formula.vars, out.code, &out.stdout).map_err(attempt)?;
        ctx.progress.store(conflicts, Ordering::Relaxed);
        let mut s = SatSummary {
            nodes: conflicts.saturating_add(1),
            calls: 1,
            ..SatSummary::default()
        };
        match answer {
            Answer::Sat(assignment) => {
                if let Some(i) = self.formula.falsified(&assignment) {
                    return Err(attempt(format!("its model leaves clause {} false", i + 1)));
                }
                if let Some(l) = cube
                    .0
                    .iter()
                    .find(|&&l| assignment[l.unsigned_abs() as usize] != (l > 0))
                {
                    return Err(attempt(format!("its model contradicts the cube's {l}")));
                }
                s.sat_cubes = 1;
                s.covered = share(cube);
                s.models.push(Model {
                    cube: cube.0.clone(),
                    true_vars: (1..=self.formula.vars)
                        .filter(|&v| assignment[v as usize])
                        .collect(),
                });
                Ok(Exploration::Finished(s))
            }
            Answer::Unsat => {
                s.unsat_cubes = 1;
                s.covered = share(cube);
                Ok(Exploration::Finished(s))
            }
            Answer::Unknown => match self.halves(cube) {
                Some(halves) if cube.0.len() < MAX_CUBE => {
                    s.split_cubes = 1;
                    Ok(Exploration::Split {
                        explored: s,
                        rest: halves.to_vec(),
                    })
                }
                _ => Err(attempt(
                    "undecided with every variable fixed or the cube at its longest".into(),
                )),
            },
        }
    }

    fn merge(&self, into: &mut SatSummary, other: SatSummary) -> Result<(), FamilyError> {
        into.nodes = checked_add(into.nodes, other.nodes, "sat conflicts")?;
        into.calls = checked_add(into.calls, other.calls, "sat calls")?;
        into.sat_cubes = checked_add(into.sat_cubes, other.sat_cubes, "sat cubes")?;
        into.unsat_cubes = checked_add(into.unsat_cubes, other.unsat_cubes, "unsat cubes")?;
        into.split_cubes = checked_add(into.split_cubes, other.split_cubes, "split cubes")?;
        into.covered = into
            .covered
            .checked_add(other.covered)
            .filter(|&c| c <= self.total)
            .ok_or(FamilyError::Overflow("sat coverage over the whole space"))?;
        into.models.extend(other.models);
        into.models.sort();
        into.models.dedup();
        into.models.truncate(MODELS_KEPT);
        Ok(())
    }

    fn nodes(s: &SatSummary) -> u64 {
        s.nodes
    }

    fn report(&self, s: &SatSummary) -> FamilyReport {
        let verdict = if s.sat_cubes > 0 {
            "satisfiable"
        } else if s.covered == self.total {
            "unsatisfiable"
        } else {
            "unknown"
        };
        let models: Vec<serde_json::Value> = s
            .models
            .iter()
            .map(|m| serde_json::json!({ "cube": m.cube, "true_vars": m.true_vars }))
            .collect();
        let covered = s.covered as f64 / self.total as f64;
        let root_cubes = match &self.user_cubes {
            Some(c) => c.len() as u64,
            None => 1u64 << self.params.cube_vars.len(),
        };
        let json = serde_json::json!({
            "family": "sat",
            "cnf_sha256": self.params.cnf_sha256,
            "variables": self.formula.vars,
            "clauses": self.formula.clauses(),
            "solver": self.params.solver,
            "verdict": verdict,
            "root_cubes": root_cubes,
            "user_cubes": self.user_cubes.is_some(),
            "cover_with_formula": self.params.cover_with_formula,
            "first_model": self.params.first_model,
            "sat_cubes": s.sat_cubes,
            "unsat_cubes": s.unsat_cubes,
            "split_cubes": s.split_cubes,
            "calls": s.calls,
            "covered": covered,
            "models": models,
            "nodes": s.nodes,
        });
        let mut text = vec![
            format!(
                "formula {}... ({} variables, {} clauses): {verdict}",
                &self.params.cnf_sha256[..12],
                self.formula.vars,
                self.formula.clauses()
            ),
            format!(
                "cubes: {} satisfiable (models checked), {} unsatisfiable, {} split; {:.6} of {} decided",
                s.sat_cubes,
                s.unsat_cubes,
                s.split_cubes,
                covered,
                if self.params.cover_with_formula {
                    "the user's cubes (checked to cover the formula's models)"
                } else if self.user_cubes.is_some() {
                    "the user's cubes (checked to cover the space)"
                } else {
                    "the space"
                }
            ),
            format!("solver calls: {}, conflicts and calls: {}", s.calls, s.nodes),
        ];
        if self.params.first_model && s.sat_cubes > 0 {
            text.push("stopped at the first model (--first-model): the cubes left undecided were cancelled".into());
        }
        // The verdict heads the results file, so that an unsatisfiable
        // job's file (no model to list) still says what was decided, and of
        // which formula.
        let mut results_lines = vec![format!(
            "verdict {verdict} formula-sha256 {} covered {covered}",
            self.params.cnf_sha256
        )];
        results_lines.extend(s.models.iter().map(|m| {
            let cube: Vec<String> = m.cube.iter().map(i32::to_string).collect();
            let vars: Vec<String> = m.true_vars.iter().map(u32::to_string).collect();
            format!("cube {} model-true {}", cube.join(" "), vars.join(" "))
        }));
        FamilyReport {
            json,
            text,
            results_lines,
        }
    }

    /// A solver call keeps nothing when stopped: an idle worker's request
    /// would only kill it and start the cube again.
    fn split_on_idle(&self, _cube: &Cube) -> bool {
        false
    }

    fn unit_label(&self, cube: &Cube) -> String {
        let lits: Vec<String> = cube.0.iter().map(i32::to_string).collect();
        lits.join(" ")
    }

    /// With `--first-model`, every cube is moot once a model is merged.
    fn capabilities(&self) -> Capabilities<'_, Self> {
        Capabilities {
            moot_units: self
                .params
                .first_model
                .then_some(self as &dyn MootUnits<Self>),
            ..Capabilities::default()
        }
    }
}

/// `--first-model`: a merged model settles the verdict, so no cube can
/// change it. A model only ever joins the merged summary, so a cube moot
/// once stays moot, as [`MootUnits`] asks.
impl MootUnits<Sat> for Sat {
    fn judge(&self, merged: &SatSummary) -> Box<dyn MootJudge<Cube>> {
        Box::new(ModelFound(merged.sat_cubes > 0))
    }
}

/// Whether a model is merged: then every cube is moot.
struct ModelFound(bool);

impl MootJudge<Cube> for ModelFound {
    fn is_moot(&self, _cube: &Cube) -> bool {
        self.0
    }
}
