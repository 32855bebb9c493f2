//! The history database: one SQLite file (rusqlite's bundled SQLite), its
//! schema, its migrations, and the queries `history` and `report` need.
//!
//! Tables (schema version in SQLite's `user_version`):
//! - `runs`: one row per wsbench invocation (per side of an A/B), unique
//!   on (git sha, run time, host, CPU model, logical CPUs, A/B side); the CSV schema version and the file
//!   it came from; since version 2 the environment JSON when a
//!   `results.json` came with it; since version 3 the A/B side (`base`,
//!   `current`, empty for none), part of the unique key.
//!
//! The file is marked with `PRAGMA application_id` (`export::marks`).
//! `history add` creates and migrates it; the read-only commands open it
//! read-only and read an older schema as it is.
//! - `cells`: one row per (scheduler, workers, workload, knobs, params, rate).
//! - `repetitions`: every run of a cell (the CSV's `run`), with its status.
//! - `samples`: one value per (run, cell, repetition, metric), metrics by
//!   their CSV column name, so new columns need no schema change.

use std::path::Path;

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};

use crate::data::input::check_sqlite;
use crate::data::record::CellKey;
use crate::output::export::marks::SQLITE_APPLICATION_ID;

/// The schema version this wsbench writes.
pub const DB_VERSION: i64 = 3;

/// Each step takes the database from version `i` to `i + 1`.
const MIGRATIONS: [&str; DB_VERSION as usize] = [
    // 0 -> 1: the tables.
    "CREATE TABLE runs (
         id INTEGER PRIMARY KEY,
         git_sha TEXT NOT NULL,
         run_time TEXT NOT NULL,
         host TEXT NOT NULL,
         cpu_model TEXT NOT NULL,
         logical_cpus INTEGER NOT NULL,
         csv_schema INTEGER NOT NULL,
         source TEXT NOT NULL,
         added_at TEXT NOT NULL,
         UNIQUE (git_sha, run_time, host, cpu_model, logical_cpus)
     );
     CREATE TABLE cells (
         id INTEGER PRIMARY KEY,
         scheduler TEXT NOT NULL,
         workers INTEGER NOT NULL,
         workload TEXT NOT NULL,
         knobs TEXT NOT NULL,
         params TEXT NOT NULL,
         rate_per_s INTEGER
     );
     CREATE TABLE repetitions (
         run_id INTEGER NOT NULL REFERENCES runs(id),
         cell_id INTEGER NOT NULL REFERENCES cells(id),
         rep INTEGER NOT NULL,
         status TEXT NOT NULL,
         error TEXT NOT NULL,
         PRIMARY KEY (run_id, cell_id, rep)
     ) WITHOUT ROWID;
     CREATE TABLE samples (
         run_id INTEGER NOT NULL REFERENCES runs(id),
         cell_id INTEGER NOT NULL REFERENCES cells(id),
         rep INTEGER NOT NULL,
         metric TEXT NOT NULL,
         value REAL NOT NULL,
         PRIMARY KEY (run_id, cell_id, rep, metric)
     ) WITHOUT ROWID;
     CREATE INDEX samples_by_metric ON samples (metric, cell_id);",
    // 1 -> 2: the environment of the run (results.json), when known.
    "ALTER TABLE runs ADD COLUMN environment TEXT;",
    // 2 -> 3: the A/B side is part of a run's identity (both sides of a
    // same-binary A/B share every other field); SQLite cannot change a
    // table's UNIQUE constraint, so the table is rebuilt, ids kept.
    "CREATE TABLE runs_v3 (
         id INTEGER PRIMARY KEY,
         git_sha TEXT NOT NULL,
         run_time TEXT NOT NULL,
         host TEXT NOT NULL,
         cpu_model TEXT NOT NULL,
         logical_cpus INTEGER NOT NULL,
         csv_schema INTEGER NOT NULL,
         source TEXT NOT NULL,
         added_at TEXT NOT NULL,
         environment TEXT,
         ab_side TEXT NOT NULL DEFAULT '',
         UNIQUE (git_sha, run_time, host, cpu_model, logical_cpus, ab_side)
     );
     INSERT INTO runs_v3 (id, git_sha, run_time, host, cpu_model, logical_cpus, csv_schema, source, added_at, environment)
         SELECT id, git_sha, run_time, host, cpu_model, logical_cpus, csv_schema, source, added_at, environment FROM runs;
     DROP TABLE runs;
     ALTER TABLE runs_v3 RENAME TO runs;",
];

