//! The families a build of orchard knows, and their command lines.
//!
//! A [`Families`] value is handed to [`crate::main_with`]: the command line
//! builds its `run`/`submit`/`estimate` subcommands from it, and the
//! coordinator and the worker receive its [`Registry`] and never name a
//! family. Nothing reads a process-wide registry, so a program that depends
//! on orchard as a library runs exactly the families it lists:
//!
//! ```no_run
//! # use orchard::Families;
//! # fn main() -> std::process::ExitCode {
//! orchard::main_with(Families::builtin() /* .with::<MyFamily>() */)
//! # }
//! ```

use clap::{ArgMatches, Args, FromArgMatches};
use orchard_core::{FamilyError, Host, Registry, SearchFamily};

/// One family as the command line sees it.
pub struct FamilyCli {
    pub name: &'static str,
    /// The family's subcommand, with its parameters as flags.
    pub command: fn() -> clap::Command,
    /// Reads the parameters from the subcommand's matches as JSON.
    params_json: fn(&ArgMatches) -> Result<String, FamilyError>,
}

/// The families, and their command lines.
pub struct Families {
    pub registry: Registry,
    pub cli: Vec<FamilyCli>,
}

impl Default for Families {
    fn default() -> Self {
        Families::none()
    }
}

impl Families {
    /// No family at all: start here to build a program with only one's own.
    pub fn none() -> Self {
        Families {
            registry: Registry::default(),
            cli: Vec::new(),
        }
    }

    /// Every family of the orchard repository.
    pub fn builtin() -> Self {
        Families::none()
            .with::<orchard_busy_beaver::BusyBeaver>()
            .with::<orchard_exec::Exec>()
            .with::<orchard_grundy::Grundy>()
            .with::<orchard_halves::Halves>()
            .with::<orchard_hc::HararyColumns>()
            .with::<orchard_hip::HipDraws>()
            .with::<orchard_hip::HipSolve>()
            .with::<orchard_hip_nn::HipNn>()
            .with::<orchard_knight_nn::KnightNn>()
            .with::<orchard_knight_tours::KnightTours>()
            .with::<orchard_latin::Latin>()
            .with::<orchard_magic_hexagon::MagicHexagon>()
            .with::<orchard_queens::Queens>()
            .with::<orchard_rooks3d::Rooks3d>()
            .with::<orchard_sat::Sat>()
            .with::<orchard_synthetic::Synthetic>()
    }

    /// These families and `F`, whose parameters become the flags of its
    /// subcommand. Panics if a family of that name is already listed: two
    /// families under one name would make stored jobs ambiguous.
    pub fn with<F: SearchFamily>(mut self) -> Self
    where
        F::Params: Args + FromArgMatches,
    {
        self.registry = self.registry.with::<F>();
        self.cli.push(FamilyCli {
            name: F::NAME,
            command: || F::Params::augment_args(clap::Command::new(F::NAME).about(F::ABOUT)),
            params_json: |m| {
                let params = F::Params::from_arg_matches(m)
                    .map_err(|e| FamilyError::Flags(clap_message(&e)))?;
                Ok(serde_json::to_string(&params).expect("parameters serialise to JSON"))
            },
        });
        self
    }

    /// The names of the families, in the order they were listed.
    pub fn names(&self) -> Vec<&'static str> {
        self.registry.names()
    }

    /// The canonical JSON parameters of `family` read from its subcommand,
    /// checked by the family.
    pub fn params_from_matches(
        &self,
        family: &str,
        matches: &ArgMatches,
    ) -> Result<String, FamilyError> {
        let cli = self
            .cli
            .iter()
            .find(|c| c.name == family)
            .ok_or_else(|| FamilyError::UnknownFamily(family.to_string()))?;
        let json = (cli.params_json)(matches)?;
        let job = self
            .registry
            .by_name(family)?
            .prepare(&json, &Host::default())?;
        Ok(job.params_json())
    }

    /// The canonical JSON parameters of a job given as its command line
    /// would give it: the family's name, then its flags
    /// (`["queens", "--n", "6"]`).
    pub fn params_from_args(&self, args: &[&str]) -> Result<String, FamilyError> {
        let name = args
            .first()
            .ok_or_else(|| FamilyError::UnknownFamily(String::new()))?;
        let cli = self
            .cli
            .iter()
            .find(|c| c.name == *name)
            .ok_or_else(|| FamilyError::UnknownFamily(name.to_string()))?;
        let matches = (cli.command)()
            .try_get_matches_from(args.iter())
            .map_err(|e| FamilyError::Flags(clap_message(&e)))?;
        self.params_from_matches(name, &matches)
    }
}

/// A clap error as the one line a family error carries: clap's message
/// without its `error: ` prefix and its usage and help lines, which the
/// binary's own `error: ` line and `--help` already give.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family's own refusal of its flags, and clap's of a flag it does not
    /// know, each reach the user as one line without a second `error:`.
    #[test]
    fn refused_flags_are_one_line_without_clap_prefix() {
        let families = Families::builtin();
        for args in [
            &[
                "sat",
                "--cnf",
                "/nonexistent/formula.cnf",
                "--solver",
                "cadical",
            ][..],
            &["queens", "--no-such-flag", "3"][..],
        ] {
            let err = families.params_from_args(args).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, FamilyError::Flags(_)), "{args:?}: {err:?}");
            assert!(!text.contains("error:"), "{args:?}: {text}");
            assert!(!text.contains('\n'), "{args:?}: {text}");
            assert!(!text.is_empty(), "{args:?}");
        }
        let sat = families
            .params_from_args(&[
                "sat",
                "--cnf",
                "/nonexistent/formula.cnf",
                "--solver",
                "cadical",
            ])
            .unwrap_err()
            .to_string();
        assert!(sat.starts_with("--cnf /nonexistent/formula.cnf"), "{sat}");
    }
}
