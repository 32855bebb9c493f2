//! Where results go on disk, and how they get there without harm.
//!
//! Every output path is checked before anything runs ([`check_writable`],
//! [`check_distinct`]) and written later by [`write_atomically`]. The rules:
//!
//! 1. A symlink is followed to the file it names; that file is written, the
//!    link stays a link.
//! 2. A regular file (or nothing yet) is written through a temporary file in
//!    the same directory and a rename, so it is always either the old or the
//!    new complete document.
//! 3. Anything else — a FIFO, a device node, a socket, a directory — is
//!    refused with an error naming it; it is never replaced.
//! 4. Two outputs may not name the same file: one would silently overwrite
//!    the other.

use std::fs::{self, FileType};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};

/// More symlinks than this in a chain is taken for a loop (Linux's
/// `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// The directory a file will be written into (`.` for a bare name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Follows symlinks from `path` to the path they finally name, which need
/// not exist yet (a dangling link names the file it will create).
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

/// What a non-regular file is, for error messages.
fn kind_of(file_type: FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Follows symlinks and checks that what `path` names is a regular file or
/// does not exist yet; returns the path to write. `what` names the output
/// in the error ("JSON", "CSV", ...).
pub fn regular_target(path: &Path, what: &str) -> Result<PathBuf> {
    let target = follow_symlinks(path)?;
    if let Ok(meta) = fs::metadata(&target) {
        let via =
            if target == path { String::new() } else { format!(" (the symlink's target `{}`)", target.display()) };
        ensure!(
            meta.file_type().is_file(),
            "cannot write {what} to `{}`{via}: it is {}; wsbench writes results only to regular files \
             (new ones, or through a symlink to one) and never replaces anything else",
            path.display(),
            kind_of(meta.file_type())
        );
    }
    Ok(target)
}

/// Checks that `path` can be written later by [`write_atomically`]: it is a
/// regular file or does not exist (after symlinks), and its directory exists
/// and accepts a new file. Creates nothing that outlives the check.
pub fn check_writable(path: &Path, what: &str) -> Result<()> {
    let target = regular_target(path, what)?;
    let dir = parent_dir(&target);
    ensure!(
        dir.is_dir() || !dir.exists(),
        "cannot write {what} `{}`: `{}` is not a directory; allowed: a path in an existing directory",
        path.display(),
        dir.display()
    );
    ensure!(dir.is_dir(), "cannot write {what} `{}`: directory `{}` does not exist", path.display(), dir.display());
    let probe = temp_path(&target);
    fs::write(&probe, b"").with_context(|| {
        format!("cannot write {what} `{}` (directory `{}` is not writable)", path.display(), dir.display())
    })?;
    fs::remove_file(&probe).with_context(|| format!("cannot remove probe file `{}`", probe.display()))?;
    Ok(())
}

/// The file a path finally names, as an absolute path, for telling two
/// outputs on one file apart from two different files: symlinks followed,
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

/// Writes `bytes` to `path` so that it is either the old or the new complete
/// file: through a temporary file in the same directory and a rename. A
/// symlink is followed and its target written; anything that is not a
/// regular file is refused, never replaced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let target = regular_target(path, "results")?;
    let tmp = temp_path(&target);
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, &target)
    };
    write()
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
        .with_context(|| format!("cannot write `{}`", path.display()))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wsbench-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let dir = scratch("link");
        fs::create_dir(dir.join("real")).unwrap();
        symlink("real/out.json", dir.join("link.json")).unwrap();
        write_atomically(&dir.join("link.json"), b"one").unwrap();
        write_atomically(&dir.join("link.json"), b"two").unwrap();
        assert!(fs::symlink_metadata(dir.join("link.json")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(dir.join("real/out.json")).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.join("real")).unwrap().count(), 1, "no temporary file left");
    }

    #[test]
    fn a_directory_or_a_device_is_refused_and_left_alone() {
        let dir = scratch("dir");
        let err = format!("{:#}", write_atomically(&dir, b"x").unwrap_err());
        assert!(err.contains("is a directory"), "{err}");
        assert!(dir.is_dir());
        let err = format!("{:#}", check_writable(Path::new("/dev/null"), "JSON").unwrap_err());
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
    }
}