/// An open history database at [`DB_VERSION`].
pub struct Store {
    conn: Connection,
}

/// Identity of a run: what makes two adds the same run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey {
    /// `git_sha` column.
    pub git_sha: String,
    /// `timestamp` column: when the invocation started.
    pub run_time: String,
    /// `host` column.
    pub host: String,
    /// `cpu_model` column.
    pub cpu_model: String,
    /// `logical_cpus` column.
    pub logical_cpus: usize,
    /// The side of an A/B invocation (`base`, `current`; empty for none).
    pub ab_side: String,
}

/// One repetition of one cell, ready to store.
#[derive(Debug, Clone)]
pub struct Repetition {
    /// The cell.
    pub cell: CellKey,
    /// The CSV's `run`.
    pub rep: usize,
    /// `ok` or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: String,
    /// Every measured value by column name (finite values only).
    pub metrics: Vec<(String, f64)>,
}

/// A run to add.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// Its identity.
    pub key: RunKey,
    /// The CSV's `schema_version`.
    pub csv_schema: u32,
    /// The file it was read from.
    pub source: String,
    /// The environment JSON, when known.
    pub environment: Option<String>,
    /// Its rows.
    pub repetitions: Vec<Repetition>,
}

/// What adding did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// Stored under this id.
    New(i64),
    /// Already held under this id; nothing changed.
    AlreadyHeld(i64),
}

/// One line of `history list`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Row id.
    pub id: i64,
    /// Identity.
    pub key: RunKey,
    /// CSV schema version.
    pub csv_schema: u32,
    /// Source file.
    pub source: String,
    /// Distinct cells.
    pub cells: usize,
    /// Repetitions that succeeded.
    pub ok: usize,
    /// Repetitions that failed.
    pub failed: usize,
    /// Environment JSON, when known.
    pub environment: Option<String>,
}

/// One value of a series: the median over a run's ok repetitions.
#[derive(Debug, Clone)]
pub struct SeriesSample {
    /// The run.
    pub run_id: i64,
    /// The host.
    pub host: String,
    /// The cell.
    pub cell: CellKey,
    /// Metric name.
    pub metric: String,
    /// One value per ok repetition.
    pub values: Vec<f64>,
}

/// The most logical CPUs a run's row may name (far beyond any machine).
const MAX_LOGICAL_CPUS: i64 = 1 << 20;

/// One rule of [`check_contents`]: in `table`, a row whose `column` makes
/// `bad` (an SQL condition) true is damage; `allowed` says what may be
/// there, for the message; `since` is the schema version that has it.
struct Rule {
    table: &'static str,
    column: &'static str,
    bad: String,
    allowed: String,
    since: i64,
}

fn rule(table: &'static str, column: &'static str, bad: impl Into<String>, allowed: impl Into<String>) -> Rule {
    Rule { table, column, bad: bad.into(), allowed: allowed.into(), since: 1 }
}

/// A text column that must hold text (SQLite stores any type anywhere).
fn text(table: &'static str, column: &'static str) -> Rule {
    rule(table, column, format!("typeof({column}) <> 'text'"), "text")
}

/// A text column that must hold non-empty text.
fn named(table: &'static str, column: &'static str) -> Rule {
    rule(table, column, format!("typeof({column}) <> 'text' OR {column} = ''"), "non-empty text")
}

