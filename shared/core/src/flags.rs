//! Parameters read from flags through a second type: for families whose
//! parameters are not the flags as given but what the flags name, checked
//! and completed when the job is made (a file read and hashed, a solver's
//! path resolved), so that a stored job never depends on the submitter's
//! files again.

/// Makes `$params` a clap [`Args`](https://docs.rs/clap/latest/clap/trait.Args.html)
/// whose flags are those of `$args` (a `#[derive(clap::Args)]` struct), read
/// through `$args::resolve(self) -> Result<$params, String>`; a refusal is
/// clap's value-validation error with that message (one line naming the
/// flag). The expansion names `::clap`, which the calling crate depends on.
///
/// ```ignore
/// orchard_core::params_from_flags!(ExecArgs => ExecParams);
/// ```
#[macro_export]
macro_rules! params_from_flags {
    ($args:ty => $params:ty) => {
        impl ::clap::FromArgMatches for $params {
            fn from_arg_matches(
                m: &::clap::ArgMatches,
            ) -> ::std::result::Result<Self, ::clap::Error> {
                <$args as ::clap::FromArgMatches>::from_arg_matches(m)?
                    .resolve()
                    .map_err(|e| ::clap::Error::raw(::clap::error::ErrorKind::ValueValidation, e))
            }

            fn update_from_arg_matches(
                &mut self,
                m: &::clap::ArgMatches,
            ) -> ::std::result::Result<(), ::clap::Error> {
                *self = <Self as ::clap::FromArgMatches>::from_arg_matches(m)?;
                Ok(())
            }
        }

        impl ::clap::Args for $params {
            fn augment_args(cmd: ::clap::Command) -> ::clap::Command {
                <$args as ::clap::Args>::augment_args(cmd)
            }

            fn augment_args_for_update(cmd: ::clap::Command) -> ::clap::Command {
                <$args as ::clap::Args>::augment_args_for_update(cmd)
            }
        }
    };
}
