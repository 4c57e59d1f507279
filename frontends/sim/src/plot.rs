//! SVG figures like the paper's (made with `plotters`, no Python): median
//! and 99th-percentile slowdown versus flow size per scheme, and per-link
//! utilisation bars, one pair of figures per load.

use std::path::Path;

use plotters::prelude::*;

use crate::error::SimError;
use crate::report::summarise;
use crate::stats::RunResult;

/// matplotlib's `tab10`: one colour per scheme `lcmp sim` knows.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The schemes `lcmp sim` knows, in its order: each keeps its colour and
/// marker in every figure (plain or merged, whatever the schemes beside it).
const KNOWN: [&str; 10] = [
    "ecmp",
    "ucmp",
    "lcmp",
    "rm-alpha",
    "rm-beta",
    "lcmp-w",
    "lcmp-c",
    "lcmp-wc",
    "lcmp-t",
    "lcmp-tuned",
];

/// A scheme's fixed style index: its place in [`KNOWN`], else a hash of
/// its name (the same in every figure).
fn style_index(scheme: &str) -> usize {
    KNOWN.iter().position(|k| *k == scheme).unwrap_or_else(|| {
        scheme.bytes().fold(7usize, |h, b| {
            h.wrapping_mul(31).wrapping_add(usize::from(b))
        })
    })
}

/// A scheme's colour, the same in every figure.
fn scheme_color(scheme: &str) -> RGBColor {
    COLORS[style_index(scheme) % COLORS.len()]
}

/// Marker shapes, so that identical curves stay distinguishable.
const MARKERS: usize = 4;

fn err<E: core::fmt::Display>(e: E) -> SimError {
    SimError::Output(e.to_string())
}

/// Writes `slowdown-<load>.svg` and `links-<load>.svg` for every load into
/// `dir` (created if missing). Returns the files written.
pub fn write_all(dir: &Path, title: &str, results: &[RunResult]) -> Result<Vec<String>, SimError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| SimError::Output(format!("{}: {e}", dir.display())))?;
    let mut loads: Vec<f64> = Vec::new();
    for r in results {
        if !loads.contains(&r.load) {
            loads.push(r.load);
        }
    }
    let mut files = Vec::new();
    for load in loads {
        let rs: Vec<&RunResult> = results.iter().filter(|r| r.load == load).collect();
        let pct = (load * 100.0).round() as u32;
        let f = dir.join(format!("slowdown-{pct}.svg"));
        slowdown(&f, &format!("{title}, load {pct}%"), &rs)?;
        files.push(f.display().to_string());
        let f = dir.join(format!("links-{pct}.svg"));
        links(&f, &format!("{title}, load {pct}%: link utilisation"), &rs)?;
        files.push(f.display().to_string());
    }
    Ok(files)
}

/// One curve of a slowdown figure: its legend name, the scheme whose
/// colour and marker it takes, its (size, p50, p99) points, and whether it
/// is the artifact's (dashed, hollow markers) rather than ours.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// The scheme whose colour and marker it takes.
    pub scheme: String,
    /// (flow size, p50, p99) points.
    pub points: Vec<(f64, f64, f64)>,
    /// The artifact's published curve: drawn dashed.
    pub artifact: bool,
}

/// Per scheme, the first seed's curve (curves of different seeds have
/// different bins).
fn curves(rs: &[&RunResult]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in rs {
        if out.iter().any(|s| s.scheme == r.scheme) {
            continue;
        }
        let points = r
            .bins
            .iter()
            .filter(|b| b.size > 0.0)
            .map(|b| (b.size, b.p50, b.p99))
            .collect();
        out.push(Series {
            name: r.scheme.clone(),
            scheme: r.scheme.clone(),
            points,
            artifact: false,
        });
    }
    out
}

fn slowdown(path: &Path, title: &str, rs: &[&RunResult]) -> Result<(), SimError> {
    slowdown_series(path, title, &curves(rs), &[])
}