/// The checks of every value the readers take from the history, in one
/// place: every command that opens a history (`history add`, `list`,
/// `detect`, `report`) goes through [`check_contents`].
fn rules() -> Vec<Rule> {
    let workers = wsbench_schedulers::MAX_WORKERS;
    vec![
        text("runs", "git_sha"),
        rule("runs", "run_time", "typeof(run_time) <> 'text'", "an RFC 3339 time in UTC"),
        text("runs", "host"),
        text("runs", "cpu_model"),
        rule(
            "runs",
            "logical_cpus",
            format!("typeof(logical_cpus) <> 'integer' OR logical_cpus < 1 OR logical_cpus > {MAX_LOGICAL_CPUS}"),
            "a whole number, 1 or more",
        ),
        rule(
            "runs",
            "csv_schema",
            "typeof(csv_schema) <> 'integer' OR csv_schema < 1 OR csv_schema > 4294967295",
            "a CSV schema version, 1 or more",
        ),
        text("runs", "source"),
        Rule {
            since: 2,
            ..rule(
                "runs",
                "environment",
                "environment IS NOT NULL AND (typeof(environment) <> 'text' OR NOT json_valid(environment))",
                "empty or a JSON document",
            )
        },
        Rule {
            since: 3,
            ..rule("runs", "ab_side", "ab_side IS NOT '' AND ab_side IS NOT 'base' AND ab_side IS NOT 'current'", "'', base or current")
        },
        named("cells", "scheduler"),
        rule(
            "cells",
            "workers",
            format!("typeof(workers) <> 'integer' OR workers < 1 OR workers > {workers}"),
            format!("a worker count in 1..={workers}"),
        ),
        named("cells", "workload"),
        text("cells", "knobs"),
        text("cells", "params"),
        rule(
            "cells",
            "rate_per_s",
            "rate_per_s IS NOT NULL AND (typeof(rate_per_s) <> 'integer' OR rate_per_s < 1)",
            "empty or a whole rate, 1 or more",
        ),
        rule("repetitions", "rep", "typeof(rep) <> 'integer' OR rep < 0", "a whole number, 0 or more"),
        rule("repetitions", "status", "status IS NOT 'ok' AND status IS NOT 'failed'", "ok or failed"),
        text("repetitions", "error"),
        named("samples", "metric"),
        rule(
            "samples",
            "value",
            "typeof(value) NOT IN ('real', 'integer') OR value > 1.7976931348623157e308 OR value < -1.7976931348623157e308",
            "a finite number",
        ),
    ]
}

/// Refuses a damaged history, naming the first damage found: a file whose
/// pages do not hold together (`PRAGMA quick_check`: a cut or overwritten
/// file), a row that points at no run or cell (`PRAGMA foreign_key_check`),
/// or a value outside what wsbench writes ([`rules`]: a text where a count
/// belongs, a worker count of -1, an infinite sample, a time that is not
/// one).
fn check_contents(conn: &Connection, path: &Path) -> Result<()> {
    let damage = match first_damage(conn) {
        Ok(None) => return Ok(()),
        Ok(Some(what)) => what,
        // SQLite could not read its own file (cut, overwritten, a type it
        // cannot convert): damage too.
        Err(e) => e.to_string(),
    };
    bail!("history `{}` is damaged: {damage}; it is not read", path.display())
}

/// The first damage [`check_contents`] looks for, in words; `None` when
/// the history is whole.
fn first_damage(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let integrity: Vec<String> =
        conn.prepare("PRAGMA quick_check")?.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    if integrity != ["ok"] {
        return Ok(Some(format!("SQLite's integrity check says {}", integrity.join("; "))));
    }
    let dangling: Option<(String, i64)> = conn
        .query_row("PRAGMA foreign_key_check", [], |r| Ok((r.get(0)?, r.get::<_, Option<i64>>(1)?.unwrap_or(0))))
        .optional()?;
    if let Some((table, row)) = dangling {
        return Ok(Some(format!("table `{table}`, row {row}, points at a run or cell it does not hold")));
    }
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for r in rules().iter().filter(|r| r.since <= version) {
        let sql = format!("SELECT quote({}) FROM {} WHERE {} LIMIT 1", r.column, r.table, r.bad);
        let found: Option<String> = conn.query_row(&sql, [], |row| row.get(0)).optional()?;
        if let Some(value) = found {
            return Ok(Some(format!(
                "table `{}`, column `{}` holds {value} (allowed: {})",
                r.table, r.column, r.allowed
            )));
        }
    }
    let mut stmt = conn.prepare("SELECT run_time FROM runs")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let time: String = row.get(0)?;
        if crate::run::env::parse_rfc3339_utc(&time).is_none() {
            return Ok(Some(format!(
                "table `runs`, column `run_time` holds '{time}' (allowed: an RFC 3339 time in UTC)"
            )));
        }
    }
    Ok(None)
}

fn sqlite_version(conn: &Connection) -> Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0)).context("cannot read the history's schema version")
}

