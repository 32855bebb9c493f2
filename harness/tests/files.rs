//! Result files are never clobbered: symlinks are refused, FIFOs
//! and devices refused, two outputs on one file refused, nothing created
//! before every destination is checked, a failed write cut back to the last
//! complete row, rows of another schema version never appended to.

mod common;

use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::Path;
use std::process::Command;

use common::{quick, read_csv, scratch, wsbench_in};

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

#[test]
fn a_fifo_is_refused_before_anything_runs_and_left_a_fifo() {
    let dir = scratch("fifo");
    mkfifo(&dir.join("pipe"));
    for option in ["--json", "--markdown", "--csv"] {
        let run = wsbench_in(&dir, &quick(&[option, "pipe", "--hdr-dir", "hdr"]));
        run.code(2).stderr_has(&["`pipe`", "FIFO", "regular file"]);
        assert!(run.stdout.is_empty(), "nothing ran:\n{}", run.stdout);
        assert!(is_fifo(&dir.join("pipe")), "{option}: the FIFO was replaced");
        assert_eq!(entries(&dir), ["pipe"], "{option}: nothing created");
    }
}

#[test]
fn json_and_markdown_are_never_written_through_symlinks() {
    let dir = scratch("symlink");
    std::fs::create_dir(dir.join("real")).unwrap();
    std::fs::write(dir.join("real/out.json"), "old").unwrap();
    symlink("real/out.json", dir.join("link.json")).unwrap();
    // A dangling link would create the file it names.
    symlink("real/out.md", dir.join("link.md")).unwrap();
    for option in ["--json", "--markdown"] {
        let link = if option == "--json" { "link.json" } else { "link.md" };
        let run = wsbench_in(&dir, &quick(&[option, link]));
        run.code(2).stderr_has(&[link, "symlink"]);
        assert!(run.stdout.is_empty(), "nothing ran:\n{}", run.stdout);
        assert!(std::fs::symlink_metadata(dir.join(link)).unwrap().file_type().is_symlink(), "{link} is still a link");
    }
    assert_eq!(std::fs::read_to_string(dir.join("real/out.json")).unwrap(), "old", "the target is untouched");
    assert_eq!(entries(&dir.join("real")), ["out.json"], "nothing created through the dangling link");
}

#[test]
fn two_outputs_on_one_file_are_refused_before_anything_runs() {
    let dir = scratch("same-path");
    for pair in [["--csv", "x", "--json", "x"], ["--csv", "x.csv", "--markdown", "./x.csv"]] {
        let run = wsbench_in(&dir, &quick(&pair));
        run.code(2).stderr_has(&[pair[0], pair[2], "same file"]);
        assert!(entries(&dir).is_empty(), "{pair:?}: nothing created: {:?}", entries(&dir));
    }
    std::fs::create_dir(dir.join("d")).unwrap();
    symlink("../x.json", dir.join("d/y.json")).unwrap();
    // A link is refused before it could name the same file.
    wsbench_in(&dir, &quick(&["--json", "x.json", "--markdown", "d/y.json"])).code(2).stderr_has(&["symlink"]);
    assert!(!dir.join("x.json").exists());
}

#[test]
fn no_csv_is_created_when_another_destination_is_bad() {
    let dir = scratch("csv-first");
    wsbench_in(&dir, &quick(&["--csv", "new.csv", "--json", "/proc/x.json"])).code(2).stderr_has(&["/proc/x.json"]);
    wsbench_in(&dir, &quick(&["--csv", "new.csv", "--markdown", "missing/x.md"]))
        .code(2)
        .stderr_has(&["missing/x.md", "does not exist"]);
    wsbench_in(&dir, &quick(&["--csv", "new.csv", "--hdr-dir", "/proc/hdr"])).code(2).stderr_has(&["/proc/hdr"]);
    assert!(entries(&dir).is_empty(), "nothing created: {:?}", entries(&dir));
}