/// Writes one slowdown figure (p50 thin, p99 thick, versus flow size on
/// a log axis) of the curves `series`: `lcmp sim figure N` sets ours
/// (solid) beside the artifact's (dashed) with it. `footer` lines (the
/// runs' labels: model, preset, knobs, seeds, command line, commit) are
/// printed under the chart, wrapped.
pub fn slowdown_series(
    path: &Path,
    title: &str,
    series: &[Series],
    footer: &[String],
) -> Result<(), SimError> {
    const WRAP: usize = 200;
    let lines: Vec<String> = footer
        .iter()
        .flat_map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .chunks(WRAP)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
        })
        .collect();
    let (mut xmin, mut xmax, mut ymax) = (f64::MAX, 1.0f64, 1.0f64);
    for s in series {
        for &(x, _, p99) in &s.points {
            xmin = xmin.min(x);
            xmax = xmax.max(x);
            ymax = ymax.max(p99);
        }
    }
    if xmin >= xmax {
        xmin = 1.0;
        xmax = xmax.max(10.0);
    }
    // The legend has its own column right of the chart: inside, it hid
    // the p50 curves.
    let foot = 14 * lines.len() as u32;
    let all = SVGBackend::new(path, (1120, 540 + foot)).into_drawing_area();
    all.fill(&WHITE).map_err(err)?;
    let (root, below) = all.split_vertically(540);
    for (i, l) in lines.iter().enumerate() {
        below
            .draw(&Text::new(
                l.clone(),
                (8, 14 * i as i32),
                ("sans-serif", 10).into_font(),
            ))
            .map_err(err)?;
    }
    let (left, right) = root.split_horizontally(940);
    let mut chart = ChartBuilder::on(&left)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin * 0.8..xmax * 1.25).log_scale(), 0.0..ymax * 1.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("flow size (bytes)")
        .y_desc("FCT slowdown (p50 thin, p99 thick)")
        .x_label_formatter(&|x| crate::report::human(*x))
        .draw()
        .map_err(err)?;
    for s in series {
        let c = scheme_color(&s.scheme);
        let shape = style_index(&s.scheme);
        let pts = &s.points;
        for (width, pick) in [
            (
                1,
                (|p: &(f64, f64, f64)| (p.0, p.1)) as fn(&(f64, f64, f64)) -> (f64, f64),
            ),
            (3, |p: &(f64, f64, f64)| (p.0, p.2)),
        ] {
            if s.artifact {
                chart
                    .draw_series(DashedLineSeries::new(
                        pts.iter().map(pick),
                        6,
                        5,
                        c.stroke_width(width),
                    ))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.iter().map(pick), c.stroke_width(width)))
                    .map_err(err)?;
            }
        }
        // Markers on both curves: a scheme whose curve another's hides
        // still shows its own shape (hollow for the artifact's).
        let at = pts.iter().flat_map(|p| [(p.0, p.1), (p.0, p.2)]);
        let fill = if s.artifact {
            c.stroke_width(1)
        } else {
            c.filled()
        };
        match shape % MARKERS {
            0 => chart.draw_series(at.map(|p| Circle::new(p, 4, fill))),
            1 => chart.draw_series(at.map(|p| TriangleMarker::new(p, 6, c.stroke_width(2)))),
            2 => chart.draw_series(at.map(|p| Cross::new(p, 5, c.stroke_width(2)))),
            _ => chart.draw_series(at.map(|p| {
                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], c.stroke_width(2))
            })),
        }
        .map_err(err)?;
    }
    for (row, s) in series.iter().enumerate() {
        let c = scheme_color(&s.scheme);
        let y = 60 + 28 * row as i32;
        if s.artifact {
            right
                .draw(&PathElement::new(vec![(8, y), (18, y)], c.stroke_width(3)))
                .map_err(err)?;
            right
                .draw(&PathElement::new(vec![(38, y), (48, y)], c.stroke_width(3)))
                .map_err(err)?;
        } else {
            right
                .draw(&PathElement::new(vec![(8, y), (48, y)], c.stroke_width(3)))
                .map_err(err)?;
        }
        let at = (28, y);
        let fill = if s.artifact {
            c.stroke_width(1)
        } else {
            c.filled()
        };
        match style_index(&s.scheme) % MARKERS {
            0 => right.draw(&Circle::new(at, 4, fill)),
            1 => right.draw(&TriangleMarker::new(at, 6, c.stroke_width(2))),
            2 => right.draw(&Cross::new(at, 5, c.stroke_width(2))),
            _ => right.draw(&Rectangle::new(
                [(24, y - 4), (32, y + 4)],
                c.stroke_width(2),
            )),
        }
        .map_err(err)?;
        right
            .draw(&Text::new(
                s.name.clone(),
                (56, y - 8),
                ("sans-serif", 16).into_font(),
            ))
            .map_err(err)?;
    }
    all.present().map_err(err)
}

fn links(path: &Path, title: &str, rs: &[&RunResult]) -> Result<(), SimError> {
    let owned: Vec<RunResult> = rs.iter().map(|r| (*r).clone()).collect();
    let sums = summarise(&owned);
    let mut names: Vec<String> = Vec::new();
    for s in &sums {
        for l in &s.links {
            if !names.contains(&l.link) {
                names.push(l.link.clone());
            }
        }
    }
    let n = names.len().max(1) as f64;
    let k = sums.len().max(1) as f64;
    let root = SVGBackend::new(path, (1100, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, 0.0..1.3f64)
        .map_err(err)?;
    let labels = names.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(names.len() * 2 + 1)
        .x_label_formatter(&move |x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.26 {
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("utilisation")
        .draw()
        .map_err(err)?;
    for (j, s) in sums.iter().enumerate() {
        let c = scheme_color(&s.scheme);
        let bars = names.iter().enumerate().filter_map(|(i, name)| {
            let u = s.links.iter().find(|l| l.link == *name)?.utilisation.mean;
            let x0 = i as f64 + 0.1 + 0.8 * j as f64 / k;
            let x1 = x0 + 0.8 / k;
            Some(Rectangle::new([(x0, 0.0), (x1, u.min(1.05))], c.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(s.scheme.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}
