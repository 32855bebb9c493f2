//! Drawing one line chart with plotters, to SVG and PNG. Each series is
//! exactly one polyline of stroke width [`LINE_WIDTH_PX`] (plus markers of
//! its own shape and, when the runs spread, a translucent min..max band);
//! axes and ticks are thinner and legend entries are rectangles, so a
//! reader of the SVG can count series by their polylines.
//!
//! The legend has a column of its own right of the plot, so it never covers
//! data, however many series there are. A series is told apart by its
//! colour and its marker shape together ([`style`]): colours that are close
//! in the palette get different shapes, and slots beyond the palette reuse
//! a colour with another shape.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::output::export::{marks, write_output, Kind};

/// Font family registered for every text element.
const FONT: &str = "sans-serif";
const TITLE_PX: u32 = 22;
const LABEL_PX: u32 = 15;
const CAPTION_PX: u32 = 13;
/// Height reserved under the chart for the machine caption.
const CAPTION_BAND_PX: u32 = 26;
const MARGIN_PX: u32 = 12;
const X_LABEL_AREA_PX: u32 = 45;
const Y_LABEL_AREA_PX: u32 = 80;
/// Stroke width of series lines (axes and grid use 1).
pub const LINE_WIDTH_PX: u32 = 2;
const MARKER_RADIUS_PX: u32 = 4;
/// Caption text opacity and its offset from the top of its band.
const CAPTION_ALPHA: f64 = 0.7;
const CAPTION_TOP_PX: i32 = 4;
/// Legend swatch: width and half height.
const LEGEND_SWATCH_PX: (i32, i32) = (16, 4);
/// Legend column: gap between swatch and text, and the height of a row.
const LEGEND_GAP_PX: i32 = 6;
const LEGEND_ROW_PX: i32 = 22;
/// At most this many markers on a dense curve (one without a marker at
/// every point), evenly spaced, so its shape can still be seen.
const DENSE_MARKERS: usize = 8;
/// Opacity of the min..max band.
const BAND_ALPHA: f64 = 0.08;
/// Axis padding on log axes (multiplicative) and linear ones (fraction).
const LOG_PAD: f64 = 1.25;
const LINEAR_PAD: f64 = 0.08;
/// Upper bound of tick labels on an axis.
const MAX_TICKS: usize = 12;
/// The largest magnitude a chart draws (1e15 µs is 31 years; 1e15/s is
/// beyond any throughput): larger values overflow the padded axis range to
/// infinity, and plotters' tick search then never ends.
pub const MAX_PLOT_VALUE: f64 = 1e15;
/// The smallest positive value a log axis draws (1e-9 µs is a femtosecond).
pub const MIN_LOG_VALUE: f64 = 1e-9;

/// One point with its spread.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    /// x value.
    pub x: f64,
    /// Median.
    pub y: f64,
    /// Lowest run.
    pub lo: f64,
    /// Highest run.
    pub hi: f64,
}

/// Series colours (Tableau 10), picked by a stable slot per scheduler so a
/// scheduler keeps its colour across charts.
const PALETTE: [(u8, u8, u8); 10] = [
    (0x1f, 0x77, 0xb4),
    (0xff, 0x7f, 0x0e),
    (0x2c, 0xa0, 0x2c),
    (0xd6, 0x27, 0x28),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
    (0xe3, 0x77, 0xc2),
    (0x7f, 0x7f, 0x7f),
    (0xbc, 0xbd, 0x22),
    (0x17, 0xbe, 0xcf),
];

/// Marker shapes, cycled with the palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Triangle,
    Square,
    Cross,
    Ring,
}

const SHAPES: [Shape; 5] = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross, Shape::Ring];

/// The shape of each palette colour (an index into [`SHAPES`]), two of
/// each, chosen so that no two colours closer than 150 in RGB (blue and
/// cyan, purple and grey, brown and grey, orange and olive...) share one.
const SHAPE_OF_COLOUR: [usize; 10] = [0, 0, 1, 2, 1, 3, 3, 2, 4, 4];

