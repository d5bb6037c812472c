//! `orchard completions SHELL` and `orchard man`, checked the way a user
//! meets them: each completion script loaded by its real shell and asked
//! to complete (bash through its completion function, fish through
//! `complete -C`, zsh parsed), the man page rendered by `man -l`.
//!
//! bash is always required. zsh, fish and man are required when
//! `ORCHARD_REQUIRE_SHELLS=1` (.ci/run installs them and sets it); on a
//! developer's machine without them those checks say so and are skipped.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// A user-facing name of every kind the scripts must know: top-level
/// subcommands, a family subcommand, a flag.
const TOP_LEVEL: [&str; 6] = [
    "run",
    "coordinator",
    "worker",
    "submit",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "orchard {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn shell_output(program: &str, args: &[&str]) -> Option<Output> {
    match Command::new(program).args(args).output() {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("ORCHARD_REQUIRE_SHELLS").is_none(),
                "{program} is not installed, and ORCHARD_REQUIRE_SHELLS is set"
            );
            eprintln!("{program} not installed: its check is skipped");
            None
        }
        Err(e) => panic!("cannot run {program}: {e}"),
    }
}

fn succeeded(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Completions bash offers for the words of `line` (the last one being
/// completed), from the script in `script`.
fn bash_complete(script: &Path, line: &[&str]) -> Vec<String> {
    let words = line
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({words}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _orchard orchard '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        line.len() - 1,
        line.join(" "),
        line[line.len() - 1],
        line[line.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &program])
        .output()
        .expect("bash");
    succeeded("bash completion", &out)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_subcommands_families_and_flags() {
    let dir = TempDir::new("completions-bash");
    let script = dir.path("orchard.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    succeeded(
        "bash -n",
        &Command::new("bash")
            .args(["-n", script.to_str().unwrap()])
            .output()
            .unwrap(),
    );

    let top = bash_complete(&script, &["orchard", ""]);
    for name in TOP_LEVEL {
        assert!(top.iter().any(|w| w == name), "{name} not offered: {top:?}");
    }
    let families = bash_complete(&script, &["orchard", "run", ""]);
    for family in ["hc", "queens", "hip-solve"] {
        assert!(
            families.iter().any(|w| w == family),
            "{family} not offered after `orchard run`: {families:?}"
        );
    }
    let flags = bash_complete(&script, &["orchard", "run", "hc", "--"]);
    assert!(
        flags.iter().any(|w| w == "--columns"),
        "--columns not offered for `orchard run hc`: {flags:?}"
    );
    let shells = bash_complete(&script, &["orchard", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(shells.iter().any(|w| w == shell), "{shells:?}");
    }
}

#[test]
fn fish_and_zsh_load_their_scripts() {
    let dir = TempDir::new("completions-fish-zsh");
    let fish = dir.path("orchard.fish");
    std::fs::write(&fish, stdout_of(&["completions", "fish"])).unwrap();
    if let Some(out) = shell_output(
        "fish",
        &[
            "--no-config",
            "-c",
            &format!(
                "source '{}'; complete -C 'orchard '; complete -C 'orchard run '",
                fish.display()
            ),
        ],
    ) {
        let offered = succeeded("fish complete -C", &out);
        // fish prints `candidate<TAB>description`.
        let words: Vec<&str> = offered
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        for name in TOP_LEVEL.iter().chain(&["hc", "queens"]) {
            assert!(
                words.contains(name),
                "fish does not offer {name}: {words:?}"
            );
        }
    }

    let zsh = dir.path("_orchard");
    let script = stdout_of(&["completions", "zsh"]);
    assert!(script.starts_with("#compdef orchard"), "{}", &script[..40]);
    std::fs::write(&zsh, &script).unwrap();
    if let Some(out) = shell_output("zsh", &["-n", zsh.to_str().unwrap()]) {
        succeeded("zsh -n", &out);
    }
}

#[test]
fn the_man_page_renders_and_lists_the_commands() {
    let roff = stdout_of(&["man"]);
    assert!(roff.contains(".TH orchard 1"), "no .TH header");
    for name in TOP_LEVEL {
        assert!(
            roff.contains(&format!("orchard\\-{name}(1)")),
            "the page does not list orchard-{name}(1)"
        );
    }

    let dir = TempDir::new("man");
    let pages = dir.path("man1");
    stdout_of(&["man", "--dir", pages.to_str().unwrap()]);
    for page in [
        "orchard.1",
        "orchard-coordinator.1",
        "orchard-run.1",
        "orchard-run-hc.1",
    ] {
        assert!(pages.join(page).is_file(), "{page} not written");
    }
    let hc = std::fs::read_to_string(pages.join("orchard-run-hc.1")).unwrap();
    assert!(hc.contains("columns"), "orchard-run-hc.1 lacks --columns");

    if let Some(out) = shell_output(
        "man",
        &["-P", "cat", "-l", pages.join("orchard.1").to_str().unwrap()],
    ) {
        let text = succeeded("man -l", &out);
        assert!(text.contains("NAME"), "{text}");
        assert!(
            text.contains("A distributed exhaustive-search cluster"),
            "{text}"
        );
        assert!(text.contains("orchard-coordinator(1)"), "{text}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tcsh"), "{err}");

    let out = run(&["man", "--dir", "/proc/orchard-cannot-be-here"]);
    assert_one_line_error(&out, "cannot create /proc/orchard-cannot-be-here");
}
