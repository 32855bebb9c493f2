//! How numbers are written for people: one place for the units of the
//! table, the markdown, the charts and the messages.

/// Formats microseconds with a unit that keeps 3 significant digits.
pub fn format_us(us: f64) -> String {
    const US_PER_MS: f64 = 1e3;
    const US_PER_S: f64 = 1e6;
    if us >= US_PER_S {
        format!("{:.3}s", us / US_PER_S)
    } else if us >= US_PER_MS {
        format!("{:.3}ms", us / US_PER_MS)
    } else if us >= 100.0 {
        format!("{us:.0}µs")
    } else if us >= 10.0 {
        format!("{us:.1}µs")
    } else {
        format!("{us:.2}µs")
    }
}

/// Significant digits kept below 100 by [`format_count`].
const SMALL_COUNT_DIGITS: i32 = 3;
/// The most decimals [`format_count`] writes (below that it prints 0).
const MAX_COUNT_DECIMALS: i32 = 6;

/// Formats a count or a rate with a k/M/G suffix; below 100, with 3
/// significant digits and no trailing zeros (`0.25`, `5`, `12.3`), so a
/// throughput below 1/s is not written as `0`.
pub fn format_count(v: f64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    const HUNDRED: f64 = 100.0;
    for (scale, suffix) in UNITS {
        if v.abs() >= scale {
            return format!("{:.2}{suffix}", v / scale);
        }
    }
    if v == 0.0 || !v.is_finite() || v.abs() >= HUNDRED {
        return format!("{v:.0}");
    }
    let decimals = (SMALL_COUNT_DIGITS - 1 - v.abs().log10().floor() as i32).clamp(0, MAX_COUNT_DECIMALS) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_below_one_keep_their_digits() {
        assert_eq!(format_count(0.5), "0.5");
        assert_eq!(format_count(0.01234), "0.0123");
        assert_eq!(format_count(0.0), "0");
        assert_eq!(format_count(5.0), "5");
        assert_eq!(format_count(5.55), "5.55");
        assert_eq!(format_count(12.34), "12.3");
        assert_eq!(format_count(99.96), "100");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_count(1e-9), "0");
    }
}
