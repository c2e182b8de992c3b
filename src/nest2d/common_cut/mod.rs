//! Common-line cutting (CommonCutSettings): copies of a part that allows it (AllowCommonCutIfEnabled)
//! are grouped into blocks whose straight edges coincide at the CommonCutGap (`blocks`); each
//! block nests as one part whose components are its copies, so the search, the sheets and the
//! verifier need nothing new; the result is then expanded back into the copies' placements and
//! the cuts they share, and the exact verifier checks it again with those cuts.

mod blocks;

pub use blocks::same_angle;
use blocks::{blocks_of, Block, Limits};

use super::engine::{enforce_verified, quick_unplaced, NestError};
use super::model::*;
use super::verify::{nesting_geometry, part_spacing};
use crate::geometry::{Affine, PartGeometry};
use kerf_kernels::Evaluator;

/// A problem with blocks in place of copies, and what each of its parts stands for.
pub(super) struct Plan {
    /// What the engine nests.
    pub problem: Problem,
    /// For each part of `problem`: the request's part, and the block when it is one.
    origins: Vec<(usize, Option<Block>)>,
}

impl Plan {
    /// The plan for `problem`, or None when no part forms a block (the problem then nests as
    /// it is). Each eligible part takes the best of its blocks (`offers`) while enough copies
    /// are left for it, then the best that takes fewer; the copies left over are cut alone.
    ///
    /// With a limited stock of sheets a block may find no room where its copies alone would:
    /// a quick first-fit of the plan (`engine::quick_unplaced`) must leave no more copies out
    /// than one of the parts alone, or the parts whose blocks it left out get smaller blocks
    /// (at most half as many copies), a few times, then none.
    pub fn of(problem: &Problem, eval: &dyn Evaluator) -> Option<Plan> {
        let cc = problem.settings.common_cutting.as_ref()?;
        let start = std::time::Instant::now();
        let offers: Vec<Vec<Block>> = (0..problem.parts.len())
            .map(|i| offers(problem, i, cc))
            .collect();
        let mut caps: Vec<usize> = vec![usize::MAX; problem.parts.len()];
        let mut plan = Plan::with(problem, &offers, &caps)?;
        if problem.sheets.iter().any(|s| s.quantity.is_some()) {
            let alone: u32 = quick_unplaced(problem, eval).iter().sum();
            for _ in 0..4 {
                let left = quick_unplaced(&plan.problem, eval);
                let copies = |k: usize| plan.origins[k].1.as_ref().map_or(1, |b| b.len() as u32);
                if left
                    .iter()
                    .enumerate()
                    .map(|(k, &n)| n * copies(k))
                    .sum::<u32>()
                    <= alone
                {
                    break;
                }
                for (k, &n) in left.iter().enumerate() {
                    if let (true, (part, Some(b))) = (n > 0, &plan.origins[k]) {
                        caps[*part] = caps[*part].min(b.len() / 2);
                    }
                }
                plan = Plan::with(problem, &offers, &caps)?;
            }
        }
        tracing::info!(
            seconds = start.elapsed().as_secs_f64(),
            blocks = plan.origins.iter().filter(|(_, b)| b.is_some()).count(),
            "common cut: blocks planned"
        );
        // planning is part of the time limit
        let s = &mut plan.problem.settings;
        s.max_run_time_s = (s.max_run_time_s - start.elapsed().as_secs_f64()).max(0.0);
        Some(plan)
    }

