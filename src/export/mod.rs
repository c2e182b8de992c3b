//! Exports of a finished nest: `render` (pictures per RenderSettings: SVG or PNG of the
//! requested size, labels, colours), `dxf` (DXFExportSettings, PartsExport, remnant files) and
//! `remnants` (the unused material per RemnantGenerationSettings).

pub mod common_edges;
pub mod dxf;
pub mod remnants;
pub mod render;

use crate::nest2d::{Placement, Problem, SheetLayout, SheetSpec};

/// Part `part` of `problem` alone, placed unrotated at (`x`, `y`) on a `width` x `height`
/// rectangular sheet: the one-part problem and its layout. The part previews of reports and
/// the PartsExport draw and write a part through the layout exporters this way.
pub(crate) fn part_alone(
    problem: &Problem,
    part: usize,
    (x, y): (f64, f64),
    (width, height): (f64, f64),
) -> (Problem, SheetLayout) {
    let mut sheet =
        SheetSpec::rectangle(&problem.parts[part].id, width.max(1e-6), height.max(1e-6));
    sheet.quantity = Some(1);
    let alone = Problem {
        parts: vec![problem.parts[part].clone()],
        sheets: vec![sheet],
        settings: problem.settings.clone(),
    };
    let layout = SheetLayout {
        sheet: 0,
        multiplicity: 1,
        placements: vec![Placement {
            part: 0,
            instance: 0,
            x,
            y,
            rotation: 0.0,
            mirrored: false,
            is_filler: false,
        }],
        utilisation: 0.0,
        used_length: 0.0,
        common_cuts: Vec::new(),
    };
    (alone, layout)
}
