//! Property: the other readers — the results JSON, the `.hlog` reader, a
//! child's result frame, and the output guard's mark reader — fed random
//! bytes and cut-off files never panic, and never accept garbage: each
//! cut that leaves an incomplete document is an error (exit status 2
//! where a command reads it). The CSV reader has its own file
//! (`garbage.rs`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::{scratch, wsbench_in};
use proptest::prelude::*;
use wsbench::internals::exit::exit_code_for;
use wsbench::internals::export::{hdr, marks};
use wsbench::internals::isolate::wire::decode_result;
use wsbench::internals::load::load_json;

const CASES: u32 = 48;

/// Files one real run wrote: its results JSON and one HDR log.
struct Fixture {
    dir: PathBuf,
    json: Vec<u8>,
    hlog: Vec<u8>,
    frame: Vec<u8>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = scratch("garbage-readers");
        wsbench_in(
            &dir,
            &[
                "--sched",
                "steal-half",
                "--workers",
                "1",
                "--workload",
                "yield-many",
                "--param",
                "tasks=10",
                "--param",
                "yields=20",
                "--duration",
                "20ms",
                "--warmup",
                "0",
                "--runs",
                "2",
                "-q",
                "--json",
                "r.json",
                "--hdr-dir",
                "hdr",
            ],
        )
        .ok();
        let log = std::fs::read_dir(dir.join("hdr")).unwrap().next().unwrap().unwrap().path();
        Fixture {
            json: std::fs::read(dir.join("r.json")).unwrap(),
            hlog: std::fs::read(log).unwrap(),
            frame: child_frame(),
            dir,
        }
    })
}

/// The result frame of one real run in a child process.
fn child_frame() -> Vec<u8> {
    use std::io::Write;
    let spec = br#"{"version":1,"sched":"steal-half","workers":1,"knobs":[],"worker_cores":[],"loadgen_cores":[],
        "topology":null,"workload":"yield-many","params":[["tasks","10"],["yields","20"]],"rate_per_s":null,
        "duration_ns":20000000,"warmup_ns":0,"seed":1}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wsbench"))
        .arg("__run-child")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(spec).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    decode_result(&out.stdout).unwrap().unwrap();
    out.stdout
}

/// Writes `bytes` to a fresh file and returns its path.
fn file_of(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = fixture().dir.join("cases");
    std::fs::create_dir_all(&dir).unwrap();
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{n}-{name}"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The JSON reader and `merge` refuse `path`, as an error (exit 2).
fn json_refused(path: &Path) -> Result<(), TestCaseError> {
    match load_json(path) {
        Ok(_) => return Err(TestCaseError::fail(format!("garbage accepted as a results JSON: {}", path.display()))),
        Err(e) => prop_assert_eq!(exit_code_for(&e), std::process::ExitCode::from(2)),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn random_bytes_are_refused_by_every_reader(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        json_refused(&file_of("random.json", &bytes))?;
        prop_assert!(hdr::read(&file_of("random.hlog", &bytes)).is_err());
        prop_assert!(decode_result(&bytes).is_err());
        let _ = marks::kind_of(&bytes);
    }

    #[test]
    fn a_cut_results_json_is_refused(cut in 0usize..1 << 16) {
        let json = &fixture().json;
        // Up to its last `}`: the final newline alone is no damage.
        let cut = cut % (json.len() - 1);
        json_refused(&file_of("cut.json", &json[..cut]))?;
        prop_assert_eq!(marks::kind_of(&json[..cut]), None, "a cut JSON carries no mark");
    }

    #[test]
    fn a_cut_inside_an_hlog_interval_is_refused(line in 0usize..64, back in 1usize..200) {
        let hlog = &fixture().hlog;
        // The interval lines (not comments, not the legend) end in base64.
        let ends: Vec<usize> = hlog
            .iter()
            .enumerate()
            .filter(|(i, b)| **b == b'\n' && !line_at(hlog, *i).starts_with(b"#") && !line_at(hlog, *i).starts_with(b"\"StartTimestamp\""))
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!ends.is_empty());
        let end = ends[line % ends.len()];
        let start = end - line_at(hlog, end).len();
        let cut = end.saturating_sub(back).max(start + 1);
        let path = file_of("cut.hlog", &hlog[..cut]);
        prop_assert!(hdr::read(&path).is_err(), "a log cut inside an interval line was read");
        let whole = file_of("whole.hlog", hlog);
        let out = wsbench_in(&fixture().dir, &["merge", whole.to_str().unwrap(), path.to_str().unwrap(), "--out", "never.hlog"]);
        prop_assert_eq!(out.code, Some(2), "merge of a cut log: {}", out.stderr);
        prop_assert!(!fixture().dir.join("never.hlog").exists());
    }

    #[test]
    fn a_cut_or_flipped_child_frame_is_refused(cut in 0usize..1 << 20, flip in 0usize..1 << 20, bit in 0u8..8) {
        let frame = &fixture().frame;
        prop_assert!(decode_result(&frame[..cut % frame.len()]).is_err());
        let mut flipped = frame.clone();
        let at = flip % flipped.len();
        flipped[at] ^= 1 << bit;
        // A flipped bit may leave a valid frame (a digit of a count); it must never panic.
        let _ = decode_result(&flipped);
    }
}

/// The line that ends at `end` (a newline's index), without it.
fn line_at(bytes: &[u8], end: usize) -> &[u8] {
    let start = bytes[..end].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    &bytes[start..end]
}
