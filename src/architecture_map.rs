//! `ARCHITECTURE.md` is the map of the code; these tests keep it whole as
//! the code grows: every crate of the workspace, every family this build
//! registers and every module of the end-to-end test binary is named there
//! (in backticks, as the map names things). A crate or test module added
//! without its line on the map fails here, with the names missing.

use std::path::Path;

fn root_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails, naming them, if any of `names` (the `what` of this build) is not
/// mentioned in the map as `` `name` ``.
fn assert_on_the_map<'a>(what: &str, names: impl IntoIterator<Item = &'a str>) {
    let map = root_file("ARCHITECTURE.md");
    let missing: Vec<&str> = names
        .into_iter()
        .filter(|name| !map.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "{what} not in ARCHITECTURE.md: {missing:?}"
    );
}

/// The package names of the workspace's members: the `members` globs of the
/// top `Cargo.toml` (`dir` or `dir/*`), each member's `[package] name`.
fn workspace_packages() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root_file("Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = "))
        .expect("the top Cargo.toml lists its members on one line");
    let mut dirs = Vec::new();
    for member in members.trim_matches(['[', ']']).split(',') {
        let member = member.trim().trim_matches('"');
        if let Some(parent) = member.strip_suffix("/*") {
            let mut under: Vec<_> = std::fs::read_dir(root.join(parent))
                .expect("a member glob's folder")
                .map(|e| e.expect("a folder entry").path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect();
            under.sort();
            dirs.extend(under);
        } else {
            dirs.push(root.join(member));
        }
    }
    dirs.iter()
        .map(|dir| {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
            let name = manifest
                .lines()
                .find_map(|line| line.trim().strip_prefix("name = "))
                .expect("a package name");
            name.trim_matches('"').to_string()
        })
        .collect()
}

#[test]
fn every_crate_of_the_workspace_is_on_the_map() {
    let packages = workspace_packages();
    assert!(packages.len() >= 17, "members read: {packages:?}");
    assert_on_the_map("crates", packages.iter().map(String::as_str));
}

#[test]
fn every_registered_family_is_on_the_map() {
    let names = crate::Families::builtin().names();
    assert!(names.contains(&"hip-solve"), "registry: {names:?}");
    assert_on_the_map("families", names);
}

#[test]
fn every_end_to_end_test_module_is_on_the_map() {
    let main = root_file("tests/e2e/main.rs");
    let modules: Vec<&str> = main
        .lines()
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .filter(|&m| m != "common")
        .collect();
    assert!(
        modules.contains(&"checkpoints"),
        "modules read: {modules:?}"
    );
    assert_on_the_map("tests/e2e modules", modules);
}

/// The paths the map names in backticks: a word with a `/` or a file
/// extension (`scheduler/moot.rs`, `shared/families/exec`, `bench/scale.sh`,
/// `cli.rs`). URL paths (`/metrics`) and patterns (`shared/families/<family>`) are
/// not paths.
fn named_paths(map: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] = &[
        ".rs", ".md", ".sh", ".toml", ".proto", ".c", ".py", ".yaml", ".txt", ".xz",
    ];
    let mut names: Vec<String> = map
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            !w.is_empty()
                && !w.starts_with('/')
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
                && (w.contains('/') || EXTENSIONS.iter().any(|e| w.ends_with(e)))
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Every file and folder of the repository (but `target/` and `.git/`), as
/// paths relative to its root with `/` between components.
fn repository_paths() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(root.join(&dir)).expect("a folder of the repository") {
            let entry = entry.expect("a folder entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            if dir.is_empty() && (name == "target" || name.starts_with('.')) {
                continue;
            }
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            if entry.file_type().expect("a file type").is_dir() {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out
}

/// Whether `name` (a path as the map names it, perhaps ending in `/`) is
/// some file or folder of the repository: the whole path from the root, or
/// its last components (`scheduler/moot.rs` is
/// `coordinator/src/scheduler/moot.rs`).
fn exists_in(paths: &[String], name: &str) -> bool {
    let name = name.trim_end_matches('/');
    paths
        .iter()
        .any(|p| p == name || p.ends_with(&format!("/{name}")))
}

#[test]
fn every_path_on_the_map_exists() {
    let map = root_file("ARCHITECTURE.md");
    let names = named_paths(&map);
    assert!(names.len() > 50, "paths read: {names:?}");
    let paths = repository_paths();
    let missing: Vec<&String> = names.iter().filter(|n| !exists_in(&paths, n)).collect();
    assert!(
        missing.is_empty(),
        "paths named in ARCHITECTURE.md that do not exist: {missing:?}"
    );
    // The check itself: a path that is nowhere fails it.
    assert!(named_paths("`scheduler/moot.rs` and `scheduler/mooot.rs`").len() == 2);
    assert!(exists_in(&paths, "scheduler/moot.rs"));
    assert!(exists_in(&paths, "shared/families/exec"));
    assert!(!exists_in(&paths, "scheduler/mooot.rs"));
    assert!(!exists_in(&paths, "heduler/moot.rs"));
}
