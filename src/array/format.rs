//! Printing arrays as NumPy does: nested rows, values in their dtype's form, one width per
//! column, NumPy's default float precision (or the formatter's), and summaries with `...`
//! beyond 1,000 elements (3 edge items per axis), reading from the device only the items
//! shown. `Display` wraps the rows in a `jax.Array`-style `Array(..., dtype=..., device=...)`;
//! `{:#}` prints the rows alone, as NumPy's `str`.

use super::Array;
use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::layout::Slice;
use std::fmt;
use std::ops::Range;

/// Arrays with more elements than this are summarised (NumPy's `threshold`).
pub const THRESHOLD: usize = 1000;
/// Items shown at each end of a summarised axis (NumPy's `edgeitems`).
pub const EDGE_ITEMS: usize = 3;

/// How values are spelt: Rust's `true`/`false` or Python's `True`/`False`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Rust spelling: `true`/`false`.
    Rust,
    /// Python spelling: `True`/`False`.
    Python,
}

/// Formatting choices for [`Array::format_with`].
#[derive(Debug, Clone, Copy)]
pub struct FormatOptions {
    /// Fractional digits of floats: fixed when given, else NumPy's default (at most 8, as
    /// few as each value needs).
    pub precision: Option<usize>,
    /// Element separator within a row: `" "` (NumPy's `str`) or `", "` (its `repr`).
    pub separator: &'static str,
    /// Columns the first line is indented by (the length of a prefix like `Array(`).
    pub indent: usize,
    /// Rows wrap before this many columns (NumPy's `linewidth`, 75; a repr keeps one column
    /// for the `,` after the rows).
    pub line_width: usize,
    /// Bool spelling (Rust or Python).
    pub style: Style,
}

impl Default for FormatOptions {
    fn default() -> Self {
        FormatOptions {
            precision: None,
            separator: " ",
            indent: 0,
            line_width: 75,
            style: Style::Rust,
        }
    }
}

/// Most items one print shows; past it the summary keeps one edge item per axis, and past
/// that it is an error (a valid broadcast view of `[6; 20]` would be 3.6e15 items).
const MAX_SHOWN: usize = 1 << 20;

/// The indices shown along an axis of length `n`: all, or `edge` items at each end around
/// a `...`.
fn shown(n: usize, summarise: bool, edge: usize) -> Vec<Range<usize>> {
    if summarise && n > 2 * edge {
        vec![0..edge, n - edge..n]
    } else {
        std::iter::once(0..n).collect()
    }
}

/// The shown ranges of every axis of `shape`, within `MAX_SHOWN` items.
fn shown_axes(shape: &[usize], summarise: bool) -> Result<Vec<Vec<Range<usize>>>> {
    for edge in [EDGE_ITEMS, 1] {
        let axes: Vec<Vec<Range<usize>>> =
            shape.iter().map(|&n| shown(n, summarise, edge)).collect();
        let total = axes.iter().try_fold(1usize, |acc, r| {
            acc.checked_mul(r.iter().map(|x| x.len()).sum())
        });
        if total.is_some_and(|t| t <= MAX_SHOWN) {
            return Ok(axes);
        }
    }
    Err(crate::error::Error::invalid(format!(
        "an array of shape {shape:?} has too many elements to print, even summarised"
    )))
}

/// One axis's share of a block read: a slice and how many indices it yields, and where
/// they start among the axis's shown indices.
struct Piece {
    slice: Slice,
    len: usize,
    start: usize,
}

/// The pieces an axis's shown ranges read in: one strided slice for a single edge item at
/// each end (`0` and `n - 1` are `0::n-1`), else one slice per range.
fn pieces(ranges: &[Range<usize>]) -> Vec<Piece> {
    match ranges {
        [a, b] if a.len() == 1 && b.len() == 1 && a.start == 0 => vec![Piece {
            slice: Slice::new(Some(0), None, (b.start - a.start) as isize),
            len: 2,
            start: 0,
        }],
        _ => {
            let mut start = 0;
            ranges
                .iter()
                .map(|r| {
                    let p = Piece {
                        slice: Slice::from(r.clone()),
                        len: r.len(),
                        start,
                    };
                    start += r.len();
                    p
                })
                .collect()
        }
    }
}