    /// The plan with each part's blocks (from `offers`) at most `caps[part]` copies, or None
    /// when no part forms a block.
    fn with(problem: &Problem, offers: &[Vec<Block>], caps: &[usize]) -> Option<Plan> {
        let mut parts: Vec<PartSpec> = Vec::new();
        let mut origins: Vec<(usize, Option<Block>)> = Vec::new();
        for (i, p) in problem.parts.iter().enumerate() {
            let mut alone = p.clone();
            alone.common_cut = None;
            let small = offers[i].iter().filter(|b| b.len() <= caps[i]);
            for (block, count) in take_copies(p.quantity, small) {
                alone.quantity -= count * block.len() as u32;
                parts.push(PartSpec {
                    id: format!("{} (block of {})", p.id, block.len()),
                    geometry: block.geometry(&nesting_geometry(problem, i)),
                    quantity: count,
                    // every member's turn relative to the block is allowed at each of these
                    // (`relative_rotations`)
                    rotations: p.rotations.clone(),
                    allow_mirror: p.allow_mirror,
                    priority: p.priority,
                    spacing_override: p.spacing_override,
                    nest_as_rectangle: false,
                    filler_quantity: 0,
                    kit: None,
                    common_cut: None,
                });
                origins.push((i, Some(block)));
            }
            // the copies no block took, and the fillers, are cut alone
            if alone.quantity > 0 || alone.filler_quantity > 0 {
                parts.push(alone);
                origins.push((i, None));
            }
        }
        origins.iter().any(|(_, b)| b.is_some()).then(|| Plan {
            problem: Problem {
                parts,
                sheets: problem.sheets.clone(),
                settings: problem.settings.clone(),
            },
            origins,
        })
    }

    /// The engine's result on the plan's problem as a result of `original`: each block's
    /// copies placed one by one (numbered per part in sheet order, fillers after the required
    /// copies), its cuts in sheet coordinates, unplaced blocks counted as their copies. The
    /// caller runs the exact verifier on it (`nest_in_blocks`; interim results, as the
    /// engine's own, are verified by whoever passes them on).
    fn expand(&self, original: &Problem, r: &NestResult) -> NestResult {
        let mut next: Vec<u32> = vec![0; original.parts.len()];
        let mut next_filler: Vec<u32> = original.parts.iter().map(|p| p.quantity).collect();
        let mut layouts = Vec::with_capacity(r.layouts.len());
        for l in &r.layouts {
            // (placement, cuts in sheet coordinates with members as indices into `placed`)
            let mut placed: Vec<Placement> = Vec::new();
            let mut cuts: Vec<CommonCut> = Vec::new();
            for p in &l.placements {
                let (part, block) = &self.origins[p.part];
                let mut number = |filler: bool| {
                    let n = if filler { &mut next_filler } else { &mut next };
                    n[*part] += 1;
                    n[*part] - 1
                };
                let Some(block) = block else {
                    placed.push(Placement {
                        part: *part,
                        instance: number(p.is_filler),
                        ..p.clone()
                    });
                    continue;
                };
                let at = Affine::placement(p.mirrored, p.rotation, p.x, p.y);
                let first = placed.len();
                for m in &block.members {
                    let o = at.apply(m.offset);
                    let turned = if p.mirrored {
                        p.rotation - m.rotation
                    } else {
                        p.rotation + m.rotation
                    };
                    placed.push(Placement {
                        part: *part,
                        instance: number(false),
                        x: o.x,
                        y: o.y,
                        rotation: allowed_angle(&original.parts[*part].rotations, turned),
                        mirrored: p.mirrored,
                        is_filler: false,
                    });
                }
                cuts.extend(block.cuts.iter().map(|c| CommonCut {
                    from: at.apply(c.from),
                    to: at.apply(c.to),
                    parts: c.parts.iter().map(|k| first + k).collect(),
                }));
            }
            // placements in (part, instance) order, as the engine gives them; cuts follow
            let mut order: Vec<usize> = (0..placed.len()).collect();
            order.sort_by_key(|&k| (placed[k].part, placed[k].instance));
            let mut index = vec![0; placed.len()];
            for (new, &old) in order.iter().enumerate() {
                index[old] = new;
            }
            for c in &mut cuts {
                for k in &mut c.parts {
                    *k = index[*k];
                }
                c.parts.sort_unstable();
            }
            // the layout's other sheets hold copies of their own (numbered as the engine
            // numbers repeated sheets: the layout shows its first sheet's)
            for p in &placed {
                let n = if p.is_filler {
                    &mut next_filler
                } else {
                    &mut next
                };
                n[p.part] += l.multiplicity - 1;
            }
            layouts.push(SheetLayout {
                placements: order.iter().map(|&k| placed[k].clone()).collect(),
                common_cuts: cuts,
                ..l.clone()
            });
        }
        let mut unplaced: Vec<Unplaced> = Vec::new();
        for u in &r.unplaced {
            let (part, block) = &self.origins[u.part];
            let quantity = u.quantity * block.as_ref().map_or(1, |b| b.len() as u32);
            match unplaced
                .iter_mut()
                .find(|v| v.part == *part && v.reason == u.reason)
            {
                Some(v) => v.quantity += quantity,
                None => unplaced.push(Unplaced {
                    part: *part,
                    quantity,
                    reason: u.reason.clone(),
                }),
            }
        }
        let requested: u32 = original.parts.iter().map(|p| p.quantity).sum();
        let placed: u32 = layouts
            .iter()
            .map(|l| l.multiplicity * l.placements.iter().filter(|p| !p.is_filler).count() as u32)
            .sum();
        NestResult {
            layouts,
            unplaced,
            stats: Statistics {
                parts_requested: requested,
                parts_placed: placed,
                parts_unplaced: requested.saturating_sub(placed),
                ..r.stats.clone()
            },
            engine: r.engine.clone(),
        }
    }
}

