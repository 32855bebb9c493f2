//! Where results go on disk, and how they get there without harm: the one
//! output guard every writer goes through.
//!
//! Every output is checked before anything runs ([`check_outputs`], for
//! files written later; [`check_output`] for one) and written by
//! [`write_output`] (or appended to by the CSV exporter after the same
//! check). The rules, the same for every subcommand:
//!
//! 1. An output never names an input, by any path (canonicalised), and two
//!    outputs never name one file: one would silently overwrite the other.
//! 2. A symlink is refused, never followed: replacing it would replace its
//!    target.
//! 3. An existing file is replaced only when wsbench wrote it, as a file of
//!    the same kind (its mark, [`super::marks`]), or it is empty; any other
//!    file only with the global `--force`.
//! 4. A file of another user, or one without its owner's write permission,
//!    is never replaced, `--force` or not.
//! 5. Anything that is not a regular file (a FIFO, a device, a directory)
//!    is refused; a missing directory is an error, never created.
//! 6. The write goes to a new temporary file in the same directory and a
//!    rename, so the file is always either the old or the new whole
//!    document.

use std::fs::{self, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, ensure, Context, Result};

use super::marks::{self, Kind};
use crate::data::input::{describe_type, read_head, read_input, MAX_SQLITE_BYTES};

/// More symlinks than this in a chain is taken for a loop (Linux's
/// `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;
/// The length of an SQLite file's header.
const SQLITE_HEADER_BYTES: u64 = 100;
/// Owner write permission bit.
const OWNER_WRITE: u32 = 0o200;

/// The global `--force`: replace existing files wsbench did not write.
static FORCE: AtomicBool = AtomicBool::new(false);

/// Sets the global `--force` (once, before anything is checked or written).
pub fn set_force(force: bool) {
    // Relaxed: set on the main thread before any output is checked; the
    // threads that write later are spawned after it.
    FORCE.store(force, Ordering::Relaxed);
}

fn force() -> bool {
    // Relaxed: see `set_force`.
    FORCE.load(Ordering::Relaxed)
}

/// The directory a file will be written into (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Follows symlinks from `path` to the path they finally name, which need
/// not exist yet (a dangling link names the file it would create).
pub fn follow_symlinks(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target =
                    fs::read_link(&current).with_context(|| format!("cannot read symlink `{}`", current.display()))?;
                current = if target.is_absolute() { target } else { parent_dir(&current).join(target) };
            }
            _ => return Ok(current),
        }
    }
    bail!("`{}`: more than {MAX_SYMLINK_HOPS} symlinks in a chain (a loop?)", path.display())
}

/// The effective user id of this process.
fn my_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Rules 2-5 for an existing `path` (not followed) that will be replaced
/// by a file of `kind` (`None`: appended to, its writer checks what it
/// holds); nothing to check when it does not exist.
fn check_existing(option: &str, path: &Path, kind: Option<Kind>) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        // Nothing there (a parent that is no directory is `check_dir`'s to name).
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {option} `{}`", path.display())),
    };
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        let target = fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        bail!(
            "refusing to write {option} `{}`: it is a symlink (to `{target}`); wsbench never writes through a symlink, \
             which would replace its target: give the target's own path",
            path.display()
        );
    }
    ensure!(
        file_type.is_file(),
        "cannot write {option} to `{}`: it is {}; wsbench writes results only to regular files and never replaces \
         anything else",
        path.display(),
        describe_type(file_type)
    );
    check_owner(option, path, &meta)?;
    let Some(kind) = kind else { return Ok(()) };
    if meta.len() == 0 || force() {
        return Ok(());
    }
    let bytes = match kind {
        // A history may be larger than any other input; its header says it all.
        Kind::Sqlite => read_head(path, option, SQLITE_HEADER_BYTES, MAX_SQLITE_BYTES),
        _ => read_input(path, option),
    }
    .with_context(|| format!("cannot tell whether wsbench wrote {option} `{}`", path.display()))?;
    match marks::kind_of(&bytes) {
        Some(found) if found == kind => Ok(()),
        Some(found) => bail!(
            "refusing to replace {option} `{}`: it is {} wsbench wrote, not {}; choose another path, or give --force",
            path.display(),
            found.name(),
            kind.name()
        ),
        None => bail!(
            "refusing to replace {option} `{}`: wsbench did not write it (it has no wsbench mark); choose another \
             path, or give --force to replace it",
            path.display()
        ),
    }
}

