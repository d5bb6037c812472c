//! The documents against the code: README.md, BENCHMARKS.md,
//! ARCHITECTURE.md, the READMEs of `runs/` and `deploy/`, and the guide in
//! `docs/` (an mdBook, `book.toml`). These tests fail, naming file and line,
//! when
//!
//! - a relative link names a file that does not exist, or an `#anchor` that
//!   is no heading of the page it points to;
//! - an `orchard ...` command quoted in a ```` ```sh ```` block (or `cargo run
//!   --release -- ...`, the same command line) no longer parses with the real
//!   command line, family parameters included;
//! - a family has no page in `docs/families/`, or its page leaves out one of
//!   the family's own flags;
//! - a page of `docs/` is not in the book's `SUMMARY.md`;
//! - a heading of BENCHMARKS.md, ARCHITECTURE.md or the guide is a diary
//!   entry (a numbered sitting or a date).
//!
//! A quoted command that is meant as a pattern, not a command (a placeholder
//! the parser would refuse), ends with the comment `# (pattern)` and is
//! skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Families;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents checked, relative to the repository's root.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [
        "README.md",
        "BENCHMARKS.md",
        "ARCHITECTURE.md",
        "runs/README.md",
        "deploy/README.md",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let mut stack = vec![PathBuf::from("docs")];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(root().join(&dir))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| dir.join(e.expect("a folder entry").file_name()))
            .collect();
        entries.sort();
        for path in entries {
            if root().join(&path).is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A line of a document, with what kind of text it is.
struct Line<'a> {
    number: usize,
    text: &'a str,
    /// The language of the fenced block the line is in, if any.
    fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim()),
            };
            continue;
        }
        out.push(Line {
            number: i + 1,
            text,
            fence,
        });
    }
    out
}

/// The anchor of a heading as GitHub and mdBook make it: lower case,
/// letters, digits, `-` and `_` kept, spaces made `-`, the rest dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The headings of a Markdown text (outside fenced blocks), without `#`s.
fn headings(text: &str) -> Vec<(usize, String)> {
    lines(text)
        .into_iter()
        .filter(|l| l.fence.is_none())
        .filter_map(|l| {
            let rest = l.text.trim_start_matches('#');
            (rest.len() < l.text.len() && rest.starts_with(' '))
                .then(|| (l.number, rest.trim().replace('`', "")))
        })
        .collect()
}

fn anchors(path: &Path) -> BTreeSet<String> {
    headings(&read(path))
        .into_iter()
        .map(|(_, h)| anchor(&h))
        .collect()
}

/// `text` without its inline code spans.
fn without_code(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a line.
fn link_targets(text: &str) -> Vec<String> {
    let text = without_code(text);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    out
}

/// Lexically resolves `..` and `.` in a path relative to the root.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// What is wrong with `target`, a link of `from`, if anything.
fn broken_link(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = match target.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        from.to_path_buf()
    } else {
        let joined = from.parent().unwrap_or(Path::new("")).join(file);
        match normalise(&joined) {
            Some(p) => p,
            None => return Some(format!("{target}: leaves the repository")),
        }
    };
    if !root().join(&path).exists() {
        return Some(format!("{target}: no such file ({})", path.display()));
    }
    if let Some(fragment) = fragment {
        if path.extension().is_some_and(|e| e == "md") && !anchors(&path).contains(fragment) {
            return Some(format!(
                "{target}: no heading of {} has the anchor #{fragment}",
                path.display()
            ));
        }
    }
    None
}

#[test]
fn every_relative_link_and_anchor_of_the_documents_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        for line in lines(&read(&doc)) {
            if line.fence.is_some() {
                continue;
            }
            for target in link_targets(line.text) {
                checked += 1;
                if let Some(why) = broken_link(&doc, &target) {
                    broken.push(format!("{}:{}: {why}", doc.display(), line.number));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links read");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Splits a shell command into words: quotes group, `\` escapes, and a
/// word of its own that is `|`, `;`, `&&`, `||`, `&` or a redirection ends
/// the command (what follows is another command or a file).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let end = words
        .iter()
        .position(|w| {
            matches!(w.as_str(), "|" | ";" | "&&" | "||" | "&" | ")")
                || w.starts_with('>')
                || w.starts_with('<')
                || w.starts_with("2>")
        })
        .unwrap_or(words.len());
    words.truncate(end);
    words
}

/// `line` without its shell comment: from a `#` that starts a word, outside
/// quotes.
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return &line[..at],
            _ => {}
        }
        previous = c;
    }
    line
}