/// The shown values of `a`, row-major over the shown indices, read block by block (one read
/// per combination of pieces: 2^k for k axes cut with three edge items, k <= 7 within
/// `MAX_SHOWN`), never the whole array.
fn shown_values(a: &Array, axes: &[Vec<Range<usize>>]) -> Result<Vec<Scalar>> {
    let nd = axes.len();
    let counts: Vec<usize> = axes
        .iter()
        .map(|r| r.iter().map(|x| x.len()).sum())
        .collect();
    let total: usize = counts.iter().product();
    let mut out = vec![Scalar::Int(0); total];
    let parts: Vec<Vec<Piece>> = axes.iter().map(|r| pieces(r)).collect();
    // Every combination of one piece per axis is a block.
    let mut pick = vec![0usize; nd];
    loop {
        let chosen: Vec<&Piece> = (0..nd).map(|k| &parts[k][pick[k]]).collect();
        let whole = chosen
            .iter()
            .zip(a.shape())
            .all(|(p, &n)| p.len == n && p.slice.step == 1);
        let block = if whole {
            a.clone()
        } else {
            let slices: Vec<Slice> = chosen.iter().map(|p| p.slice).collect();
            a.slice(&slices)?
        };
        let vals: Vec<Scalar> = crate::with_dtype!(a.dtype(), T => {
            block.to_vec::<T>()?.into_iter().map(crate::dtype::Element::to_scalar).collect()
        });
        // Where the block's elements go among the shown ones.
        let mut idx = vec![0usize; nd];
        for v in vals {
            let pos = (0..nd).fold(0, |acc, k| acc * counts[k] + chosen[k].start + idx[k]);
            out[pos] = v;
            for k in (0..nd).rev() {
                idx[k] += 1;
                if idx[k] < chosen[k].len {
                    break;
                }
                idx[k] = 0;
            }
        }
        // Next block.
        let mut k = nd;
        loop {
            if k == 0 {
                return Ok(out);
            }
            k -= 1;
            pick[k] += 1;
            if pick[k] < parts[k].len() {
                break;
            }
            pick[k] = 0;
        }
    }
}

/// How the floats shown are spelt: NumPy's choice between positional and scientific.
struct FloatFormat {
    /// The real dtype values are stored in: digits are the fewest that read back as it.
    real: DType,
    precision: Option<usize>,
    scientific: bool,
    /// Scientific mantissa digits shared by every value (NumPy pads them with zeros).
    sci_digits: usize,
}

impl FloatFormat {
    fn new(real: DType, values: &[f64], precision: Option<usize>) -> FloatFormat {
        let finite: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v != 0.0)
            .map(f64::abs)
            .collect();
        let max = finite.iter().copied().fold(0.0, f64::max);
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        // NumPy's rule (suppress=False): large, tiny, or widely spread magnitudes.
        let scientific = !finite.is_empty() && (max >= 1e8 || min < 1e-4 || max / min > 1e3);
        // The fewest mantissa digits (at most 8) that read back as every value, in its dtype.
        let sci_digits = precision.unwrap_or_else(|| {
            finite
                .iter()
                .map(|&v| {
                    (0..8)
                        .find(|&d| reads_back(real, &format!("{v:.d$e}"), v))
                        .unwrap_or(8)
                })
                .max()
                .unwrap_or(0)
        });
        FloatFormat {
            real,
            precision,
            scientific,
            sci_digits,
        }
    }

    fn spell(&self, v: f64) -> String {
        if v.is_nan() {
            return "nan".into();
        }
        if v.is_infinite() {
            return if v > 0.0 { "inf".into() } else { "-inf".into() };
        }
        if self.scientific {
            let s = format!("{:.*e}", self.sci_digits, v);
            let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
            // `1e+00` is spelt `1.e+00`, as NumPy keeps the point.
            let mant = if mant.contains('.') {
                mant.to_string()
            } else {
                format!("{mant}.")
            };
            let e: i32 = exp.parse().unwrap_or(0);
            return format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
        }
        match self.precision {
            Some(p) => format!("{v:.p$}"),
            // NumPy's `unique` digits: the fewest fractional digits (at most 8) that read
            // back as the value in its own dtype (a float32 0.9785799 is not 0.97857988).
            None => {
                let d = (1..8)
                    .find(|&d| reads_back(self.real, &format!("{v:.d$}"), v))
                    .unwrap_or(8);
                trim_zeros(&format!("{v:.d$}"))
            }
        }
    }
}

/// Whether the decimal `s` reads back as `v` (a value of `real`) in `real`.
fn reads_back(real: DType, s: &str, v: f64) -> bool {
    let Ok(x) = s.parse::<f64>() else {
        return false;
    };
    let back = match real {
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::BF16 => half::bf16::from_f64(x).to_f64(),
        DType::F32 | DType::Complex64 => x as f32 as f64,
        _ => x,
    };
    back == v
}

