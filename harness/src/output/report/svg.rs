//! A small trend chart as inline SVG: one series of per-run medians, the
//! mean of each segment between change points, and the change points as
//! vertical lines coloured by verdict. Text only, nothing fetched.

use std::fmt::Write as _;

use crate::history::detect::{Found, Kind, Point};
use crate::output::table::{format_count, format_us};

/// Chart size in CSS pixels.
const WIDTH: f64 = 360.0;
const HEIGHT: f64 = 180.0;
/// Plot area margins.
const LEFT: f64 = 62.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 30.0;
/// Head- and footroom of the y range, as a fraction of the span.
const PAD: f64 = 0.08;
/// The narrowest y span, as a fraction of the values' magnitude: runs
/// within a fraction of a percent of each other are drawn nearly flat
/// (with labels that differ), not as a steep line between equal labels.
const MIN_RELATIVE_SPAN: f64 = 0.1;
/// Characters of a run time kept for an x label: the day, or the day and
/// minute when the first and last run share a day.
const DAY_CHARS: usize = 10;
const MINUTE_CHARS: usize = 16;

/// Escapes text for HTML and SVG.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A value of `metric` for a label.
pub fn format_value(metric: &str, v: f64) -> String {
    // `cpu_us_per_op` is microseconds too.
    if metric.ends_with("_us") || metric.contains("_us_per_") {
        format_us(v)
    } else if metric.ends_with("_per_s") {
        format!("{}/s", format_count(v))
    } else if v.abs() >= 1000.0 {
        format_count(v)
    } else {
        format!("{v:.3}")
    }
}

/// The colour of a change point's line.
pub fn kind_color(kind: Kind) -> &'static str {
    match kind {
        Kind::Regression => "#c62828",
        Kind::Improvement => "#2e7d32",
        Kind::Shift => "#ef8f00",
    }
}

fn y_range(points: &[Point]) -> (f64, f64) {
    let lo = points.iter().map(|p| p.value).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.value).fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    let floor = lo.abs().max(hi.abs()).max(f64::MIN_POSITIVE) * MIN_RELATIVE_SPAN;
    let mid = (lo + hi) / 2.0;
    let (lo, hi) = if hi - lo >= floor { (lo, hi) } else { (mid - floor / 2.0, mid + floor / 2.0) };
    let span = hi - lo;
    (lo - span * PAD, hi + span * PAD)
}

