//! The wgpu backend gives the CPU backend's answers, integer for integer. On a machine with a
//! Vulkan driver (CI: lavapipe) these run on the GPU; with KERF_REQUIRE_GPU=1 a missing adapter
//! is a failure; without it the tests say plainly that they checked the CPU backend only.

mod common;

use common::*;
use kerf_kernels::*;

fn random_occupancy(rng: &mut Rng, w: u32, h: u32, parts: usize) -> Occupancy {
    let mut occ = Occupancy::new(w, h);
    for _ in 0..parts {
        let r = random_raster_runs(rng, 12, 5);
        occ.place(
            &r,
            rng.below(w as u64) as i32 - 4,
            rng.below(h as u64) as i32 - 4,
        );
    }
    occ
}

/// The GPU backend, or None (and why) when this machine has no Vulkan adapter.
fn gpu() -> Option<GpuEvaluator> {
    // every call on the GPU, however small (production routes each call to the path it
    // measured cheaper for calls of its size, often the CPU twin for small ones)
    match GpuEvaluator::new(true).map(|g| g.every_call_on_gpu()) {
        Ok(g) => {
            eprintln!("parity on {}", g.name());
            Some(g)
        }
        Err(why) => {
            assert!(
                std::env::var("KERF_REQUIRE_GPU").as_deref() != Ok("1"),
                "KERF_REQUIRE_GPU=1 but no GPU adapter: {why}"
            );
            eprintln!("NOTE: no GPU adapter ({why}); checked the CPU backend only");
            None
        }
    }
}

/// Asserts that the CPU backend, and the GPU backend when there is one, answer `call` with
/// `want` (`what` and `round` name the case in a failure).
fn assert_every_backend<T: PartialEq + std::fmt::Debug>(
    gpu: &Option<GpuEvaluator>,
    what: &str,
    round: usize,
    want: &T,
    call: impl Fn(&dyn Evaluator) -> T,
) {
    assert_eq!(&call(&CpuEvaluator), want, "{what}: cpu, round {round}");
    if let Some(g) = gpu {
        assert_eq!(&call(g), want, "{what}: gpu, round {round}");
    }
}

fn brute(occ: &Occupancy, r: &PartRaster, x: i32, y: i32) -> u32 {
    let mut n = 0;
    for ry in 0..r.height() {
        for rx in 0..r.width() {
            if r.contains(rx, ry) {
                let (gx, gy) = (x + rx as i32, y + ry as i32);
                let outside =
                    gx < 0 || gy < 0 || gx >= occ.width() as i32 || gy >= occ.height() as i32;
                if outside || occ.is_set(gx as u32, gy as u32) {
                    n += 1;
                }
            }
        }
    }
    n
}

#[test]
fn rectangles_cover_each_raster_exactly_once() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let r = random_raster_runs(&mut rng, 20, 5);
        let mut covered = vec![0u8; (r.width() * r.height()) as usize];
        for q in r.rects() {
            for y in q[1]..q[3] {
                for x in q[0]..q[2] {
                    covered[(y * r.width() + x) as usize] += 1;
                }
            }
        }
        for y in 0..r.height() {
            for x in 0..r.width() {
                assert_eq!(
                    covered[(y * r.width() + x) as usize],
                    r.contains(x, y) as u8
                );
            }
        }
    }
}

