//! A small SVG writer for the command line's figures (std only, no dependencies):
//!
//! - [`histogram_svg`]: a histogram of positive values on a log₁₀ x-axis with labelled
//!   vertical marker lines (the per-example MSE lower bounds of Guo et al. 2022, Fig. 2);
//! - [`curve_plot_svg`]: bounds (lines) and measured rates with intervals (markers with error
//!   bars) against ε on a log₂ axis (Hayes et al. 2023, Fig. 2);
//! - [`image_grid_svg`]: rows of small images drawn as `<rect>` pixels with a caption under
//!   each image and a label per row (Guo et al. 2022, Fig. 6: highest and lowest dFIL;
//!   Fig. 4: targets over their reconstructions);
//! - [`scatter_svg`]: points on log₁₀–log₁₀ axes with the line y = x, the points below it
//!   in red (Guo et al. 2022, Fig. 3: realised MSE of the GLM attack against the FIL bound).
//!
//! Output is deterministic: the same input gives the same bytes (coordinates with two
//! decimals, colours as `#rrggbb`, no time stamps). Text is escaped for XML.

use std::format;
use std::string::String;
use std::vec::Vec;

/// Width of the histogram's canvas.
const WIDTH: f64 = 760.0;
/// The plot area: margins left and right, its height, the band below it (ticks, x label).
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const PLOT_H: f64 = 330.0;
const BOTTOM: f64 = 64.0;
/// Above the plot area: title and subtitle, then one legend row per marker.
const HEAD: f64 = 62.0;
const LEGEND_ROW: f64 = 18.0;
const BAR_FILL: &str = "#4c72b0";
/// Colours of the marker lines, in the order the markers are given (then repeated).
const MARKER_COLOURS: [&str; 4] = ["#c44e52", "#2ca02c", "#8172b2", "#ff7f0e"];

/// A labelled vertical line of the histogram, at `value` (on the data's scale, not log₁₀).
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    /// Where the line is (> 0 and finite to be drawn).
    pub value: f64,
    /// Its legend text.
    pub label: String,
}

/// A histogram on a log₁₀ scale: `counts.len()` equal bins over [`lo`, `hi`] (log₁₀ of the
/// smallest and largest positive finite value).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogHistogram {
    /// log₁₀ of the left edge of the first bin.
    pub lo: f64,
    /// log₁₀ of the right edge of the last bin.
    pub hi: f64,
    /// Values per bin; they sum to the number of positive finite values.
    pub counts: Vec<u64>,
    /// Values left out: not finite or ≤ 0 (no place on a log axis).
    pub skipped: usize,
}

/// Bins the positive finite `values` into `bins` (≥ 1) equal bins of log₁₀(value) over
/// [min, max]; the last bin includes its right edge. All values equal: one bin holds them
/// all, centred in a range of ±0.05 decades. No positive finite value: all counts 0 over [0, 1].
pub(crate) fn log_histogram(values: &[f64], bins: usize) -> LogHistogram {
    let bins = bins.max(1);
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|&v| libm::log10(v))
        .collect();
    let skipped = values.len() - logs.len();
    let mut counts = std::vec![0u64; bins];
    let (Some(min), Some(max)) = (
        logs.iter().copied().reduce(f64::min),
        logs.iter().copied().reduce(f64::max),
    ) else {
        return LogHistogram {
            lo: 0.0,
            hi: 1.0,
            counts,
            skipped,
        };
    };
    let (lo, hi) = if max > min {
        (min, max)
    } else {
        (min - 0.05, max + 0.05)
    };
    let width = hi - lo;
    for &l in &logs {
        let k = libm::floor((l - lo) / width * bins as f64);
        let k = if k.is_finite() && k > 0.0 {
            (k as usize).min(bins - 1)
        } else {
            0
        };
        if let Some(c) = counts.get_mut(k) {
            *c += 1;
        }
    }
    LogHistogram {
        lo,
        hi,
        counts,
        skipped,
    }
}

/// What [`histogram_svg`] draws.
#[derive(Debug, Clone)]
pub(crate) struct HistogramPlot<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// A smaller second line under the title (may be empty).
    pub subtitle: &'a str,
    /// Label of the x-axis (the values' meaning; the axis is log₁₀).
    pub x_label: &'a str,
    /// Label of the y-axis.
    pub y_label: &'a str,
    /// The values (non-positive and non-finite ones are left out and counted in a note).
    pub values: &'a [f64],
    /// Number of bins.
    pub bins: usize,
    /// Labelled vertical lines.
    pub markers: &'a [Marker],
}

/// The decade range [floor, ceil] of the x-axis: covers the bins and the drawable markers.
fn x_range(h: &LogHistogram, markers: &[Marker], has_values: bool) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    if has_values {
        lo = h.lo;
        hi = h.hi;
    }
    for m in markers.iter().filter(|m| drawable(m.value)) {
        let l = libm::log10(m.value);
        lo = lo.min(l);
        hi = hi.max(l);
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return (-1.0, 1.0);
    }
    let (a, b) = (libm::floor(lo), libm::ceil(hi));
    if b > a {
        (a, b)
    } else {
        (a, a + 1.0)
    }
}

fn drawable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// x pixel of log₁₀-value `l` on an axis over [a, b].
fn x_pixel(l: f64, a: f64, b: f64) -> f64 {
    LEFT + (l - a) / (b - a) * (WIDTH - LEFT - RIGHT)
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving at most 8 intervals up to `max`.
fn count_step(max: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1u64, 2, 5] {
            let s = step.saturating_mul(m);
            if max.div_ceil(s) <= 8 {
                return s;
            }
        }
        if step > u64::MAX / 10 {
            return u64::MAX;
        }
        step *= 10;
    }
}

/// The histogram of Guo et al. 2022 Fig. 2: bars of [`log_histogram`] on a log₁₀ x-axis
/// with ticks at powers of ten, counts on the y-axis, dashed marker lines (class `marker`,
/// in the order given) and a legend naming them, title and axis labels. Each bar is a
/// `<rect class="bar" data-count="…">`.
pub(crate) fn histogram_svg(plot: &HistogramPlot<'_>) -> String {
    let h = log_histogram(plot.values, plot.bins);
    let total: u64 = h.counts.iter().sum();
    let (a, b) = x_range(&h, plot.markers, total > 0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = PLOT_H;
    let top = HEAD + LEGEND_ROW * plot.markers.len() as f64 + 10.0;
    let height = top + plot_h + BOTTOM;
    let y0 = top + plot_h; // pixel of count 0
    let max_count = h.counts.iter().copied().max().unwrap_or(0).max(1);
    let step = count_step(max_count);
    let y_max = max_count.div_ceil(step).saturating_mul(step).max(1);
    let y_pixel = |c: u64| y0 - c as f64 / y_max as f64 * plot_h;

    let mut s = canvas(WIDTH, height, plot.title, plot.subtitle);

    // Grid lines and y ticks.
    s.push_str("<g font-size=\"12\">\n");
    let mut c = 0u64;
    while c <= y_max {
        grid_line(&mut s, y_pixel(c), plot_w, Some(&format!("{c}")));
        match c.checked_add(step) {
            Some(n) => c = n,
            None => break,
        }
    }
    // x ticks at powers of ten (every k-th decade if there are many).
    let decades = (b - a) as u64;
    let every = decades.div_ceil(10).max(1);
    let mut k = 0u64;
    while k <= decades {
        let e = a + k as f64;
        let x = x_pixel(e, a, b);
        x_tick(&mut s, x, y0, &power_of_ten(e as i64));
        k += every;
    }
    s.push_str("</g>\n");

    // Bars.
    let n_bins = h.counts.len().max(1) as f64;
    let bin_w = (h.hi - h.lo) / n_bins;
    s.push_str(&format!(
        "<g fill=\"{BAR_FILL}\" stroke=\"#ffffff\" stroke-width=\"0.5\">\n"
    ));
    if total > 0 {
        for (i, &count) in h.counts.iter().enumerate() {
            let x0 = x_pixel(h.lo + i as f64 * bin_w, a, b);
            let x1 = x_pixel(h.lo + (i + 1) as f64 * bin_w, a, b);
            let top = y_pixel(count);
            s.push_str(&format!(
                "<rect class=\"bar\" data-count=\"{count}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                num(x0),
                num(top),
                num((x1 - x0).max(0.0)),
                num(y0 - top)
            ));
        }
    }
    s.push_str("</g>\n");

    // Axes.
    axes(
        &mut s,
        top,
        y0,
        plot_w,
        plot_h,
        height,
        plot.x_label,
        plot.y_label,
    );

    // Marker lines and the legend.
    let mut legend_y = HEAD + 12.0;
    for (i, m) in plot.markers.iter().enumerate() {
        let colour = MARKER_COLOURS
            .get(i % MARKER_COLOURS.len())
            .copied()
            .unwrap_or("#000000");
        let shown = drawable(m.value);
        if shown {
            let x = x_pixel(libm::log10(m.value), a, b);
            s.push_str(&format!(
                "<line class=\"marker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                num(x),
                num(top),
                num(x),
                num(y0)
            ));
        }
        let label = if shown {
            m.label.clone()
        } else {
            format!("{} (not drawn)", m.label)
        };
        legend_line(
            &mut s,
            legend_y,
            Stroke {
                colour,
                dash: "6 4",
            },
            &label,
        );
        legend_y += 18.0;
    }
    let mut note = format!("n = {total}");
    if h.skipped > 0 {
        note.push_str(&format!(
            ", {} not shown (no finite positive value)",
            h.skipped
        ));
    }
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555555\">{}</text>\n",
        num(LEFT + plot_w),
        num(top - 6.0),
        escape(&note)
    ));
    s.push_str("</svg>\n");
    s
}