/// The colour and marker shape of a colour slot. Slots beyond the palette
/// (`i + 10`) reuse a colour with the next shape, so the first 50 slots are
/// all distinct.
fn style(slot: usize) -> (RGBColor, Shape) {
    if slot == REFERENCE_SLOT {
        return (BLACK, Shape::Cross);
    }
    let colour = slot % PALETTE.len();
    let (r, g, b) = PALETTE[colour];
    (RGBColor(r, g, b), SHAPES[(SHAPE_OF_COLOUR[colour] + slot / PALETTE.len()) % SHAPES.len()])
}

/// Draws the marker `$shape` at `$at` (in the target's coordinates) in
/// `$color`, binding it to `$e` for `$draw`.
macro_rules! with_marker {
    ($shape:expr, $at:expr, $color:expr, |$e:ident| $draw:expr) => {{
        let r = MARKER_RADIUS_PX as i32;
        let (at, color) = ($at, $color);
        match $shape {
            Shape::Circle => {
                let $e = Circle::new(at, r, color.filled());
                $draw
            }
            Shape::Triangle => {
                let $e = TriangleMarker::new(at, r + 1, color.filled());
                $draw
            }
            Shape::Square => {
                let $e = EmptyElement::at(at) + Rectangle::new([(-r, -r), (r, r)], color.filled());
                $draw
            }
            Shape::Cross => {
                let $e = Cross::new(at, r + 1, color.stroke_width(LINE_WIDTH_PX));
                $draw
            }
            Shape::Ring => {
                let $e = Circle::new(at, r + 1, color.stroke_width(LINE_WIDTH_PX));
                $draw
            }
        }
    }};
}

/// One line.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text (the scheduler).
    pub name: String,
    /// Colour slot (any number; taken modulo the palette; [`REFERENCE_SLOT`]
    /// is black).
    pub color_slot: usize,
    /// Points sorted by x.
    pub points: Vec<Point>,
    /// Drawn dashed: not a measurement (the ideal scheduler, a model's
    /// extrapolation); its legend text says what it is.
    pub dashed: bool,
}

/// The colour slot of a reference line that is no scheduler (the ideal):
/// black, with crosses.
pub const REFERENCE_SLOT: usize = usize::MAX;
/// Dash and gap lengths of a dashed series, in pixels.
const DASH_PX: (u32, u32) = (8, 5);

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Linear from zero.
    Linear,
    /// Logarithmic with this base.
    Log(f64),
}

/// How axis tick labels are written.
#[derive(Debug, Clone, Copy)]
pub enum Ticks {
    /// Plain numbers.
    Number,
    /// x = 1/(1-p) written as the percentile p.
    Percentile,
    /// Microseconds written with a unit (`250µs`, `1.5ms`).
    Latency,
    /// Plain numbers, one at each x value of the data (worker counts), so
    /// a log2 axis of 1 and 2 workers reads `1 2`, not `1 1 1 2 2`.
    AtData,
}

/// A chart to draw.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis label with unit.
    pub x_label: String,
    /// y-axis label with unit.
    pub y_label: String,
    /// x scale.
    pub x_scale: Scale,
    /// y scale.
    pub y_scale: Scale,
    /// x tick style.
    pub x_ticks: Ticks,
    /// y tick style.
    pub y_ticks: Ticks,
    /// The lines.
    pub series: Vec<Series>,
    /// Draw a marker at every point (off for dense curves).
    pub markers: bool,
    /// Machine description under the chart.
    pub caption: String,
}

/// Registers the embedded DejaVu Sans once; plotters then needs no system
/// fonts.
pub fn register_embedded_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok());
    ok.then_some(()).ok_or_else(|| anyhow!("cannot register the embedded DejaVu Sans font"))
}

/// The axis range of `values`: padded, and from zero on linear axes.
fn bounds(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    match scale {
        Scale::Linear => {
            let hi = if hi > 0.0 { hi * (1.0 + LINEAR_PAD) } else { 1.0 };
            let lo = 0.0_f64.min(lo);
            (lo, hi)
        }
        Scale::Log(_) => {
            let lo = lo / LOG_PAD;
            let hi = if hi > lo * LOG_PAD { hi * LOG_PAD } else { lo * LOG_PAD * LOG_PAD };
            (lo, hi)
        }
    }
}