impl Store {
    /// Opens (creating when missing; its directory must exist) and migrates
    /// the database at `path`, for `history add`. An existing `path` must
    /// be a regular file (the input guard); a database of a newer version,
    /// or another program's, is refused.
    pub fn open(path: &Path) -> Result<Store> {
        if path.exists() {
            check_sqlite(path, "the history")?;
        }
        let conn = Connection::open(path).with_context(|| format!("cannot open the history `{}`", path.display()))?;
        let mut store = Store { conn };
        // An existing history of a version this wsbench reads is checked
        // before anything is added to it (newer and foreign files are
        // refused by `migrate`).
        let version = store.version().with_context(|| format!("history `{}`", path.display()))?;
        if (1..=DB_VERSION).contains(&version) {
            check_contents(&store.conn, path)?;
        }
        store.migrate(DB_VERSION).with_context(|| format!("history `{}`", path.display()))?;
        let id: i32 = store.conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        if id != SQLITE_APPLICATION_ID {
            store
                .conn
                .pragma_update(None, "application_id", SQLITE_APPLICATION_ID)
                .with_context(|| format!("cannot mark the history `{}`", path.display()))?;
        }
        Ok(store)
    }

    /// Opens an existing database read-only (`history list`, `detect`,
    /// `report`): it is never created, migrated or written. A missing file,
    /// one that is not a regular file, an empty one and one without a
    /// wsbench schema are errors naming it.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.exists() {
            bail!("no history at `{}`; add runs with `wsbench history add RUN_DIR --db {0}`", path.display());
        }
        check_sqlite(path, "the history")?;
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .with_context(|| format!("cannot open the history `{}`", path.display()))?;
        let store = Store { conn };
        let version = store.version().with_context(|| format!("history `{}`", path.display()))?;
        if version > DB_VERSION {
            bail!(
                "history `{}`: its schema version is {version}, newer than the {DB_VERSION} this wsbench knows; use a \
                 newer wsbench",
                path.display()
            );
        }
        if version == 0 {
            bail!(
                "`{}` is not a wsbench history (no schema version: an empty or foreign file); `wsbench history add` \
                 creates one, read-only commands change nothing",
                path.display()
            );
        }
        check_contents(&store.conn, path)?;
        // An older history is read as it is (see `runs`); the next
        // `history add` upgrades it.
        Ok(store)
    }

    /// Brings the schema to `target` (tests use it to build old versions).
    pub fn migrate(&mut self, target: i64) -> Result<()> {
        let current = sqlite_version(&self.conn)?;
        if current > DB_VERSION {
            bail!(
                "its schema version is {current}, newer than the {DB_VERSION} this wsbench knows; use a newer wsbench"
            );
        }
        if current == 0 {
            // A file SQLite has tables in but no version is not ours.
            let tables: i64 = self.conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            if tables > 0 {
                bail!("it is an SQLite database without a wsbench schema version (not a wsbench history)");
            }
        }
        let tx = self.conn.transaction()?;
        for version in current..target.min(DB_VERSION) {
            tx.execute_batch(MIGRATIONS[version as usize])
                .with_context(|| format!("migrating the schema from version {version} to {}", version + 1))?;
        }
        if target > current {
            tx.pragma_update(None, "user_version", target.min(DB_VERSION))?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The schema version of the open database.
    pub fn version(&self) -> Result<i64> {
        sqlite_version(&self.conn)
    }

    /// Adds a run unless one with the same key is held.
    pub fn add(&mut self, run: &NewRun) -> Result<Added> {
        let tx = self.conn.transaction()?;
        let k = &run.key;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM runs WHERE git_sha = ?1 AND run_time = ?2 AND host = ?3 AND cpu_model = ?4 AND logical_cpus = ?5
                 AND ab_side = ?6",
                params![k.git_sha, k.run_time, k.host, k.cpu_model, k.logical_cpus as i64, k.ab_side],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = existing {
            return Ok(Added::AlreadyHeld(id));
        }
        tx.execute(
            "INSERT INTO runs (git_sha, run_time, host, cpu_model, logical_cpus, csv_schema, source, added_at, environment,
                               ab_side)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?8, ?9)",
            params![
                k.git_sha,
                k.run_time,
                k.host,
                k.cpu_model,
                k.logical_cpus as i64,
                run.csv_schema,
                run.source,
                run.environment,
                k.ab_side
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        for rep in &run.repetitions {
            let cell_id = cell_id(&tx, &rep.cell)?;
            tx.prepare_cached(
                "INSERT INTO repetitions (run_id, cell_id, rep, status, error) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![run_id, cell_id, rep.rep as i64, rep.status, rep.error])?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO samples (run_id, cell_id, rep, metric, value) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (metric, value) in &rep.metrics {
                insert.execute(params![run_id, cell_id, rep.rep as i64, metric, value])?;
            }
        }
        tx.commit()?;
        Ok(Added::New(run_id))
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>> {
        // Columns an older schema lacks (read-only commands do not migrate)
        // read as their defaults.
        let version = self.version()?;
        let environment = if version >= 2 { "r.environment" } else { "NULL" };
        let ab_side = if version >= 3 { "r.ab_side" } else { "''" };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT r.id, r.git_sha, r.run_time, r.host, r.cpu_model, r.logical_cpus, r.csv_schema, r.source,
                    (SELECT count(DISTINCT cell_id) FROM repetitions p WHERE p.run_id = r.id),
                    (SELECT count(*) FROM repetitions p WHERE p.run_id = r.id AND p.status = 'ok'),
                    (SELECT count(*) FROM repetitions p WHERE p.run_id = r.id AND p.status <> 'ok'),
                    {environment}, {ab_side}
             FROM runs r ORDER BY r.run_time, r.id"
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok(RunSummary {
                id: r.get(0)?,
                key: RunKey {
                    git_sha: r.get(1)?,
                    run_time: r.get(2)?,
                    host: r.get(3)?,
                    cpu_model: r.get(4)?,
                    logical_cpus: r.get::<_, i64>(5)? as usize,
                    ab_side: r.get(12)?,
                },
                csv_schema: r.get(6)?,
                source: r.get(7)?,
                cells: r.get::<_, i64>(8)? as usize,
                ok: r.get::<_, i64>(9)? as usize,
                failed: r.get::<_, i64>(10)? as usize,
                environment: r.get(11)?,
            })
        })?;
        rows.collect::<rusqlite::Result<_>>().context("cannot read the runs")
    }

    /// The ok repetitions' values of `metrics` (every metric when empty),
    /// grouped by (run, cell, metric), in run order.
    pub fn samples(&self, metrics: &[String]) -> Result<Vec<SeriesSample>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.run_id, r.host, c.scheduler, c.workers, c.workload, c.knobs, c.params, c.rate_per_s, s.metric, s.value
             FROM samples s
             JOIN runs r ON r.id = s.run_id
             JOIN cells c ON c.id = s.cell_id
             JOIN repetitions p ON p.run_id = s.run_id AND p.cell_id = s.cell_id AND p.rep = s.rep
             WHERE p.status = 'ok'
             ORDER BY r.run_time, r.id, c.id, s.metric, s.rep",
        )?;
        let mut out: Vec<SeriesSample> = Vec::new();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let metric: String = r.get(8)?;
            if !metrics.is_empty() && !metrics.contains(&metric) {
                continue;
            }
            let run_id: i64 = r.get(0)?;
            let cell = CellKey {
                scheduler: r.get(2)?,
                workers: r.get::<_, i64>(3)? as usize,
                workload: r.get(4)?,
                knobs: r.get(5)?,
                params: r.get(6)?,
                rate_per_s: r.get::<_, Option<i64>>(7)?.map(|v| v as u64),
                // The history keeps no CPU limits (ingest refuses rows with them).
                cpus: String::new(),
                cpuset: String::new(),
            };
            let value: f64 = r.get(9)?;
            match out.last_mut() {
                Some(last) if last.run_id == run_id && last.cell == cell && last.metric == metric => {
                    last.values.push(value)
                }
                _ => out.push(SeriesSample { run_id, host: r.get(1)?, cell, metric, values: vec![value] }),
            }
        }
        Ok(out)
    }
}