/// `1.50000000` -> `1.5`, `2.00000000` -> `2.` (NumPy keeps the point of a float).
fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').to_string()
}

/// Each shown value spelt in its dtype's form.
fn spell_all(dtype: DType, values: &[Scalar], o: &FormatOptions) -> Vec<String> {
    let f = |s: &Scalar| match *s {
        Scalar::Float(v) => v,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::Complex(c) => c.re,
    };
    if dtype.is_complex() {
        // NumPy formats the real and the imaginary parts as two float columns, each with its
        // own digits and alignment, and puts the `j` before the imaginary part's padding.
        let (re, im): (Vec<f64>, Vec<f64>) = values
            .iter()
            .map(|s| match s {
                Scalar::Complex(c) => (c.re, c.im),
                other => (f(other), 0.0),
            })
            .unzip();
        let real = dtype.real_part();
        let (ffr, ffi) = (
            FloatFormat::new(real, &re, o.precision),
            FloatFormat::new(real, &im, o.precision),
        );
        let mut re_cells: Vec<String> = re.iter().map(|&v| ffr.spell(v)).collect();
        let mut im_cells: Vec<String> = im
            .iter()
            .map(|&v| {
                let sign = if v < 0.0 || (v == 0.0 && v.is_sign_negative()) {
                    '-'
                } else {
                    '+'
                };
                format!("{sign}{}", ffi.spell(v.abs()))
            })
            .collect();
        align(&mut re_cells);
        align(&mut im_cells);
        return re_cells
            .into_iter()
            .zip(im_cells)
            .map(|(r, i)| {
                let digits = i.trim_end();
                format!("{r}{digits}j{}", &i[digits.len()..])
            })
            .collect();
    }
    if dtype.is_float() {
        let vals: Vec<f64> = values.iter().map(f).collect();
        let ff = FloatFormat::new(dtype, &vals, o.precision);
        return vals.iter().map(|&v| ff.spell(v)).collect();
    }
    values
        .iter()
        .map(|s| match (s, o.style) {
            (Scalar::Bool(b), Style::Rust) => b.to_string(),
            (Scalar::Bool(true), Style::Python) => "True".into(),
            (Scalar::Bool(false), Style::Python) => "False".into(),
            (Scalar::Int(i), _) => i.to_string(),
            (other, _) => f(other).to_string(),
        })
        .collect()
}

/// Pads every spelling to one width; floats align on the decimal point (as NumPy).
fn align(cells: &mut [String]) {
    let point = |s: &str| s.find('.').unwrap_or(s.len());
    let finite = |s: &str| s.contains('.');
    let is_float = cells.iter().any(|c| finite(c));
    if is_float && !cells.iter().any(|c| c.contains('j') || c.contains('e')) {
        // Finite values align on the point; nan and inf take the whole width, right-aligned.
        let pos = cells.iter().filter(|c| finite(c));
        let left = pos.clone().map(|c| point(c)).max().unwrap_or(0);
        let right = pos.map(|c| c.len() - point(c)).max().unwrap_or(0);
        let width = cells
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(left + right);
        for c in cells.iter_mut() {
            if finite(c) {
                let (l, r) = (point(c), c.len() - point(c));
                *c = format!("{}{c}{}", " ".repeat(left - l), " ".repeat(right - r));
            }
            *c = format!("{c:>width$}");
        }
        return;
    }
    let width = cells.iter().map(String::len).max().unwrap_or(0);
    for c in cells.iter_mut() {
        *c = format!("{c:>width$}");
    }
}

