//! Engine results -> wire bodies: the layout (NestingResultResponse), the webhook's status
//! message and the report (ReportSourceResponseV1). One place builds each figure, so the
//! webhook, the result endpoint and the CLI's file agree.

use super::responses::*;
use crate::nest2d::{NestResult, Problem};

/// NestingStatus values (DESIGN 5.3).
pub const STATUS_INTERIM: i32 = 0;
pub const STATUS_COMPLETE: i32 = 1;
pub const STATUS_ERROR: i32 = 2;

fn statistics(r: &NestResult) -> NestStatistics {
    NestStatistics {
        utilisation: r.stats.utilisation,
        sheets_used: r.stats.sheets_used,
        parts_requested: r.stats.parts_requested,
        parts_placed: r.stats.parts_placed,
        parts_unplaced: r.stats.parts_unplaced,
        used_length: r.stats.used_length,
        elapsed_seconds: r.stats.elapsed_s,
    }
}

fn unplaced(problem: &Problem, r: &NestResult) -> Vec<UnplacedPart> {
    r.unplaced
        .iter()
        .map(|u| UnplacedPart {
            part_identifier: problem.parts[u.part].id.clone(),
            unplaced_quantity: u.quantity,
            reason: u.reason.clone(),
        })
        .collect()
}

/// The machine-readable layout.
pub fn layout(
    problem: &Problem,
    r: &NestResult,
    request_id: &str,
    result_id: &str,
) -> NestingResultResponse {
    NestingResultResponse {
        result_identity: result_id.into(),
        request_id: request_id.into(),
        units: "mm".into(),
        engine: r.engine.clone(),
        sheets: r
            .layouts
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (w, h) = problem.sheets[l.sheet].extent();
                SheetLayoutBody {
                    sheet_identifier: problem.sheets[l.sheet].id.clone(),
                    layout_index: i as u32,
                    multiplicity: l.multiplicity,
                    x_dimension: w,
                    y_dimension: h,
                    utilisation: l.utilisation,
                    used_length: l.used_length,
                    placements: l
                        .placements
                        .iter()
                        .map(|p| PlacementBody {
                            part_identifier: problem.parts[p.part].id.clone(),
                            instance_index: p.instance,
                            x: p.x,
                            y: p.y,
                            rotation: p.rotation,
                            mirrored: p.mirrored,
                            is_filler: p.is_filler,
                        })
                        .collect(),
                    common_cuts: l
                        .common_cuts
                        .iter()
                        .map(|c| CommonCutBody {
                            x1: c.from.x,
                            y1: c.from.y,
                            x2: c.to.x,
                            y2: c.to.y,
                            part_identifiers: c
                                .parts
                                .iter()
                                .map(|&k| problem.parts[l.placements[k].part].id.clone())
                                .collect(),
                            instance_indices: c
                                .parts
                                .iter()
                                .map(|&k| l.placements[k].instance)
                                .collect(),
                        })
                        .collect(),
                }
            })
            .collect(),
        unplaced_parts: unplaced(problem, r),
        statistics: statistics(r),
    }
}

/// The webhook's status message for a result (`nesting_status` 0 interim or 1 final).
pub fn status_message(
    problem: &Problem,
    r: &NestResult,
    result_id: &str,
    nesting_status: i32,
) -> NestingStatusMessage {
    let s = statistics(r);
    NestingStatusMessage {
        nesting_status,
        result_identity: Some(result_id.into()),
        error_report: None,
        error_code: None,
        utilisation: Some(s.utilisation),
        sheets_used: Some(s.sheets_used),
        parts_requested: Some(s.parts_requested),
        parts_placed: Some(s.parts_placed),
        parts_unplaced: Some(s.parts_unplaced),
        elapsed_seconds: Some(s.elapsed_seconds),
        units: Some("mm".into()),
        nested_sheets_info: r
            .layouts
            .iter()
            .map(|l| {
                let (w, h) = problem.sheets[l.sheet].extent();
                NestedSheetInfo {
                    sheet_identifier: problem.sheets[l.sheet].id.clone(),
                    multiplicity: l.multiplicity,
                    x_dimension: w,
                    y_dimension: h,
                    utilisation: l.utilisation,
                    used_length: l.used_length,
                    part_count: l.placements.len() as u32,
                }
            })
            .collect(),
        unplaced_parts: unplaced(problem, r),
    }
}