/// A tick on the x-axis at pixel `x` (the axis at `y0`) with its label (SVG text, escaped).
fn x_tick(s: &mut String, x: f64, y0: f64, label: &str) {
    s.push_str(&format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000000\"/>\n",
        num(x),
        num(y0),
        num(x),
        num(y0 + 5.0)
    ));
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>\n",
        num(x),
        num(y0 + 20.0)
    ));
}

/// The x- and y-axis lines of a plot area `plot_w` × `plot_h` whose top is at `top` and
/// bottom at `y0`, the x label centred under it and the y label rotated at its left.
#[allow(clippy::too_many_arguments)]
fn axes(
    s: &mut String,
    top: f64,
    y0: f64,
    plot_w: f64,
    plot_h: f64,
    height: f64,
    x_label: &str,
    y_label: &str,
) {
    s.push_str(&format!(
        "<path d=\"M{} {}V{}H{}\" fill=\"none\" stroke=\"#000000\"/>\n",
        num(LEFT),
        num(top),
        num(y0),
        num(LEFT + plot_w)
    ));
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
        num(LEFT + plot_w / 2.0),
        num(height - 18.0),
        escape(x_label)
    ));
    s.push_str(&format!(
        "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 18 {})\">{}</text>\n",
        num(top + plot_h / 2.0),
        num(top + plot_h / 2.0),
        escape(y_label)
    ));
}

/// The title (bold, 16 px) and subtitle (12 px) centred on a canvas `width` wide, each
/// shrunk to fit (at about 0.6 em per character).
fn titles(s: &mut String, width: f64, title: &str, subtitle: &str) {
    let fit = |text: &str, size: f64| {
        let chars = text.chars().count().max(1) as f64;
        libm::floor((width - 20.0) / (0.6 * chars)).clamp(6.0, size)
    };
    s.push_str(&format!(
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\">{}</text>\n",
        num(width / 2.0),
        fit(title, 16.0),
        escape(title)
    ));
    if !subtitle.is_empty() {
        s.push_str(&format!(
            "<text x=\"{}\" y=\"44\" text-anchor=\"middle\" font-size=\"{}\" fill=\"#333333\">{}</text>\n",
            num(width / 2.0),
            fit(subtitle, 12.0),
            escape(subtitle)
        ));
    }
}

/// `10^e` as SVG text with a superscript exponent (Unicode minus).
fn power_of_ten(e: i64) -> String {
    let exp = if e < 0 {
        format!("\u{2212}{}", e.unsigned_abs())
    } else {
        format!("{e}")
    };
    format!("10<tspan dy=\"-6\" font-size=\"9\">{exp}</tspan>")
}

/// Height of the scatter plot's square-ish plot area.
const SCATTER_H: f64 = 460.0;
const POINT_FILL: &str = "#4c72b0";
const BELOW_FILL: &str = "#d62728";

/// What [`scatter_svg`] draws.
#[derive(Debug, Clone)]
pub(crate) struct ScatterPlot<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// A smaller second line under the title (may be empty).
    pub subtitle: &'a str,
    /// Label of the x-axis (log₁₀).
    pub x_label: &'a str,
    /// Label of the y-axis (log₁₀).
    pub y_label: &'a str,
    /// The points (x, y); those with a coordinate ≤ 0 or not finite are left out and counted.
    pub points: &'a [(f64, f64)],
    /// Legend text of the line y = x.
    pub diagonal_label: &'a str,
    /// Legend text of the points below y = x (drawn red); the count is appended.
    pub below_label: &'a str,
    /// Labelled vertical lines (at x values).
    pub markers: &'a [Marker],
}

/// The decade range [floor, ceil] of positive finite `values` (at least one decade wide).
fn decade_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| drawable(*v)) {
        let l = libm::log10(v);
        lo = lo.min(l);
        hi = hi.max(l);
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return (-1.0, 1.0);
    }
    let (a, b) = (libm::floor(lo), libm::ceil(hi));
    if b > a {
        (a, b)
    } else {
        (a, a + 1.0)
    }
}

