//! Several sheets searched as one strip: a chain.
//!
//! The strip search (`search::Compactor`) packs parts most densely when it shortens one strip:
//! every shrink pulls the parts at the end inside, and the guided local search finds them room
//! among all the others. A chain is sheets put end to end along the fill direction (each in its
//! own canonical frame, shifted by a whole number of cells), with a wall of blocked cells
//! between each two, so the compactor shortens it as it shortens a strip and every sheet but the
//! last is packed as the strip search packs a strip, up to a straight edge. The multi-sheet
//! search (`sheets`) fills a sheet this way: the sheet and two more of its type hold its share
//! of the parts, and what ends on the first stays.
//!
//! The walls are whole cells wide and start where the rasters of parts at the sheet's edge end
//! (`Link`), so a part past its sheet's edge overlaps a blocked cell. Sheets of different
//! heights block the cells above (and below) the shorter ones; an irregular sheet brings its own
//! blocked cells. A part that still ends up across a wall (a notch can straddle one) belongs to
//! no sheet: `split` hands it back. Which sheet a part is on is decided on each sheet's own exact
//! bounds, never on the walls' raster.

use super::engine::{sheet_area, FilledSheet, Item, Resolution};
use super::frame::Frame;
use super::model::Problem;
use super::search::{Pose, SheetArea};
use kerf_kernels::PartRaster;

/// Whole cells of wall between two sheets.
const WALL_CELLS: i32 = 2;

/// One sheet of the chain.
struct Link {
    sheet: usize,
    frame: Frame,
    area: SheetArea,
    /// Shift of the sheet's canonical frame along the chain, in cells.
    offset: i32,
    /// The sheet's reach in its own pose cells: no raster at a legal pose covers a column at or
    /// past `x_end` or a row at or past `y_end` (for the orientation that ends first; others
    /// may lose a cell at the edge), nor begins left of `x_start` or below `y_start` (for the
    /// orientation that starts last). Walls begin and end there, so a part in a wall is a part
    /// past its sheet's edge.
    x_start: i32,
    x_end: i32,
    y_start: i32,
    y_end: i32,
}

impl Link {
    fn new(problem: &Problem, si: usize, res: &Resolution) -> Link {
        let s = &problem.settings;
        let (w, h) = problem.sheets[si].extent();
        let frame = Frame::new(s, w, h);
        let area = sheet_area(problem, si, &frame, res.cell, res.margin);
        let (mut x_start, mut x_end, mut y_start, mut y_end) =
            (i32::MIN, i32::MAX, i32::MIN, i32::MAX);
        for o in res.table.iter().flatten() {
            if let Some(b) = area.bounds(o, f64::INFINITY) {
                x_start = x_start.max(b.x_lo);
                y_start = y_start.max(b.y_lo);
                x_end = x_end.min(b.x_hi + o.raster.width() as i32);
                y_end = y_end.min(b.y_hi + o.raster.height() as i32);
            }
        }
        if x_end == i32::MAX {
            // no part fits the sheet: it stays empty, walled off whole
            let c = res.cell;
            (x_start, y_start) = ((area.x0 / c).floor() as i32, (area.y0 / c).floor() as i32);
            (x_end, y_end) = (x_start, y_start);
        }
        Link {
            sheet: si,
            frame,
            area,
            offset: 0,
            x_start,
            x_end,
            y_start,
            y_end,
        }
    }
}

/// The sheets of a multi-sheet layout end to end, as one area the compactor can search.
pub(super) struct Chain {
    /// The whole chain: walls and the blocked cells of every sheet in `blocked`.
    pub(super) area: SheetArea,
    links: Vec<Link>,
}

