//! The documentation's links hold: every relative link and image in the
//! README, the CHANGELOG, the book (`docs/src/`) and the results' READMEs
//! names a file that exists inside the repository, the book's `SUMMARY.md`
//! lists every chapter, and nothing in the repository points outside it.
//! This stands in for `mdbook build` in CI (see `docs/src/introduction.md`
//! for why): it checks the links a build would break on, without
//! installing mdbook.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

/// Every file under `dir` (recursively) whose name satisfies `keep`,
/// skipping build output and version control.
fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == ".git" || name.starts_with("target") {
            continue;
        }
        if path.is_dir() {
            walk(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// The markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    if root.join("CHANGELOG.md").exists() {
        docs.push(root.join("CHANGELOG.md"));
    }
    walk(&root.join("docs/src"), &|p| p.extension().is_some_and(|e| e == "md"), &mut docs);
    walk(&root.join("results"), &|p| p.file_name().is_some_and(|n| n == "README.md"), &mut docs);
    docs
}

/// The text of a markdown file with fenced code blocks and inline code
/// spans blanked out (links inside code are examples, not links).
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fenced = false;
    let mut in_span = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        if line.trim().is_empty() {
            in_span = false; // a code span never crosses a paragraph
        }
        for c in line.chars() {
            if c == '`' {
                in_span = !in_span;
                out.push(' ');
            } else {
                out.push(if in_span { ' ' } else { c });
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links and images in `text` (`[x](target)`,
/// `![x](target "title")`), with their line numbers.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut targets = Vec::new();
    for (n, line) in prose(text).lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("").to_string();
            if rest[..at].contains('[') && !target.is_empty() {
                targets.push((n + 1, target));
            }
            rest = &after[end..];
        }
    }
    targets
}

fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:"].iter().any(|p| target.starts_with(p))
}

#[test]
fn every_relative_link_names_a_file_inside_the_repository() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = fs::read_to_string(&doc).unwrap();
        for (line, target) in link_targets(&text) {
            if is_external(&target) || target.starts_with('#') {
                continue;
            }
            checked += 1;
            let file = target.split('#').next().unwrap();
            let shown = format!("{}:{line}: {target}", doc.strip_prefix(&root).unwrap().display());
            if file.starts_with('/') {
                broken.push(format!("{shown} (an absolute path)"));
                continue;
            }
            match doc.parent().unwrap().join(file).canonicalize() {
                Ok(path) if path.starts_with(&root) => {}
                Ok(_) => broken.push(format!("{shown} (outside the repository)")),
                Err(_) => broken.push(format!("{shown} (no such file)")),
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 50, "only {checked} links found: is the parser still reading the docs?");
}

#[test]
fn summary_lists_every_chapter() {
    let src = root().join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> =
        link_targets(&summary).into_iter().map(|(_, target)| src.join(target.split('#').next().unwrap())).collect();
    let mut chapters = Vec::new();
    walk(&src, &|p| p.extension().is_some_and(|e| e == "md"), &mut chapters);
    let missing: Vec<_> = chapters
        .iter()
        .filter(|p| p.file_name().unwrap() != "SUMMARY.md" && !listed.contains(*p))
        .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "chapters SUMMARY.md does not list: {missing:?}");
    for page in &listed {
        assert!(page.exists(), "SUMMARY.md lists {}, which does not exist", page.display());
    }
    assert!(root().join("docs/book.toml").exists(), "docs/book.toml is missing");
}

#[test]
fn nothing_points_outside_the_repository() {
    // The sibling folder the design notes once lived in, spelled so that
    // this file does not match itself.
    let outside = ["..", "/shared"].concat();
    let root = root();
    let mut files = Vec::new();
    let text_kinds = ["md", "rs", "sh", "py", "toml", "yml", "yaml", "json"];
    walk(&root, &|p| p.extension().is_some_and(|e| text_kinds.iter().any(|k| e == *k)), &mut files);
    let mut found = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else { continue };
        for (n, line) in text.lines().enumerate() {
            if line.contains(&outside) {
                found.push(format!("{}:{}", file.strip_prefix(&root).unwrap().display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "paths outside the repository: {found:?}");
}

#[test]
fn the_link_parser_skips_code_and_finds_links() {
    let text = "see [a](x.md) and `[b](y.md)`\n```\n[c](z.md)\n```\n![i](p.png \"t\")\n";
    let targets: Vec<_> = link_targets(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(targets, ["x.md", "p.png"]);
}

#[test]
fn the_readme_is_short() {
    // The README is the front page; the manual is the book (issue 33).
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; at most 250 (move the rest into docs/src/)");
    for command in
        ["cargo run --release -p wsbench -- --sched steal-half --workers 128", "cargo test --workspace --release"]
    {
        assert!(readme.contains(command), "README.md no longer shows `{command}`");
    }
}