/// Guo et al. 2022 Fig. 3: a scatter plot on log₁₀ axes (ticks at powers of ten), the line
/// y = x (class `diagonal`, clipped to the plot), each point a `<circle class="point">` or,
/// below the line, `<circle class="point below">` in red; dashed vertical markers and a
/// legend. Deterministic.
pub(crate) fn scatter_svg(plot: &ScatterPlot<'_>) -> String {
    let shown: Vec<(f64, f64)> = plot
        .points
        .iter()
        .copied()
        .filter(|&(x, y)| drawable(x) && drawable(y))
        .collect();
    let skipped = plot.points.len() - shown.len();
    let below = shown.iter().filter(|(x, y)| y < x).count();
    let (xa, xb) = decade_range(
        shown
            .iter()
            .map(|p| p.0)
            .chain(plot.markers.iter().map(|m| m.value)),
    );
    let (ya, yb) = decade_range(shown.iter().map(|p| p.1));
    let plot_w = WIDTH - LEFT - RIGHT;
    let legend_rows = 2 + plot.markers.len();
    let top = HEAD + LEGEND_ROW * legend_rows as f64 + 10.0;
    let height = top + SCATTER_H + BOTTOM;
    let y0 = top + SCATTER_H;
    let px = |l: f64| x_pixel(l, xa, xb);
    let py = |l: f64| y0 - (l - ya) / (yb - ya) * SCATTER_H;

    let mut s = canvas(WIDTH, height, plot.title, plot.subtitle);

    // Grid lines and ticks at powers of ten on both axes.
    s.push_str("<g font-size=\"12\">\n");
    let x_decades = (xb - xa) as u64;
    let x_every = x_decades.div_ceil(10).max(1);
    let mut k = 0u64;
    while k <= x_decades {
        let e = xa + k as f64;
        let x = px(e);
        s.push_str(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e8e8e8\"/>\n",
            num(x),
            num(top),
            num(x),
            num(y0)
        ));
        x_tick(&mut s, x, y0, &power_of_ten(e as i64));
        k += x_every;
    }
    let y_decades = (yb - ya) as u64;
    let y_every = y_decades.div_ceil(12).max(1);
    let mut k = 0u64;
    while k <= y_decades {
        let e = ya + k as f64;
        let y = py(e);
        s.push_str(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e8e8e8\"/>\n<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000000\"/>\n",
            num(LEFT),
            num(y),
            num(LEFT + plot_w),
            num(y),
            num(LEFT - 5.0),
            num(y),
            num(LEFT),
            num(y)
        ));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
            num(LEFT - 8.0),
            num(y + 4.0),
            power_of_ten(e as i64)
        ));
        k += y_every;
    }
    s.push_str("</g>\n");

    // Axes and labels.
    axes(
        &mut s,
        top,
        y0,
        plot_w,
        SCATTER_H,
        height,
        plot.x_label,
        plot.y_label,
    );

    // y = x over the part of the plot where both axes overlap.
    let (lo, hi) = (xa.max(ya), xb.min(yb));
    let diagonal = hi > lo;
    if diagonal {
        s.push_str(&format!(
            "<line class=\"diagonal\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000000\" stroke-width=\"1.5\"/>\n",
            num(px(lo)),
            num(py(lo)),
            num(px(hi)),
            num(py(hi))
        ));
    }
    // Markers.
    for (i, m) in plot.markers.iter().enumerate() {
        if drawable(m.value) {
            let colour = MARKER_COLOURS
                .get((i + 1) % MARKER_COLOURS.len())
                .copied()
                .unwrap_or("#000000");
            let x = px(libm::log10(m.value));
            s.push_str(&format!(
                "<line class=\"marker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                num(x),
                num(top),
                num(x),
                num(y0)
            ));
        }
    }
    // Points: those above the line first, so the red ones stay visible.
    s.push_str("<g fill-opacity=\"0.75\">\n");
    for want_below in [false, true] {
        for &(x, y) in shown.iter().filter(|(x, y)| (y < x) == want_below) {
            let (class, fill) = if want_below {
                ("point below", BELOW_FILL)
            } else {
                ("point", POINT_FILL)
            };
            s.push_str(&format!(
                "<circle class=\"{class}\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{fill}\"/>\n",
                num(px(libm::log10(x))),
                num(py(libm::log10(y)))
            ));
        }
    }
    s.push_str("</g>\n");

    // Legend.
    let lx = LEFT + 10.0;
    let mut ly = HEAD + 12.0;
    let mut legend = |s: &mut String, symbol: String, text: String| {
        s.push_str(&symbol.replace("{Y}", &num(ly - 4.0)));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n",
            num(lx + 30.0),
            num(ly),
            escape(&text)
        ));
        ly += LEGEND_ROW;
    };
    let diag_text = if diagonal {
        String::from(plot.diagonal_label)
    } else {
        format!("{} (outside the axes)", plot.diagonal_label)
    };
    legend(
        &mut s,
        format!(
            "<line x1=\"{}\" y1=\"{{Y}}\" x2=\"{}\" y2=\"{{Y}}\" stroke=\"#000000\" stroke-width=\"1.5\"/>\n",
            num(lx),
            num(lx + 24.0)
        ),
        diag_text,
    );
    legend(
        &mut s,
        format!(
            "<circle cx=\"{}\" cy=\"{{Y}}\" r=\"4\" fill=\"{BELOW_FILL}\"/>\n",
            num(lx + 12.0)
        ),
        format!("{} ({below})", plot.below_label),
    );
    for (i, m) in plot.markers.iter().enumerate() {
        let colour = MARKER_COLOURS
            .get((i + 1) % MARKER_COLOURS.len())
            .copied()
            .unwrap_or("#000000");
        let text = if drawable(m.value) {
            m.label.clone()
        } else {
            format!("{} (not drawn)", m.label)
        };
        legend(
            &mut s,
            format!(
                "<line x1=\"{}\" y1=\"{{Y}}\" x2=\"{}\" y2=\"{{Y}}\" stroke=\"{colour}\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                num(lx),
                num(lx + 24.0)
            ),
            text,
        );
    }
    let mut note = format!("n = {}", shown.len());
    if skipped > 0 {
        note.push_str(&format!(", {skipped} not shown (no finite positive value)"));
    }
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555555\">{}</text>\n",
        num(LEFT + plot_w),
        num(top - 6.0),
        escape(&note)
    ));
    s.push_str("</svg>\n");
    s
}

/// One image of a grid with its caption.
#[derive(Debug, Clone)]
pub(crate) struct GridImage<'a> {
    /// channels × height × width values in [0, 1], channel-major (CHW) as in `Dataset`;
    /// values outside are clamped, non-finite ones drawn black.
    pub pixels: &'a [f64],
    /// Text under the image.
    pub caption: String,
}

/// One labelled row of a grid.
#[derive(Debug, Clone)]
pub(crate) struct GridRow<'a> {
    /// Text left of the row.
    pub label: String,
    /// The images, left to right.
    pub images: Vec<GridImage<'a>>,
}

/// What [`image_grid_svg`] draws.
#[derive(Debug, Clone)]
pub(crate) struct ImageGrid<'a> {
    /// Title above the grid.
    pub title: &'a str,
    /// A smaller second line under the title (may be empty).
    pub subtitle: &'a str,
    /// (channels, height, width) of every image; channels 1 (grey) or 3 (RGB).
    pub shape: (usize, usize, usize),
    /// The rows, top to bottom.
    pub rows: Vec<GridRow<'a>>,
}

const GRID_LABEL_W: usize = 140;
const GRID_MARGIN: usize = 16;
const GRID_TITLE_H: usize = 60;
const GRID_CAPTION_H: usize = 22;
const GRID_MIN_CELL_W: usize = 124;
const GRID_GAP: usize = 12;

/// Rows of images (Guo et al. 2022 Fig. 6): each image a `<g class="image">` of `<rect>`
/// pixels (runs of equal colour in a row merged into one rect, on a black background),
/// scaled to about 96 pixels, its caption below it, the row label at the left.
///
/// # Errors
/// A shape with a zero dimension or channels other than 1 and 3, or an image whose length
/// is not channels·height·width.
pub(crate) fn image_grid_svg(grid: &ImageGrid<'_>) -> Result<String, String> {
    let (c, h, w) = grid.shape;
    if h == 0 || w == 0 || !(c == 1 || c == 3) {
        return Err(format!(
            "image shape {c}×{h}×{w}: needs 1 or 3 channels and nonzero height and width"
        ));
    }
    let len = c
        .checked_mul(h)
        .and_then(|x| x.checked_mul(w))
        .ok_or_else(|| String::from("image shape overflows"))?;
    for row in &grid.rows {
        if let Some(bad) = row.images.iter().find(|im| im.pixels.len() != len) {
            return Err(format!(
                "an image has {} values; the shape {c}×{h}×{w} needs {len}",
                bad.pixels.len()
            ));
        }
    }
    let scale = (96 / h.max(w)).max(1);
    let (img_w, img_h) = (w * scale, h * scale);
    let cell_w = img_w.max(GRID_MIN_CELL_W) + GRID_GAP;
    let cell_h = img_h + GRID_CAPTION_H + GRID_GAP;
    let cols = grid.rows.iter().map(|r| r.images.len()).max().unwrap_or(0);
    let width = 2 * GRID_MARGIN + GRID_LABEL_W + cols.max(1) * cell_w;
    let height = GRID_TITLE_H + grid.rows.len().max(1) * cell_h + GRID_MARGIN;

    let mut s = header(width as f64, height as f64);
    s.push_str(&format!(
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>\n"
    ));
    titles(&mut s, width as f64, grid.title, grid.subtitle);
    for (r, row) in grid.rows.iter().enumerate() {
        let top = GRID_TITLE_H + r * cell_h;
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
            GRID_MARGIN,
            top + img_h / 2 + 4,
            escape(&row.label)
        ));
        for (i, im) in row.images.iter().enumerate() {
            let cell_left = GRID_MARGIN + GRID_LABEL_W + i * cell_w;
            let left = cell_left + (cell_w - GRID_GAP - img_w) / 2;
            s.push_str(&format!(
                "<g class=\"image\" transform=\"translate({left} {top}) scale({scale})\" shape-rendering=\"crispEdges\">\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#000000\"/>\n"
            ));
            pixel_rects(&mut s, im.pixels, (c, h, w));
            s.push_str("</g>\n");
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
                cell_left + (cell_w - GRID_GAP) / 2,
                top + img_h + 15,
                escape(&im.caption)
            ));
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// One byte per channel: round(255·clamp(x, 0, 1)); non-finite → 0.
fn byte(x: f64) -> u8 {
    if x.is_finite() {
        libm::round(x.clamp(0.0, 1.0) * 255.0) as u8
    } else {
        0
    }
}