/// The id of `cell`, inserted when new. (`rate_per_s` may be NULL, which a
/// UNIQUE constraint would not match, so the lookup uses `IS`.)
fn cell_id(tx: &Transaction<'_>, cell: &CellKey) -> Result<i64> {
    let rate = cell.rate_per_s.map(|r| r as i64);
    let found: Option<i64> = tx
        .prepare_cached(
            "SELECT id FROM cells WHERE scheduler = ?1 AND workers = ?2 AND workload = ?3 AND knobs = ?4 AND params = ?5
             AND rate_per_s IS ?6",
        )?
        .query_row(params![cell.scheduler, cell.workers as i64, cell.workload, cell.knobs, cell.params, rate], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    tx.prepare_cached(
        "INSERT INTO cells (scheduler, workers, workload, knobs, params, rate_per_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![cell.scheduler, cell.workers as i64, cell.workload, cell.knobs, cell.params, rate])?;
    Ok(tx.last_insert_rowid())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("wsbench-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("h.sqlite")
    }

    #[test]
    fn a_version_1_history_is_migrated_and_keeps_its_runs() {
        let path = scratch("migrate");
        {
            let mut old = Store { conn: Connection::open(&path).unwrap() };
            old.migrate(1).unwrap();
            assert_eq!(old.version().unwrap(), 1);
            old.conn
                .execute(
                    "INSERT INTO runs (git_sha, run_time, host, cpu_model, logical_cpus, csv_schema, source, added_at)
                     VALUES ('abc', '2026-01-01T00:00:00Z', 'h', 'cpu', 4, 1, 'old.csv', 'then')",
                    [],
                )
                .unwrap();
        }
        let read_only = Store::open_existing(&path).unwrap();
        assert_eq!(read_only.version().unwrap(), 1, "read-only commands do not migrate");
        assert_eq!(read_only.runs().unwrap().len(), 1, "an old schema is read as it is");
        drop(read_only);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.version().unwrap(), DB_VERSION);
        let runs = store.runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].key.git_sha.as_str(), runs[0].key.logical_cpus, runs[0].environment.as_deref()),
            ("abc", 4, None)
        );
        assert_eq!(runs[0].key.ab_side, "");
        let id: i32 = store.conn.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
        assert_eq!(id, SQLITE_APPLICATION_ID, "the history is marked as wsbench's");
    }

    #[test]
    fn newer_and_foreign_databases_are_refused() {
        let path = scratch("newer");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", DB_VERSION + 1).unwrap();
        let err = format!("{:#}", Store::open(&path).err().unwrap());
        assert!(err.contains(&format!("schema version is {}", DB_VERSION + 1)), "{err}");
        let path = scratch("foreign");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x INTEGER);").unwrap();
        let err = format!("{:#}", Store::open(&path).err().unwrap());
        assert!(err.contains("not a wsbench history"), "{err}");
    }

    #[test]
    fn cells_without_a_rate_are_one_cell() {
        let path = scratch("cells");
        let mut store = Store::open(&path).unwrap();
        let cell = CellKey::plain("global", 2, "yield-many");
        let run = |sha: &str, side: &str| NewRun {
            key: RunKey {
                git_sha: sha.into(),
                run_time: "t".into(),
                host: "h".into(),
                cpu_model: "c".into(),
                logical_cpus: 2,
                ab_side: side.into(),
            },
            csv_schema: 1,
            source: "x.csv".into(),
            environment: None,
            repetitions: vec![Repetition {
                cell: cell.clone(),
                rep: 0,
                status: "ok".into(),
                error: String::new(),
                metrics: vec![("ops".into(), 3.0)],
            }],
        };
        assert_eq!(store.add(&run("a", "")).unwrap(), Added::New(1));
        assert_eq!(store.add(&run("b", "")).unwrap(), Added::New(2));
        assert_eq!(store.add(&run("a", "")).unwrap(), Added::AlreadyHeld(1));
        // The two sides of a same-binary A/B differ only in their side.
        assert_eq!(store.add(&run("a", "base")).unwrap(), Added::New(3));
        assert_eq!(store.add(&run("a", "current")).unwrap(), Added::New(4));
        assert_eq!(store.add(&run("a", "current")).unwrap(), Added::AlreadyHeld(4));
        let cells: i64 = store.conn.query_row("SELECT count(*) FROM cells", [], |r| r.get(0)).unwrap();
        assert_eq!(cells, 1);
        let samples = store.samples(&["ops".to_string()]).unwrap();
        assert_eq!(samples.len(), 4);
        assert_eq!(samples[0].values, vec![3.0]);
    }
}
