//! Pictures of a result: every distinct sheet layout, with its multiplicity, drawn from the
//! exact part geometry into an SVG of the requested pixel size, and (for PNG) rasterised by
//! resvg with the font kerf carries (so labels look the same on every machine, fonts
//! installed or not).
//!
//! The layouts are laid out in a grid whose column count makes them largest in the image;
//! each cell has a caption (sheet, layout number, "× N sheets", parts, utilisation) above the
//! sheet. Sheet coordinates have y up; the picture flips them, text stays upright.

use crate::geometry::{BBox, Point, Shape};
use crate::nest2d::{placed_shapes, Problem, SheetLayout};
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

/// The font of captions and labels: DejaVu Sans Condensed (its licence is beside it; its
/// family name in the font is "DejaVu Sans", the condensed stretch being its only face here).
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansCondensed.ttf");
const FONT_FAMILY: &str = "DejaVu Sans";

/// The largest image side kerf draws (a 8000 x 8000 RGBA picture is 256 MB).
pub const MAX_PIXELS: u32 = 8000;
/// The image side used when the request gives neither dimension.
pub const DEFAULT_WIDTH: u32 = 1600;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderFormat {
    Png,
    Svg,
}

impl RenderFormat {
    /// The name RenderResponse gives it.
    pub fn name(self) -> &'static str {
        match self {
            RenderFormat::Png => "png",
            RenderFormat::Svg => "svg",
        }
    }
}

/// A colour with alpha, as the ARGB settings give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Argb {
    pub a: u8,
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

impl Argb {
    pub const fn opaque(r: u8, g: u8, b: u8) -> Argb {
        Argb { a: 255, r, g, b }
    }

    /// `#AARRGGBB`, `AARRGGBB`, `#RRGGBB` or `RRGGBB` (opaque), or a signed 32-bit integer as
    /// .NET's `Color.ToArgb()` writes it (`-16777216` is opaque black). Six or eight hex
    /// digits read as hex, even when they are all decimal digits.
    pub fn parse(s: &str) -> Option<Argb> {
        let t = s.trim();
        let hex_like = t.starts_with('#')
            || (matches!(t.len(), 6 | 8) && t.chars().all(|c| c.is_ascii_hexdigit()));
        if let (false, Ok(n)) = (hex_like, t.parse::<i64>()) {
            if (i32::MIN as i64..=u32::MAX as i64).contains(&n) {
                let v = n as u32;
                return Some(Argb {
                    a: (v >> 24) as u8,
                    r: (v >> 16) as u8,
                    g: (v >> 8) as u8,
                    b: v as u8,
                });
            }
            return None;
        }
        let hex = t.strip_prefix('#').unwrap_or(t);
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let v = u32::from_str_radix(hex, 16).ok()?;
        match hex.len() {
            8 => Some(Argb {
                a: (v >> 24) as u8,
                r: (v >> 16) as u8,
                g: (v >> 8) as u8,
                b: v as u8,
            }),
            6 => Some(Argb::opaque((v >> 16) as u8, (v >> 8) as u8, v as u8)),
            _ => None,
        }
    }

    fn svg(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }

    fn opacity(self) -> f64 {
        self.a as f64 / 255.0
    }
}

/// What a part is labelled with (RenderPartLabelMode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelMode {
    None,
    Id,
    PartName,
}

/// Everything a render needs besides the result: RenderSettings, and the label settings of
/// ReportSourceSettings.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    pub format: RenderFormat,
    /// The image size in pixels; a dimension left out follows from the picture's aspect.
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub background: Argb,
    pub outline: Argb,
    /// None: a colour per part, chosen automatically.
    pub fill: Option<Argb>,
    pub labels: LabelMode,
    /// Label height in millimetres; None: sized to each part.
    pub label_height_mm: Option<f64>,
    /// A caption above each layout (sheet, multiplicity, parts, utilisation).
    pub caption: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            format: RenderFormat::Png,
            width: None,
            height: None,
            background: Argb::opaque(255, 255, 255),
            outline: Argb::opaque(32, 32, 32),
            fill: None,
            labels: LabelMode::Id,
            label_height_mm: None,
            caption: true,
        }
    }
}

/// A finished picture.
#[derive(Clone, Debug)]
pub struct Rendering {
    pub format: RenderFormat,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Why a picture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("the SVG could not be read back for rasterising: {0}")]
    Svg(String),
    #[error("a {0} x {1} pixel image cannot be allocated")]
    Size(u32, u32),
    #[error("the PNG could not be encoded: {0}")]
    Png(String),
}

