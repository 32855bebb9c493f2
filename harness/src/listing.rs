//! `wsbench list`: every scheduler, workload, workload parameter and knob
//! with one line of meaning and its default.

use std::fmt::Write as _;

use wsbench_schedulers::knobs::KNOBS;

use crate::output::term::{hang, LIST_WIDTH};
use crate::run::backend;

/// One listing row: `prefix` then `text` wrapped under the text's column.
fn row(out: &mut String, prefix: &str, text: &str) {
    let _ = writeln!(out, "{}", hang(prefix, text, prefix.chars().count(), LIST_WIDTH));
}

/// The listing.
pub fn render() -> String {
    let mut out = String::from("Schedulers (--sched NAME,... or all):\n");
    for s in backend::schedulers() {
        let mut tags = Vec::new();
        if s.is_reference {
            tags.push("reference");
        }
        if s.single_worker_only {
            tags.push("--workers 1 only");
        }
        let tags = if tags.is_empty() { String::new() } else { format!(" [{}]", tags.join(", ")) };
        row(&mut out, &format!("  {:<16} ", s.name), &format!("{}{tags}", s.about));
    }
    out.push_str(&crate::run::pinned::listing());
    out.push_str("\nWorkloads (--workload NAME,..., default, zoo or all; * = in the default suite):\n");
    for w in backend::workloads() {
        let mark = if w.in_default_suite { "*" } else { " " };
        let mut tags = Vec::new();
        if w.open_loop {
            tags.push("open loop, uses --rate");
        }
        if w.test_only {
            tags.push("test only, never in default or all");
        }
        let tags = if tags.is_empty() { String::new() } else { format!(" [{}]", tags.join(", ")) };
        row(&mut out, &format!("{mark} {:<24} ", w.name), &format!("{}{tags}", w.about));
        for p in w.params {
            let flag = format!("--param {}={}", p.name, p.default);
            row(&mut out, &format!("      {flag:<36} "), p.about);
        }
    }
    out.push_str("\nKnobs (--knob NAME=VALUE[,VALUE..]; ours only):\n");
    for k in KNOBS {
        let applies: Vec<_> = k.applies_to().iter().map(|s| s.name()).collect();
        let text =
            format!("default {}; allowed {}. {} (applies to {})", k.default, k.allowed, k.about, applies.join(", "));
        row(&mut out, &format!("  {:<16} ", k.name), &text);
    }
    out
}