#[test]
fn overlap_maps_agree_with_brute_force_on_every_backend() {
    let gpu = gpu();
    let mut rng = Rng(0xC0FFEE);
    for round in 0..12 {
        let (w, h) = (20 + rng.below(60) as u32, 10 + rng.below(40) as u32);
        let occ = random_occupancy(&mut rng, w, h, 3 + round);
        let rasters: Vec<PartRaster> = (0..4)
            .map(|_| random_raster_runs(&mut rng, 14, 5))
            .collect();
        // bounds reach past the grid on every side: outside cells count as set
        let candidates: Vec<Candidate> = rasters
            .iter()
            .map(|r| Candidate {
                raster: r,
                bounds: Bounds {
                    x_lo: -3 - rng.below(4) as i32,
                    x_hi: w as i32 - 2 + rng.below(4) as i32,
                    y_lo: -2,
                    y_hi: h as i32 + 1,
                },
            })
            .collect();
        let want: Vec<Vec<u32>> = candidates
            .iter()
            .map(|c| {
                let b = c.bounds;
                let mut m = vec![];
                for y in b.y_lo..=b.y_hi {
                    for x in b.x_lo..=b.x_hi {
                        m.push(brute(&occ, c.raster, x, y));
                    }
                }
                m
            })
            .collect();
        assert_every_backend(&gpu, "overlap maps", round, &want, |e| {
            e.occupancy_overlap_maps(&occ, &candidates)
        });
    }
    if let Some(g) = &gpu {
        assert_eq!(
            g.failure(),
            None,
            "the GPU answered itself, without falling back"
        );
    }
}

#[test]
fn first_fits_agree_on_every_backend() {
    let gpu = gpu();
    let cpu = CpuEvaluator;
    let mut rng = Rng(99);
    for round in 0..40 {
        let (w, h) = (16 + rng.below(80) as u32, 8 + rng.below(50) as u32);
        let occ = random_occupancy(&mut rng, w, h, 2 + (round % 9) as usize);
        let rasters: Vec<PartRaster> = (0..6)
            .map(|_| random_raster_runs(&mut rng, 16, 5))
            .collect();
        let candidates: Vec<Candidate> = rasters
            .iter()
            .map(|r| Candidate {
                raster: r,
                bounds: Bounds {
                    x_lo: rng.below(10) as i32 - 2,
                    x_hi: w as i32 + 3,
                    y_lo: rng.below(5) as i32 - 1,
                    y_hi: h as i32 - rng.below(6) as i32,
                },
            })
            .collect();
        // brute force: the first position, x outer and y inner, where the raster's box lies in
        // the grid and covers no set cell
        let want: Vec<Option<(i32, i32)>> = candidates
            .iter()
            .map(|c| {
                let b = c.bounds;
                let (w, h) = (c.raster.width() as i32, c.raster.height() as i32);
                let inside = |x: i32, y: i32| {
                    x >= 0 && y >= 0 && x + w <= occ.width() as i32 && y + h <= occ.height() as i32
                };
                (b.x_lo..=b.x_hi)
                    .flat_map(|x| (b.y_lo..=b.y_hi).map(move |y| (x, y)))
                    .find(|&(x, y)| inside(x, y) && brute(&occ, c.raster, x, y) == 0)
            })
            .collect();
        assert_eq!(cpu.first_fits(&occ, &candidates), want);
        if let Some(g) = &gpu {
            assert_eq!(g.first_fits(&occ, &candidates), want, "round {round}");
        }
    }
    if let Some(g) = &gpu {
        assert_eq!(
            g.failure(),
            None,
            "the GPU answered itself, without falling back"
        );
    }
}

#[test]
fn auto_never_takes_a_software_adapter() {
    let e = choose(Compute::Auto).unwrap();
    if let Some(g) = GpuEvaluator::new(true)
        .ok()
        .filter(|g| g.adapter().is_software())
    {
        // this machine has only a software adapter: auto must have chosen the CPU
        let hardware = GpuEvaluator::new(false).is_ok();
        if !hardware {
            assert_eq!(e.name(), "cpu", "auto skipped {}", g.name());
        }
    }
    assert_eq!(choose(Compute::Cpu).unwrap().name(), "cpu");
    assert!("nonsense".parse::<Compute>().is_err());
}