/// Draws `layouts` per `options`.
pub fn render(
    problem: &Problem,
    layouts: &[SheetLayout],
    options: &RenderOptions,
) -> Result<Rendering, RenderError> {
    let picture = svg(problem, layouts, options);
    let bytes = match options.format {
        RenderFormat::Svg => picture.text.into_bytes(),
        RenderFormat::Png => rasterise(&picture.text, picture.width, picture.height)?,
    };
    Ok(Rendering {
        format: options.format,
        bytes,
        width: picture.width,
        height: picture.height,
    })
}

/// A picture of part `part` alone (as nested: `nest2d::verify::nesting_geometry`), on a
/// plain ground a little larger than it, without a caption: the report's part previews.
pub fn render_part(
    problem: &Problem,
    part: usize,
    options: &RenderOptions,
) -> Result<Rendering, RenderError> {
    let b = crate::nest2d::verify::nesting_geometry(problem, part).bbox();
    let (w, h) = (b.max.x - b.min.x, b.max.y - b.min.y);
    let margin = 0.04 * w.max(h);
    let (alone, layout) = super::part_alone(
        problem,
        part,
        (margin - b.min.x, margin - b.min.y),
        (w + 2.0 * margin, h + 2.0 * margin),
    );
    let options = RenderOptions {
        caption: false,
        ..options.clone()
    };
    render(&alone, &[layout], &options)
}

/// An SVG document and its size in pixels.
pub struct Svg {
    pub text: String,
    pub width: u32,
    pub height: u32,
}

/// The cell of one layout, in millimetres: the sheet and the caption band above it.
struct Cell {
    width: f64,
    height: f64,
}

