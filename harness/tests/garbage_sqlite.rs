//! Property: the history reader, fed random bytes, a cut file or a history
//! with one hostile value in it, never panics, never hangs and never exits
//! 0. Every command that opens a history (`history list`, `history detect`,
//! `report --db`, `history add`) goes through one check
//! (`history::store::check_contents`), so each case is run through all of
//! them as a user would, in a child process.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{scratch, wsbench_in};
use proptest::prelude::*;

const CASES: u32 = 24;

/// A real history: one small run added with `history add`, and its CSV.
struct Fixture {
    dir: PathBuf,
    db: Vec<u8>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = scratch("garbage-sqlite");
        wsbench_in(&dir, &common::quick(&["--csv", "r.csv"])).ok();
        wsbench_in(&dir, &["history", "add", "r.csv", "--db", "h.sqlite"]).ok();
        // The fixture itself reads back.
        wsbench_in(&dir, &["history", "list", "--db", "h.sqlite"]).ok();
        Fixture { db: std::fs::read(dir.join("h.sqlite")).unwrap(), dir }
    })
}

/// Writes `bytes` to a fresh file and returns its name inside the fixture
/// directory.
fn file_of(bytes: &[u8]) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("case-{n}.sqlite");
    std::fs::write(fixture().dir.join(&name), bytes).unwrap();
    name
}

/// Every reader refuses the history `name` with exit status 2 and a
/// message naming it, and `history add` does not write into it.
fn refused_everywhere(name: &str, needle: &str) -> Result<(), TestCaseError> {
    let dir = &fixture().dir;
    let before = std::fs::read(dir.join(name)).unwrap();
    let out = format!("{name}.html");
    for args in [
        vec!["history", "list", "--db", name],
        vec!["history", "detect", "--db", name],
        vec!["report", "--db", name, "--out", &out],
        vec!["history", "add", "r.csv", "--db", name],
    ] {
        let run = wsbench_in(dir, &args);
        let stderr = &run.stderr;
        prop_assert_eq!(run.code, Some(2), "{:?} on garbage: {}", args, stderr);
        prop_assert!(stderr.contains(name) && stderr.contains(needle), "{:?}: {}", args, stderr);
        prop_assert!(!stderr.contains("panicked"), "{}", stderr);
    }
    prop_assert!(!dir.join(&out).exists(), "no report is written from a damaged history");
    prop_assert_eq!(std::fs::read(dir.join(name)).unwrap(), before, "the damaged file is left as it was");
    Ok(())
}

/// A copy of the fixture with `sql` applied to it.
fn hostile(sql: &str) -> String {
    let name = file_of(&fixture().db);
    let conn = rusqlite::Connection::open(fixture().dir.join(&name)).unwrap();
    // A hostile editor does not enforce foreign keys.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn.execute_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(conn);
    name
}

/// One hostile value each: (statement, what the message names).
const HOSTILE: &[(&str, &str)] = &[
    ("UPDATE cells SET workers = -1", "`workers` holds -1"),
    ("UPDATE cells SET workers = 0", "`workers` holds 0"),
    ("UPDATE cells SET workers = 9223372036854775807", "`workers`"),
    ("UPDATE cells SET workers = 'eight'", "`workers` holds 'eight'"),
    ("UPDATE cells SET workers = 2.5", "`workers`"),
    ("UPDATE cells SET scheduler = ''", "`scheduler`"),
    ("UPDATE cells SET workload = x'00ff'", "`workload`"),
    ("UPDATE cells SET rate_per_s = -5", "`rate_per_s`"),
    ("UPDATE cells SET rate_per_s = 'fast'", "`rate_per_s`"),
    ("UPDATE runs SET logical_cpus = -2", "`logical_cpus`"),
    ("UPDATE runs SET logical_cpus = 'many'", "`logical_cpus`"),
    ("UPDATE runs SET run_time = 'yesterday'", "`run_time` holds 'yesterday'"),
    ("UPDATE runs SET run_time = 42", "`run_time`"),
    ("UPDATE runs SET host = x'00'", "`host`"),
    ("UPDATE runs SET csv_schema = 0", "`csv_schema`"),
    ("UPDATE runs SET environment = '{not json'", "`environment`"),
    ("UPDATE runs SET ab_side = 'left'", "`ab_side`"),
    ("UPDATE repetitions SET status = 'maybe'", "`status`"),
    ("UPDATE repetitions SET status = 1", "`status`"),
    ("UPDATE repetitions SET rep = -3", "`rep`"),
    ("UPDATE samples SET value = 'abc'", "`value` holds 'abc'"),
    ("UPDATE samples SET value = 1e999", "`value`"),
    ("UPDATE samples SET value = -1e999", "`value`"),
    ("UPDATE samples SET value = x'ff'", "`value`"),
    ("UPDATE samples SET metric = ''", "`metric`"),
    ("UPDATE samples SET run_id = 999", "points at a run or cell"),
    ("UPDATE repetitions SET cell_id = 999", "points at a run or cell"),
];

#[test]
fn every_hostile_value_is_refused_by_name() {
    for (sql, needle) in HOSTILE {
        // One row only (the others stay intact); the two WITHOUT ROWID
        // tables are picked by their keys.
        let table = table_of(sql);
        let columns = match table {
            "repetitions" => "run_id, cell_id, rep",
            "samples" => "run_id, cell_id, rep, metric",
            _ => "rowid",
        };
        let key = if columns == "rowid" { columns.to_string() } else { format!("({columns})") };
        let name = hostile(&format!("{sql} WHERE {key} IN (SELECT {columns} FROM {table} LIMIT 1)"));
        refused_everywhere(&name, needle).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// The table an `UPDATE t SET ...` statement names.
fn table_of(sql: &str) -> &str {
    sql.split_whitespace().nth(1).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn random_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 1..8192), magic in any::<bool>()) {
        // Half the cases start as SQLite files do, so SQLite itself reads
        // past the header.
        let mut bytes = bytes;
        if magic {
            let mut head = fixture().db[..100].to_vec();
            head.extend(bytes);
            bytes = head;
        }
        let name = file_of(&bytes);
        refused_everywhere(&name, "")?;
    }

    #[test]
    fn a_cut_history_is_refused(cut in 1usize..1 << 20) {
        let db = &fixture().db;
        // 1..len: an empty file is a new history to `history add`.
        let name = file_of(&db[..1 + cut % (db.len() - 1)]);
        refused_everywhere(&name, "")?;
    }
}

#[test]
fn an_intact_copy_reads_everywhere() {
    // The control: the same commands on an unharmed copy exit 0.
    let name = file_of(&fixture().db);
    let dir: &Path = &fixture().dir;
    wsbench_in(dir, &["history", "list", "--db", &name]).ok();
    wsbench_in(dir, &["history", "detect", "--db", &name]).ok();
    wsbench_in(dir, &["report", "--db", &name, "--out", &format!("{name}.html")]).ok();
}
