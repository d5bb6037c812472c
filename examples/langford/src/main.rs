//! The whole program: orchard's command line over its built-in families and
//! this one. `langford run langford --n 11` counts on this machine;
//! `langford coordinator` and `langford worker` make a cluster of it.

fn main() -> std::process::ExitCode {
    orchard::main_with(orchard::Families::builtin().with::<langford::Langford>())
}
