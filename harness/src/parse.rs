//! Parsing of the list, range, duration and percentage forms the CLI
//! accepts.
//!
//! Lists: comma-separated items, each a single value or a range.
//! Ranges: `A..=B` (inclusive) or `A..B` (exclusive), optionally followed by
//! a step: `:pow2` (powers of two inside the range), `:xK` (multiply by K),
//! `:+K` or `:stepK` (add K). Without a step a range counts up by one.
//! Examples: `1,2,4`, `1..=8`, `1..=128:pow2`, `1000..=8000:x2`,
//! `10k..=50k:+10k`. Values keep their first-seen order; repeats are
//! dropped.

use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};

/// The largest number of items one list may expand to; a typo such as
/// `1..=100000000` should fail rather than allocate.
pub const MAX_LIST_ITEMS: usize = 4096;

/// The list syntax, for error messages.
pub const LIST_SYNTAX: &str =
    "a comma-separated list of values or ranges: `1,2,4`, `1..=8`, `1..8`, `1..=128:pow2`, `1000..=8000:x2`, `10k..=50k:+10k`";

/// How a range advances from one value to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// Add this amount.
    Add(u64),
    /// Multiply by this factor.
    Mul(u64),
    /// Powers of two inside the range.
    Pow2,
}

/// Parses an unsigned integer with an optional `k` (10^3) or `M` (10^6)
/// suffix.
pub fn parse_u64_suffixed(text: &str) -> Result<u64> {
    const KILO: u64 = 1_000;
    const MEGA: u64 = 1_000_000;
    let t = text.trim();
    let (digits, scale) = match t.strip_suffix('k').or_else(|| t.strip_suffix('K')) {
        Some(d) => (d, KILO),
        None => match t.strip_suffix('M') {
            Some(d) => (d, MEGA),
            None => (t, 1),
        },
    };
    let base: u64 =
        digits.parse().map_err(|_| anyhow!("`{text}` is not a whole number (a `k` or `M` suffix is allowed)"))?;
    base.checked_mul(scale).with_context(|| format!("`{text}` is too large; allowed: up to {}", u64::MAX))
}

fn parse_step(text: &str, item: &str) -> Result<Step> {
    let step = if text == "pow2" {
        Step::Pow2
    } else if let Some(k) = text.strip_prefix('x') {
        Step::Mul(parse_u64_suffixed(k).with_context(|| format!("bad factor in `{item}`"))?)
    } else if let Some(k) = text.strip_prefix('+').or_else(|| text.strip_prefix("step")) {
        Step::Add(parse_u64_suffixed(k).with_context(|| format!("bad step in `{item}`"))?)
    } else {
        bail!("unknown step `:{text}` in `{item}`; allowed: `:pow2`, `:xK`, `:+K`, `:stepK`");
    };
    match step {
        Step::Add(0) => bail!("step `:{text}` in `{item}` must be at least 1"),
        Step::Mul(f) if f < 2 => bail!("factor `:{text}` in `{item}` must be at least 2"),
        _ => Ok(step),
    }
}

/// Expands one range item (`A..=B[:step]` or `A..B[:step]`).
fn expand_range(item: &str, range: &str, step: Step, out: &mut Vec<u64>) -> Result<()> {
    let (lo_text, hi_text, inclusive) = match range.split_once("..=") {
        Some((a, b)) => (a, b, true),
        None => {
            let (a, b) = range.split_once("..").expect("caller checked for `..`");
            (a, b, false)
        }
    };
    let lo = parse_u64_suffixed(lo_text).with_context(|| format!("bad start in range `{item}`"))?;
    let hi = parse_u64_suffixed(hi_text).with_context(|| format!("bad end in range `{item}`"))?;
    let in_range = |v: u64| if inclusive { v <= hi } else { v < hi };
    ensure!(in_range(lo), "range `{item}` is empty (its start is not below its end)");
    let mut v = match step {
        Step::Pow2 => lo.max(1).checked_next_power_of_two().unwrap_or(u64::MAX),
        _ => lo,
    };
    while in_range(v) {
        ensure!(out.len() < MAX_LIST_ITEMS, "`{item}` expands to more than {MAX_LIST_ITEMS} values");
        out.push(v);
        let next = match step {
            Step::Add(k) => v.checked_add(k),
            Step::Mul(f) => v.checked_mul(f),
            Step::Pow2 => v.checked_mul(2),
        };
        match next {
            Some(n) if n > v => v = n,
            _ => break,
        }
    }
    Ok(())
}