impl Chain {
    /// Chains the sheet types `sheets`, in that order, at resolution `res`.
    pub(super) fn new(problem: &Problem, sheets: &[usize], res: &Resolution) -> Chain {
        let c = res.cell;
        let mut links: Vec<Link> = Vec::with_capacity(sheets.len());
        for &si in sheets {
            let mut link = Link::new(problem, si, res);
            if let Some(prev) = links.last() {
                link.offset = prev.offset + prev.x_end + WALL_CELLS - link.x_start;
            }
            links.push(link);
        }
        let first = &links[0];
        let last = &links[links.len() - 1];
        let mut area = SheetArea {
            cell: c,
            x0: first.area.x0 + first.offset as f64 * c,
            y0: links
                .iter()
                .map(|l| l.area.y0)
                .fold(f64::INFINITY, f64::min),
            x1: last.area.x1 + last.offset as f64 * c,
            y1: links
                .iter()
                .map(|l| l.area.y1)
                .fold(f64::NEG_INFINITY, f64::max),
            blocked: None,
            margin: res.margin,
        };
        area.blocked = Some(blocked_cells(&area, &links));
        Chain { area, links }
    }

    /// The chain layout cut back into sheets (one per link, in chain order, empty ones too), and
    /// the items that lie on no sheet (across a wall).
    pub(super) fn split(
        &self,
        items: &[Item],
        poses: &[Pose],
        res: &Resolution,
    ) -> (Vec<FilledSheet>, Vec<Item>) {
        let mut sheets: Vec<FilledSheet> = self
            .links
            .iter()
            .map(|l| FilledSheet {
                sheet: l.sheet,
                frame: l.frame,
                area: l.area.clone(),
                table: res.table.clone(),
                placed: Vec::new(),
                nudges: Vec::new(),
            })
            .collect();
        let mut stray = Vec::new();
        for (item, pose) in items.iter().zip(poses) {
            let o = &res.table[item.part][pose.orient];
            let home = self.links.iter().position(|l| {
                let gx = pose.gx - l.offset;
                l.area.bounds(o, f64::INFINITY).is_some_and(|b| {
                    (b.x_lo..=b.x_hi).contains(&gx) && (b.y_lo..=b.y_hi).contains(&pose.gy)
                })
            });
            match home {
                Some(k) => sheets[k].placed.push((
                    *item,
                    Pose {
                        gx: pose.gx - self.links[k].offset,
                        ..*pose
                    },
                )),
                None => stray.push(*item),
            }
        }
        (sheets, stray)
    }
}

