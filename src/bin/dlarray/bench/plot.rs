//! `--plot FILE.svg`: one panel per op, throughput against size on log axes, one line per
//! device (and dtype), and the host's measured memcpy bandwidth as the reference line on the
//! memory-bound panels.

use super::machine::Machine;
use super::ops::Op;
use super::record::Record;
use super::size_label;
use dlarray::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

const PANEL: (u32, u32) = (460, 320);

/// Line colours that stay apart on white (Okabe-Ito, then Tol's), cycled.
const COLORS: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(136, 34, 85),
    RGBColor(68, 119, 170),
    RGBColor(153, 153, 51),
    RGBColor(102, 51, 0),
];

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("--plot {}: {e}", path.display()))
}

/// The lines to draw: one per device and dtype, in first-seen order (same colour in every
/// panel).
fn series_keys(records: &[Record]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in records {
        let k = format!("{} {}", r.device, r.dtype);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

pub fn draw(path: &Path, records: &[Record], memcpy: f64, m: &Machine) -> Result<()> {
    let ops: Vec<Op> = Op::ALL
        .into_iter()
        .filter(|o| records.iter().any(|r| r.op == *o))
        .collect();
    if ops.is_empty() {
        return Err(plot_err(path, "no measurement to draw"));
    }
    let cols = ops.len().min(3);
    let rows = ops.len().div_ceil(cols);
    let size = (PANEL.0 * cols as u32, PANEL.1 * rows as u32 + 40);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (title, body) = root.split_vertically(40);
    title
        .draw_text(
            &format!(
                "dlarray bench on {} ({}, commit {})",
                m.name, m.date, m.commit
            ),
            &("sans-serif", 16).into_font().color(&BLACK),
            (10, 12),
        )
        .map_err(|e| plot_err(path, e))?;
    let keys = series_keys(records);
    let panels = body.split_evenly((rows, cols));
    for (op, area) in ops.iter().zip(panels.iter()) {
        let mine: Vec<&Record> = records.iter().filter(|r| r.op == *op).collect();
        let unit = mine[0].unit();
        let reference = (op.memory_bound() && unit == "GB/s").then_some(memcpy / 1e9);
        let (mut x0, mut x1) = (f64::MAX, f64::MIN);
        let (mut y0, mut y1) = (f64::MAX, f64::MIN);
        for r in &mine {
            x0 = x0.min(r.elements as f64);
            x1 = x1.max(r.elements as f64);
            y0 = y0.min(r.throughput);
            y1 = y1.max(r.throughput);
        }
        if let Some(bw) = reference {
            y0 = y0.min(bw);
            y1 = y1.max(bw);
        }
        let (x0, x1) = (x0 / 1.5, x1 * 1.5);
        let (y0, y1) = ((y0 / 2.0).max(1e-9), y1 * 2.0);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{} ({unit})", op.name()),
                ("sans-serif", 15).into_font(),
            )
            .margin(10)
            .x_label_area_size(28)
            .y_label_area_size(52)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|e| plot_err(path, e))?;
        chart
            .configure_mesh()
            .x_desc(if *op == Op::Matmul {
                "elements (n x n)"
            } else {
                "elements"
            })
            .x_label_formatter(&|v| size_label(v.round() as usize))
            .y_label_formatter(&|v| format!("{v:.3}"))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| plot_err(path, e))?;
        for (k, key) in keys.iter().enumerate() {
            let mut pts: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| &format!("{} {}", r.device, r.dtype) == key)
                .map(|r| (r.elements as f64, r.throughput))
                .collect();
            if pts.is_empty() {
                continue;
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let color = COLORS[k % COLORS.len()];
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| plot_err(path, e))?
                .label(key.clone())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color));
            chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                .map_err(|e| plot_err(path, e))?;
        }
        if let Some(bw) = reference {
            chart
                .draw_series(DashedLineSeries::new(
                    [(x0, bw), (x1, bw)],
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))
                .map_err(|e| plot_err(path, e))?
                .label("host memcpy")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", 10))
            .draw()
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}