/// The SVG of one series with its change points.
pub fn trend(title: &str, metric: &str, points: &[Point], changes: &[&Found]) -> String {
    let (lo, hi) = y_range(points);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let n = points.len();
    let x = |i: f64| if n <= 1 { LEFT + plot_w / 2.0 } else { LEFT + plot_w * i / (n - 1) as f64 };
    let y = |v: f64| TOP + plot_h * (1.0 - (v - lo) / (hi - lo));
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"><title>{}</title>"#,
        escape(title)
    );
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" stroke="#bbb"/><text x="4" y="15" font-size="12" font-weight="bold">{}</text>"##,
        escape(title)
    );
    for v in [lo + (hi - lo) * PAD / (1.0 + 2.0 * PAD), (lo + hi) / 2.0, hi - (hi - lo) * PAD / (1.0 + 2.0 * PAD)] {
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 4.0,
            y(v) + 3.0,
            escape(&format_value(metric, v)),
            y = y(v)
        );
    }
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let same_day = first.run_time.get(..DAY_CHARS) == last.run_time.get(..DAY_CHARS);
        let keep = if same_day { MINUTE_CHARS } else { DAY_CHARS };
        let day = |p: &Point| p.run_time.get(..keep).unwrap_or(&p.run_time).replace('T', " ");
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="{}" font-size="10">{}</text><text x="{}" y="{0}" font-size="10" text-anchor="end">{}</text>"#,
            HEIGHT - 10.0,
            escape(&day(first)),
            LEFT + plot_w,
            escape(&day(last))
        );
    }
    // Segment means: from one change point to the next.
    let mut bounds: Vec<usize> = changes.iter().map(|c| c.change.index).collect();
    bounds.sort_unstable();
    bounds.insert(0, 0);
    bounds.push(n);
    for w in bounds.windows(2).filter(|w| w[1] > w[0]) {
        let mean = points[w[0]..w[1]].iter().map(|p| p.value).sum::<f64>() / (w[1] - w[0]) as f64;
        let _ = write!(
            s,
            r##"<line x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#777" stroke-dasharray="4 3"/>"##,
            x(w[0] as f64),
            x((w[1] - 1) as f64),
            y = y(mean)
        );
    }
    for c in changes {
        let at = x(c.change.index as f64 - 0.5);
        let color = kind_color(c.kind);
        let _ = write!(
            s,
            r#"<line x1="{at:.1}" x2="{at:.1}" y1="{TOP}" y2="{}" stroke="{color}" stroke-width="2"><title>{}</title></line><text x="{:.1}" y="{}" font-size="10" fill="{color}">{:+.1}%</text>"#,
            TOP + plot_h,
            escape(&format!(
                "{} at {} (p = {:.3})",
                c.kind.as_str(),
                c.first.git_sha.get(..10).unwrap_or(&c.first.git_sha),
                c.change.p_value
            )),
            (at + 3.0).min(WIDTH - 40.0),
            TOP + 11.0,
            c.relative_change * 100.0
        );
    }
    let path: Vec<String> =
        points.iter().enumerate().map(|(i, p)| format!("{:.1},{:.1}", x(i as f64), y(p.value))).collect();
    let _ = write!(s, r##"<polyline points="{}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>"##, path.join(" "));
    for (i, p) in points.iter().enumerate() {
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="#1f5fa8"><title>{} {}: {} ({} runs)</title></circle>"##,
            x(i as f64),
            y(p.value),
            escape(p.git_sha.get(..10).unwrap_or(&p.git_sha)),
            escape(&p.run_time),
            escape(&format_value(metric, p.value)),
            p.repetitions
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(i: usize, value: f64) -> Point {
        Point {
            run_id: i as i64,
            run_time: format!("2026-01-{:02}T00:00:00Z", i + 1),
            git_sha: format!("sha{i}"),
            value,
            repetitions: 5,
        }
    }

    #[test]
    fn two_equal_runs_are_flat_with_distinct_labels() {
        let mut points = vec![point(0, 2050.0), point(1, 2050.5)];
        points[1].run_time = "2026-01-01T09:30:00Z".to_string();
        points[0].run_time = "2026-01-01T08:15:00Z".to_string();
        let svg = trend("t", "throughput_per_s", &points, &[]);
        let labels: Vec<&str> = svg.split("text-anchor=\"end\">").skip(1).filter_map(|t| t.split('<').next()).collect();
        let y_labels: Vec<&&str> = labels.iter().filter(|l| l.ends_with("/s")).collect();
        assert_eq!(y_labels.len(), 3, "{labels:?}");
        assert!(y_labels[0] != y_labels[1] && y_labels[1] != y_labels[2], "{labels:?}");
        assert!(svg.contains("2026-01-01 08:15") && svg.contains("2026-01-01 09:30"), "{svg}");
        // The two points lie within a few pixels of each other.
        let cy: Vec<f64> = svg.split("cy=\"").skip(1).filter_map(|t| t.split('"').next()?.parse().ok()).collect();
        assert!((cy[0] - cy[1]).abs() < 5.0, "{cy:?}");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn trend_places_points_inside_the_plot() {
        // A spread wider than MIN_RELATIVE_SPAN, so the axis is the data's.
        let points: Vec<Point> = (0..5).map(|i| point(i, 100.0 + 10.0 * i as f64)).collect();
        let svg = trend("t <1>", "p50_us", &points, &[]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("t &lt;1&gt;"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 5);
        // The lowest value sits at the bottom padding line, the highest at the top one.
        let plot_h = HEIGHT - TOP - BOTTOM;
        let low_y = TOP + plot_h * (1.0 - PAD / (1.0 + 2.0 * PAD));
        assert!(svg.contains(&format!(r#"cx="{LEFT:.1}" cy="{low_y:.1}""#)), "{svg}");
        assert!(svg.contains("2026-01-01") && svg.contains("2026-01-05"));
    }
}