/// The `<rect>`s of one image (in pixel units), one per run of equal non-black colour.
fn pixel_rects(s: &mut String, pixels: &[f64], (c, h, w): (usize, usize, usize)) {
    let plane = h * w;
    let colour = |y: usize, x: usize| -> [u8; 3] {
        let at = |ch: usize| byte(pixels.get(ch * plane + y * w + x).copied().unwrap_or(0.0));
        if c == 3 {
            [at(0), at(1), at(2)]
        } else {
            let g = at(0);
            [g, g, g]
        }
    };
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let col = colour(y, x);
            let mut end = x + 1;
            while end < w && colour(y, end) == col {
                end += 1;
            }
            if col != [0, 0, 0] {
                s.push_str(&format!(
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"1\" fill=\"#{:02x}{:02x}{:02x}\"/>\n",
                    end - x,
                    col[0],
                    col[1],
                    col[2]
                ));
            }
            x = end;
        }
    }
}

/// A canvas `width` × `height` with a white background, the title and the subtitle.
fn canvas(width: f64, height: f64, title: &str, subtitle: &str) -> String {
    let mut s = header(width, height);
    s.push_str(&format!(
        "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
        num(width),
        num(height)
    ));
    titles(&mut s, width, title, subtitle);
    s
}

/// A horizontal grid line across a plot area `plot_w` wide at pixel `y`, with its tick label
/// (SVG text, escaped) left of the y-axis if given.
fn grid_line(s: &mut String, y: f64, plot_w: f64, label: Option<&str>) {
    s.push_str(&format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e0e0e0\"/>\n",
        num(LEFT),
        num(y),
        num(LEFT + plot_w),
        num(y)
    ));
    if let Some(label) = label {
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>\n",
            num(LEFT - 6.0),
            num(y + 4.0)
        ));
    }
}

fn header(width: f64, height: f64) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
        w = num(width),
        h = num(height)
    )
}

/// How a line is drawn: its colour and dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stroke {
    /// `#rrggbb`.
    pub colour: &'static str,
    /// SVG dash pattern (`""` for solid).
    pub dash: &'static str,
}

/// A certified bound: solid red.
pub(crate) const CERTIFIED: Stroke = Stroke {
    colour: "#c44e52",
    dash: "",
};
/// A bound from RDP: dashed purple.
pub(crate) const FROM_RDP: Stroke = Stroke {
    colour: "#8172b2",
    dash: "6 4",
};
/// A baseline or a reference value: dotted grey.
pub(crate) const REFERENCE: Stroke = Stroke {
    colour: "#555555",
    dash: "2 3",
};

/// A curve of [`curve_plot_svg`]: a line through `points` (x, y), dashed or solid.
#[derive(Debug, Clone)]
pub(crate) struct Curve {
    /// Legend text.
    pub label: String,
    /// (x, y) in data units, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Its line.
    pub stroke: Stroke,
}

/// Measured values with intervals: a marker at each estimate with an error bar.
#[derive(Debug, Clone)]
pub(crate) struct Estimates {
    /// Legend text.
    pub label: String,
    /// (x, estimate, lower, upper) in data units.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// `#rrggbb`.
    pub colour: &'static str,
}

/// The texts of a plot: its title and subtitle, its axes' labels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Titles<'a> {
    /// Title.
    pub title: &'a str,
    /// Second line under the title (may be empty).
    pub subtitle: &'a str,
    /// x-axis label.
    pub x_label: &'a str,
    /// y-axis label.
    pub y_label: &'a str,
}

/// What [`curve_plot_svg`] draws: curves and estimates over a log₂ x-axis (the privacy
/// parameter ε of Hayes et al. 2023 Fig. 2) and a linear y-axis over [0, 1] (probabilities).
#[derive(Debug, Clone)]
pub(crate) struct CurvePlot<'a> {
    /// Title, subtitle, axis labels.
    pub titles: Titles<'a>,
    /// Lines (bounds).
    pub curves: Vec<Curve>,
    /// Markers with error bars (attack success rates).
    pub estimates: Vec<Estimates>,
    /// The top of the y-axis (1 for probabilities; the axis runs from 0).
    pub y_max: f64,
    /// x ticks at the powers of ten spanned (labels 0.0001, 0.001, …) instead of two.
    pub decades: bool,
    /// A log₁₀ y-axis from the decade below the smallest positive y drawn (at least 1e-12)
    /// up to `y_max`, ticks at the powers of ten (an ROC on log–log axes: the low-FPR
    /// region is not a flat line at 0); values ≤ 0 sit on the bottom edge.
    pub y_log: bool,
}

