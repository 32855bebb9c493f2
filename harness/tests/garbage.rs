//! Property: the CSV loader, `compare` and `plot`, fed random bytes,
//! truncated files and files with one field replaced by garbage, never
//! panic and never succeed on garbage (the error maps to exit status 2);
//! a file cut exactly at a row boundary is still a valid file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use proptest::prelude::*;
use wsbench::internals::compare::{floors_of, Options as CompareOptions};
use wsbench::internals::env::Environment;
use wsbench::internals::exit::exit_code_for;
use wsbench::internals::export::csv::{encode, header, row};
use wsbench::internals::load::load;
use wsbench::internals::plot::Options as PlotOptions;
use wsbench::internals::record::{CellKey, Latencies, RunRecord, Status};

const CASES: u32 = 48;

/// A valid results file: 2 schedulers x 3 worker counts x 2 runs, written
/// by the harness's own CSV encoder.
fn valid_csv() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let env = Environment::capture();
        let mut rows = vec![header()];
        for scheduler in ["steal-half", "global"] {
            for workers in [1, 2, 4] {
                for run in 0..2 {
                    let key = CellKey::plain(scheduler, workers, "yield-many");
                    let mut r = RunRecord::failed(key, run, String::new());
                    r.status = Status::Ok;
                    let ops = 500 * workers as u64 + run as u64;
                    (r.duration_s, r.ops) = (Some(0.5), Some(ops));
                    r.throughput_per_s = Some(ops as f64 / 0.5);
                    let p = 100.0 / workers as f64;
                    r.latency = Some(Latencies {
                        p50_us: p,
                        p90_us: p * 2.0,
                        p99_us: p * 3.0,
                        p999_us: p * 4.0,
                        p9999_us: p * 5.0,
                        max_us: p * 6.0,
                        mean_us: p * 1.5,
                    });
                    rows.push(row(&env, &r));
                }
            }
        }
        encode(rows).unwrap()
    })
}

fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "wsbench-garbage-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn compare_args(base: &Path, current: &Path) -> CompareOptions {
    CompareOptions {
        base: base.to_path_buf(),
        current: current.to_path_buf(),
        floors: floors_of("5%", "10%", 0.05).unwrap(),
        json: None,
        out: None,
        hdr_dir: None,
        plant: Vec::new(),
        confirms: None,
    }
}

fn plot_args(results: &Path, out: &Path) -> PlotOptions {
    PlotOptions { results: results.to_path_buf(), out: out.to_path_buf(), hdr_dir: None, width: 320, height: 320 }
}

/// Writes `bytes` and checks that loader, compare (on either side) and plot
/// all refuse it with exit status 2. Panics propagate and fail the case.
fn refused_everywhere(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = scratch();
    let (bad, good) = (dir.join("bad.csv"), dir.join("good.csv"));
    std::fs::write(&bad, bytes).unwrap();
    std::fs::write(&good, valid_csv()).unwrap();
    prop_assert!(load(&bad).is_err(), "the loader accepted garbage");
    for args in [compare_args(&good, &bad), compare_args(&bad, &good)] {
        match wsbench::internals::compare::main(&args) {
            Ok(code) => prop_assert!(false, "compare returned {code:?} on garbage"),
            Err(e) => prop_assert_eq!(exit_code_for(&e), ExitCode::from(2), "{:#}", e),
        }
    }
    match wsbench::internals::plot::plot(&plot_args(&bad, &dir.join("charts"))) {
        Ok(files) => prop_assert!(false, "plot drew {files:?} from garbage"),
        Err(e) => prop_assert_eq!(exit_code_for(&e), ExitCode::from(2), "{:#}", e),
    }
    prop_assert!(!dir.join("charts").exists(), "no chart directory for garbage");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Columns where any value that is not a valid measurement is garbage.
const STRICT: &[&str] = &[
    "schema_version",
    "workers",
    "run",
    "duration_s",
    "ops",
    "throughput_per_s",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "mean_us",
    "status",
];

const GARBAGE: &[&str] =
    &["NaN", "nan", "inf", "-inf", "-1", "-0.5", "1e999", "abc", "1,5", "18446744073709551616x", "½"];

/// Replaces field `column` of data row `row` (0-based) by `value`.
fn with_field(row: usize, column: &str, value: &str) -> Vec<u8> {
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(valid_csv());
    let mut records: Vec<Vec<String>> =
        reader.records().map(|r| r.unwrap().iter().map(String::from).collect()).collect();
    let at = records[0].iter().position(|h| h == column).unwrap();
    records[1 + row][at] = value.to_string();
    encode(records).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn random_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        refused_everywhere(&bytes)?;
    }

    #[test]
    fn random_text_lines_under_a_valid_header_are_refused(
        lines in proptest::collection::vec("[a-z0-9,.\"; -]{0,80}", 1..6)
    ) {
        let mut text = String::from_utf8(valid_csv().to_vec()).unwrap();
        text.truncate(text.find('\n').unwrap() + 1);
        text.push_str(&lines.join("\n"));
        text.push('\n');
        refused_everywhere(text.as_bytes())?;
    }

    #[test]
    fn a_file_cut_inside_a_line_is_refused(cut in 1usize..4096) {
        let bytes = valid_csv();
        let cut = cut % bytes.len();
        prop_assume!(cut > 0 && bytes[cut - 1] != b'\n');
        refused_everywhere(&bytes[..cut])?;
    }

    /// Cuts near a row's end, where only the missing newline tells (the
    /// last fields, `extras` and `notes`, are often empty).
    #[test]
    fn a_file_cut_just_before_a_row_end_is_refused(row in 1usize..=12, back in 1usize..40) {
        let bytes = valid_csv();
        let end = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(row).map(|(i, _)| i + 1).unwrap();
        refused_everywhere(&bytes[..end - back])?;
    }

    #[test]
    fn a_garbage_field_is_refused(row in 0usize..12, column in 0..STRICT.len(), value in 0..GARBAGE.len()) {
        refused_everywhere(&with_field(row, STRICT[column], GARBAGE[value]))?;
    }

    #[test]
    fn a_file_cut_at_a_row_boundary_is_still_read(rows in 1usize..=12) {
        let bytes = valid_csv();
        let end = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(rows).map(|(i, _)| i + 1).unwrap();
        let dir = scratch();
        let path = dir.join("cut.csv");
        std::fs::write(&path, &bytes[..end]).unwrap();
        let file = load(&path).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        prop_assert_eq!(file.records.len(), rows);
        let copy = dir.join("copy.csv");
        std::fs::write(&copy, &bytes[..end]).unwrap();
        let code = wsbench::internals::compare::main(&compare_args(&path, &copy)).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        prop_assert_eq!(code, ExitCode::SUCCESS, "a file compared with a copy of itself passes");
        // Rows 0..=5 are steal-half at 1, 2, 4 workers: a sweep from row 3 on.
        match wsbench::internals::plot::plot(&plot_args(&path, &dir.join("charts"))) {
            Ok(files) => prop_assert!(rows >= 3 && !files.is_empty(), "{rows} rows drew {files:?}"),
            Err(e) => {
                prop_assert!(rows < 3, "{rows} rows: {e:#}");
                prop_assert_eq!(exit_code_for(&e), ExitCode::from(1), "nothing to plot is a `no`: {:#}", e);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
