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
    fn absent_or_twice_listed_packages_have_none() {
        assert_eq!(version_of(LOCK, "smol"), None);
        assert_eq!(version_of(LOCK, "rand"), None, "two versions: neither is the version");
        // A dependency-list entry is not a package.
        assert_eq!(version_of("dependencies = [\n \"tokio\",\n]\n", "tokio"), None);
    }
}
