//! The CPU backend against brute force on small random rasters.

mod common;

use common::*;
use kerf_kernels::*;

fn brute_overlap(a: &PartRaster, ax: i32, ay: i32, b: &PartRaster, bx: i32, by: i32) -> u64 {
    let mut n = 0;
    for y in 0..a.height() {
        for x in 0..a.width() {
            if a.contains(x, y) {
                let (gx, gy) = (ax + x as i32 - bx, ay + y as i32 - by);
                if gx >= 0 && gy >= 0 && b.contains(gx as u32, gy as u32) {
                    n += 1;
                }
            }
        }
    }
    n
}

#[test]
fn line_scans_match_brute_force() {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let cpu = CpuEvaluator;
    for _ in 0..200 {
        let part = random_raster(&mut rng, 9);
        let others: Vec<(PartRaster, i32, i32, u32)> = (0..3)
            .map(|_| {
                (
                    random_raster(&mut rng, 9),
                    rng.below(20) as i32,
                    rng.below(20) as i32,
                    1 + rng.below(600) as u32,
                )
            })
            .collect();
        let placed: Vec<Placed> = others
            .iter()
            .map(|(r, x, y, w)| Placed {
                raster: r,
                x: *x,
                y: *y,
                weight: *w,
            })
            .collect();
        let fixed = rng.below(20) as i32 - 3;
        for axis in [Axis::X, Axis::Y] {
            let got = cpu.overlap_line(&part, axis, fixed, (-5, 25), &placed);
            for (i, v) in got.iter().enumerate() {
                let p = -5 + i as i32;
                let (x, y) = if axis == Axis::X {
                    (p, fixed)
                } else {
                    (fixed, p)
                };
                let want: u64 = others
                    .iter()
                    .map(|(r, ox, oy, w)| brute_overlap(&part, x, y, r, *ox, *oy) * *w as u64)
                    .sum();
                assert_eq!(*v, want, "{axis:?} at ({x},{y})");
                let pair: u64 = others
                    .iter()
                    .map(|(r, ox, oy, w)| pair_overlap(&part, x, y, r, *ox, *oy) * *w as u64)
                    .sum();
                assert_eq!(pair, want);
            }
        }
    }
}

/// `best_on_lines` with the root measure: each line's least value and its first position are
/// those of the sum, over the shapes, of weight x isqrt(64 x shared cells), counted cell by cell
/// (and with the cells measure, of weight x shared cells, as before).
#[test]
fn line_bests_under_either_measure_match_brute_force() {
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let cpu = CpuEvaluator;
    for _ in 0..150 {
        let part = random_raster(&mut rng, 9);
        let others: Vec<(PartRaster, i32, i32)> = (0..4)
            .map(|_| {
                (
                    random_raster(&mut rng, 9),
                    rng.below(20) as i32,
                    rng.below(20) as i32,
                )
            })
            .collect();
        let scene: Vec<Shape> = others
            .iter()
            .map(|(r, x, y)| Shape {
                raster: r,
                x: *x,
                y: *y,
            })
            .collect();
        let weights: Vec<u32> = (0..scene.len())
            .map(|_| rng.below(3) as u32 * (1 + rng.below(500) as u32))
            .collect();
        let at = rng.below(20) as i32 - 3;
        let lines = vec![
            Candidate {
                raster: &part,
                bounds: Bounds {
                    x_lo: -5,
                    x_hi: 25,
                    y_lo: at,
                    y_hi: at,
                },
            },
            Candidate {
                raster: &part,
                bounds: Bounds {
                    x_lo: at,
                    x_hi: at,
                    y_lo: -5,
                    y_hi: 25,
                },
            },
            // not a line: a rectangle of positions, row by row
            Candidate {
                raster: &part,
                bounds: Bounds {
                    x_lo: 2,
                    x_hi: 9,
                    y_lo: 1,
                    y_hi: 6,
                },
            },
        ];
        for measure in [OverlapMeasure::Cells, OverlapMeasure::RootCells] {
            let mover = Mover {
                weights: weights.clone(),
                lines: lines.clone(),
                measure,
            };
            let got = cpu.best_on_lines(&scene, std::slice::from_ref(&mover));
            for (c, best) in lines.iter().zip(&got[0]) {
                let b = c.bounds;
                let values: Vec<u64> = (b.y_lo..=b.y_hi)
                    .flat_map(|y| (b.x_lo..=b.x_hi).map(move |x| (x, y)))
                    .map(|(x, y)| {
                        others
                            .iter()
                            .zip(&weights)
                            .map(|((r, ox, oy), &w)| {
                                let cells = brute_overlap(&part, x, y, r, *ox, *oy);
                                let cost = match measure {
                                    OverlapMeasure::Cells => cells,
                                    OverlapMeasure::RootCells => (64 * cells).isqrt(),
                                };
                                w as u64 * cost
                            })
                            .sum()
                    })
                    .collect();
                assert_eq!(*best, best_of(&values), "{measure:?} on {b:?}");
            }
        }
    }
}

