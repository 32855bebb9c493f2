//! The one input guard every reader goes through (`compare`, `merge`,
//! `history add`, `plot`, `report`, and the output guard's look at a file
//! it may replace): an input must be a regular file (symlinks to one are
//! fine: reading harms nothing) no larger than a stated cap. It is opened
//! non-blocking, so a FIFO cannot hang the open, and checked with `fstat`
//! on the opened file, so what is checked is what is read; at most the cap
//! (plus one byte, to notice growth) is ever read, so `/dev/zero` or a
//! growing file cannot eat the memory.

use std::fs::{File, FileType, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use anyhow::{ensure, Context, Result};

/// The largest CSV, JSON or `.hlog` input read: 256 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;
/// The largest SQLite history opened: 16 GiB.
pub const MAX_SQLITE_BYTES: u64 = 16 << 30;

/// What a non-regular file is, for error messages.
pub fn describe_type(file_type: FileType) -> &'static str {
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
    } else if file_type.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading after checking it is a regular file of at most
/// `cap` bytes; `what` names it in errors.
fn open_checked(path: &Path, what: &str, cap: u64) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot open {what} `{}`", path.display()))?;
    let meta = file.metadata().with_context(|| format!("cannot inspect {what} `{}`", path.display()))?;
    ensure!(
        meta.is_file(),
        "{what} `{}` is {}; inputs must be regular files",
        path.display(),
        describe_type(meta.file_type())
    );
    ensure!(
        meta.len() <= cap,
        "{what} `{}` is {} bytes, more than the {} MiB an input may have",
        path.display(),
        meta.len(),
        cap >> 20
    );
    Ok(file)
}

/// Reads a whole CSV, JSON or `.hlog` input: a regular file of at most
/// [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>> {
    let file = open_checked(path, what, MAX_INPUT_BYTES)?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} `{}`", path.display()))?;
    ensure!(
        bytes.len() as u64 <= MAX_INPUT_BYTES,
        "{what} `{}` grew past the {} MiB an input may have while it was read",
        path.display(),
        MAX_INPUT_BYTES >> 20
    );
    Ok(bytes)
}

/// Reads the first `n` bytes (or fewer) of an input of at most `cap` bytes.
pub fn read_head(path: &Path, what: &str, n: u64, cap: u64) -> Result<Vec<u8>> {
    let file = open_checked(path, what, cap)?;
    let mut bytes = Vec::new();
    file.take(n).read_to_end(&mut bytes).with_context(|| format!("cannot read {what} `{}`", path.display()))?;
    Ok(bytes)
}

/// Checks that an existing SQLite history is a regular file of at most
/// [`MAX_SQLITE_BYTES`] before SQLite opens it.
pub fn check_sqlite(path: &Path, what: &str) -> Result<()> {
    open_checked(path, what, MAX_SQLITE_BYTES).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_by_name() {
        let err = format!("{:#}", read_input(Path::new("/dev/zero"), "the base").unwrap_err());
        assert!(err.contains("`/dev/zero`") && err.contains("character device"), "{err}");
        let err = format!("{:#}", read_input(Path::new("/"), "the base").unwrap_err());
        assert!(err.contains("a directory"), "{err}");
        let err = format!("{:#}", check_sqlite(Path::new("/nonexistent/h.sqlite"), "--db").unwrap_err());
        assert!(err.contains("cannot open --db `/nonexistent/h.sqlite`"), "{err}");
    }
}
