//! Package versions read from a `Cargo.lock`: the versions of the
//! reference runtimes a binary was built with. Shared with `build.rs`
//! (included there by path), so it uses `std` only and parses the one
//! shape cargo writes: `[[package]]` blocks whose `name = "..."` line is
//! followed by a `version = "..."` line.

/// The version of package `name` in the lockfile text `lock`; `None` when
/// the package is absent, or listed in more than one version (then no one
/// version is *the* version).
pub fn version_of(lock: &str, name: &str) -> Option<String> {
    let mut found: Option<String> = None;
    let mut in_package = false;
    let mut lines = lock.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with('[') {
            in_package = line == "[[package]]";
            continue;
        }
        if !in_package || quoted(line, "name") != Some(name) {
            continue;
        }
        let version = lines.next().and_then(|l| quoted(l, "version"))?.to_string();
        if found.is_some() {
            return None;
        }
        found = Some(version);
    }
    found
}

/// Every `(name, version)` package of the lockfile text, in file order.
pub fn packages(lock: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = lock.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        if line != "[[package]]" {
            continue;
        }
        let name = lines.next().and_then(|l| quoted(l, "name"));
        let version = lines.next().and_then(|l| quoted(l, "version"));
        if let (Some(name), Some(version)) = (name, version) {
            out.push((name.to_string(), version.to_string()));
        }
    }
    out
}

/// The packages of `new` whose version differs from `old`'s (listed once
/// in each), as `name old -> new`.
pub fn moved(old: &str, new: &str) -> Vec<String> {
    let new_packages = packages(new);
    let mut out = Vec::new();
    for (name, version) in &new_packages {
        let Some(before) = version_of(old, name) else { continue };
        if &before != version && new_packages.iter().filter(|(n, _)| n == name).count() == 1 {
            out.push(format!("{name} {before} -> {version}"));
        }
    }
    out
}

/// The value of a `key = "value"` line.
fn quoted<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?.trim();
    rest.strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "tokio"
version = "1.50.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "tokio-macros",
]

[[package]]
name = "tokio-macros"
version = "2.5.0"

[[package]]
name = "rand"
version = "0.8.5"

[[package]]
name = "rand"
version = "0.9.2"
"#;

    #[test]
    fn a_package_listed_once_has_its_version() {
        assert_eq!(version_of(LOCK, "tokio").as_deref(), Some("1.50.0"));
        assert_eq!(version_of(LOCK, "tokio-macros").as_deref(), Some("2.5.0"));
    }

    #[test]
    fn packages_are_listed_and_moves_named() {
        let names: Vec<String> = packages(LOCK).into_iter().map(|(n, v)| format!("{n} {v}")).collect();
        assert_eq!(names, ["tokio 1.50.0", "tokio-macros 2.5.0", "rand 0.8.5", "rand 0.9.2"]);
        let newer = LOCK.replace("1.50.0", "1.54.1").replace("2.5.0", "2.6.0");
        assert_eq!(moved(&newer, LOCK), ["tokio 1.54.1 -> 1.50.0", "tokio-macros 2.6.0 -> 2.5.0"]);
        assert!(moved(LOCK, LOCK).is_empty());
    }

    #[test]
    fn absent_or_twice_listed_packages_have_none() {
        assert_eq!(version_of(LOCK, "smol"), None);
        assert_eq!(version_of(LOCK, "rand"), None, "two versions: neither is the version");
        // A dependency-list entry is not a package.
        assert_eq!(version_of("dependencies = [\n \"tokio\",\n]\n", "tokio"), None);
    }
}