#[test]
fn weighted_maps_agree_with_line_scans_on_every_backend() {
    let gpu = gpu();
    let cpu = CpuEvaluator;
    let mut rng = Rng(0xFEED);
    for round in 0..10 {
        let rasters: Vec<PartRaster> = (0..5)
            .map(|_| random_raster_runs(&mut rng, 14, 5))
            .collect();
        let others: Vec<Placed> = rasters[1..]
            .iter()
            .map(|r| Placed {
                raster: r,
                x: rng.below(30) as i32 - 10,
                y: rng.below(20) as i32 - 5,
                // big weights too: the 64-bit sums must carry on the GPU
                weight: if round % 3 == 0 {
                    u32::MAX - rng.below(1000) as u32
                } else {
                    1 + rng.below(5000) as u32
                },
            })
            .collect();
        let candidates: Vec<Candidate> = (0..2)
            .map(|_| Candidate {
                raster: &rasters[0],
                bounds: Bounds {
                    x_lo: -20 + rng.below(5) as i32,
                    x_hi: 35,
                    y_lo: -15,
                    y_hi: 25 - rng.below(5) as i32,
                },
            })
            .collect();
        let want: Vec<Vec<u64>> = candidates
            .iter()
            .map(|c| cpu.overlap_map(c.raster, c.bounds, &others))
            .collect();
        assert_every_backend(&gpu, "weighted maps", round, &want, |e| {
            e.weighted_overlap_maps(&others, &candidates)
        });
    }
    if let Some(g) = &gpu {
        assert_eq!(
            g.failure(),
            None,
            "the GPU answered itself, without falling back"
        );
    }
}

/// Tables wider and taller than one segment of the GPU's prefix passes (so each line is
/// summed in parts), and rasters stacked on the same cells with weights near 2^32 (so corners
/// of different rectangles land on one entry and the low words carry on the GPU's atomic adds).
#[test]
fn weighted_maps_agree_on_wide_tables_and_shared_corners() {
    let gpu = gpu();
    let cpu = CpuEvaluator;
    let mut rng = Rng(0x5CA7);
    for round in 0..6 {
        let rasters: Vec<PartRaster> = (0..6)
            .map(|_| random_raster_runs(&mut rng, 24, 9))
            .collect();
        let mut others: Vec<Placed> = rasters[1..]
            .iter()
            .map(|r| Placed {
                raster: r,
                x: rng.below(400) as i32 - 50,
                y: rng.below(260) as i32 - 30,
                weight: 1 + rng.below(u32::MAX as u64 - 1) as u32,
            })
            .collect();
        // three more copies of the first, on its very cells, at the largest weights
        for k in 0..3 {
            others.push(Placed {
                weight: u32::MAX - k,
                ..others[0]
            });
        }
        let candidates: Vec<Candidate> = (0..3)
            .map(|k| Candidate {
                raster: &rasters[0],
                bounds: if k == 0 {
                    // a whole map over the table
                    Bounds {
                        x_lo: -60,
                        x_hi: 380,
                        y_lo: -40,
                        y_hi: 250,
                    }
                } else {
                    // a line through the stacked copies
                    let y = others[0].y + rng.below(10) as i32;
                    Bounds {
                        x_lo: -60,
                        x_hi: 380,
                        y_lo: y,
                        y_hi: y,
                    }
                },
            })
            .collect();
        let want: Vec<Vec<u64>> = candidates
            .iter()
            .map(|c| cpu.overlap_map(c.raster, c.bounds, &others))
            .collect();
        assert!(
            want[0].iter().any(|&v| v > u32::MAX as u64),
            "the sums reach the high word"
        );
        assert_every_backend(&gpu, "weighted maps", round, &want, |e| {
            e.weighted_overlap_maps(&others, &candidates)
        });
    }
    if let Some(g) = &gpu {
        assert_eq!(g.failure(), None, "the GPU answered itself");
        assert_eq!(g.answered(), 6, "every call went to the GPU");
    }
}