#[test]
fn rows_of_another_schema_version_are_not_appended_to() {
    let dir = scratch("row-version");
    wsbench_in(&dir, &quick(&["--csv", "r.csv"])).ok();
    let text = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let (header, row) = text.split_once('\n').unwrap();
    let (version, rest) = row.split_once(',').unwrap();
    let older = format!("{header}\n{},{rest}", version.parse::<u32>().unwrap() - 1);
    std::fs::write(dir.join("r.csv"), &older).unwrap();
    let run = wsbench_in(&dir, &quick(&["--csv", "r.csv"]));
    run.code(2).stderr_has(&["refusing to append", "r.csv", "line 2", "schema_version"]);
    assert_eq!(std::fs::read_to_string(dir.join("r.csv")).unwrap(), older, "file untouched");
}

/// bash's `ulimit -f` counts 1024-byte blocks.
const ULIMIT_BLOCK: u64 = 1024;

/// A file-size limit stands in for a full disk: the write of the second
/// invocation's rows fails part way, and the file must be cut back to the
/// rows it had, stay readable, and take the next append.
#[test]
fn a_failed_write_is_cut_back_to_the_last_complete_row() {
    let dir = scratch("full");
    let three_runs = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = quick(&["--csv", "r.csv"]).iter().map(|s| s.to_string()).collect();
        let i = a.iter().position(|s| s == "--runs").unwrap();
        a[i + 1] = "3".to_string();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let first: Vec<String> = three_runs(&[]);
    wsbench_in(&dir, &first.iter().map(String::as_str).collect::<Vec<_>>()).ok();
    let before = std::fs::read(dir.join("r.csv")).unwrap();
    let rows_bytes = before.len() - before.iter().position(|b| *b == b'\n').unwrap() - 1;
    // The limit lies between the current size and the size after the next
    // cell's three rows, so that write must fail part way.
    let limit_blocks = before.len() as u64 / ULIMIT_BLOCK + 1;
    assert!(limit_blocks * ULIMIT_BLOCK < (before.len() + rows_bytes) as u64, "three rows cross the limit");
    let script = format!("trap '' XFSZ; ulimit -f {limit_blocks}; exec \"$0\" \"$@\"");
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_wsbench"))
        .args(&first)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cut back to its last complete row") && stderr.contains("r.csv"), "{stderr}");
    assert_eq!(std::fs::read(dir.join("r.csv")).unwrap(), before, "the file is exactly as before the failed write");
    std::fs::copy(dir.join("r.csv"), dir.join("copy.csv")).unwrap();
    wsbench_in(&dir, &["compare", "r.csv", "copy.csv"]).ok();
    std::fs::remove_file(dir.join("copy.csv")).unwrap();
    wsbench_in(&dir, &first.iter().map(String::as_str).collect::<Vec<_>>()).ok();
    assert_eq!(read_csv(&dir.join("r.csv")).1.len(), 6, "the next run appends");
}

#[test]
fn compare_refuses_unwritable_reports_up_front_and_never_as_a_regression() {
    let dir = scratch("cmp-out");
    wsbench_in(&dir, &quick(&["--csv", "r.csv"])).ok();
    std::fs::copy(dir.join("r.csv"), dir.join("r2.csv")).unwrap();
    mkfifo(&dir.join("pipe"));
    for args in [
        ["compare", "r.csv", "r2.csv", "--out", "missing/report.md"],
        ["compare", "r.csv", "r2.csv", "--json", "pipe"],
        ["compare", "r.csv", "r2.csv", "--out", "r.csv"],
    ] {
        let run = wsbench_in(&dir, &args);
        run.code(2).stderr_has(&[args[4]]);
        assert!(run.stdout.is_empty(), "{args:?}: nothing compared:\n{}", run.stdout);
    }
    assert!(is_fifo(&dir.join("pipe")));
    assert_eq!(read_csv(&dir.join("r.csv")).1.len(), 1, "the input is untouched");
}