/// The `orchard` commands of a document's ```` ```sh ```` blocks: (line,
/// arguments after the program's name).
fn quoted_commands(text: &str) -> Vec<QuotedCommand> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut exported: Vec<(String, String)> = Vec::new();
    for line in lines(text) {
        if !matches!(line.fence, Some("sh" | "bash" | "console")) {
            pending = None;
            exported.clear();
            continue;
        }
        let (number, mut joined) = pending.take().unwrap_or((line.number, String::new()));
        joined.push_str(line.text.trim_start_matches("$ "));
        if let Some(open) = joined.strip_suffix('\\') {
            pending = Some((number, format!("{open} ")));
            continue;
        }
        if joined.trim_end().ends_with("# (pattern)") {
            continue;
        }
        // Every command of the line: after `|`, `;`, `&&`, `(`.
        let joined = without_comment(&joined);
        for part in joined.split(['|', ';', '(']).flat_map(|p| p.split("&&")) {
            let words = shell_words(part);
            if words.first().is_some_and(|w| w == "export") {
                for assignment in &words[1..] {
                    if let Some((name, value)) = assignment.split_once('=') {
                        exported.push((name.to_string(), value.to_string()));
                    }
                }
                continue;
            }
            let args: Vec<String> = match words.first().map(String::as_str) {
                Some("orchard") => words[1..].to_vec(),
                Some("cargo") if words.starts_with(&["cargo".into(), "run".into()]) => {
                    match words.iter().position(|w| w == "--") {
                        Some(at) if !words.iter().any(|w| w == "--example" || w == "-p") => {
                            words[at + 1..].to_vec()
                        }
                        _ => continue,
                    }
                }
                _ => continue,
            };
            out.push((number, args, exported.clone()));
        }
    }
    out
}

/// A quoted command: its line, its arguments after the program's name, and
/// the variables the block exported before it (`export NAME=VALUE`).
type QuotedCommand = (usize, Vec<String>, Vec<(String, String)>);

/// `args` with the flags that the exported variables stand for
/// (`ORCHARD_COORDINATOR` is `--coordinator` of `worker`, `submit`, ...),
/// where the subcommand takes one and the command does not give it.
fn with_exported(
    cmd: &clap::Command,
    args: Vec<String>,
    exported: &[(String, String)],
) -> Vec<String> {
    let Some(sub) = args.first().and_then(|s| cmd.find_subcommand(s)) else {
        return args;
    };
    let mut out = args.clone();
    for (name, value) in exported {
        let flag = sub
            .get_arguments()
            .find(|a| a.get_env().is_some_and(|e| e == name.as_str()) && a.get_long().is_some());
        if let Some(long) = flag.and_then(|a| a.get_long()) {
            if !args.iter().any(|a| a == &format!("--{long}")) {
                out.splice(1..1, [format!("--{long}"), value.clone()]);
            }
        }
    }
    out
}

/// Whether a value of `args` names a file that is not there: a word with a
/// `/` or a file extension after a flag, such as `--program
/// /tmp/programs/collatz` or `--cnf f.cnf`.
fn names_a_missing_file(args: &[String]) -> bool {
    args.windows(2).any(|w| {
        w[0].starts_with("--")
            && !w[1].starts_with('-')
            && !w[1].contains("://")
            && (w[1].contains('/')
                || w[1]
                    .rsplit_once('.')
                    .is_some_and(|(_, e)| e.chars().all(char::is_alphabetic)))
            && !root().join(&w[1]).exists()
    })
}

/// Families of programs other than `orchard` that the documents run with
/// `cargo run` (the template of a search of one's own).
const OTHER_PROGRAMS_FAMILIES: &[&str] = &["langford"];

#[test]
fn every_quoted_orchard_command_parses() {
    let families = Arc::new(Families::builtin());
    let cmd = crate::cli::command(&families);
    let mut failed = Vec::new();
    let mut parsed = 0;
    for doc in documents() {
        for (line, args, exported) in quoted_commands(&read(&doc)) {
            if args
                .iter()
                .any(|a| OTHER_PROGRAMS_FAMILIES.contains(&a.as_str()))
            {
                continue;
            }
            let args = with_exported(&cmd, args, &exported);
            let argv = std::iter::once("orchard".to_string()).chain(args.iter().cloned());
            match crate::cli::parse(families.clone(), argv.clone()) {
                Ok(_) => parsed += 1,
                // --help and --version "fail" with what they print.
                Err(e) if !e.use_stderr() => parsed += 1,
                // A family that reads a file the command names (exec's
                // program, sat's formula) cannot be asked about a file that
                // the page makes first or that stands for the reader's own:
                // the command line itself must still parse.
                Err(_)
                    if names_a_missing_file(&args)
                        && cmd.clone().try_get_matches_from(argv).is_ok() =>
                {
                    parsed += 1
                }
                Err(e) => failed.push(format!(
                    "{}:{line}: orchard {}: {}",
                    doc.display(),
                    args.join(" "),
                    crate::cli::one_line(&e, &families)
                )),
            }
        }
    }
    assert!(parsed > 50, "only {parsed} commands parsed");
    assert!(
        failed.is_empty(),
        "quoted commands that no longer parse (a pattern ends with `# (pattern)`):\n{}",
        failed.join("\n")
    );
}