fn percentile_label(x: f64) -> String {
    const PERCENT: f64 = 100.0;
    if x <= 1.0 {
        return "0%".to_string();
    }
    let p = (1.0 - 1.0 / x) * PERCENT;
    let text = format!("{p:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

/// Microseconds as a short tick label: `250µs`, `2.5ms`, `1s`.
fn latency_tick(us: f64) -> String {
    let text = crate::output::units::format_us(us);
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number = if number.contains('.') { number.trim_end_matches('0').trim_end_matches('.') } else { number };
    format!("{number}{unit}")
}

fn number_label(v: f64) -> String {
    crate::output::units::format_count(v)
}

/// Fewest labels a log axis gets before denser mantissas are tried.
const MIN_LOG_TICKS: usize = 3;
/// Mantissas of log-axis labels, sparsest first: decades, 1-2-5, six per
/// decade, then fourteen (no two more than 1.25 apart, so even the
/// narrowest axis, one point padded by 1.25 each way, gets two labels).
const LOG_MANTISSAS: [&[f64]; 4] = [
    &[1.0],
    &[1.0, 2.0, 5.0],
    &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
    &[1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
];

/// Every `m x 10^k` in `lo..=hi` for the mantissas `m`, ascending.
fn decade_points(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    const TEN: f64 = 10.0;
    let mut out = Vec::new();
    // lo and hi are bounded by `check_plottable`, so this is a few dozen
    // decades at most.
    for k in (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32) {
        for m in mantissas {
            let v = m * TEN.powi(k);
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
    }
    out
}

/// At most [`MAX_TICKS`] of `points`, evenly thinned.
fn thin(points: Vec<f64>) -> Vec<f64> {
    let step = points.len().div_ceil(MAX_TICKS).max(1);
    points.into_iter().step_by(step).collect()
}

/// The labelled values of a log axis over `lo..hi`: the data's own x
/// values ([`Ticks::AtData`]), decades for percentiles (90%, 99%, 99.9%),
/// else round values (decades, 1-2-5 or finer, whichever first gives
/// [`MIN_LOG_TICKS`]), each label distinct.
fn log_key_points(lo: f64, hi: f64, ticks: Ticks, data: impl Iterator<Item = f64>) -> Vec<f64> {
    match ticks {
        Ticks::AtData => {
            let mut points: Vec<f64> = data.filter(|v| *v >= lo && *v <= hi).collect();
            points.sort_by(f64::total_cmp);
            points.dedup();
            thin(points)
        }
        Ticks::Percentile => thin(decade_points(lo, hi, LOG_MANTISSAS[0])),
        Ticks::Number | Ticks::Latency => {
            let mut best = Vec::new();
            for mantissas in LOG_MANTISSAS {
                best = decade_points(lo, hi, mantissas);
                if best.len() >= MIN_LOG_TICKS {
                    break;
                }
            }
            thin(best)
        }
    }
}

/// The one check of what a chart accepts, before any axis arithmetic:
/// every finite value within [`MAX_PLOT_VALUE`] in magnitude, and every
/// positive value on a log axis at least [`MIN_LOG_VALUE`]. (Non-finite and,
/// on log axes, non-positive values are left out of the axes as before.)
pub fn check_plottable(chart: &Chart) -> Result<()> {
    for s in &chart.series {
        for p in &s.points {
            for (axis, scale, v) in [
                ("x", chart.x_scale, p.x),
                ("y", chart.y_scale, p.y),
                ("y", chart.y_scale, p.lo),
                ("y", chart.y_scale, p.hi),
            ] {
                let log = scale != Scale::Linear;
                let too_small = log && v > 0.0 && v < MIN_LOG_VALUE;
                if v.is_finite() && (v.abs() > MAX_PLOT_VALUE || too_small) {
                    anyhow::bail!(
                        "`{}`: {} has the {axis} value {v:e}, outside what a chart can show; allowed: magnitudes up to {:e}{}",
                        chart.title,
                        s.name,
                        MAX_PLOT_VALUE,
                        if log { format!(" and, on this log axis, from {MIN_LOG_VALUE:e}") } else { String::new() }
                    );
                }
            }
        }
    }
    Ok(())
}

/// Draws `chart` into `root`.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<()>
where
    DB::ErrorType: 'static,
{
    check_plottable(chart)?;
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let (_, height) = root.dim_in_pixel();
    let (plot_area, caption_area) = root.split_vertically(height.saturating_sub(CAPTION_BAND_PX));
    caption_area
        .draw_text(
            &chart.caption,
            &(FONT, CAPTION_PX).into_font().color(&BLACK.mix(CAPTION_ALPHA)),
            (MARGIN_PX as i32, CAPTION_TOP_PX),
        )
        .map_err(|e| anyhow!("{e}"))?;
    let plot_area = plot_area.titled(&chart.title, (FONT, TITLE_PX)).map_err(|e| anyhow!("{e}"))?;
    let plot_area = legend(&plot_area, chart)?;
    let all = || chart.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = bounds(all().map(|p| p.x), chart.x_scale);
    let (y0, y1) = bounds(all().flat_map(|p| [p.y, p.lo, p.hi]), chart.y_scale);
    let x_keys = || log_key_points(x0, x1, chart.x_ticks, all().map(|p| p.x));
    let y_keys = || log_key_points(y0, y1, chart.y_ticks, all().map(|p| p.y));
    match (chart.x_scale, chart.y_scale) {
        (Scale::Log(bx), Scale::Log(by)) => plot(
            &plot_area,
            chart,
            (x0..x1).log_scale().base(bx).with_key_points(x_keys()),
            (y0..y1).log_scale().base(by).with_key_points(y_keys()),
        ),
        (Scale::Log(bx), Scale::Linear) => {
            plot(&plot_area, chart, (x0..x1).log_scale().base(bx).with_key_points(x_keys()), y0..y1)
        }
        (Scale::Linear, Scale::Log(by)) => {
            plot(&plot_area, chart, x0..x1, (y0..y1).log_scale().base(by).with_key_points(y_keys()))
        }
        (Scale::Linear, Scale::Linear) => plot(&plot_area, chart, x0..x1, y0..y1),
    }
}

/// Draws the legend in a column at the right of `area`, one row per
/// series (swatch, marker and name), and returns the rest of `area` for the
/// plot, so the legend never covers data.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    if chart.series.is_empty() {
        return Ok(area.clone());
    }
    let font: TextStyle = (FONT, LABEL_PX).into();
    let mut text_px = 0;
    for s in &chart.series {
        let (w, _) = area.estimate_text_size(&s.name, &font).map_err(|e| anyhow!("{e}"))?;
        text_px = text_px.max(w as i32);
    }
    let column = LEGEND_SWATCH_PX.0 + LEGEND_GAP_PX + text_px + 2 * MARGIN_PX as i32;
    let (width, _) = area.dim_in_pixel();
    let split = (width as i32 - column).max(width as i32 / 2);
    let (plot, column) = area.split_horizontally(split);
    for (row, s) in chart.series.iter().enumerate() {
        let (color, shape) = style(s.color_slot);
        let color = color.to_rgba();
        let y = MARGIN_PX as i32 + LEGEND_ROW_PX * row as i32 + LEGEND_ROW_PX / 2;
        let x = MARGIN_PX as i32 / 2;
        column
            .draw(&Rectangle::new(
                [(x, y - LEGEND_SWATCH_PX.1 / 2), (x + LEGEND_SWATCH_PX.0, y + LEGEND_SWATCH_PX.1 / 2)],
                color.filled(),
            ))
            .map_err(|e| anyhow!("{e}"))?;
        with_marker!(shape, (x + LEGEND_SWATCH_PX.0 / 2, y), color, |e| column.draw(&e)).map_err(|e| anyhow!("{e}"))?;
        let text_y = y - LABEL_PX as i32 / 2;
        column
            .draw_text(&s.name, &font.color(&BLACK), (x + LEGEND_SWATCH_PX.0 + LEGEND_GAP_PX, text_y))
            .map_err(|e| anyhow!("{e}"))?;
    }
    Ok(plot)
}

/// Draws every series of `chart`: band, line and markers (at every point,
/// or at [`DENSE_MARKERS`] evenly spaced ones on a dense curve).
fn draw_lines<'a, DB, CT>(ctx: &mut ChartContext<'a, DB, CT>, chart: &Chart) -> Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate<From = (f64, f64)>,
{
    for s in &chart.series {
        let (color, shape) = style(s.color_slot);
        let color = color.to_rgba();
        let spread = s.points.iter().any(|p| p.hi > p.lo);
        if spread && s.points.len() > 1 {
            let band: Vec<(f64, f64)> =
                s.points.iter().map(|p| (p.x, p.hi)).chain(s.points.iter().rev().map(|p| (p.x, p.lo))).collect();
            ctx.draw_series(std::iter::once(Polygon::new(band, color.mix(BAND_ALPHA).filled())))
                .map_err(|e| anyhow!("{e}"))?;
        }
        let line = s.points.iter().map(|p| (p.x, p.y));
        if s.dashed {
            let (dash, gap) = DASH_PX;
            ctx.draw_series(DashedLineSeries::new(line, dash, gap, color.stroke_width(LINE_WIDTH_PX)))
                .map_err(|e| anyhow!("{e}"))?;
        } else {
            ctx.draw_series(LineSeries::new(line, color.stroke_width(LINE_WIDTH_PX))).map_err(|e| anyhow!("{e}"))?;
        }
        let step = if chart.markers { 1 } else { s.points.len().div_ceil(DENSE_MARKERS).max(1) };
        for p in s.points.iter().step_by(step) {
            with_marker!(shape, (p.x, p.y), color, |e| ctx.draw_series(std::iter::once(e)))
                .map_err(|e| anyhow!("{e}"))?;
        }
    }
    Ok(())
}

fn plot<DB, X, Y>(area: &DrawingArea<DB, Shift>, chart: &Chart, x: X, y: Y) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin(MARGIN_PX)
        .x_label_area_size(X_LABEL_AREA_PX)
        .y_label_area_size(Y_LABEL_AREA_PX)
        .build_cartesian_2d(x, y)
        .map_err(|e| anyhow!("{e}"))?;
    let label = |ticks: Ticks, v: f64| match ticks {
        Ticks::Number | Ticks::AtData => number_label(v),
        Ticks::Percentile => percentile_label(v),
        Ticks::Latency => latency_tick(v),
    };
    let x_fmt = |v: &f64| label(chart.x_ticks, *v);
    let y_fmt = |v: &f64| label(chart.y_ticks, *v);
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_labels(MAX_TICKS)
        .y_labels(MAX_TICKS)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, LABEL_PX))
        .axis_desc_style((FONT, LABEL_PX))
        .light_line_style(WHITE)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    draw_lines(&mut ctx, chart)?;
    area.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