/// `first_fit` and the grid's free-run summary against brute force on random `w` x `h` grids
/// holding `obstacles` random rasters of up to `big` cells a side (solid ones with runs up to
/// `big`, so that columns hold long obstacles a fit must jump past).
fn first_fit_against_brute_force(seed: u64, w: u32, h: u32, obstacles: usize, big: u64) {
    let mut rng = Rng(seed);
    let cpu = CpuEvaluator;
    for _ in 0..100 {
        let mut occ = Occupancy::new(w, h);
        for _ in 0..obstacles {
            let r = random_raster_runs(&mut rng, big, big);
            occ.place(
                &r,
                rng.below(w as u64) as i32 - 4,
                rng.below(h as u64) as i32 - 4,
            );
        }
        for x in 0..w {
            let (mut best, mut cur) = (0, 0);
            for y in 0..h {
                cur = if occ.is_set(x, y) { 0 } else { cur + 1 };
                best = best.max(cur);
            }
            assert_eq!(occ.max_free_run(x), best, "column {x}");
        }
        let part = random_raster_runs(&mut rng, big.min(w as u64 / 2), big);
        let b = Bounds {
            x_lo: 0,
            x_hi: w as i32 + 6,
            y_lo: 0,
            y_hi: h as i32 + 6,
        };
        let got = cpu.first_fit(&occ, &part, b);
        let fits = |x: i32, y: i32| {
            (0..part.height()).all(|ry| {
                (0..part.width()).all(|rx| {
                    !part.contains(rx, ry)
                        || !occ.is_set((x + rx as i32) as u32, (y + ry as i32) as u32)
                })
            })
        };
        let mut want = None;
        'o: for x in 0..=(w as i32 - part.width() as i32) {
            for y in 0..=(h as i32 - part.height() as i32) {
                if fits(x, y) {
                    want = Some((x, y));
                    break 'o;
                }
            }
        }
        assert_eq!(got, want);
    }
}

#[test]
fn first_fit_finds_the_first_free_position_in_x_then_y_order() {
    first_fit_against_brute_force(42, 24, 16, 4, 8);
}

#[test]
fn first_fit_jumps_past_tall_obstacles_over_several_words_of_a_column() {
    // columns of 150 cells span three words: the column-major jumps cross word boundaries
    first_fit_against_brute_force(1729, 40, 150, 12, 40);
}

#[test]
fn overlap_map_matches_brute_force() {
    let mut rng = Rng(7);
    let cpu = CpuEvaluator;
    for _ in 0..30 {
        let part = random_raster(&mut rng, 7);
        let others: Vec<(PartRaster, i32, i32, u32)> = (0..3)
            .map(|_| {
                (
                    random_raster(&mut rng, 7),
                    rng.below(12) as i32,
                    rng.below(12) as i32,
                    1 + rng.below(300) as u32,
                )
            })
            .collect();
        let placed: Vec<Placed> = others
            .iter()
            .map(|(r, x, y, w)| Placed {
                raster: r,
                x: *x,
                y: *y,
                weight: *w,
            })
            .collect();
        let b = Bounds {
            x_lo: -3,
            x_hi: 14,
            y_lo: -2,
            y_hi: 13,
        };
        let map = cpu.overlap_map(&part, b, &placed);
        assert_eq!(map.len(), 18 * 16);
        for (k, v) in map.iter().enumerate() {
            let (x, y) = (b.x_lo + (k % 18) as i32, b.y_lo + (k / 18) as i32);
            let want: u64 = others
                .iter()
                .map(|(r, ox, oy, w)| brute_overlap(&part, x, y, r, *ox, *oy) * *w as u64)
                .sum();
            assert_eq!(*v, want, "at ({x},{y})");
        }
    }
}