/// The Error delivery's status message: summary fields absent, the reason in ErrorReport.
pub fn error_message(code: &str, report: &str) -> NestingStatusMessage {
    NestingStatusMessage {
        nesting_status: STATUS_ERROR,
        error_report: Some(report.into()),
        error_code: Some(code.into()),
        ..Default::default()
    }
}

/// The report of a result, without its Status (added when it is served).
pub fn report(layout: &NestingResultResponse, problem: &Problem) -> ReportSourceResponseV1 {
    let placed_of = |id: &str| -> u32 {
        layout
            .sheets
            .iter()
            .map(|s| {
                s.multiplicity
                    * s.placements
                        .iter()
                        .filter(|p| p.part_identifier == id && !p.is_filler)
                        .count() as u32
            })
            .sum()
    };
    ReportSourceResponseV1 {
        result_identity: layout.result_identity.clone(),
        request_id: layout.request_id.clone(),
        units: layout.units.clone(),
        summary: layout.statistics.clone(),
        nests: layout
            .sheets
            .iter()
            .map(|s| ReportNest {
                layout_index: s.layout_index,
                sheet_identifier: s.sheet_identifier.clone(),
                multiplicity: s.multiplicity,
                x_dimension: s.x_dimension,
                y_dimension: s.y_dimension,
                utilisation: s.utilisation,
                used_length: s.used_length,
                part_count: s.placements.len() as u32,
                placements: s.placements.clone(),
                base64_encoded_rendering: None,
                render_format: None,
            })
            .collect(),
        parts: problem
            .parts
            .iter()
            .map(|p| ReportPart {
                part_identifier: p.id.clone(),
                part_name: p.id.clone(),
                requested: p.quantity,
                placed: placed_of(&p.id),
                area: p.geometry.area(),
                base64_encoded_preview: None,
            })
            .collect(),
        unplaced_parts: layout.unplaced_parts.clone(),
        status: None,
    }
}

/// A stored layout back as engine layouts on `problem` (the problem its request converts to):
/// parts and sheets found by identifier. Used by the exports, which draw and write what was
/// delivered, not a new nest.
pub fn layouts_of(
    layout: &NestingResultResponse,
    problem: &Problem,
) -> Result<Vec<crate::nest2d::SheetLayout>, String> {
    layout
        .sheets
        .iter()
        .map(|s| {
            let sheet = problem
                .sheets
                .iter()
                .position(|sh| sh.id == s.sheet_identifier)
                .ok_or_else(|| {
                    format!(
                        "the result's sheet {} is not in the request",
                        s.sheet_identifier
                    )
                })?;
            let placements = s
                .placements
                .iter()
                .map(|p| {
                    let part = problem
                        .parts
                        .iter()
                        .position(|q| q.id == p.part_identifier)
                        .ok_or_else(|| {
                            format!(
                                "the result's part {} is not in the request",
                                p.part_identifier
                            )
                        })?;
                    Ok(crate::nest2d::Placement {
                        part,
                        instance: p.instance_index,
                        x: p.x,
                        y: p.y,
                        rotation: p.rotation,
                        mirrored: p.mirrored,
                        is_filler: p.is_filler,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let common_cuts = s
                .common_cuts
                .iter()
                .map(|c| common_cut_of(c, &placements, problem))
                .collect::<Result<Vec<_>, String>>()?;
            Ok(crate::nest2d::SheetLayout {
                sheet,
                multiplicity: s.multiplicity,
                placements,
                utilisation: s.utilisation,
                used_length: s.used_length,
                common_cuts,
            })
        })
        .collect()
}

/// A stored common cut back in engine terms: its parts found by identifier and instance.
fn common_cut_of(
    c: &CommonCutBody,
    placements: &[crate::nest2d::Placement],
    problem: &Problem,
) -> Result<crate::nest2d::CommonCut, String> {
    if c.instance_indices.len() != c.part_identifiers.len() {
        return Err("a common cut's InstanceIndices do not pair with its PartIdentifiers".into());
    }
    let parts = c
        .part_identifiers
        .iter()
        .zip(&c.instance_indices)
        .map(|(id, &instance)| {
            placements
                .iter()
                .position(|p| problem.parts[p.part].id == *id && p.instance == instance)
                .ok_or_else(|| {
                    format!("a common cut names {id} #{instance}, which is not on its sheet")
                })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(crate::nest2d::CommonCut {
        from: crate::geometry::Point::new(c.x1, c.y1),
        to: crate::geometry::Point::new(c.x2, c.y2),
        parts,
    })
}