/// Rule 4: the file is this user's and its owner may write it.
fn check_owner(option: &str, path: &Path, meta: &Metadata) -> Result<()> {
    let me = my_uid();
    ensure!(
        meta.uid() == me,
        "refusing to replace {option} `{}`: it belongs to user id {}, not to this user ({me}); --force does not \
         override this",
        path.display(),
        meta.uid()
    );
    ensure!(
        meta.mode() & OWNER_WRITE != 0,
        "refusing to replace {option} `{}`: it is read-only (mode {:o}); --force does not override this",
        path.display(),
        meta.mode() & 0o7777
    );
    Ok(())
}

/// Checks that `path` can be written later as a file of `kind` by
/// [`write_output`]: rules 2-5, and its directory exists and accepts a new
/// file. Creates nothing that outlives the check. `option` names the
/// output in errors (`--json`, `the report (--out)`).
pub fn check_output(option: &str, path: &Path, kind: Kind) -> Result<()> {
    check_existing(option, path, Some(kind))?;
    check_dir(option, path)
}

/// As [`check_output`] for a file that is appended to (the CSV, whose
/// exporter checks its header): rules 2, 4 and 5 only.
pub fn check_append(option: &str, path: &Path) -> Result<()> {
    check_existing(option, path, None)?;
    check_dir(option, path)
}

/// Rule 5's directory part: it exists and accepts a new file.
fn check_dir(option: &str, path: &Path) -> Result<()> {
    let dir = parent_dir(path);
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!(
            "cannot write {option} `{}`: `{}` is not a directory; allowed: a path in an existing directory",
            path.display(),
            dir.display()
        ),
        Err(_) => bail!(
            "cannot write {option} `{}`: directory `{}` does not exist (wsbench creates no directories for files)",
            path.display(),
            dir.display()
        ),
    }
    let probe = temp_path(path);
    create_new(&probe).map(drop).with_context(|| {
        format!("cannot write {option} `{}` (directory `{}` is not writable)", path.display(), dir.display())
    })?;
    fs::remove_file(&probe).with_context(|| format!("cannot remove probe file `{}`", probe.display()))?;
    Ok(())
}

/// Rules 1-6 for every output of one command, before anything runs:
/// each output (`(option, path, kind)`) passes [`check_output`], no two
/// name one file, and none names an input (`(what, path)`; inputs that do
/// not exist are skipped, their reader reports them).
pub fn check_outputs(outputs: &[(&str, &Path, Kind)], inputs: &[(&str, &Path)]) -> Result<()> {
    let pairs: Vec<(&str, &Path)> = outputs.iter().map(|&(o, p, _)| (o, p)).collect();
    // An output on an input is the most precise complaint, and `--force`
    // does not lift it; an output in a missing directory is reported by
    // `check_output`.
    let placed: Vec<(&str, &Path)> = pairs.iter().copied().filter(|(_, p)| parent_dir(p).is_dir()).collect();
    check_not_inputs(&placed, inputs)?;
    for &(option, path, kind) in outputs {
        check_output(option, path, kind)?;
    }
    check_distinct(&pairs)
}

/// Rule 1 between outputs and inputs.
pub fn check_not_inputs(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<()> {
    for &(what, input) in inputs {
        let Ok(input_id) = fs::canonicalize(input) else { continue };
        for &(option, output) in outputs {
            if identity(output)? == input_id {
                bail!(
                    "{option} `{}` is the input {what} `{}` (the same file `{}`): writing it would destroy what is \
                     read; give the output its own path",
                    output.display(),
                    input.display(),
                    input_id.display()
                );
            }
        }
    }
    Ok(())
}

/// The file a path finally names, as an absolute path, for telling two
/// paths to one file apart from two different files: symlinks followed,
/// the directory canonicalised. The directory must exist.
pub fn identity(path: &Path) -> Result<PathBuf> {
    let target = follow_symlinks(path)?;
    if let Ok(real) = fs::canonicalize(&target) {
        return Ok(real);
    }
    let dir = fs::canonicalize(parent_dir(&target))
        .with_context(|| format!("directory of `{}` does not exist", path.display()))?;
    Ok(match target.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    })
}

/// Refuses two outputs that name the same file (directly, through `..`, or
/// through a symlink). `outputs` holds `(option, path)` pairs.
pub fn check_distinct(outputs: &[(&str, &Path)]) -> Result<()> {
    let mut seen: Vec<(&str, &Path, PathBuf)> = Vec::new();
    for &(option, path) in outputs {
        let id = identity(path)?;
        if let Some((other, other_path, _)) = seen.iter().find(|(_, _, i)| *i == id) {
            bail!(
                "{other} `{}` and {option} `{}` are the same file `{}`; one would overwrite the other: give each output its own path",
                other_path.display(),
                path.display(),
                id.display()
            );
        }
        seen.push((option, path, id));
    }
    Ok(())
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent_dir(path).join(format!(".{name}.tmp-{}", std::process::id()))
}