/// The SVG of `layouts` per `options` (the format is ignored).
pub fn svg(problem: &Problem, layouts: &[SheetLayout], options: &RenderOptions) -> Svg {
    let cells: Vec<Cell> = layouts
        .iter()
        .map(|l| {
            let (w, h) = problem.sheets[l.sheet].extent();
            Cell {
                width: w.max(1e-6),
                height: h.max(1e-6),
            }
        })
        .collect();
    let n = cells.len().max(1);
    // the grid's cell size is the largest sheet's; each gets a caption band and a margin
    let cell_w = cells.iter().map(|c| c.width).fold(1e-6, f64::max);
    let cell_h = cells.iter().map(|c| c.height).fold(1e-6, f64::max);
    // the aspect to fill: the requested one, else 4:3
    let aspect = match (options.width, options.height) {
        (Some(w), Some(h)) => w as f64 / h as f64,
        _ => 4.0 / 3.0,
    };
    // caption band and margin as fractions of the cell's sheet height
    let (band, margin) = (if options.caption { 0.08 } else { 0.0 }, 0.04);
    let grid = |cols: usize| {
        let rows = n.div_ceil(cols);
        let w = cols as f64 * cell_w * (1.0 + 2.0 * margin);
        let h = rows as f64 * cell_h * (1.0 + band + 2.0 * margin);
        (w, h)
    };
    let cols = (1..=n)
        .max_by(|&a, &b| {
            let fit = |c: usize| {
                let (w, h) = grid(c);
                (1.0 / w).min(aspect / h)
            };
            fit(a).total_cmp(&fit(b)).then(b.cmp(&a))
        })
        .unwrap_or(1);
    let (grid_w, grid_h) = grid(cols);
    let (width, height) = match (options.width, options.height) {
        (Some(w), Some(h)) => (w, h),
        (Some(w), None) => (
            w,
            ((w as f64 * grid_h / grid_w).round() as u32).clamp(1, MAX_PIXELS),
        ),
        (None, Some(h)) => (
            ((h as f64 * grid_w / grid_h).round() as u32).clamp(1, MAX_PIXELS),
            h,
        ),
        (None, None) => {
            let w = DEFAULT_WIDTH;
            (
                w,
                ((w as f64 * grid_h / grid_w).round() as u32).clamp(1, MAX_PIXELS),
            )
        }
    };
    // millimetres to pixels, the grid centred
    let scale = (width as f64 / grid_w).min(height as f64 / grid_h);
    let x0 = (width as f64 - grid_w * scale) / 2.0;
    let y0 = (height as f64 - grid_h * scale) / 2.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FONT_FAMILY}">"#
    );
    let bg = options.background;
    let _ = write!(
        out,
        r#"<rect width="{width}" height="{height}" fill="{}" fill-opacity="{:.3}"/>"#,
        bg.svg(),
        bg.opacity()
    );
    let ink = contrasting(bg);
    for (k, l) in layouts.iter().enumerate() {
        let sheet = &problem.sheets[l.sheet];
        let (row, col) = (k / cols, k % cols);
        let cell_x = x0 + col as f64 * cell_w * (1.0 + 2.0 * margin) * scale;
        let cell_y = y0 + row as f64 * cell_h * (1.0 + band + 2.0 * margin) * scale;
        let left = cell_x + cell_w * margin * scale;
        let caption_top = cell_y + cell_h * margin * scale;
        let sheet_top = caption_top + cell_h * band * scale;
        let sheet_h = cells[k].height;
        // sheet coordinates (mm, y up) to pixels
        let to_px = |p: Point| (left + p.x * scale, sheet_top + (sheet_h - p.y) * scale);
        let caption = format!(
            "{} · layout {} × {} sheet{} · {} parts · {:.1} %",
            sheet.id,
            k + 1,
            l.multiplicity,
            if l.multiplicity == 1 { "" } else { "s" },
            l.placements.len(),
            l.utilisation
        );
        // the caption's height follows the band, but never wider than its sheet: a tall narrow
        // sheet's caption would run over the next one's. Measured in kerf's condensed face; an
        // SVG viewer without it draws the regular DejaVu Sans, about 12 % wider, hence the slack
        let fits = if options.caption {
            CAPTION_SLACK * cell_w * scale / text_width_per_px(&caption).max(1e-9)
        } else {
            f64::INFINITY
        };
        let font = (cell_h * band * scale * 0.6).min(fits).clamp(6.0, 48.0);
        if options.caption {
            let _ = write!(
                out,
                r#"<text x="{left:.2}" y="{:.2}" font-size="{font:.2}" fill="{}">{}</text>"#,
                caption_top + cell_h * band * scale * 0.75,
                ink.svg(),
                escape(&caption)
            );
        }
        // the sheet
        let sheet_shape = sheet.material();
        let _ = write!(
            out,
            r##"<path d="{}" fill="#d9d9d9" fill-rule="evenodd" stroke="{}" stroke-opacity="{:.3}" stroke-width="1"/>"##,
            path_data(sheet_shape.rings(), &to_px),
            options.outline.svg(),
            options.outline.opacity()
        );
        // the parts
        for (placement, shape) in l.placements.iter().zip(placed_shapes(problem, l)) {
            let fill = options.fill.unwrap_or_else(|| auto_fill(placement.part));
            let outline = options.outline;
            for c in shape.geometry.components() {
                let _ = write!(
                    out,
                    r#"<path d="{}" fill="{}" fill-opacity="{:.3}" fill-rule="evenodd" stroke="{}" stroke-opacity="{:.3}" stroke-width="1"/>"#,
                    path_data(c.rings(), &to_px),
                    fill.svg(),
                    fill.opacity(),
                    outline.svg(),
                    outline.opacity()
                );
            }
            let text = match options.labels {
                LabelMode::None => continue,
                LabelMode::Id | LabelMode::PartName => &problem.parts[placement.part].id,
            };
            if let Some((at, size, upright)) = label_spot(
                &shape.geometry.bbox(),
                shape.geometry.components(),
                text,
                options.label_height_mm,
                scale,
                5.0,
                40.0,
            ) {
                let (x, y) = to_px(at);
                // the baseline a third of the size below the middle centres the text
                let turn = if upright {
                    format!(r#" transform="rotate(-90 {x:.2} {y:.2})""#)
                } else {
                    String::new()
                };
                let _ = write!(
                    out,
                    r#"<text x="{x:.2}" y="{:.2}" font-size="{size:.2}" text-anchor="middle" fill="{}"{turn}>{}</text>"#,
                    y + size * 0.35,
                    contrasting(fill).svg(),
                    escape(text)
                );
            }
        }
        // common cuts on top: one line each, where the cutter runs once for two parts
        for c in &l.common_cuts {
            let ((x1, y1), (x2, y2)) = (to_px(c.from), to_px(c.to));
            let _ = write!(
                out,
                r##"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{COMMON_CUT_INK}" stroke-width="{:.2}" stroke-linecap="round"/>"##,
                (1.5f64).max(scale * 0.5)
            );
        }
    }
    out.push_str("</svg>");
    Svg {
        text: out,
        width,
        height,
    }
}

/// Common cuts are drawn in this colour over the parts (a saturated red: the fills `auto_fill`
/// picks are pastel).
const COMMON_CUT_INK: &str = "#d62728";