/// The chain's blocked cells, on its grid (placed at (-margin, -margin) like any sheet's): the
/// walls between sheets, the rows a shorter sheet does not have, and each irregular sheet's own.
fn blocked_cells(chain: &SheetArea, links: &[Link]) -> PartRaster {
    let (c, m) = (chain.cell, chain.margin);
    let width = ((chain.x1 / c).ceil() as i32 + 2 * m + 2) as u32;
    let height = ((chain.y1 / c).ceil() as i32 + 2 * m + 2) as u32;
    let eps = 1e-9 * (chain.y1 - chain.y0).abs().max(1.0);
    let last = links.len() - 1;
    // the sheet each pose column belongs to (None: a wall); grid column k is pose column k - m
    let owner: Vec<Option<&Link>> = (0..width as i32)
        .map(|k| {
            let p = k - m;
            links.iter().enumerate().find_map(|(j, l)| {
                let from = if j == 0 {
                    i32::MIN
                } else {
                    l.offset + l.x_start
                };
                let to = if j == last {
                    i32::MAX
                } else {
                    l.offset + l.x_end
                };
                (from..to).contains(&p).then_some(l)
            })
        })
        .collect();
    PartRaster::from_cells(width, height, |x, y| {
        let (k, q) = (y as i32, y as i32 - m);
        match owner[x as usize] {
            None => true,
            Some(l) => match &l.area.blocked {
                // an irregular sheet: its own grid, shifted by its offset
                Some(b) => {
                    let kx = x as i32 - l.offset;
                    kx < 0
                        || kx >= b.width() as i32
                        || k >= b.height() as i32
                        || b.contains(kx as u32, k as u32)
                }
                // a sheet lower than the chain (or starting higher): the rows it lacks
                None => {
                    (l.area.y1 < chain.y1 - eps && q >= l.y_end)
                        || (l.area.y0 > chain.y0 + eps && q < l.y_start)
                }
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::engine::resolution;
    use crate::nest2d::model::{PartSpec, Settings, SheetSpec};
    use kerf_kernels::pair_overlap;

    /// A 20 x 20 sheet and a lower 20 x 12 one, and a 5 x 5 square part.
    fn problem() -> Problem {
        Problem {
            parts: vec![PartSpec::new(
                "square",
                PartGeometry::single(Shape::rectangle(5.0, 5.0)),
                4,
            )],
            sheets: vec![
                SheetSpec::rectangle("tall", 20.0, 20.0),
                SheetSpec::rectangle("low", 20.0, 12.0),
            ],
            settings: Settings::default(),
        }
    }

    fn item(instance: u32) -> Item {
        Item {
            part: 0,
            instance,
            is_filler: false,
        }
    }

    #[test]
    fn a_part_past_its_sheets_edge_meets_a_wall_and_one_inside_does_not() {
        let p = problem();
        let res = resolution(&p, 32.0);
        let chain = Chain::new(&p, &[0, 1, 0], &res);
        let blocked = chain.area.blocked.as_ref().expect("walls");
        let m = chain.area.margin;
        let o = &res.table[0][0];
        let on_blocked = |gx: i32, gy: i32| pair_overlap(&o.raster, gx, gy, blocked, -m, -m);
        for (k, link) in chain.links.iter().enumerate() {
            let b = link.area.bounds(o, f64::INFINITY).expect("the part fits");
            let (lo, hi) = (b.x_lo + link.offset, b.x_hi + link.offset);
            // every corner of the sheet is free to the part (the low sheet's top included)
            for (gx, gy) in [(lo, b.y_lo), (hi, b.y_lo), (lo, b.y_hi), (hi, b.y_hi)] {
                assert_eq!(on_blocked(gx, gy), 0, "sheet {k} at ({gx}, {gy})");
            }
            // a cell past an edge between sheets is on a wall
            if k + 1 < chain.links.len() {
                assert!(on_blocked(hi + 1, b.y_lo) > 0, "past sheet {k}'s end");
            }
            if k > 0 {
                assert!(on_blocked(lo - 1, b.y_lo) > 0, "before sheet {k}'s start");
            }
        }
        // the low sheet lacks the tall one's upper rows
        let low = &chain.links[1];
        let b = low.area.bounds(o, f64::INFINITY).unwrap();
        assert!(on_blocked(b.x_lo + low.offset, b.y_hi + 1) > 0);
    }

    #[test]
    fn split_puts_each_part_on_its_sheet_and_hands_back_the_rest() {
        let p = problem();
        let res = resolution(&p, 32.0);
        let chain = Chain::new(&p, &[0, 0], &res);
        let o = &res.table[0][0];
        let b0 = chain.links[0].area.bounds(o, f64::INFINITY).unwrap();
        let second = &chain.links[1];
        let b1 = second.area.bounds(o, f64::INFINITY).unwrap();
        let poses = [
            Pose {
                orient: 0,
                gx: b0.x_lo,
                gy: b0.y_lo,
            },
            Pose {
                orient: 0,
                gx: b1.x_hi + second.offset,
                gy: b1.y_lo,
            },
            // across the wall: on neither sheet
            Pose {
                orient: 0,
                gx: b0.x_hi + 1,
                gy: b0.y_lo,
            },
        ];
        let items = [item(0), item(1), item(2)];
        let (sheets, stray) = chain.split(&items, &poses, &res);
        assert_eq!(sheets.len(), 2);
        assert_eq!(sheets[0].placed.len(), 1);
        assert_eq!(sheets[0].placed[0].1.gx, b0.x_lo);
        // in the second sheet's own cells
        assert_eq!(sheets[1].placed[0].1.gx, b1.x_hi);
        assert_eq!(stray.len(), 1);
        assert!(stray[0].same_unit(&item(2)));
    }
}