/// Parses a list of unsigned integers (see the module doc).
pub fn parse_u64_list(text: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    ensure!(!text.trim().is_empty(), "empty list; expected {LIST_SYNTAX}");
    for raw in text.split(',') {
        let item = raw.trim();
        ensure!(!item.is_empty(), "empty item in list `{text}`; expected {LIST_SYNTAX}");
        let (range, step) = match item.split_once(':') {
            Some((r, s)) => (r, Some(parse_step(s, item)?)),
            None => (item, None),
        };
        if range.contains("..") {
            expand_range(item, range, step.unwrap_or(Step::Add(1)), &mut out)
                .with_context(|| format!("expected {LIST_SYNTAX}"))?;
        } else {
            ensure!(step.is_none(), "a step (`{item}`) needs a range `A..=B` before it");
            out.push(parse_u64_suffixed(item).with_context(|| format!("in list `{text}`; expected {LIST_SYNTAX}"))?);
            ensure!(out.len() <= MAX_LIST_ITEMS, "`{text}` has more than {MAX_LIST_ITEMS} values");
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|v| seen.insert(*v));
    Ok(out)
}

/// The duration forms, for error messages.
pub const DURATION_SYNTAX: &str =
    "a number with a unit ns, us, ms, s, m (minutes) or h (hours), or a bare number of seconds: `2s`, `500ms`, `1.5`, `1h`";

/// Parses a duration: a number with a unit `ns`, `us`, `ms`, `s`, `m`
/// (minutes), `h` (hours), or a bare number of seconds. Fractions are
/// allowed (`2.5s`).
pub fn parse_duration(text: &str) -> Result<Duration> {
    const S_PER_MIN: f64 = 60.0;
    const S_PER_H: f64 = 3600.0;
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| anyhow!("`{text}` is not a duration; allowed: {DURATION_SYNTAX}"))?;
    let scale_s = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => S_PER_MIN,
        "h" => S_PER_H,
        other => bail!("unknown unit `{other}` in duration `{text}`; allowed: ns, us, ms, s, m, h"),
    };
    Duration::try_from_secs_f64(value * scale_s).map_err(|_| anyhow!("`{text}` is out of range"))
}

/// The percentage forms, for help and error messages.
pub const PERCENT_SYNTAX: &str = "a percentage: `5%` or `5` (five percent), `0.5%` (half a percent)";

/// Parses a percentage into a fraction (`5%` and a bare `5` both mean
/// five percent, 0.05). A bare number between 0 and 1 is refused: `0.05`
/// would read as 0.05 %, yet it is how fractions (`--alpha`) are written,
/// so the `%` must say which is meant (`0.05%` or `5%`).
pub fn parse_percent(text: &str) -> Result<f64> {
    const PERCENT: f64 = 100.0;
    let t = text.trim();
    let (number, suffixed) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    let v: f64 = number.parse().map_err(|_| anyhow!("`{text}` is not a percentage; allowed: {PERCENT_SYNTAX}"))?;
    ensure!(v.is_finite() && v >= 0.0, "`{text}` is not a non-negative percentage; allowed: {PERCENT_SYNTAX}");
    ensure!(
        suffixed || v == 0.0 || v >= 1.0,
        "`{text}` is ambiguous: a bare number is a percentage here ({v} means {v}%), yet it reads like the fraction \
         {v} = {}%; write `{}%` or `{v}%`",
        tidy(v * PERCENT),
        tidy(v * PERCENT)
    );
    Ok(v / PERCENT)
}

/// `v` without the float noise of a scaling (`5.000000000000001` is `5`).
fn tidy(v: f64) -> f64 {
    const DIGITS: f64 = 1e9;
    (v * DIGITS).round() / DIGITS
}

/// The fraction forms (`--alpha`, `--p-value`), for help and error messages.
pub const FRACTION_SYNTAX: &str = "a fraction between 0 and 1 (exclusive): `0.05`, or as a percentage `5%`";

/// Parses a probability in (0, 1): a fraction (`0.05`) or a percentage
/// (`5%`).
pub fn parse_fraction(text: &str) -> Result<f64> {
    const PERCENT: f64 = 100.0;
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), PERCENT),
        None => (t, 1.0),
    };
    let v: f64 = number.parse().map_err(|_| anyhow!("`{text}` is not a number; allowed: {FRACTION_SYNTAX}"))?;
    let v = v / scale;
    ensure!(v > 0.0 && v < 1.0, "`{text}` is out of range; allowed: {FRACTION_SYNTAX}");
    Ok(v)
}