/// Batched line scans (`best_on_lines`): every mover's best position on each of its lines,
/// against a brute-force sum of `pair_overlap` x the mover's weight over the scene. Rows and
/// columns, single positions, an empty line, weight 0 (a mover's own place), weights near
/// 2^32 (the GPU's 64-bit sums must carry), and a long shape reaching far left of and below the
/// lines (its corners fold into the lines' first entries).
#[test]
fn best_on_lines_agree_with_brute_force_on_every_backend() {
    let gpu = gpu();
    let mut rng = Rng(0xB47C4);
    for round in 0..8 {
        let mut rasters: Vec<PartRaster> = (0..7)
            .map(|_| random_raster_runs(&mut rng, 16, 6))
            .collect();
        rasters.push(PartRaster::from_cells(90, 70, |x, y| (x + 2 * y) % 7 != 0));
        let scene: Vec<Shape> = rasters
            .iter()
            .enumerate()
            .map(|(k, r)| {
                if k == rasters.len() - 1 {
                    Shape {
                        raster: r,
                        x: -75,
                        y: -60,
                    }
                } else {
                    Shape {
                        raster: r,
                        x: rng.below(40) as i32 - 8,
                        y: rng.below(30) as i32 - 6,
                    }
                }
            })
            .collect();
        let movers: Vec<Mover> = (0..3)
            .map(|m| {
                let weights = (0..scene.len())
                    .map(|s| match (s == m, round % 2) {
                        (true, _) => 0,
                        (false, 0) => 1 + rng.below(5000) as u32,
                        (false, _) => u32::MAX - rng.below(1 << 20) as u32,
                    })
                    .collect();
                let raster = &rasters[rng.below(7) as usize];
                let lines = (0..6)
                    .map(|k| {
                        let (a, b) = (rng.below(30) as i32 - 10, rng.below(30) as i32 - 10);
                        let at = rng.below(40) as i32 - 12;
                        let bounds = match k {
                            0 => Bounds {
                                x_lo: a,
                                x_hi: a,
                                y_lo: at,
                                y_hi: at,
                            },
                            1 => Bounds {
                                x_lo: 5,
                                x_hi: 4,
                                y_lo: at,
                                y_hi: at,
                            },
                            k if k % 2 == 0 => Bounds {
                                x_lo: a.min(b),
                                x_hi: a.max(b) + 25,
                                y_lo: at,
                                y_hi: at,
                            },
                            _ => Bounds {
                                x_lo: at,
                                x_hi: at,
                                y_lo: a.min(b),
                                y_hi: a.max(b) + 25,
                            },
                        };
                        Candidate { raster, bounds }
                    })
                    .collect();
                Mover {
                    weights,
                    lines,
                    measure: OverlapMeasure::Cells,
                }
            })
            .collect();
        let want: Vec<Vec<Option<LineBest>>> = movers
            .iter()
            .map(|m| {
                m.lines
                    .iter()
                    .map(|c| {
                        let b = c.bounds;
                        let mut values = Vec::new();
                        for y in b.y_lo..=b.y_hi {
                            for x in b.x_lo..=b.x_hi {
                                let v: u64 = scene
                                    .iter()
                                    .zip(&m.weights)
                                    .map(|(s, &w)| {
                                        w as u64 * pair_overlap(c.raster, x, y, s.raster, s.x, s.y)
                                    })
                                    .sum();
                                values.push(v);
                            }
                        }
                        best_of(&values)
                    })
                    .collect()
            })
            .collect();
        assert!(want
            .iter()
            .flatten()
            .any(|b| b.is_some_and(|b| b.value > 0)));
        assert_every_backend(&gpu, "best on lines", round, &want, |e| {
            e.best_on_lines(&scene, &movers)
        });
    }
    if let Some(g) = &gpu {
        assert_eq!(g.failure(), None, "the GPU answered itself");
        assert_eq!(g.answered(), 8, "every batch went to the GPU");
    }
}

