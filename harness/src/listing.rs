//! `wsbench list`: every scheduler, workload, workload parameter and knob
//! with one line of meaning and its default.

use std::fmt::Write as _;

use wsbench_schedulers::knobs::KNOBS;

use crate::run::backend;

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
        let _ = writeln!(out, "  {:<16} {}{tags}", s.name, s.about);
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
        let _ = writeln!(out, "{mark} {:<24} {}{tags}", w.name, w.about);
        for p in w.params {
            let flag = format!("--param {}={}", p.name, p.default);
            let _ = writeln!(out, "      {flag:<36} {}", p.about);
        }
    }
    out.push_str("\nKnobs (--knob NAME=VALUE[,VALUE..]; ours only):\n");
    for k in KNOBS {
        let applies: Vec<_> = k.applies_to().iter().map(|s| s.name()).collect();
        let _ = writeln!(
            out,
            "  {:<16} default {:<9} allowed {:<26} {} (applies to {})",
            k.name,
            k.default,
            k.allowed,
            k.about,
            applies.join(", ")
        );
    }
    out
}
