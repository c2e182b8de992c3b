//! SVG of sheet layouts, drawn from the exact geometry (y up, as in the sheet's coordinates).

use crate::geometry::Point;
use crate::nest2d::{placed_shapes, Problem, SheetLayout, SheetShape};
use std::fmt::Write;

/// One SVG with every distinct layout stacked vertically, each captioned with its multiplicity.
/// `sheet_length` overrides the drawn sheet length (strip packing draws the used length).
pub fn layouts_svg(
    problem: &Problem,
    layouts: &[SheetLayout],
    sheet_length: Option<f64>,
) -> String {
    let mut body = String::new();
    let mut y_off = 0.0;
    let mut max_w: f64 = 0.0;
    for (li, l) in layouts.iter().enumerate() {
        let sh = &problem.sheets[l.sheet];
        let (mut w, h) = sh.extent();
        if let Some(len) = sheet_length {
            w = len;
        }
        max_w = max_w.max(w);
        let font = h * 0.04;
        let _ = writeln!(
            body,
            r#"<text x="0" y="{:.3}" font-size="{font:.3}" font-family="sans-serif">layout {} x{}: {} parts, {:.2} %</text>"#,
            y_off + font,
            li + 1,
            l.multiplicity,
            l.placements.len(),
            l.utilisation
        );
        y_off += font * 1.5;
        let flip = |p: Point| (p.x, y_off + h - p.y);
        match &sh.shape {
            SheetShape::Rectangle { .. } => {
                let _ = writeln!(
                    body,
                    r##"<rect x="0" y="{y_off:.3}" width="{w:.3}" height="{h:.3}" fill="#f4f4f4" stroke="#333" stroke-width="{:.3}"/>"##,
                    h * 0.002
                );
            }
            SheetShape::Outline(s) => {
                let _ = writeln!(
                    body,
                    r##"<path d="{}" fill="#f4f4f4" fill-rule="evenodd" stroke="#333" stroke-width="{:.3}"/>"##,
                    path(s.rings(), &flip),
                    h * 0.002
                );
            }
        }
        for (pi, shape) in placed_shapes(problem, l).iter().enumerate() {
            let hue = (l.placements[pi].part * 67) % 360;
            for c in shape.geometry.components() {
                let _ = writeln!(
                    body,
                    r##"<path d="{}" fill="hsl({hue},60%,70%)" fill-rule="evenodd" stroke="#222" stroke-width="{:.3}"><title>{}</title></path>"##,
                    path(c.rings(), &flip),
                    h * 0.001,
                    shape.label
                );
            }
        }
        y_off += h + font;
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{:.3} {:.3} {:.3} {:.3}">{}{body}</svg>"#,
        -max_w * 0.01,
        0.0,
        max_w * 1.02,
        y_off,
        "\n"
    )
}

fn path<'a>(
    rings: impl Iterator<Item = &'a [Point]>,
    flip: &dyn Fn(Point) -> (f64, f64),
) -> String {
    let mut d = String::new();
    for r in rings {
        for (i, p) in r.iter().enumerate() {
            let (x, y) = flip(*p);
            let _ = write!(d, "{}{x:.4},{y:.4} ", if i == 0 { "M" } else { "L" });
        }
        d.push_str("Z ");
    }
    d
}
