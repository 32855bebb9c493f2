//! What wsbench writes for people and programs: the result files
//! (`export`: CSV, JSON, markdown, HDR logs, each written so that nothing
//! already measured is lost), the results table, the charts of `wsbench
//! plot`, the HTML page of `wsbench report`, and the one place that writes
//! units. Everything here reads data; nothing measures.

pub mod export;
pub mod plot;
pub mod report;
pub mod table;
pub mod term;
pub mod units;
