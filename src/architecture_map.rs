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