/// Bounds and measured rates against ε (Hayes et al. 2023 Fig. 2): each curve a `<path
/// class="curve">`, each estimate a `<circle class="estimate" data-y="…">` with a vertical
/// error bar (the series side by side, 8 px apart), ticks at the powers of two spanned by the
/// x values (x > 0; others dropped), y from 0 to 1, a legend.
pub(crate) fn curve_plot_svg(plot: &CurvePlot<'_>) -> String {
    let xs: Vec<f64> = plot
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .chain(
            plot.estimates
                .iter()
                .flat_map(|e| e.points.iter().map(|p| p.0)),
        )
        .filter(|&x| drawable(x))
        .collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // the axis in log₂ units; with `decades`, from one power of ten to another
    let (l2lo, l2hi) = if plot.decades {
        let k = libm::log2(10.0);
        (
            libm::floor(libm::log10(lo)) * k,
            libm::ceil(libm::log10(hi)) * k,
        )
    } else {
        (libm::floor(libm::log2(lo)), libm::ceil(libm::log2(hi)))
    };
    let (a, b) = if lo.is_finite() && hi.is_finite() {
        let (a, b) = (l2lo, l2hi);
        if b > a {
            (a, b)
        } else {
            (a - 1.0, b + 1.0)
        }
    } else {
        (0.0, 1.0)
    };
    let entries = plot.curves.len() + plot.estimates.len();
    let plot_w = WIDTH - LEFT - RIGHT;
    let top = HEAD + LEGEND_ROW * entries as f64 + 10.0;
    let height = top + PLOT_H + BOTTOM;
    let y0 = top + PLOT_H;
    let px = |x: f64| LEFT + (libm::log2(x) - a) / (b - a) * plot_w;
    let y_max = if plot.y_max > 0.0 && plot.y_max.is_finite() {
        plot.y_max
    } else {
        1.0
    };
    // the log axis: from the decade below the smallest positive y drawn
    let y_floor = if plot.y_log {
        let smallest = plot
            .curves
            .iter()
            .flat_map(|c| c.points.iter().filter(|p| drawable(p.0)).map(|p| p.1))
            .chain(
                plot.estimates
                    .iter()
                    .flat_map(|e| e.points.iter().filter(|p| drawable(p.0)).map(|p| p.2)),
            )
            .filter(|&y| y > 0.0 && y.is_finite())
            .fold(y_max, f64::min);
        libm::floor(libm::log10(smallest.max(1e-12))).min(libm::log10(y_max) - 1.0)
    } else {
        0.0
    };
    let y_top = libm::log10(y_max);
    let py = |y: f64| {
        if plot.y_log {
            let l = if y > 0.0 { libm::log10(y) } else { y_floor };
            y0 - ((l - y_floor) / (y_top - y_floor)).clamp(0.0, 1.0) * PLOT_H
        } else {
            y0 - (y / y_max).clamp(0.0, 1.0) * PLOT_H
        }
    };

    let mut s = canvas(WIDTH, height, plot.titles.title, plot.titles.subtitle);
    s.push_str("<g font-size=\"12\">\n");
    if plot.y_log {
        // one grid line a decade, labelled 1e-6 … 1 (every other one past six decades)
        let decades = (y_top - y_floor).round() as i32;
        for k in 0..=decades {
            let e = y_floor + f64::from(k);
            let y = libm::pow(10.0, e);
            let label = if e >= -3.0 {
                format!("{y}")
            } else {
                format!("1e{}", e as i32)
            };
            let show = decades <= 6 || (decades - k) % 2 == 0;
            grid_line(&mut s, py(y), plot_w, show.then_some(label.as_str()));
        }
    } else {
        // Tick labels with enough decimals to tell the steps y_max/10 apart.
        let decimals = (-libm::floor(libm::log10(y_max / 10.0))).clamp(1.0, 8.0) as usize;
        for k in 0..=10u32 {
            let y = f64::from(k) / 10.0 * y_max;
            let label = format!("{y:.decimals$}");
            grid_line(
                &mut s,
                py(y),
                plot_w,
                (k % 2 == 0).then_some(label.as_str()),
            );
        }
    }
    let step = if plot.decades { libm::log2(10.0) } else { 1.0 };
    let mut e = a;
    while e <= b + 1e-9 {
        let x = LEFT + (e - a) / (b - a) * plot_w;
        let label = if plot.decades {
            format!("{}", libm::pow(10.0, libm::round(e / step)))
        } else {
            format!("{}", libm::exp2(e))
        };
        x_tick(&mut s, x, y0, &escape(&label));
        e += step;
    }
    s.push_str("</g>\n");
    let Titles {
        x_label, y_label, ..
    } = plot.titles;
    axes(&mut s, top, y0, plot_w, PLOT_H, height, x_label, y_label);
    let mut legend_y = HEAD + 12.0;
    let lx = LEFT + 10.0;
    for c in &plot.curves {
        let mut d = String::new();
        let shown: Vec<(f64, f64)> = c
            .points
            .iter()
            .copied()
            .filter(|p| drawable(p.0) && p.1.is_finite())
            .collect();
        for &(x, y) in &shown {
            d.push_str(&format!(
                "{}{} {}",
                if d.is_empty() { "M" } else { "L" },
                num(px(x)),
                num(py(y))
            ));
        }
        let dash = dash_attr(c.stroke.dash);
        if let [(x, y)] = shown[..] {
            // a path of one point draws nothing: a marker instead
            s.push_str(&format!(
                "<circle class=\"curve-point\" data-y=\"{y}\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n",
                num(px(x)),
                num(py(y)),
                c.stroke.colour
            ));
        } else if !d.is_empty() {
            s.push_str(&format!(
                "<path class=\"curve\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\n",
                c.stroke.colour
            ));
        }
        if shown.len() == 1 {
            // its legend shows the marker it is drawn as
            s.push_str(&format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n",
                num(lx + 12.0),
                num(legend_y - 4.0),
                c.stroke.colour
            ));
            legend_text(&mut s, legend_y, &c.label);
        } else {
            legend_line(&mut s, legend_y, c.stroke, &c.label);
        }
        legend_y += LEGEND_ROW;
    }
    // Series side by side around each x (8 px apart), so that equal rates stay visible.
    let mid = (plot.estimates.len() as f64 - 1.0) / 2.0;
    for (i, est) in plot.estimates.iter().enumerate() {
        let shift = (i as f64 - mid) * 8.0;
        for &(x, y, l, u) in est
            .points
            .iter()
            .filter(|p| drawable(p.0) && p.1.is_finite())
        {
            let x = px(x) + shift;
            s.push_str(&format!(
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                num(x),
                num(py(l)),
                num(x),
                num(py(u)),
                est.colour
            ));
            for v in [l, u] {
                s.push_str(&format!(
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                    num(x - 4.0),
                    num(py(v)),
                    num(x + 4.0),
                    num(py(v)),
                    est.colour
                ));
            }
            s.push_str(&format!(
                "<circle class=\"estimate\" data-y=\"{y}\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n",
                num(x),
                num(py(y)),
                est.colour
            ));
        }
        s.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n",
            num(lx + 12.0),
            num(legend_y - 4.0),
            est.colour
        ));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n",
            num(lx + 30.0),
            num(legend_y),
            escape(&est.label)
        ));
        legend_y += LEGEND_ROW;
    }
    s.push_str("</svg>\n");
    s
}

/// A legend row at baseline `y`: a swatch of the line `stroke` and the label (plain text,
/// escaped here).
fn legend_line(s: &mut String, y: f64, stroke: Stroke, label: &str) {
    let lx = LEFT + 10.0;
    let dash = dash_attr(stroke.dash);
    let colour = stroke.colour;
    s.push_str(&format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>\n",
        num(lx),
        num(y - 4.0),
        num(lx + 24.0),
        num(y - 4.0)
    ));
    legend_text(s, y, label);
}

/// ` stroke-dasharray="…"` for a dash pattern, nothing for `""` (solid).
fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    }
}

/// The text of a legend row at baseline `y` (plain text, escaped here).
fn legend_text(s: &mut String, y: f64, label: &str) {
    s.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n",
        num(LEFT + 40.0),
        num(y),
        escape(label)
    ));
}

/// A "nice" step (1, 2 or 5 × 10^k) giving at most 8 intervals from 0 up to `max` > 0.
fn real_step(max: f64) -> f64 {
    let mut step = libm::pow(10.0, libm::floor(libm::log10(max / 8.0)));
    for _ in 0..4 {
        for m in [1.0, 2.0, 5.0] {
            if max / (step * m) <= 8.0 {
                return step * m;
            }
        }
        step *= 10.0;
    }
    step
}

/// A bar of [`bar_chart_svg`].
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    /// The category under the bar; `\n` separates lines (at most two are shown).
    pub label: String,
    /// The bar's height in data units (≥ 0 to be drawn).
    pub value: f64,
    /// Text printed above the bar (e.g. the value, rounded as the table rounds it).
    pub text: String,
    /// `#rrggbb`.
    pub colour: &'static str,
}

/// A horizontal reference line across a [`bar_chart_svg`] (a bound that applies to every
/// bar).
#[derive(Debug, Clone)]
pub(crate) struct Level {
    /// Legend text.
    pub label: String,
    /// Where the line is (finite to be drawn).
    pub value: f64,
    /// Its line.
    pub stroke: Stroke,
}

/// What [`bar_chart_svg`] draws: one bar per category over a linear y-axis from 0, with
/// horizontal reference lines (Nasr et al. 2021, Fig. 1: empirical ε against the theory).
#[derive(Debug, Clone)]
pub(crate) struct BarChart<'a> {
    /// Title, subtitle, axis labels (the x label under the category labels).
    pub titles: Titles<'a>,
    /// The bars, left to right.
    pub bars: Vec<Bar>,
    /// Legend rows for the bar colours: (label, `#rrggbb`).
    pub series: Vec<(String, &'static str)>,
    /// Reference lines.
    pub levels: Vec<Level>,
}

/// Below the plot area of a bar chart: two lines of category labels, then the x label.
const BAR_BOTTOM: f64 = 84.0;
/// The least width of a bar's slot (wider for long labels).
const BAR_SLOT: f64 = 72.0;

