//! The same input and seed give the same layout on the CPU and the GPU backend (on lavapipe in
//! CI). With KERF_REQUIRE_GPU=1 a missing adapter is a failure; without it the test says it
//! compared nothing.

use kerf::geometry::{PartGeometry, Point, Shape};
use kerf::nest2d::*;
use kerf_kernels::{CpuEvaluator, Evaluator, GpuEvaluator};

fn part(id: &str, outline: &[(f64, f64)], quantity: u32) -> PartSpec {
    let pts = outline.iter().map(|&(x, y)| Point::new(x, y)).collect();
    PartSpec {
        rotations: vec![0.0, 90.0, 180.0, 270.0],
        allow_mirror: true,
        ..PartSpec::new(id, PartGeometry::single(Shape::new(pts, vec![])), quantity)
    }
}

/// The GPU backend with every evaluation on the device however small, or `None` (and a note)
/// when there is no adapter and KERF_REQUIRE_GPU is not 1.
fn gpu_or_skip() -> Option<GpuEvaluator> {
    adapter_or_skip().map(GpuEvaluator::every_call_on_gpu)
}

/// The GPU backend as a service opens it (its calls routed by measured cost), or `None` as
/// for `gpu_or_skip`.
fn adapter_or_skip() -> Option<GpuEvaluator> {
    match GpuEvaluator::new(true) {
        Ok(g) => Some(g),
        Err(why) => {
            assert!(
                std::env::var("KERF_REQUIRE_GPU").as_deref() != Ok("1"),
                "KERF_REQUIRE_GPU=1 but no GPU adapter: {why}"
            );
            eprintln!("NOTE: no GPU adapter ({why}); nothing compared");
            None
        }
    }
}

fn parts(scale: u32) -> Vec<PartSpec> {
    vec![
        part(
            "L",
            &[
                (0.0, 0.0),
                (40.0, 0.0),
                (40.0, 10.0),
                (12.0, 10.0),
                (12.0, 30.0),
                (0.0, 30.0),
            ],
            4 * scale,
        ),
        part("tri", &[(0.0, 0.0), (30.0, 0.0), (0.0, 22.0)], 5 * scale),
        part(
            "sq",
            &[(0.0, 0.0), (14.0, 0.0), (14.0, 14.0), (0.0, 14.0)],
            3 * scale,
        ),
    ]
}

/// Nests on both backends and asserts the same answer; returns the GPU's.
fn same_on_both(problem: &Problem, gpu: &GpuEvaluator) -> NestResult {
    let on_cpu = nest(problem, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    let on_gpu = nest(problem, gpu, &CancelHandle::default(), &|_| {}).unwrap();
    assert_eq!(gpu.failure(), None, "the GPU answered itself");
    assert!(on_gpu.engine.starts_with("gpu: "), "{}", on_gpu.engine);
    assert_eq!(on_cpu.engine, "cpu");
    assert_eq!(on_cpu.layouts, on_gpu.layouts);
    assert_eq!(on_cpu.unplaced, on_gpu.unplaced);
    on_gpu
}

/// An iteration budget, not the clock, ends the search, so the run is reproducible; the time
/// limit is far away so no step is cut short by a slow device. The overlap measure is the
/// cell count, the one the GPU's line shader computes (under the root measure the line scans
/// go to the CPU twin: the first test checks that too, and the default, a thread of each).
fn reproducible() -> Settings {
    Settings {
        max_iterations: Some(6),
        max_run_time_s: 600.0,
        seed: 3,
        max_cpu: 1,
        cells_per_part: 10.0,
        part_spacing: 1.0,
        overlap_measure: ThreadMeasures::Cells,
        ..Default::default()
    }
}

/// The parts once on sheets of 160 x 90, three at most: they fit on one.
fn small_job(settings: Settings) -> Problem {
    let mut sheet = SheetSpec::rectangle("s", 160.0, 90.0);
    sheet.quantity = Some(3);
    Problem {
        parts: parts(1),
        sheets: vec![sheet],
        settings,
    }
}

/// Both ways of evaluating the local search's moves: one by one, and in batches (one
/// `best_on_lines` call, one GPU dispatch, per pass).
const MOVES: [Moves; 2] = [Moves::OneByOne, Moves::Batched];

#[test]
fn same_input_and_seed_give_the_same_layout_on_cpu_and_gpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    for moves in MOVES {
        for measure in [
            ThreadMeasures::Cells,
            ThreadMeasures::Root,
            ThreadMeasures::Mixed,
        ] {
            let before = gpu.answered();
            let problem = small_job(Settings {
                moves,
                overlap_measure: measure,
                // (mixed: a thread of each measure)
                max_cpu: if measure == ThreadMeasures::Mixed {
                    2
                } else {
                    1
                },
                ..reproducible()
            });
            let on_gpu = same_on_both(&problem, &gpu);
            let calls = gpu.answered() - before;
            if measure == ThreadMeasures::Cells {
                assert!(
                    calls > 20,
                    "first-fit and the local search ran on the GPU ({calls} calls, {moves:?})"
                );
            }
            assert_eq!(on_gpu.stats.parts_placed, 12);
            eprintln!(
                "same layout on cpu and {} ({calls} GPU calls, {moves:?}, {measure:?})",
                gpu.name()
            );
        }
    }
}