/// The chart as SVG text (for pages that inline it).
pub fn svg(chart: &Chart, size: (u32, u32)) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, chart).with_context(|| format!("cannot draw `{}`", chart.title))?;
    }
    Ok(svg)
}

/// Writes `<dir>/<stem>.svg` and `<dir>/<stem>.png`, each atomically.
pub fn write(dir: &Path, stem: &str, chart: &Chart, size: (u32, u32)) -> Result<Vec<PathBuf>> {
    let svg_path = dir.join(format!("{stem}.svg"));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, chart).with_context(|| format!("cannot draw `{}`", svg_path.display()))?;
    }
    write_output(&svg_path, marks::with_comment(Kind::Svg, &svg).as_bytes())?;
    let png_path = dir.join(format!("{stem}.png"));
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    draw(&BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(), chart)
        .with_context(|| format!("cannot draw `{}`", png_path.display()))?;
    write_output(&png_path, &marks::png(&rgb, size.0, size.1)?)?;
    Ok(vec![svg_path, png_path])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ten_series(markers: bool) -> Chart {
        let series = (0..10)
            .map(|i| Series {
                name: format!("series-{i}"),
                color_slot: i,
                points: (0..40)
                    .map(|k| {
                        let y = 100.0 + (k * (i + 1)) as f64;
                        Point { x: 1.0 + k as f64, y, lo: y, hi: y }
                    })
                    .collect(),
                dashed: false,
            })
            .collect();
        Chart {
            title: "ten".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            x_ticks: Ticks::Number,
            y_ticks: Ticks::Number,
            series,
            markers,
            caption: String::new(),
        }
    }

    /// The numbers in `attr="..."` of every `<tag` element of `svg`.
    fn attr_numbers(svg: &str, tag: &str, attr: &str) -> Vec<f64> {
        svg.split(&format!("<{tag} "))
            .skip(1)
            .filter_map(|e| {
                let head = e.split('>').next()?;
                let value = head.split(&format!("{attr}=\"")).nth(1)?.split('"').next()?;
                Some(value.split([' ', ',']).filter_map(|v| v.parse::<f64>().ok()).collect::<Vec<_>>())
            })
            .flatten()
            .collect()
    }

    #[test]
    fn the_legend_is_right_of_every_line() {
        // Before: the legend sat at the upper left, over the lines' first
        // points. Now every legend label starts right of every drawn point.
        register_embedded_font().unwrap();
        for markers in [true, false] {
            let svg = svg(&ten_series(markers), (800, 500)).unwrap();
            let rightmost_line =
                attr_numbers(&svg, "polyline", "points").chunks(2).map(|xy| xy[0]).fold(f64::NEG_INFINITY, f64::max);
            let labels: Vec<f64> = svg
                .split("<text ")
                .skip(1)
                .filter(|t| t.contains("series-"))
                .filter_map(|t| t.split("x=\"").nth(1)?.split('"').next()?.parse().ok())
                .collect();
            assert_eq!(labels.len(), 10, "one legend label per series");
            assert!(rightmost_line.is_finite());
            for x in labels {
                assert!(x > rightmost_line, "legend label at x {x} overlaps a line reaching x {rightmost_line}");
            }
        }
    }

    #[test]
    fn close_colours_get_different_shapes_and_no_two_slots_look_alike() {
        let distance = |a: RGBColor, b: RGBColor| {
            let d = |x: u8, y: u8| (f64::from(x) - f64::from(y)).powi(2);
            (d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)).sqrt()
        };
        // Pairs of the palette this close (blue/cyan, grey/olive, red/brown,
        // green/olive...) are hard to tell apart as thin lines.
        const CLOSE: f64 = 150.0;
        let mut close_pairs = 0;
        for i in 0..50 {
            for j in (i + 1)..50 {
                let ((ci, si), (cj, sj)) = (style(i), style(j));
                assert!(ci != cj || si != sj, "slots {i} and {j} share colour and shape");
                if i < 10 && j < 10 && distance(ci, cj) < CLOSE {
                    close_pairs += 1;
                    assert_ne!(si, sj, "slots {i} and {j} have close colours and the same shape");
                }
            }
        }
        assert!(close_pairs > 0, "the check saw close pairs");
    }

    #[test]
    fn dense_curves_still_show_their_shape() {
        register_embedded_font().unwrap();
        let svg = svg(&ten_series(false), (800, 500)).unwrap();
        // Slots 2 and 4 are triangles (polygons): a few per series on the
        // plot, and one in the legend each.
        let polygons = svg.matches("<polygon").count();
        assert!(polygons >= 2 * 2 && polygons <= 2 * (DENSE_MARKERS + 1) + 2, "{polygons} triangles");
    }

    #[test]
    fn latency_ticks_drop_trailing_zeros() {
        assert_eq!(latency_tick(100_000.0), "100ms");
        assert_eq!(latency_tick(1_000_000.0), "1s");
        assert_eq!(latency_tick(2_500.0), "2.5ms");
        assert_eq!(latency_tick(250.0), "250µs");
        assert_eq!(latency_tick(10.0), "10µs");
    }

    #[test]
    fn percentile_ticks() {
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(2.0), "50%");
    }

    #[test]
    fn values_beyond_the_bounds_are_refused_by_name() {
        let point = |y: f64| Point { x: 2.0, y, lo: y, hi: y };
        let chart = |y: f64| Chart {
            title: "t".into(),
            x_label: String::new(),
            y_label: String::new(),
            x_scale: Scale::Log(2.0),
            y_scale: Scale::Log(10.0),
            x_ticks: Ticks::Number,
            y_ticks: Ticks::Latency,
            series: vec![Series {
                name: "tokio".into(),
                color_slot: 0,
                points: vec![point(1.0), point(y)],
                dashed: false,
            }],
            markers: true,
            caption: String::new(),
        };
        check_plottable(&chart(1e12)).unwrap();
        let err = format!("{:#}", check_plottable(&chart(1e280)).unwrap_err());
        assert!(err.contains("1e280") && err.contains("tokio") && err.contains("1e15"), "{err}");
        assert!(check_plottable(&chart(1e-12)).is_err());
        // Left out of the axes, not refused.
        check_plottable(&chart(f64::NAN)).unwrap();
        check_plottable(&chart(0.0)).unwrap();
    }

    #[test]
    fn log_axes_get_round_distinct_labels() {
        // Data of 3..7 ms: no decade inside, so 1-2-5 then finer mantissas.
        let keys = log_key_points(2_400.0, 14_000.0, Ticks::Latency, std::iter::empty());
        assert_eq!(keys, [3_000.0, 5_000.0, 7_000.0, 10_000.0]);
        let labels: Vec<String> = keys.iter().map(|v| latency_tick(*v)).collect();
        assert_eq!(labels, ["3ms", "5ms", "7ms", "10ms"]);
        // A wide range: decades only.
        assert_eq!(log_key_points(5.0, 20_000.0, Ticks::Latency, std::iter::empty()), [10.0, 100.0, 1_000.0, 10_000.0]);
        // Workers: exactly the counts measured.
        assert_eq!(log_key_points(0.8, 2.5, Ticks::AtData, [1.0, 2.0, 1.0, 2.0].into_iter()), [1.0, 2.0]);
        // Percentiles: 90%, 99%, ... never 83.3333%.
        let p = log_key_points(1.0, 2e4, Ticks::Percentile, std::iter::empty());
        let labels: Vec<String> = p.iter().map(|v| percentile_label(*v)).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
        assert!(log_key_points(1e-9, 1e30, Ticks::Latency, std::iter::empty()).len() <= MAX_TICKS);
    }

    #[test]
    fn the_narrowest_log_axis_gets_two_labels() {
        // One value padded by LOG_PAD each way, anywhere in a decade: before
        // 1.8 and 3.5 joined the mantissas, 1.21..1.89 held only 1.5.
        for i in 0..1000 {
            let v = 1.0 + 9.0 * f64::from(i) / 1000.0;
            let (lo, hi) = bounds([v].into_iter(), Scale::Log(10.0));
            let keys = log_key_points(lo, hi, Ticks::Latency, std::iter::empty());
            assert!(keys.len() >= 2, "{v}: {lo}..{hi} gets {keys:?}");
        }
    }

    #[test]
    fn bounds_pad_and_respect_log_axes() {
        assert_eq!(bounds([1.0, 4.0].into_iter(), Scale::Linear).0, 0.0);
        let (lo, hi) = bounds([0.0, 2.0, 8.0].into_iter(), Scale::Log(2.0));
        assert!(lo > 0.0 && lo < 2.0 && hi > 8.0, "{lo} {hi}");
        assert_eq!(bounds(std::iter::empty(), Scale::Linear), (0.0, 1.0));
        // Only the padding: nothing is reserved above the data for a
        // legend, which has its own column.
        let (lo, hi) = bounds([10.0].into_iter(), Scale::Linear);
        assert!((lo, hi) == (0.0, 10.0 * (1.0 + LINEAR_PAD)), "{lo} {hi}");
        let (lo, hi) = bounds([1.0, 100.0].into_iter(), Scale::Log(10.0));
        let span = (100.0 * LOG_PAD) / (1.0 / LOG_PAD);
        assert!(((hi / lo) / span - 1.0).abs() < 1e-9, "{lo} {hi}");
    }
}