/// How much of the material a block may give up against its part alone, by `tiling`: none
/// when common cutting matters little, more the more it matters. (Measured on
/// `benches/data/commoncut`: at High, rectangles kept their sheet count with 27 % less cutting.)
fn tolerance(importance: CutImportance) -> f64 {
    match importance {
        CutImportance::Low => 0.0,
        CutImportance::Medium => 0.05,
        CutImportance::High => 0.10,
    }
}

/// How densely boxes of `extent` holding `area` of material fill the best sheet when laid in
/// a plain grid (turned a quarter when `turns`), `spacing` apart: a cheap measure of how much
/// material a block's size costs against the part alone (a block too big for the sheet
/// leaves a strip no copy of it fills).
fn tiling(problem: &Problem, extent: (f64, f64), area: f64, spacing: f64, turns: bool) -> f64 {
    problem
        .sheets
        .iter()
        .map(|sh| {
            let (w, h) = sh.extent();
            let (uw, uh) = (w - sh.left - sh.right, h - sh.top - sh.bottom);
            let fit = |bw: f64, bh: f64| {
                ((uw + spacing) / (bw + spacing) + 1e-9).floor()
                    * ((uh + spacing) / (bh + spacing) + 1e-9).floor()
            };
            let n = if turns {
                fit(extent.0, extent.1).max(fit(extent.1, extent.0))
            } else {
                fit(extent.0, extent.1)
            };
            n * area / (uw * uh)
        })
        .fold(0.0, f64::max)
}

/// Every block a part may nest in, best first: those that fit a sheet and whose plain tiling
/// of the sheet keeps the material the importance asks for (`tolerance`). Empty when the part
/// is not eligible (common cut not allowed, part of a kit, several outlines, nested as a
/// rectangle without being one, larger than CommonCutPartsMaximumDimensionX/Y, fewer than two
/// copies, gap wider than its spacing) or has no straight edge to share.
fn offers(problem: &Problem, part: usize, cc: &CommonCutting) -> Vec<Block> {
    let p = &problem.parts[part];
    let Some(limit) = p.common_cut else {
        return Vec::new();
    };
    let g = nesting_geometry(problem, part);
    let b = p.geometry.bbox();
    let true_shape =
        !p.nest_as_rectangle || p.geometry.area() >= b.width() * b.height() * (1.0 - 1e-9);
    let small = cc.max_part_x.is_none_or(|x| b.width() <= x)
        && cc.max_part_y.is_none_or(|y| b.height() <= y);
    if p.kit.is_some() || g.components().len() != 1 || !true_shape || !small || p.quantity < 2 {
        return Vec::new();
    }
    let spacing = part_spacing(problem, part);
    let turns = p
        .rotations
        .iter()
        .any(|&r| same_angle(r, 90.0) || same_angle(r, 270.0));
    let alone = tiling(
        problem,
        (b.width(), b.height()),
        p.geometry.area(),
        spacing,
        turns,
    );
    let keep = 1.0 - tolerance(cc.importance);
    let fits = |block: &Block| {
        block_fits_a_sheet(problem, &g, block, &p.rotations)
            && tiling(
                problem,
                block.extent,
                p.geometry.area() * block.len() as f64,
                spacing,
                turns,
            ) >= alone * keep
    };
    blocks_of(
        &g.components()[0],
        cc,
        &Limits {
            cap: cc.block_cap(limit).min(p.quantity),
            spacing,
            rotations: &relative_rotations(&p.rotations, p.allow_mirror),
            fits: &fits,
        },
    )
}

