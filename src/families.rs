//! The registry: every search family this build knows, one line each.
//!
//! To add a family: write its crate under `shared/` (it depends on
//! `orchard-core` only), add it to this package's dependencies, and add one
//! line to [`FAMILIES`]. The coordinator and the worker receive the
//! [`Registry`] from here and never name a family; the command line builds
//! its `run`/`submit`/`estimate` subcommands from the families' own
//! `clap::Args` parameters.

use std::sync::LazyLock;

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

impl Families {
    fn with<F: SearchFamily>(mut self) -> Self
    where
        F::Params: Args + FromArgMatches,
    {
        self.registry = self.registry.with::<F>();
        self.cli.push(FamilyCli {
            name: F::NAME,
            command: || F::Params::augment_args(clap::Command::new(F::NAME).about(F::ABOUT)),
            params_json: |m| {
                let params = F::Params::from_arg_matches(m)
                    .map_err(|e| FamilyError::ParamsJson(e.to_string()))?;
                Ok(serde_json::to_string(&params).expect("parameters serialise to JSON"))
            },
        });
        self
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
}

/// Every family of this build.
pub static FAMILIES: LazyLock<Families> = LazyLock::new(|| {
    Families {
        registry: Registry::default(),
        cli: Vec::new(),
    }
    .with::<orchard_busy_beaver::BusyBeaver>()
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
    .with::<orchard_synthetic::Synthetic>()
});

/// The registry the coordinator and the workers of this process use.
pub fn registry() -> Registry {
    FAMILIES.registry.clone()
}
