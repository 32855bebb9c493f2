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

/// Formats a count with a k/M/G suffix.
pub fn format_count(v: f64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, suffix) in UNITS {
        if v.abs() >= scale {
            return format!("{:.2}{suffix}", v / scale);
        }
    }
    format!("{v:.0}")
}