/// How `quantity` copies go into blocks (best first): the best block while enough copies are
/// left for it, then the next best that takes fewer; the rest are cut alone.
fn take_copies<'a>(quantity: u32, offers: impl Iterator<Item = &'a Block>) -> Vec<(Block, u32)> {
    let mut left = quantity;
    let mut plan = Vec::new();
    for b in offers {
        let n = b.len() as u32;
        if n <= left {
            let count = left / n;
            left -= count * n;
            plan.push((b.clone(), count));
        }
    }
    plan
}

/// Rotations a block's member may take relative to the block: those r for which every allowed
/// block rotation t has t + r (and t - r when mirrored) allowed too. 0 always qualifies.
fn relative_rotations(rotations: &[f64], mirror: bool) -> Vec<f64> {
    [0.0, 180.0]
        .into_iter()
        .filter(|&r| {
            rotations.iter().all(|&t| {
                rotations.iter().any(|&u| same_angle(u, t + r))
                    && (!mirror || rotations.iter().any(|&u| same_angle(u, t - r)))
            })
        })
        .collect()
}

/// The allowed rotation equal to `angle` (so a member's Rotation is one of its part's exact
/// angles, not 450 or -90); `angle` itself when none is (cannot happen for a checked block).
fn allowed_angle(rotations: &[f64], angle: f64) -> f64 {
    rotations
        .iter()
        .copied()
        .find(|&r| same_angle(r, angle))
        .unwrap_or(angle.rem_euclid(360.0))
}

/// Whether the block fits the usable area of some sheet in some allowed rotation (by its box).
fn block_fits_a_sheet(
    problem: &Problem,
    part: &PartGeometry,
    block: &Block,
    rotations: &[f64],
) -> bool {
    let g = block.geometry(part);
    rotations.iter().any(|&r| {
        let b = g.transformed(&Affine::rotate_deg(r)).bbox();
        problem.sheets.iter().any(|sh| {
            let (w, h) = sh.extent();
            b.width() <= (w - sh.left - sh.right) * (1.0 + 1e-9)
                && b.height() <= (h - sh.top - sh.bottom) * (1.0 + 1e-9)
        })
    })
}

/// Nests with blocks where the settings and parts ask for them: `nest` for the plan's problem,
/// its interim and final results expanded.
pub(super) fn nest_in_blocks(
    plan: &Plan,
    original: &Problem,
    run: impl FnOnce(&Problem, &(dyn Fn(&NestResult) + Sync)) -> Result<NestResult, NestError>,
    on_interim: &(dyn Fn(&NestResult) + Sync),
) -> Result<NestResult, NestError> {
    let expand_interim = |r: &NestResult| on_interim(&plan.expand(original, r));
    let r = run(&plan.problem, &expand_interim)?;
    let mut out = plan.expand(original, &r);
    enforce_verified(original, &mut out);
    Ok(out)
}

/// The length a cutter travels for one layout (one sheet of it): every placed part's outlines
/// and holes as drawn, less what its common cuts save (each shared stretch cut once).
pub fn cut_length(problem: &Problem, layout: &SheetLayout) -> f64 {
    let drawn: f64 = layout
        .placements
        .iter()
        .map(|p| problem.parts[p.part].geometry.cut_length())
        .sum();
    if layout.common_cuts.is_empty() {
        return drawn;
    }
    let gap = problem
        .settings
        .common_cutting
        .as_ref()
        .map_or(0.0, |c| c.gap);
    let shapes = super::engine::placed_shapes(problem, layout);
    let saved: f64 = layout
        .common_cuts
        .iter()
        .map(|c| super::cut_check::saving(c, &shapes, gap))
        .sum();
    drawn - saved
}