/// Creates a new file, never opening an existing one or a symlink.
fn create_new(path: &Path) -> std::io::Result<fs::File> {
    OpenOptions::new().write(true).create_new(true).mode(0o644).open(path)
}

/// Writes `bytes` (which must carry their kind's wsbench mark,
/// [`super::marks`]) to `path` under rules 2-6: the file is replaced only
/// if wsbench wrote it as the same kind (or with `--force`), through a new
/// temporary file in the same directory and a rename.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let Some(kind) = marks::kind_of(bytes) else {
        bail!("internal error: the bytes for `{}` carry no wsbench mark (see export/marks.rs)", path.display());
    };
    check_existing("output", path, Some(kind))?;
    let tmp = temp_path(path);
    let write = || -> std::io::Result<()> {
        let mut f = create_new(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write()
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
        .with_context(|| format!("cannot write `{}`", path.display()))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wsbench-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn marked(text: &str) -> Vec<u8> {
        marks::with_comment(Kind::Markdown, text).into_bytes()
    }

    #[test]
    fn a_symlink_is_refused_and_its_target_left_alone() {
        let dir = scratch("link");
        fs::write(dir.join("real.md"), marked("old")).unwrap();
        symlink("real.md", dir.join("link.md")).unwrap();
        let err = format!("{:#}", write_output(&dir.join("link.md"), &marked("new")).unwrap_err());
        assert!(err.contains("symlink"), "{err}");
        assert_eq!(fs::read(dir.join("real.md")).unwrap(), marked("old"));
        assert!(check_output("--markdown", &dir.join("link.md"), Kind::Markdown).is_err());
    }

    #[test]
    fn only_a_file_wsbench_wrote_as_the_same_kind_is_replaced() {
        let dir = scratch("marks");
        let path = dir.join("out.md");
        write_output(&path, &marked("one")).unwrap();
        write_output(&path, &marked("two")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), marked("two"));
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        fs::write(&path, "my notes\n").unwrap();
        let err = format!("{:#}", write_output(&path, &marked("three")).unwrap_err());
        assert!(err.contains("did not write it") && err.contains("--force"), "{err}");
        let csv = dir.join("keep.csv");
        fs::write(&csv, "schema_version,timestamp,git_sha,x\n").unwrap();
        let err = format!("{:#}", check_output("--json", &csv, Kind::Json).unwrap_err());
        assert!(err.contains("a results CSV") && err.contains("not a JSON document"), "{err}");
        assert!(write_output(&path, b"no mark").is_err(), "unmarked bytes are refused");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let err = format!("{:#}", check_output("--markdown", &path, Kind::Markdown).unwrap_err());
        assert!(err.contains("read-only"), "{err}");
    }

    #[test]
    fn a_directory_or_a_device_is_refused_and_left_alone() {
        let dir = scratch("dir");
        let err = format!("{:#}", write_output(&dir, &marked("x")).unwrap_err());
        assert!(err.contains("is a directory"), "{err}");
        assert!(dir.is_dir());
        let err = format!("{:#}", check_output("--json", Path::new("/dev/null"), Kind::Json).unwrap_err());
        assert!(err.contains("`/dev/null`") && err.contains("character device"), "{err}");
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn one_file_under_two_names_is_caught() {
        let dir = scratch("same");
        symlink("a.csv", dir.join("b.csv")).unwrap();
        let (a, b, c) = (dir.join("a.csv"), dir.join("b.csv"), dir.join("c.csv"));
        let dotted = dir.join(".").join("a.csv");
        assert!(check_distinct(&[("--csv", &a), ("--json", &c)]).is_ok());
        let err = format!("{:#}", check_distinct(&[("--csv", &a), ("--json", &dotted)]).unwrap_err());
        assert!(err.contains("--csv") && err.contains("--json") && err.contains("same file"), "{err}");
        assert!(check_distinct(&[("--csv", &a), ("--markdown", &b)]).is_err(), "a dangling link to the same file");
        assert!(!a.exists(), "checks create nothing");
        fs::write(&c, "x").unwrap();
        let err = format!(
            "{:#}",
            check_not_inputs(&[("--out", &dotted)], &[("base", &a)])
                .map(|_| ())
                .err()
                .map_or(String::new(), |e| e.to_string())
        );
        assert!(err.is_empty(), "a missing input is skipped: {err}");
        let err = format!("{:#}", check_not_inputs(&[("--out", &dir.join("./c.csv"))], &[("base", &c)]).unwrap_err());
        assert!(err.contains("is the input base"), "{err}");
    }
}
