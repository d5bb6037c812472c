//! `orchard`: the command line of the library over every family of the
//! repository (see `orchard::main_with`).

fn main() -> std::process::ExitCode {
    orchard::main_with(orchard::Families::builtin())
}