/// Checks a label that goes into a CSV cell, a table and an `.hlog`
/// header line (`load --label`, `run --base-sha`): not empty, and no comma,
/// quote or control character (a line break would start a new line).
pub fn check_label(flag: &str, text: &str) -> Result<()> {
    ensure!(
        !text.trim().is_empty() && !text.contains([',', '"']) && !text.chars().any(char::is_control),
        "{flag} `{}` cannot be a label; allowed: a non-empty name without commas, quotes, tabs or line breaks",
        text.escape_debug()
    );
    Ok(())
}

/// Splits `name=value`, naming the flag in the error.
pub fn parse_pair(text: &str, flag: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => bail!("`{text}` is not of the form name=value (in {flag})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_keep_order_and_drop_repeats() {
        assert_eq!(parse_u64_list("4,1,2,4").unwrap(), vec![4, 1, 2]);
        assert_eq!(parse_u64_list(" 8 ").unwrap(), vec![8]);
    }

    #[test]
    fn ranges_and_steps() {
        assert_eq!(parse_u64_list("1..=8").unwrap(), (1..=8).collect::<Vec<_>>());
        assert_eq!(parse_u64_list("1..4").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_u64_list("1..=128:pow2").unwrap(), vec![1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(parse_u64_list("3..=100:pow2").unwrap(), vec![4, 8, 16, 32, 64]);
        assert_eq!(parse_u64_list("1000..=8000:x2").unwrap(), vec![1000, 2000, 4000, 8000]);
        assert_eq!(parse_u64_list("10k..=30k:+10k").unwrap(), vec![10_000, 20_000, 30_000]);
        assert_eq!(parse_u64_list("1..=2,6,8..=9").unwrap(), vec![1, 2, 6, 8, 9]);
        assert_eq!(parse_u64_list("2M").unwrap(), vec![2_000_000]);
    }

    #[test]
    fn malformed_lists_name_the_bad_item() {
        for bad in ["", "1,,2", "a", "1..", "..4", "8..=1", "1..=4:pow3", "1..=4:x1", "4:pow2", "1..=4:+0"] {
            let err = format!("{:#}", parse_u64_list(bad).unwrap_err());
            assert!(err.contains(bad) || bad.is_empty() || err.contains("empty"), "{bad}: {err}");
        }
        assert!(parse_u64_list("1..=100000000").is_err());
    }

    #[test]
    fn percent_and_fraction_are_told_apart() {
        assert_eq!(parse_percent("0.5%").unwrap(), 0.005);
        assert_eq!(parse_percent("0").unwrap(), 0.0);
        assert_eq!(parse_percent("1").unwrap(), 0.01);
        let err = format!("{:#}", parse_percent("0.05").unwrap_err());
        assert!(err.contains("`0.05` is ambiguous") && err.contains("`5%`") && err.contains("`0.05%`"), "{err}");
        assert_eq!(parse_fraction("0.05").unwrap(), 0.05);
        assert_eq!(parse_fraction("5%").unwrap(), 0.05);
        for bad in ["0", "1", "5", "-0.1", "", "x", "100%", "nan"] {
            let err = format!("{:#}", parse_fraction(bad).unwrap_err());
            assert!(err.contains(&format!("`{bad}`")) && err.contains("between 0 and 1"), "{bad}: {err}");
        }
    }

    #[test]
    fn parse_errors_name_the_value_not_rust() {
        for (bad, f) in [("", 0), ("1.2.3", 0), ("x", 1), ("", 1), ("-1", 2), ("1e999", 2)] {
            let err = match f {
                0 => format!("{:#}", parse_duration(bad).unwrap_err()),
                1 => format!("{:#}", parse_percent(bad).unwrap_err()),
                _ => format!("{:#}", parse_u64_list(bad).unwrap_err()),
            };
            assert!(
                !err.contains("cannot parse") && !err.contains("invalid digit") && !err.contains("invalid float"),
                "{err}"
            );
            assert!(err.contains(&format!("`{bad}`")) || err.contains("empty"), "{bad}: {err}");
        }
    }

    #[test]
    fn durations_and_percentages() {
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("10ms").unwrap(), Duration::from_millis(10));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3 weeks").is_err());
        assert_eq!(parse_percent("5%").unwrap(), 0.05);
        assert_eq!(parse_percent("12.5").unwrap(), 0.125);
        assert!(parse_percent("-1%").is_err());
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("0.5h").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_pair("lifo=off", "--knob").unwrap(), ("lifo".into(), "off".into()));
        assert!(parse_pair("lifo", "--knob").is_err());
        check_label("--label", "box-a_1").unwrap();
        for bad in ["", " ", "a,b", "a\nscheduler,x", "a\"b", "tab\there"] {
            let err = format!("{:#}", check_label("--label", bad).unwrap_err());
            assert!(err.starts_with("--label `") && err.contains("without commas"), "{err}");
        }
    }
}