#[test]
fn every_family_has_a_page_naming_each_of_its_flags() {
    let cmd = crate::cli::command(&Families::builtin());
    let run = cmd.find_subcommand("run").expect("the run subcommand");
    let shared: BTreeSet<&str> = run.get_arguments().filter_map(|a| a.get_long()).collect();
    let mut missing = Vec::new();
    let mut pages = 0;
    for family in run.get_subcommands() {
        let name = family.get_name();
        let page = PathBuf::from(format!("docs/families/{name}.md"));
        let Ok(text) = std::fs::read_to_string(root().join(&page)) else {
            missing.push(format!("{}: no page", page.display()));
            continue;
        };
        pages += 1;
        for flag in family.get_arguments().filter_map(|a| a.get_long()) {
            if !shared.contains(flag) && flag != "help" && !text.contains(&format!("`--{flag}`")) {
                missing.push(format!("{}: `--{flag}` not described", page.display()));
            }
        }
        let index = read(Path::new("docs/families/index.md"));
        if !index.contains(&format!("({name}.md)")) {
            missing.push(format!("docs/families/index.md: no link to {name}.md"));
        }
    }
    assert!(pages >= 16, "only {pages} family pages");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_page_of_the_guide_is_in_the_book() {
    let summary = read(Path::new("docs/SUMMARY.md"));
    let listed: BTreeSet<String> = lines(&summary)
        .iter()
        .flat_map(|l| link_targets(l.text))
        .collect();
    let missing: Vec<String> = documents()
        .into_iter()
        .filter_map(|p| p.strip_prefix("docs").ok().map(Path::to_path_buf))
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p != "SUMMARY.md" && !listed.contains(p))
        .collect();
    assert!(listed.len() > 20, "SUMMARY.md lists {}", listed.len());
    assert!(
        missing.is_empty(),
        "pages of docs/ not in docs/SUMMARY.md: {missing:?}"
    );
}

/// A heading that names a sitting or a date (a sitting's number or `2026-11-24`):
/// the documents describe the present, and git history keeps the diary.
fn diary_heading(heading: &str) -> bool {
    let lower = heading.to_lowercase();
    let session = lower.match_indices("session").any(|(at, word)| {
        lower[at + word.len()..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit())
    });
    let bytes = heading.as_bytes();
    let date = bytes.windows(10).any(|w| {
        w.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
    });
    session || date
}

#[test]
fn no_heading_is_a_diary_entry() {
    let mut diary = Vec::new();
    for doc in documents() {
        for (line, heading) in headings(&read(&doc)) {
            if diary_heading(&heading) {
                diary.push(format!("{}:{line}: {heading}", doc.display()));
            }
        }
    }
    assert!(diary.is_empty(), "dated headings:\n{}", diary.join("\n"));
}

#[test]
fn the_checks_catch_what_they_should() {
    assert!(diary_heading("Session 50 (the plain moves)"));
    assert!(diary_heading("Scale (2026-11-24)"));
    assert!(!diary_heading("Sessions of a worker"));
    assert_eq!(anchor("Harary's column game"), "hararys-column-game");
    assert_eq!(anchor("`hip-solve` & friends"), "hip-solve--friends");
    assert!(broken_link(Path::new("docs/index.md"), "one-machine.md").is_none());
    assert!(broken_link(Path::new("docs/index.md"), "no-such-page.md").is_some());
    assert!(broken_link(Path::new("docs/index.md"), "one-machine.md#no-such-heading").is_some());
    assert_eq!(
        shell_words("orchard run hc --columns 4   # h(4) = 67"),
        ["orchard", "run", "hc", "--columns", "4"]
    );
    let quoted = quoted_commands(
        "```sh\norchard run hc \\\n    --columns 4 > out.txt\norchard run hc --colums 4 # (pattern)\n```\n",
    );
    assert_eq!(
        quoted,
        [(
            2,
            vec!["run".into(), "hc".into(), "--columns".into(), "4".into()],
            vec![]
        )]
    );
    let quoted =
        quoted_commands("```sh\nexport ORCHARD_COORDINATOR=http://c:7070\norchard worker\n```\n");
    let cmd = crate::cli::command(&Families::builtin());
    assert_eq!(
        with_exported(&cmd, quoted[0].1.clone(), &quoted[0].2),
        ["worker", "--coordinator", "http://c:7070"]
    );
    let families = Arc::new(Families::builtin());
    let parse = |args: &[&str]| crate::cli::parse(families.clone(), args.iter().copied()).is_ok();
    assert!(parse(&["orchard", "run", "hc", "--columns", "4"]));
    assert!(!parse(&["orchard", "run", "hc", "--colums", "4"]));
    assert!(!parse(&["orchard", "run", "hc", "--columns", "99"]));
}