/// Where a part's label goes, its size in pixels and whether it runs upwards (turned 90
/// degrees), or None when it would be too small to read (under 5 px). Candidates: the inside
/// runs of a few lines across the part, horizontal (text as usual) and vertical (text turned);
/// each allows the size that fits the run's length and the part's thickness at the run's
/// middle, and the largest wins (the horizontal middle line on ties). So a label never spills
/// over the part's edge or into a hole (where other parts may sit).
/// `scale` turns millimetres into the picture's units; sizes outside `min`..`max` (in those
/// units) are left out or capped. The DXF export uses it with scale 1 (millimetres).
pub(crate) fn label_spot(
    bbox: &BBox,
    shapes: &[Shape],
    text: &str,
    height_mm: Option<f64>,
    scale: f64,
    min: f64,
    max: f64,
) -> Option<(Point, f64, bool)> {
    // width of the text in units of the font size (this font, digits and lower case)
    let per_char = 0.56 * text.chars().count().max(1) as f64;
    let mut best: Option<(Point, f64, bool)> = None;
    for upright in [false, true] {
        // `along` picks the coordinate that is constant on a line, `across` the other
        let along = move |p: Point| if upright { p.x } else { p.y };
        let across = move |p: Point| if upright { p.y } else { p.x };
        let (lo, hi) = (along(bbox.min), along(bbox.max));
        for f in [0.5, 0.35, 0.65, 0.2, 0.8] {
            let at = lo + (hi - lo) * f;
            for (a, b) in inside_runs(shapes, along, across, at) {
                let mid = (a + b) / 2.0;
                let thick = inside_runs(shapes, across, along, mid)
                    .into_iter()
                    .find(|&(l, h)| l <= at && at <= h)
                    .map(|(l, h)| 2.0 * (at - l).min(h - at))
                    .unwrap_or(0.0);
                let fits = ((b - a) * 0.9 / per_char).min(thick * 0.7);
                let size = match height_mm {
                    Some(mm) => mm.min(fits),
                    None => fits.min((hi - lo) / 3.0),
                } * scale;
                if best.is_none_or(|(_, s, _)| size > s + 1e-9) {
                    let spot = if upright {
                        Point::new(at, mid)
                    } else {
                        Point::new(mid, at)
                    };
                    best = Some((spot, size, upright));
                }
            }
        }
    }
    best.map(|(p, size, up)| (p, size.min(max), up))
        .filter(|&(_, size, _)| size >= min && size > 0.0)
}

/// The stretches of the line `along(p) = at` inside `shapes` (even-odd over every ring), as
/// (from, to) in the `across` coordinate.
fn inside_runs(
    shapes: &[Shape],
    along: impl Fn(Point) -> f64,
    across: impl Fn(Point) -> f64,
    at: f64,
) -> Vec<(f64, f64)> {
    let mut xs: Vec<f64> = Vec::new();
    for s in shapes {
        for ring in s.rings() {
            for (i, &a) in ring.iter().enumerate() {
                let b = ring[(i + 1) % ring.len()];
                let (ya, yb) = (along(a), along(b));
                if (ya <= at) != (yb <= at) {
                    xs.push(across(a) + (at - ya) / (yb - ya) * (across(b) - across(a)));
                }
            }
        }
    }
    xs.sort_by(f64::total_cmp);
    xs.chunks_exact(2).map(|r| (r[0], r[1])).collect()
}

/// A fill colour per part type: hues a golden angle apart, pale enough for dark labels.
fn auto_fill(part: usize) -> Argb {
    let hue = (part as f64 * 137.507_764) % 360.0;
    let rgb = crate::geometry::colour::hsv(hue, 0.35, 0.87 * 255.0);
    Argb::opaque((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8)
}

/// Black or white, whichever reads better on `c`.
fn contrasting(c: Argb) -> Argb {
    let luma = 0.299 * c.r as f64 + 0.587 * c.g as f64 + 0.114 * c.b as f64;
    if luma > 140.0 || c.a < 128 {
        Argb::opaque(0, 0, 0)
    } else {
        Argb::opaque(255, 255, 255)
    }
}

fn path_data<'a>(
    rings: impl Iterator<Item = &'a [Point]>,
    to_px: &dyn Fn(Point) -> (f64, f64),
) -> String {
    let mut d = String::new();
    for ring in rings {
        for (i, p) in ring.iter().enumerate() {
            let (x, y) = to_px(*p);
            let _ = write!(d, "{}{x:.2} {y:.2} ", if i == 0 { "M" } else { "L" });
        }
        d.push_str("Z ");
    }
    d
}

