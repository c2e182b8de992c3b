//! Common-line cutting: the same multi-sheet instance (jagua-rs JSON with a `sheets` list, as
//! `kerf bench sheets` reads) nested with every part cut alone and with common cuts. The
//! figures: sheets, utilisation, the cutter's travel (every outline as drawn, less what the
//! common cuts save), the cuts made, seconds; every layout checked from the instance file
//! (placements) and by the exact verifier with its cuts.

use super::esicup::layouts_svg;
use super::sheets::{check_solution, problem, solution, Instance, Solution};
use crate::nest2d::cut_check::SharedCuts;
use crate::nest2d::verify::verify_layout;
use crate::nest2d::{self, CancelHandle, CommonCutting, Settings};
use kerf_kernels::Evaluator;

pub struct Outcome {
    pub parts: u32,
    pub placed: u32,
    pub sheets: u32,
    /// Percent, over every sheet (the last to its used length).
    pub utilisation: f64,
    /// Millimetres the cutter travels, all sheets.
    pub cut_length: f64,
    /// Common cuts, all sheets.
    pub cuts: usize,
    pub seconds: f64,
    pub verified: Result<(), String>,
    pub solution: Solution,
    pub svg: String,
    pub png: Vec<u8>,
}

/// Nests `inst` with every part allowed to share cuts, in blocks of at most `block` copies (0:
/// the importance's), when `cutting` is given (the settings' CommonCutSettings); alone
/// otherwise.
pub fn run(
    inst: &Instance,
    mut settings: Settings,
    cutting: Option<CommonCutting>,
    block: u32,
    eval: &dyn Evaluator,
) -> anyhow::Result<Outcome> {
    settings.common_cutting = cutting;
    let mut problem = problem(inst, settings);
    for p in &mut problem.parts {
        p.common_cut = problem.settings.common_cutting.as_ref().map(|_| block);
    }
    let result = nest2d::nest(&problem, eval, &CancelHandle::default(), &|_| {})?;
    let gap = problem
        .settings
        .common_cutting
        .as_ref()
        .map_or(0.0, |c| c.gap);
    let mut verified = Ok(());
    let (mut cut_length, mut cuts) = (0.0, 0);
    for layout in &result.layouts {
        let def = &inst.sheets[layout.sheet];
        let shapes = nest2d::placed_shapes(&problem, layout);
        let cut_rule = SharedCuts {
            cuts: &layout.common_cuts,
            gap,
        };
        if let Some(v) = verify_layout(&problem.sheets[layout.sheet], &shapes, cut_rule).first() {
            verified = Err(format!("sheet {}: {v}", def.id));
        }
        cut_length += layout.multiplicity as f64 * nest2d::cut_length(&problem, layout);
        cuts += layout.multiplicity as usize * layout.common_cuts.len();
    }
    let written = solution(inst, &result);
    if verified.is_ok() {
        verified = check_solution(inst, &written);
    }
    Ok(Outcome {
        parts: result.stats.parts_requested,
        placed: result.stats.parts_placed,
        sheets: result.stats.sheets_used,
        utilisation: result.stats.utilisation,
        cut_length,
        cuts,
        seconds: result.stats.elapsed_s,
        verified,
        svg: layouts_svg(&problem, &result.layouts),
        png: crate::export::render::render(
            &problem,
            &result.layouts,
            &crate::export::render::RenderOptions {
                format: crate::export::render::RenderFormat::Png,
                ..Default::default()
            },
        )?
        .bytes,
        solution: written,
    })
}