/// Writes the nested rows of `cells` (row-major over the shown `counts`) into `out`.
#[allow(clippy::too_many_arguments)]
fn rows(
    out: &mut String,
    cells: &[String],
    counts: &[usize],
    cut: &[bool],
    depth: usize,
    start: usize,
    o: &FormatOptions,
) {
    let nd = counts.len();
    out.push('[');
    if depth == nd {
        out.truncate(out.len() - 1);
        out.push_str(&cells[start]);
        return;
    }
    let n = counts[depth];
    let stride: usize = counts[depth + 1..].iter().product();
    let sep = o.separator.trim_end();
    // NumPy's `_extendLine`: a word that would pass the line's end starts a new line, at
    // the row's hanging indent, unless the line holds nothing but that indent.
    let hanging = o.indent + depth + 1;
    let wrap = |out: &mut String, word: &str| {
        let line = match out.rfind('\n') {
            Some(i) => out.len() - i - 1,
            None => out.len() + o.indent,
        };
        if line + word.len() > o.line_width.saturating_sub(nd) && line > hanging {
            out.truncate(out.trim_end_matches(' ').len());
            out.push('\n');
            out.push_str(&" ".repeat(hanging));
        }
    };
    for i in 0..n {
        if i > 0 {
            if depth + 1 == nd {
                out.push_str(o.separator);
            } else {
                out.push_str(sep);
                // A blank line between blocks of rank >= 3 (NumPy's layout).
                out.push_str(&"\n".repeat(nd - depth - 1));
                out.push_str(&" ".repeat(o.indent + depth + 1));
            }
        }
        if cut[depth] && i == counts[depth] / 2 {
            if depth + 1 == nd {
                wrap(out, "...");
                out.push_str("...");
                out.push_str(o.separator);
            } else {
                out.push_str("...");
                out.push_str(sep);
                out.push_str(&"\n".repeat(nd - depth - 1));
                out.push_str(&" ".repeat(o.indent + depth + 1));
            }
        }
        if depth + 1 == nd {
            wrap(out, &cells[start + i * stride]);
        }
        rows(out, cells, counts, cut, depth + 1, start + i * stride, o);
    }
    out.push(']');
}

impl Array {
    /// The elements as NumPy prints them (nested rows, no dtype suffix), reading from the
    /// device only what is shown.
    pub fn format_with(&self, o: &FormatOptions) -> Result<String> {
        let summarise = self.size() > THRESHOLD;
        let axes = shown_axes(self.shape(), summarise)?;
        let cut: Vec<bool> = axes.iter().map(|r| r.len() > 1).collect();
        let counts: Vec<usize> = axes
            .iter()
            .map(|r| r.iter().map(|x| x.len()).sum())
            .collect();
        if counts.contains(&0) {
            // An empty array: NumPy prints `[]` (nested for each leading axis).
            let lead = self.shape().iter().take_while(|&&n| n != 0).count();
            return Ok(format!("{}{}", "[".repeat(lead + 1), "]".repeat(lead + 1)));
        }
        let values = shown_values(self, &axes)?;
        let mut cells = spell_all(self.dtype(), &values, o);
        align(&mut cells);
        let mut out = String::new();
        rows(&mut out, &cells, &counts, &cut, 0, 0, o);
        Ok(out)
    }

    /// Where the array lives, for its printed form: the device, or the sharding.
    fn placement(&self) -> String {
        match self.sharding() {
            crate::Sharding::SingleDevice(d, k) if *k == d.default_memory_kind() => {
                format!("device={d}")
            }
            crate::Sharding::SingleDevice(d, k) => format!("device={d}, memory_kind={k}"),
            s => format!("sharding={s}"),
        }
    }

    /// The `jax.Array`-style form: `Array([...], dtype=..., device=...)`.
    pub fn repr_with(&self, precision: Option<usize>, style: Style) -> Result<String> {
        let body = self.format_with(&FormatOptions {
            precision,
            separator: ", ",
            indent: "Array(".len(),
            line_width: 75 - ",".len(),
            style,
        })?;
        // An empty array's rows do not show its shape (NumPy then names it).
        let shape = if self.size() == 0 && self.ndim() != 1 {
            let dims: Vec<String> = self.shape().iter().map(usize::to_string).collect();
            format!("shape=({}), ", dims.join(", "))
        } else {
            String::new()
        };
        // NumPy's `array_repr`: what follows the rows goes on a line of its own when it would
        // pass the line width.
        let tail = format!("{shape}dtype={}, {})", self.dtype(), self.placement());
        let head = format!("Array({body},");
        let last = head.len() - head.rfind('\n').map_or(0, |i| i + 1);
        let spacer = if last + tail.len() + 1 > 75 {
            format!("\n{}", " ".repeat("Array(".len()))
        } else {
            " ".to_string()
        };
        Ok(format!("{head}{spacer}{tail}"))
    }
}

impl fmt::Display for Array {
    /// `{}`: `Array([[1, 2], [3, 4]], dtype=int32, device=cpu:0)` (with rows on their own
    /// lines); `{:#}`: the rows alone, as NumPy's `str`; `{:.3}`: three fractional digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if f.alternate() {
            self.format_with(&FormatOptions {
                precision: f.precision(),
                ..Default::default()
            })
        } else {
            self.repr_with(f.precision(), Style::Rust)
        };
        match text {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "{self:?} <unreadable: {e}>"),
        }
    }
}