/// Text for XML: the five special characters escaped, and the characters XML does not allow
/// at all (controls other than tab and newlines, U+FFFE, U+FFFF) dropped, so any identifier a
/// request may carry still gives a well-formed picture.
fn escape(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            (c >= ' ' || matches!(c, '\t' | '\n' | '\r')) && !matches!(c, '\u{FFFE}' | '\u{FFFF}')
        })
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The font database resvg draws text with: kerf's own font only (loaded once).
fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_font_data(FONT.to_vec());
            db.set_sans_serif_family(FONT_FAMILY);
            Arc::new(db)
        })
        .clone()
}

/// The share of its sheet's width a caption may take, measured in kerf's own face.
const CAPTION_SLACK: f64 = 0.85;

/// How wide `text` is drawn in kerf's font, per pixel of font size (measured by laying it out
/// with usvg, as the PNG is drawn, so the width is the font's, not a guess).
fn text_width_per_px(text: &str) -> f64 {
    const SIZE: f64 = 100.0;
    let svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" font-family="{FONT_FAMILY}"><text x="0" y="{SIZE}" font-size="{SIZE}">{}</text></svg>"#,
        escape(text)
    );
    let options = usvg_options();
    match resvg::usvg::Tree::from_str(&svg, &options) {
        Ok(tree) => tree.root().abs_bounding_box().width() as f64 / SIZE,
        // unmeasurable (never seen): the font's widest glyphs are about 0.7 em
        Err(_) => 0.7 * text.chars().count() as f64,
    }
}

fn usvg_options() -> resvg::usvg::Options<'static> {
    resvg::usvg::Options {
        fontdb: fonts(),
        font_family: FONT_FAMILY.into(),
        ..Default::default()
    }
}

/// The SVG drawn into a PNG of `width` x `height` pixels.
fn rasterise(svg: &str, width: u32, height: u32) -> Result<Vec<u8>, RenderError> {
    let options = usvg_options();
    let tree =
        resvg::usvg::Tree::from_str(svg, &options).map_err(|e| RenderError::Svg(e.to_string()))?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(width, height).ok_or(RenderError::Size(width, height))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Png(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::{PartSpec, Settings, SheetSpec};

    /// The drawn boxes of every text in an SVG (x0, y0, x1, y1), laid out as the PNG is.
    fn text_boxes(svg: &str) -> Vec<(f32, f32, f32, f32)> {
        fn walk(g: &resvg::usvg::Group, out: &mut Vec<(f32, f32, f32, f32)>) {
            for node in g.children() {
                match node {
                    resvg::usvg::Node::Text(t) => {
                        let b = t.abs_bounding_box();
                        out.push((b.left(), b.top(), b.right(), b.bottom()));
                    }
                    resvg::usvg::Node::Group(g) => walk(g, out),
                    _ => {}
                }
            }
        }
        let tree = resvg::usvg::Tree::from_str(svg, &usvg_options()).unwrap();
        let mut out = Vec::new();
        walk(tree.root(), &mut out);
        out
    }

    #[test]
    fn captions_of_tall_narrow_sheets_stay_apart() {
        // seven sheets 20 wide and 40 high (a 198-part shirts job): side by side, each caption
        // must fit its own sheet's width
        let problem = Problem {
            parts: vec![PartSpec::new(
                "p",
                PartGeometry::single(Shape::rectangle(5.0, 5.0)),
                7,
            )],
            sheets: vec![SheetSpec::rectangle("S20", 20.0, 40.0)],
            settings: Settings::default(),
        };
        let layouts: Vec<SheetLayout> = (0..7)
            .map(|_| SheetLayout {
                sheet: 0,
                multiplicity: 1,
                placements: Vec::new(),
                utilisation: 77.1,
                used_length: 20.0,
                common_cuts: Vec::new(),
            })
            .collect();
        let svg = svg(&problem, &layouts, &RenderOptions::default());
        let boxes = text_boxes(&svg.text);
        assert_eq!(boxes.len(), 7);
        for (i, a) in boxes.iter().enumerate() {
            assert!(
                a.0 >= 0.0 && a.2 <= svg.width as f32,
                "caption {i} leaves the image"
            );
            for b in &boxes[i + 1..] {
                let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                assert!(apart, "captions overlap: {a:?} and {b:?}");
            }
        }
    }
}