/// The GPU's batched line scans at the sizes a dispatch splits: lines of more positions than
/// a workgroup has invocations (each integrates a chunk), rasters of more lanes than a
/// workgroup of the scatter pass, and more jobs than one dispatch row holds (65,535). The CPU
/// backend, checked against brute force above, is the reference.
#[test]
fn best_on_lines_agree_on_long_lines_tall_rasters_and_many_jobs() {
    let gpu = gpu();
    let mut rng = Rng(0x7A11);
    let tall = PartRaster::from_cells(40, 150, |x, y| (x * 7 + y * 3) % 11 > 2);
    let small: Vec<PartRaster> = (0..6)
        .map(|_| random_raster_runs(&mut rng, 20, 8))
        .collect();
    let mut scene: Vec<Shape> = small
        .iter()
        .map(|r| Shape {
            raster: r,
            x: rng.below(900) as i32,
            y: rng.below(140) as i32,
        })
        .collect();
    scene.push(Shape {
        raster: &tall,
        x: 300,
        y: 0,
    });
    // a floor under every position of every line, so that no line's least value is 0 and
    // every lane of every raster counts in it; and a ramp that ends far along the long lines,
    // so that their least values lie past the first chunk of a workgroup
    let floor = PartRaster::from_cells(1600, 1000, |_, _| true);
    let ramp = PartRaster::from_cells(1600, 1000, |x, y| x + y < 1500);
    for raster in [&floor, &ramp] {
        scene.push(Shape {
            raster,
            x: -350,
            y: -350,
        });
    }
    let weights: Vec<u32> = (0..scene.len())
        .map(|_| 1 + rng.below(1 << 24) as u32)
        .collect();
    // long rows and columns of the tall raster and of a small one
    let long: Vec<Candidate> = (0..6)
        .map(|k| {
            let raster = if k % 2 == 0 { &tall } else { &small[0] };
            let at = rng.below(100) as i32 - 20;
            let bounds = if k < 4 {
                Bounds {
                    x_lo: -50,
                    x_hi: 1000 + k,
                    y_lo: at,
                    y_hi: at,
                }
            } else {
                Bounds {
                    x_lo: 250 + at,
                    x_hi: 250 + at,
                    y_lo: -200,
                    y_hi: 400,
                }
            };
            Candidate { raster, bounds }
        })
        .collect();
    // and 66,000 one-position lines across the scene, in 3 movers
    let many: Vec<Vec<Candidate>> = (0..3)
        .map(|m| {
            (0..22_000)
                .map(|k| {
                    let (x, y) = ((k * 7 + m * 13) % 950, (k * 3) % 160);
                    Candidate {
                        raster: &small[1 + m],
                        bounds: Bounds {
                            x_lo: x as i32,
                            x_hi: x as i32,
                            y_lo: y as i32,
                            y_hi: y as i32,
                        },
                    }
                })
                .collect()
        })
        .collect();
    let movers: Vec<Mover> = std::iter::once(long)
        .chain(many)
        .map(|lines| Mover {
            weights: weights.clone(),
            lines,
            measure: OverlapMeasure::Cells,
        })
        .collect();
    let want = CpuEvaluator.best_on_lines(&scene, &movers);
    assert!(
        want[0].iter().all(Option::is_some),
        "every long line has positions"
    );
    assert!(
        want[1..]
            .iter()
            .flatten()
            .any(|b| b.is_some_and(|b| b.value > 0)),
        "some one-position lines overlap the scene"
    );
    assert_every_backend(&gpu, "long lines and many jobs", 0, &want, |e| {
        e.best_on_lines(&scene, &movers)
    });
    if let Some(g) = &gpu {
        assert_eq!(g.failure(), None, "the GPU answered itself");
        assert_eq!(g.answered(), 1, "the batch went to the GPU");
    }
    // under the root measure the same batch gives the CPU twin's answers (it computes them)
    let rooted: Vec<Mover> = movers
        .iter()
        .map(|m| Mover {
            measure: OverlapMeasure::RootCells,
            ..m.clone()
        })
        .collect();
    let want = CpuEvaluator.best_on_lines(&scene, &rooted);
    assert_every_backend(&gpu, "long lines under the root measure", 0, &want, |e| {
        e.best_on_lines(&scene, &rooted)
    });
}