/// A bar chart (Nasr et al. 2021, Fig. 1): each bar a `<rect class="bar" data-value="…">`
/// with its text above it and its category label (two lines) under it; each reference line
/// a `<line class="level" data-value="…">` across the plot; y from 0 to a nice bound above
/// every bar and line, grid lines at nice steps; a legend of the bar series and the lines.
/// The canvas widens to give each bar at least 72 px, and room for its label. Bars whose value is negative or not
/// finite, and lines whose value is not finite, are left out (their legend says so).
pub(crate) fn bar_chart_svg(plot: &BarChart<'_>) -> String {
    let n = plot.bars.len().max(1) as f64;
    // About 7 px per character of 12 px text, and a gap between neighbours' labels.
    let longest = plot
        .bars
        .iter()
        .flat_map(|b| b.label.split('\n').take(2))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let min_slot = BAR_SLOT.max(7.0 * longest as f64 + 14.0);
    let width = WIDTH.max(LEFT + RIGHT + n * min_slot);
    let plot_w = width - LEFT - RIGHT;
    let entries = plot.series.len() + plot.levels.len();
    let top = HEAD + LEGEND_ROW * entries as f64 + 10.0;
    let height = top + PLOT_H + BAR_BOTTOM;
    let y0 = top + PLOT_H;
    let shown = |v: f64| v.is_finite() && v >= 0.0;
    let max = plot
        .bars
        .iter()
        .map(|b| b.value)
        .chain(plot.levels.iter().map(|l| l.value))
        .filter(|&v| shown(v))
        .fold(0.0, f64::max);
    let step = if max > 0.0 {
        real_step(max * 1.05)
    } else {
        0.2
    };
    let y_max = if max > 0.0 {
        libm::ceil(max * 1.05 / step) * step
    } else {
        1.0
    };
    let py = |v: f64| y0 - (v / y_max).clamp(0.0, 1.0) * PLOT_H;

    let mut s = canvas(width, height, plot.titles.title, plot.titles.subtitle);
    s.push_str("<g font-size=\"12\">\n");
    let ticks = libm::round(y_max / step) as u64;
    let decimals = (-libm::floor(libm::log10(step))).max(0.0) as usize;
    for k in 0..=ticks {
        let v = k as f64 * step;
        grid_line(&mut s, py(v), plot_w, Some(&format!("{v:.decimals$}")));
    }
    let slot = plot_w / n;
    for (i, b) in plot.bars.iter().enumerate() {
        let cx = LEFT + (i as f64 + 0.5) * slot;
        let mut lines = b.label.split('\n');
        x_tick(&mut s, cx, y0, &escape(lines.next().unwrap_or_default()));
        if let Some(second) = lines.next() {
            s.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                num(cx),
                num(y0 + 35.0),
                escape(second)
            ));
        }
    }
    s.push_str("</g>\n");
    for (i, b) in plot.bars.iter().enumerate() {
        if !shown(b.value) {
            continue;
        }
        let cx = LEFT + (i as f64 + 0.5) * slot;
        let w = (slot * 0.6).min(64.0);
        let y = py(b.value);
        s.push_str(&format!(
            "<rect class=\"bar\" data-value=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
            b.value,
            num(cx - w / 2.0),
            num(y),
            num(w),
            num(y0 - y),
            b.colour
        ));
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
            num(cx),
            num(y - 4.0),
            escape(&b.text)
        ));
    }
    let Titles {
        x_label, y_label, ..
    } = plot.titles;
    axes(&mut s, top, y0, plot_w, PLOT_H, height, x_label, y_label);
    let mut legend_y = HEAD + 12.0;
    for (label, colour) in &plot.series {
        s.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"10\" fill=\"{colour}\"/>\n",
            num(LEFT + 10.0),
            num(legend_y - 9.0)
        ));
        legend_text(&mut s, legend_y, label);
        legend_y += LEGEND_ROW;
    }
    for l in &plot.levels {
        let drawn = l.value.is_finite();
        if drawn {
            let dash = dash_attr(l.stroke.dash);
            s.push_str(&format!(
                "<line class=\"level\" data-value=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\n",
                l.value,
                num(LEFT),
                num(py(l.value)),
                num(LEFT + plot_w),
                num(py(l.value)),
                l.stroke.colour
            ));
        }
        let label = if drawn {
            l.label.clone()
        } else {
            format!("{} (not drawn)", l.label)
        };
        legend_line(&mut s, legend_y, l.stroke, &label);
        legend_y += LEGEND_ROW;
    }
    s.push_str("</svg>\n");
    s
}

/// A coordinate with two decimals (no `-0.00`).
fn num(x: f64) -> String {
    let s = format!("{x:.2}");
    if s == "-0.00" {
        String::from("0.00")
    } else {
        s
    }
}