#[test]
fn the_multi_sheet_search_gives_the_same_sheets_on_cpu_and_gpu() {
    let Some(gpu) = gpu_or_skip() else { return };
    // three times the parts on a smaller sheet: the search over all sheets runs (shares, strip
    // and cut, insertions at least-overlap starts, emptying the last sheet); each move mode on
    // one thread, and the default measures on two (a densifying thread of each)
    let cases = MOVES
        .map(|moves| (moves, ThreadMeasures::Cells, 1))
        .into_iter()
        .chain([(Moves::Batched, ThreadMeasures::Mixed, 2)]);
    for (moves, overlap_measure, max_cpu) in cases {
        let problem = Problem {
            parts: parts(3),
            sheets: vec![SheetSpec::rectangle("s", 100.0, 70.0)],
            settings: Settings {
                moves,
                overlap_measure,
                max_cpu,
                ..reproducible()
            },
        };
        let on_gpu = same_on_both(&problem, &gpu);
        assert!(
            on_gpu.stats.sheets_used >= 3,
            "a multi-sheet job ({moves:?})"
        );
        assert_eq!(on_gpu.stats.parts_placed, 36, "{moves:?}");
    }
}

#[test]
fn the_depth_weighted_overlap_measure_gives_the_same_layout_on_cpu_and_gpu() {
    // every placed part enters the GPU's scene with its deeper levels as more shapes
    let problem = small_job(Settings {
        overlap_depth: "0.0625:1,0.125:2,0.25:4".parse().unwrap(),
        ..reproducible()
    });
    // (the levels are really there: parts of these sizes have cells deep enough)
    let (_, table) = kerf::nest2d::engine::orientation_table(&problem, 10.0);
    assert!(table.iter().flatten().any(|o| !o.depth.is_empty()));
    let Some(gpu) = gpu_or_skip() else { return };
    let on_gpu = same_on_both(&problem, &gpu);
    assert_eq!(on_gpu.stats.parts_placed, 12);
}

#[test]
fn wide_moves_give_the_same_layout_on_cpu_and_gpu() {
    // rows spread over the sheet's height join every move's lines; the layout differs from
    // the one without them (they are really scanned) and is the same on both backends
    let problem = |sampled_rows| {
        small_job(Settings {
            sampled_rows,
            ..reproducible()
        })
    };
    let on_cpu = |rows| {
        nest(
            &problem(rows),
            &CpuEvaluator,
            &CancelHandle::default(),
            &|_| {},
        )
    };
    let (plain, wide) = (on_cpu(0).unwrap(), on_cpu(6).unwrap());
    assert_ne!(plain.layouts, wide.layouts, "the rows change the moves");
    let Some(gpu) = gpu_or_skip() else { return };
    let on_gpu = same_on_both(&problem(6), &gpu);
    assert_eq!(on_gpu.stats.parts_placed, 12);
}

#[test]
fn calls_routed_by_measured_cost_give_the_same_layout_as_the_cpu() {
    // the default routing times both paths and sends each call where it has been cheaper:
    // which path answers changes from run to run, the layout never does
    let Some(gpu) = adapter_or_skip().map(GpuEvaluator::routed_by_measured_cost) else {
        return;
    };
    let problem = small_job(Settings {
        moves: Moves::Batched,
        ..reproducible()
    });
    let on_gpu = same_on_both(&problem, &gpu);
    assert_eq!(on_gpu.stats.parts_placed, 12);
    let report = gpu.routing_report();
    eprintln!("{report}");
    // the GPU was tried within the exploration budget (the prior sends these small calls to
    // the CPU), and the local search's batches were timed
    assert!(gpu.answered() > 0, "the GPU answered some calls\n{report}");
    assert!(
        report.lines().any(|l| l.starts_with("Lines work")),
        "the batched line scans were timed\n{report}"
    );
}