/// `text` escaped for XML character data and attribute values; control characters other
/// than tab and newline (not allowed in XML 1.0) are dropped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(ch),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal well-formedness check: one XML declaration at the start, then properly
    /// nested elements with a single root `svg`, quoted attributes without `<`, and text
    /// and attributes in which `&` starts one of the five predefined entities.
    pub(crate) fn check_well_formed(svg: &str) -> Result<usize, String> {
        let body = svg
            .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .ok_or("no XML declaration")?;
        let mut stack: Vec<&str> = Vec::new();
        let mut elements = 0usize;
        let mut rest = body;
        let mut closed_root = false;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open])?;
            if closed_root && !rest[..open].trim().is_empty() {
                return Err("text after the root element".into());
            }
            let after = &rest[open + 1..];
            let close = after.find('>').ok_or("unterminated tag")?;
            let tag = &after[..close];
            rest = &after[close + 1..];
            if closed_root {
                return Err(format!("element after the root: <{tag}>"));
            }
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().ok_or(format!("unmatched </{name}>"))?;
                if top != name.trim() {
                    return Err(format!("</{name}> closes <{top}>"));
                }
                if stack.is_empty() {
                    closed_root = true;
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let inner = tag.trim_end_matches('/');
            let name = inner.split_whitespace().next().ok_or("empty tag")?;
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(format!("bad element name in <{tag}>"));
            }
            if stack.is_empty() && name != "svg" {
                return Err(format!("root element is <{name}>"));
            }
            // Attributes: name="value" pairs, the values free of '<' and '"'.
            let mut attrs = inner[name.len()..].trim();
            while !attrs.is_empty() {
                let eq = attrs
                    .find("=\"")
                    .ok_or(format!("bad attribute in <{tag}>"))?;
                let key = attrs[..eq].trim();
                if key.is_empty() || key.contains(char::is_whitespace) {
                    return Err(format!("bad attribute name in <{tag}>"));
                }
                let val_end = attrs[eq + 2..]
                    .find('"')
                    .ok_or(format!("unterminated attribute in <{tag}>"))?;
                check_text(&attrs[eq + 2..eq + 2 + val_end])?;
                attrs = attrs[eq + 2 + val_end + 1..].trim_start();
            }
            elements += 1;
            if !self_closing {
                stack.push(name);
            } else if stack.is_empty() {
                closed_root = true;
            }
        }
        check_text(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed <{}>", stack.join("> <")));
        }
        if !closed_root {
            return Err("no root element".into());
        }
        Ok(elements)
    }

    fn check_text(t: &str) -> Result<(), String> {
        if t.contains('<') || t.contains('>') {
            return Err(format!("raw '<' or '>' in {t:?}"));
        }
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            rest = &rest[i..];
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| rest.starts_with(e))
            {
                return Err(format!("bare '&' in {t:?}"));
            }
            rest = &rest[1..];
        }
        Ok(())
    }

    /// Every `attr="…"` value of the elements whose tag starts with `prefix`.
    fn attr_values(svg: &str, prefix: &str, attr: &str) -> Vec<String> {
        let pat = format!("{attr}=\"");
        svg.lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| {
                let i = l.find(&pat)? + pat.len();
                let j = l[i..].find('"')?;
                Some(l[i..i + j].to_string())
            })
            .collect()
    }

    fn markers() -> Vec<Marker> {
        vec![
            Marker {
                value: 0.01,
                label: "RDP Thm 1 bound".into(),
            },
            Marker {
                value: 1.0,
                label: "MSE = 1 (perfect privacy)".into(),
            },
        ]
    }

    #[test]
    fn checker_rejects_malformed_xml() {
        // The checker must be able to fail, or the tests below prove nothing.
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
        for bad in [
            "<svg><g></svg>",
            "<svg></g></svg>",
            "<svg><text>a & b</text></svg>",
            "<svg><text>a < b</text></svg>",
            "<svg a=\"1></svg>",
            "<svg>",
            "<svg></svg><svg></svg>",
            "<g></g>",
        ] {
            assert!(check_well_formed(&format!("{head}{bad}")).is_err(), "{bad}");
        }
        assert_eq!(
            check_well_formed(&format!(
                "{head}<svg a=\"x &amp; y\"><g><rect/></g><text>1 &lt; 2</text></svg>\n"
            )),
            Ok(4)
        );
    }

    #[test]
    fn log_histogram_counts_sum_to_the_positive_finite_values() {
        let values: Vec<f64> = (0..1000)
            .map(|i| libm::pow(10.0, -3.0 + 4.0 * i as f64 / 999.0))
            .chain([0.0, -1.0, f64::NAN, f64::INFINITY])
            .collect();
        let h = log_histogram(&values, 20);
        assert_eq!(h.counts.iter().sum::<u64>(), 1000);
        assert_eq!(h.skipped, 4);
        // Equally spaced in log10 from -3 to 1: 50 per bin (bin edges fall between points;
        // the extremes land in the first and last bin).
        assert!(
            (h.lo + 3.0).abs() < 1e-12 && (h.hi - 1.0).abs() < 1e-12,
            "{h:?}"
        );
        assert!(h.counts.iter().all(|&c| c == 50), "{:?}", h.counts);
        let one = log_histogram(&[2.0, 2.0, 2.0], 10);
        assert_eq!(one.counts.iter().sum::<u64>(), 3);
        assert_eq!(one.counts.iter().filter(|&&c| c > 0).count(), 1);
        let none = log_histogram(&[], 5);
        assert_eq!(none.counts, vec![0; 5]);
    }

    #[test]
    fn histogram_svg_is_well_formed_and_places_the_markers() {
        // Data spanning [1e-3, 10]: the x-axis covers decades -3..1 (plot width 660 px
        // from x = 80), so a marker at 1 sits 3/4 across: 80 + 495 = 575.00, and one at
        // 0.01 at 1/4: 80 + 165 = 245.00 (exact in binary to well below the 0.005 of the
        // two printed decimals).
        let values = [1e-3, 0.05, 0.2, 0.2, 3.0, 10.0];
        let m = markers();
        let plot = HistogramPlot {
            title: "Per-example MSE",
            subtitle: "mlp on embedded, σ = 1 & T = 3",
            x_label: "MSE lower bound",
            y_label: "examples",
            values: &values,
            bins: 8,
            markers: &m,
        };
        let svg = histogram_svg(&plot);
        check_well_formed(&svg).unwrap();
        assert_eq!(
            attr_values(&svg, "<line class=\"marker\"", "x1"),
            vec!["245.00", "575.00"]
        );
        // Ticks at 10^-3 … 10^1, with the exponent as a superscript.
        for e in ["\u{2212}3", "\u{2212}2", "\u{2212}1", "0", "1"] {
            assert!(
                svg.contains(&format!("font-size=\"9\">{e}</tspan>")),
                "tick 10^{e}"
            );
        }
        let counts: u64 = attr_values(&svg, "<rect class=\"bar\"", "data-count")
            .iter()
            .map(|c| c.parse::<u64>().unwrap())
            .sum();
        assert_eq!(counts, values.len() as u64);
        assert_eq!(attr_values(&svg, "<rect class=\"bar\"", "x").len(), 8);
        // The first bar starts at the smallest value, the last ends at the largest.
        assert_eq!(attr_values(&svg, "<rect class=\"bar\"", "x")[0], "80.00");
        assert!(svg.contains("RDP Thm 1 bound") && svg.contains("MSE = 1 (perfect privacy)"));
        assert!(svg.contains(">mlp on embedded, σ = 1 &amp; T = 3</text>"));
        // Deterministic.
        assert_eq!(svg, histogram_svg(&plot));
    }

    #[test]
    fn histogram_axis_extends_to_markers_outside_the_data() {
        // Data in [0.1, 0.5], marker at 1: axis decades -1..0, marker at the right end
        // (80 + 660 = 740.00); an undrawable marker (0) is listed but has no line.
        let m = vec![
            Marker {
                value: 1.0,
                label: "one".into(),
            },
            Marker {
                value: 0.0,
                label: "zero".into(),
            },
        ];
        let svg = histogram_svg(&HistogramPlot {
            title: "t",
            subtitle: "",
            x_label: "x",
            y_label: "y",
            values: &[0.1, 0.5],
            bins: 4,
            markers: &m,
        });
        check_well_formed(&svg).unwrap();
        assert_eq!(
            attr_values(&svg, "<line class=\"marker\"", "x1"),
            vec!["740.00"]
        );
        assert!(svg.contains("zero (not drawn)"));
        // No data at all: axes, markers and a well-formed file, no bars.
        let svg = histogram_svg(&HistogramPlot {
            title: "t",
            subtitle: "",
            x_label: "x",
            y_label: "y",
            values: &[],
            bins: 4,
            markers: &m,
        });
        check_well_formed(&svg).unwrap();
        assert!(!svg.contains("class=\"bar\""));
    }

    /// Points over decades 10^-3..10^1 (x) and 10^-2..10^2 (y): the diagonal spans the
    /// overlap 10^-2..10^1; the point (1, 0.5) is below it (red), (0.01, 0.1) and (10, 100)
    /// above; a zero is skipped and counted. x = 1 is 3/4 across the 660 px width: 575.00.
    #[test]
    fn scatter_svg_draws_the_diagonal_and_marks_points_below() {
        let points = [
            (1e-3, 0.05),
            (0.01, 0.1),
            (1.0, 0.5),
            (10.0, 100.0),
            (0.0, 1.0),
        ];
        let m = vec![Marker {
            value: 1.0,
            label: "perfect privacy".into(),
        }];
        let plot = ScatterPlot {
            title: "GLM attack & FIL",
            subtitle: "",
            x_label: "bound",
            y_label: "MSE",
            points: &points,
            diagonal_label: "y = x",
            below_label: "below the bound",
            markers: &m,
        };
        let svg = scatter_svg(&plot);
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle class=\"point\"").count(), 3);
        assert_eq!(svg.matches("<circle class=\"point below\"").count(), 1);
        assert!(svg.contains("below the bound (1)") && svg.contains("1 not shown"));
        assert_eq!(
            attr_values(&svg, "<line class=\"marker\"", "x1"),
            vec!["575.00"]
        );
        // Diagonal from 10^-2 (x: 80 + 660/4 = 245) to 10^1 (x: 740).
        assert_eq!(
            attr_values(&svg, "<line class=\"diagonal\"", "x1"),
            vec!["245.00"]
        );
        assert_eq!(
            attr_values(&svg, "<line class=\"diagonal\"", "x2"),
            vec!["740.00"]
        );
        // The diagonal's end points lie on y = x: the y pixel of 10^-2 on the y axis
        // (decades -2..2, 460 px) is 3/4 down the plot, that of 10^1 1/4 down.
        let y1: f64 = attr_values(&svg, "<line class=\"diagonal\"", "y1")[0]
            .parse()
            .unwrap();
        let y2: f64 = attr_values(&svg, "<line class=\"diagonal\"", "y2")[0]
            .parse()
            .unwrap();
        assert!((y1 - y2 - 345.0).abs() < 0.01, "{y1} {y2}");
        assert!(svg.contains("GLM attack &amp; FIL"));
        assert_eq!(svg, scatter_svg(&plot));
        // Nothing to draw: still well formed.
        let empty = scatter_svg(&ScatterPlot {
            points: &[],
            markers: &[],
            ..plot
        });
        check_well_formed(&empty).unwrap();
    }

    #[test]
    fn bar_chart_scales_bars_and_levels_and_leaves_out_what_it_cannot_draw() {
        let bar = |label: &str, value: f64| Bar {
            label: String::from(label),
            value,
            text: format!("{value}"),
            colour: "#4c72b0",
        };
        let chart = BarChart {
            titles: Titles {
                title: "t <&>",
                subtitle: "s",
                x_label: "x",
                y_label: "y",
            },
            bars: vec![
                bar("a\nfirst", 1.0),
                bar("b\nsecond", 2.0),
                bar("c", -1.0),
                bar("d", f64::NAN),
            ],
            series: vec![(String::from("bars"), "#4c72b0")],
            levels: vec![
                Level {
                    label: String::from("bound"),
                    value: 4.0,
                    stroke: CERTIFIED,
                },
                Level {
                    label: String::from("missing"),
                    value: f64::INFINITY,
                    stroke: FROM_RDP,
                },
            ],
        };
        let svg = bar_chart_svg(&chart);
        check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("class=\"bar\"").count(), 2);
        assert_eq!(svg.matches("class=\"level\"").count(), 1);
        assert!(svg.contains("missing (not drawn)"));
        assert!(svg.contains(">second</text>"));
        // Heights: bar 2 is twice bar 1, and the level at 4 is twice as high as bar 2.
        let heights: Vec<f64> = svg
            .lines()
            .filter(|l| l.contains("class=\"bar\""))
            .map(|l| {
                let h = l.split("height=\"").nth(1).unwrap();
                h[..h.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!((heights[1] - 2.0 * heights[0]).abs() < 0.02, "{heights:?}");
        let level = svg.lines().find(|l| l.contains("class=\"level\"")).unwrap();
        let y: f64 = {
            let v = level.split(" y1=\"").nth(1).unwrap();
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        let bottom: f64 = {
            let l = svg.lines().find(|l| l.contains("class=\"bar\"")).unwrap();
            let y = l.split(" y=\"").nth(1).unwrap();
            y[..y.find('"').unwrap()].parse::<f64>().unwrap() + heights[0]
        };
        assert!(((bottom - y) - 2.0 * heights[1]).abs() < 0.02);
        // Many long labels widen the canvas instead of overlapping.
        let wide = BarChart {
            bars: (0..30)
                .map(|i| bar(&format!("label number {i}"), 1.0))
                .collect(),
            ..chart
        };
        let svg = bar_chart_svg(&wide);
        let width: f64 = {
            let w = svg.split("width=\"").nth(1).unwrap();
            w[..w.find('"').unwrap()].parse().unwrap()
        };
        assert!(width >= LEFT + RIGHT + 30.0 * 7.0 * 15.0, "{width}");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>\u{7}"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        let m = vec![Marker {
            value: 1.0,
            label: "<&>".into(),
        }];
        let svg = histogram_svg(&HistogramPlot {
            title: "x < y & z",
            subtitle: "",
            x_label: "\"q\"",
            y_label: "'",
            values: &[1.0],
            bins: 1,
            markers: &m,
        });
        check_well_formed(&svg).unwrap();
        assert!(svg.contains("x &lt; y &amp; z") && svg.contains("&lt;&amp;&gt;"));
        let pixels = [0.0; 4];
        let grid = ImageGrid {
            title: "A&B",
            subtitle: "",
            shape: (1, 2, 2),
            rows: vec![GridRow {
                label: "<row>".into(),
                images: vec![GridImage {
                    pixels: &pixels,
                    caption: "c\"1\"".into(),
                }],
            }],
        };
        let svg = image_grid_svg(&grid).unwrap();
        check_well_formed(&svg).unwrap();
        assert!(svg.contains("A&amp;B") && svg.contains("&lt;row&gt;"));
        assert!(svg.contains("c&quot;1&quot;"));
    }

    #[test]
    fn image_grid_draws_pixels_captions_and_rows() {
        // A 28×28 grey image with one white pixel at (row 3, column 5) and a grey run of
        // three at row 10, columns 2..5; an RGB 2×2 image with a red top-left pixel.
        let mut grey = vec![0.0; 784];
        grey[3 * 28 + 5] = 1.0;
        for x in 2..5 {
            grey[10 * 28 + x] = 0.5;
        }
        let grid = ImageGrid {
            title: "highest and lowest dFIL",
            subtitle: "",
            shape: (1, 28, 28),
            rows: vec![
                GridRow {
                    label: "highest dFIL".into(),
                    images: vec![
                        GridImage {
                            pixels: &grey,
                            caption: "dFIL 12.3, #57".into(),
                        },
                        GridImage {
                            pixels: &grey,
                            caption: "dFIL 11, #3".into(),
                        },
                    ],
                },
                GridRow {
                    label: "lowest dFIL".into(),
                    images: vec![GridImage {
                        pixels: &grey,
                        caption: "dFIL 0.1, #9".into(),
                    }],
                },
            ],
        };
        let svg = image_grid_svg(&grid).unwrap();
        let elements = check_well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<g class=\"image\"").count(), 3);
        // Per image: background + 2 runs (white pixel, grey run of 3; 0.5 → byte 128).
        assert_eq!(
            svg.matches("<rect x=\"5\" y=\"3\" width=\"1\" height=\"1\" fill=\"#ffffff\"/>")
                .count(),
            3
        );
        assert_eq!(
            svg.matches("<rect x=\"2\" y=\"10\" width=\"3\" height=\"1\" fill=\"#808080\"/>")
                .count(),
            3
        );
        // svg, white background, title, 2 row labels, 3 × (g, background, 2 runs, caption).
        assert_eq!(elements, 1 + 1 + 1 + 2 + 3 * 5);
        assert!(svg.contains(">dFIL 12.3, #57</text>") && svg.contains(">lowest dFIL</text>"));
        // 28 px images are scaled by 3.
        assert!(svg.contains("scale(3)"));
        assert_eq!(svg, image_grid_svg(&grid).unwrap());

        let rgb = [
            1.0, 0.0, 0.0, 0.0, /* G */ 0.0, 0.0, 0.0, 0.0, /* B */ 0.0, 0.0, 0.0, 0.0,
        ];
        let svg = image_grid_svg(&ImageGrid {
            title: "rgb",
            subtitle: "",
            shape: (3, 2, 2),
            rows: vec![GridRow {
                label: "r".into(),
                images: vec![GridImage {
                    pixels: &rgb,
                    caption: String::new(),
                }],
            }],
        })
        .unwrap();
        check_well_formed(&svg).unwrap();
        assert!(svg.contains("<rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" fill=\"#ff0000\"/>"));
        // Bad shapes and lengths are errors, not panics.
        let bad = ImageGrid {
            title: "",
            subtitle: "",
            shape: (2, 2, 2),
            rows: vec![],
        };
        assert!(image_grid_svg(&bad).is_err());
        let short = ImageGrid {
            title: "",
            subtitle: "",
            shape: (1, 2, 2),
            rows: vec![GridRow {
                label: String::new(),
                images: vec![GridImage {
                    pixels: &rgb[..3],
                    caption: String::new(),
                }],
            }],
        };
        assert!(image_grid_svg(&short).is_err());
    }

    /// Issue 31: `attack reconn --plot` with one K drew three one-point paths (`M x y`), which
    /// draw nothing — an empty chart. A curve with a single drawable point gets a marker at
    /// it in its colour; a curve of two or more points is a line only.
    #[test]
    fn a_curve_of_one_point_is_drawn_as_a_marker() {
        let one = |y: f64, stroke: Stroke| Curve {
            label: format!("at {y}"),
            points: vec![(100.0, y)],
            stroke,
        };
        let plot = CurvePlot {
            y_log: false,
            decades: false,
            y_max: 1.0,
            titles: Titles {
                title: "t",
                subtitle: "s",
                x_label: "x",
                y_label: "y",
            },
            curves: vec![
                one(0.5, CERTIFIED),
                one(0.25, FROM_RDP),
                one(f64::NAN, REFERENCE),
            ],
            estimates: Vec::new(),
        };
        let svg = curve_plot_svg(&plot);
        check_well_formed(&svg).unwrap();
        let ys = attr_values(&svg, "<circle class=\"curve-point\"", "data-y");
        assert_eq!(
            ys,
            ["0.5", "0.25"],
            "one marker per curve with a finite point"
        );
        let fills = attr_values(&svg, "<circle class=\"curve-point\"", "fill");
        assert_eq!(fills, [CERTIFIED.colour, FROM_RDP.colour]);
        // their legend rows show a marker too (the curve without a point keeps its line)
        assert_eq!(
            attr_values(&svg, "<circle cx=", "fill"),
            [CERTIFIED.colour, FROM_RDP.colour]
        );
        // Two points: a line, no marker.
        let two = CurvePlot {
            y_log: false,
            curves: vec![Curve {
                label: String::from("two"),
                points: vec![(10.0, 0.1), (100.0, 0.2)],
                stroke: CERTIFIED,
            }],
            ..plot
        };
        let svg = curve_plot_svg(&two);
        assert!(!svg.contains("curve-point"));
        let d = attr_values(&svg, "<path class=\"curve\"", "d");
        assert!(d.len() == 1 && d[0].matches('L').count() == 1, "{d:?}");
    }
}
