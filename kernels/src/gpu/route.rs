//! Which path answers a call to the GPU backend: a dispatch, or the CPU twin in this thread.
//!
//! Both paths give the same integers (the parity tests hold them to it), so the choice changes
//! how long a call takes and never an answer: under an iteration budget a run gives the same
//! layout whichever path answered (under a time limit, as always, speed decides how far the
//! search gets). A fixed threshold on a call's work (`Routing::Threshold`, the rule before the
//! sixteenth session) was tuned once on an H100 with one search per GPU; the crossover moves
//! with the GPU, the host's cores, how many searches share the GPU and how fast the CPU twin
//! is (an H200 came out 0.30 points behind the CPU after the CPU line scan took about 7 % less
//! time, the likely cause; benches/history/gpu.md). So by default (`Routing::Measured`) each kind
//! of call and each power of two of work keeps the wall time of both paths, and a call takes the
//! path expected to be cheaper for calls of its size: its mean there, or scaled from the nearest
//! size where it was timed. The threshold decides only a kind's first calls, until one path has
//! been timed `MIN_SAMPLES` times at some size. The path not taken is timed again now and then
//! (every `REFRESH_CALLS` calls of its size), since the cost of a dispatch changes when other
//! searches start sharing the GPU. What that exploration costs beyond the cheaper path is paid from
//! a budget (`EXPLORE_ALLOWANCE` plus `EXPLORE_SHARE` of the time spent in calls; one exploring
//! call at a time, which may overrun it), except where the other path is expected to cost at most
//! `CHEAP_EXPLORE` times the cheaper one's. So a GPU slower at every size (lavapipe) costs a search
//! a few percent, and one that becomes cheaper is found again.

use std::sync::Mutex;
use std::time::Duration;

/// The kinds of call, each with its own work measure and so its own table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    FirstFits,
    OverlapMaps,
    WeightedMaps,
    /// `weighted_overlap_maps` over lines only (no whole map): the CPU scans them without a
    /// table, the GPU builds one first.
    WeightedLines,
    /// `best_on_lines`: the batched moves of the local search.
    Lines,
}

impl Call {
    const ALL: [Call; 5] = [
        Call::FirstFits,
        Call::OverlapMaps,
        Call::WeightedMaps,
        Call::WeightedLines,
        Call::Lines,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Where a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    Cpu,
    Gpu,
}

impl Path {
    fn index(self) -> usize {
        self as usize
    }

    fn other(self) -> Path {
        match self {
            Path::Cpu => Path::Gpu,
            Path::Gpu => Path::Cpu,
        }
    }
}

/// How a `GpuEvaluator` routes its calls.
pub(crate) enum Routing {
    /// Every call to the GPU, however small (the parity tests, `kerf bench kernels`).
    Always,
    /// Calls with at least this much work (a call kind's own multiple of it) to the GPU, the
    /// rest to the CPU (`KERF_GPU_ROUTE=threshold`).
    Threshold(u64),
    /// The path measured cheaper for calls of the same kind and size (the default).
    Measured(CostRouter),
}

/// A routing decision, handed back with the call's wall time to `Routing::record`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Decision {
    pub path: Path,
    /// Taken to time the path that is not the expected cheaper one: what it costs beyond the
    /// cheaper one's expected time (in ns) is paid from the exploration budget.
    exploring: Option<f64>,
    call: Call,
    bucket: usize,
}

impl Routing {
    /// Routing by measured cost, with the threshold rule at `min_work` as the prior.
    pub fn measured(min_work: u64) -> Routing {
        Routing::Measured(CostRouter::new(min_work))
    }

    pub fn choose(&self, call: Call, work: u64) -> Decision {
        let plain = |path| Decision {
            path,
            exploring: None,
            call,
            bucket: bucket_of(work),
        };
        match self {
            Routing::Always => plain(Path::Gpu),
            Routing::Threshold(min) => plain(prior(call, work, *min)),
            Routing::Measured(router) => router.choose(call, work),
        }
    }

    /// Records a call's wall time; `answered_on` is the CPU when the GPU declined the call.
    pub fn record(&self, decision: Decision, answered_on: Path, elapsed: Duration) {
        if let Routing::Measured(router) = self {
            router.record(decision, answered_on, elapsed);
        }
    }

    /// What the measured routing has seen, one line per call kind and size (empty for the
    /// other routings): for the debug log and `kerf bench`.
    pub fn report(&self) -> String {
        match self {
            Routing::Measured(router) => router.report(),
            _ => String::new(),
        }
    }
}

/// Batched line scans (`best_on_lines`) go to the GPU, under the threshold rule, from
/// `min_work / LINE_WORK_DIVISOR` (lane, shape) pairs: 65,536 at the default. Measured on an
/// H100, each run on 2 cores (the search's strikes per phase on the GPU over those on the CPU
/// twin, against the phase's mean pairs per batch): fu 0.23 at 11k pairs, 0.41 at 22k, 0.69
/// at 39k, 1.4 at 79k; swim 0.67 at 29k, 1.0 at 54k, 2.2 at 154k; shirts 1.9 at 66k, 6.4 at
/// 340k, 20 at 1.2M.
const LINE_WORK_DIVISOR: u64 = 16;
/// Lines scanned by `weighted_overlap_maps` go to the GPU from this many times `min_work`
/// (estimates): the GPU builds a table over every placed raster first.
const WEIGHTED_LINES_FACTOR: u64 = 16;

/// The threshold rule's path for a call: the GPU from the call kind's share of `min_work`.
fn prior(call: Call, work: u64, min_work: u64) -> Path {
    let from = match call {
        Call::FirstFits | Call::OverlapMaps | Call::WeightedMaps => min_work,
        Call::WeightedLines => min_work.saturating_mul(WEIGHTED_LINES_FACTOR),
        Call::Lines => min_work / LINE_WORK_DIVISOR,
    };
    if work >= from {
        Path::Gpu
    } else {
        Path::Cpu
    }
}

/// Sizes of work, by powers of two: 0 for no work, k for 2^(k-1) <= work < 2^k.
const BUCKETS: usize = 65;

fn bucket_of(work: u64) -> usize {
    (u64::BITS - work.leading_zeros()) as usize
}

/// What a call of `path` in `bucket` is expected to take, in ns: its mean there once trusted,
/// else the mean of the nearest bucket where it is trusted (the lower one on a tie), scaled by
/// the ratio of the buckets' work (2 per bucket). Linear scaling fits the CPU twin, whose work
/// grows with the call's; for the GPU, whose dispatch costs the same at any size, it
/// overstates a larger bucket (which exploration then measures) and understates a smaller one
/// (which its first calls then measure). None when the path is trusted in no bucket.
fn estimate(row: &[Cell; BUCKETS], path: Path, bucket: usize) -> Option<f64> {
    let trusted = |b: usize| {
        let c = row[b].paths[path.index()];
        c.trusted().then_some(c.mean_ns)
    };
    (0..BUCKETS).find_map(|d| {
        let below = bucket
            .checked_sub(d)
            .and_then(|b| trusted(b).map(|m| m * 2f64.powi(d as i32)));
        let above = (bucket + d < BUCKETS)
            .then(|| trusted(bucket + d).map(|m| m / 2f64.powi(d as i32)))
            .flatten();
        below.or(above)
    })
}

/// Timings a path needs in a bucket before its mean is trusted over the prior.
const MIN_SAMPLES: u32 = 3;
/// The mean is the plain mean of the first samples, then a moving average over about this many
/// (a path taken is timed at every call) ...
const AVERAGE_OVER: u32 = 8;
/// ... or over this many for a path timed only now and then, so that a path that became the
/// cheaper one is taken again after a few refreshes, not after tens.
const AVERAGE_OVER_EXPLORED: u32 = 2;
/// A path not taken is timed again after this many calls of its kind and size.
const REFRESH_CALLS: u64 = 64;
/// Exploration may cost this much wall time outright (so that the first calls of each size
/// can time both paths) ...
const EXPLORE_ALLOWANCE: Duration = Duration::from_millis(50);
/// ... plus this share of the wall time spent in all calls.
const EXPLORE_SHARE: f64 = 0.02;
/// A path expected to cost at most this many times the cheaper one is timed again whatever is
/// left of the budget: little is lost if it is slower, and it may have become the cheaper.
const CHEAP_EXPLORE: f64 = 1.25;

/// The measured routing: for each call kind and bucket of work, both paths' mean wall time.
pub(crate) struct CostRouter {
    /// The threshold rule's `min_work`: the prior.
    min_work: u64,
    table: Mutex<Table>,
}

struct Table {
    cells: Vec<[Cell; BUCKETS]>,
    /// Whether the GPU has answered a call of each kind: the first one allocates the buffers
    /// the kind keeps and wakes the driver (69 ms on lavapipe against microseconds on the
    /// CPU), so its time is averaged into no bucket (it counts against the budget when it was
    /// taken to explore).
    warmed: [bool; Call::ALL.len()],
    /// Wall time of every call timed, and what exploring cost beyond the paths expected to be
    /// cheaper.
    total: Duration,
    explored: Duration,
    /// An exploring call is running: no other starts until it is recorded (two threads
    /// exploring at once overran the budget by a call each, and the second waited for the
    /// first on the GPU, which doubled its time).
    exploring_now: bool,
}

#[derive(Clone, Copy, Default)]
struct Cell {
    calls: u64,
    paths: [PathCost; 2],
}

#[derive(Clone, Copy, Default)]
struct PathCost {
    samples: u32,
    mean_ns: f64,
    /// `Cell::calls` when this path was last timed.
    timed_at: u64,
}

impl PathCost {
    fn trusted(&self) -> bool {
        self.samples >= MIN_SAMPLES
    }

    fn add(&mut self, ns: f64, at: u64, average_over: u32) {
        self.samples = self.samples.saturating_add(1);
        let n = self.samples.min(average_over) as f64;
        self.mean_ns += (ns - self.mean_ns) / n;
        self.timed_at = at;
    }
}

impl CostRouter {
    pub fn new(min_work: u64) -> CostRouter {
        CostRouter {
            min_work,
            table: Mutex::new(Table {
                cells: vec![[Cell::default(); BUCKETS]; Call::ALL.len()],
                warmed: [false; Call::ALL.len()],
                total: Duration::ZERO,
                explored: Duration::ZERO,
                exploring_now: false,
            }),
        }
    }

    fn choose(&self, call: Call, work: u64) -> Decision {
        let bucket = bucket_of(work);
        let decide = |path, exploring| Decision {
            path,
            exploring,
            call,
            bucket,
        };
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let may_explore = table.explored <= EXPLORE_ALLOWANCE + table.total.mul_f64(EXPLORE_SHARE);
        let row = &mut table.cells[call.index()];
        row[bucket].calls += 1;
        let estimates = [Path::Cpu, Path::Gpu].map(|p| estimate(row, p, bucket));
        let (best, expected) = match estimates {
            [Some(cpu), Some(gpu)] if gpu < cpu => (Path::Gpu, gpu),
            [Some(cpu), Some(_)] => (Path::Cpu, cpu),
            // one path timed for no call of this kind yet: time it when the budget allows
            [Some(cpu), None] => (Path::Cpu, cpu),
            [None, Some(gpu)] => (Path::Gpu, gpu),
            [None, None] => return decide(prior(call, work, self.min_work), None),
        };
        let cell = &row[bucket];
        let other = cell.paths[best.other().index()];
        let other_is_stale = !other.trusted() || cell.calls - other.timed_at >= REFRESH_CALLS;
        let other_is_close =
            estimates[best.other().index()].is_some_and(|e| e <= CHEAP_EXPLORE * expected);
        if other_is_stale && (may_explore || other_is_close) && !table.exploring_now {
            table.exploring_now = true;
            return decide(best.other(), Some(expected));
        }
        decide(best, None)
    }

    fn record(&self, decision: Decision, answered_on: Path, elapsed: Duration) {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        table.total += elapsed;
        if let Some(expected_ns) = decision.exploring {
            table.exploring_now = false;
            // what the exploration cost beyond the path it was taken instead of
            let beyond = elapsed.as_nanos() as f64 - expected_ns;
            table.explored += Duration::from_nanos(beyond.max(0.0) as u64);
        }
        if answered_on == Path::Gpu && !table.warmed[decision.call.index()] {
            table.warmed[decision.call.index()] = true;
            return;
        }
        let cell = &mut table.cells[decision.call.index()][decision.bucket];
        let at = cell.calls;
        let average_over = if decision.exploring.is_some() {
            AVERAGE_OVER_EXPLORED
        } else {
            AVERAGE_OVER
        };
        cell.paths[decision.path.index()].add(elapsed.as_nanos() as f64, at, average_over);
    }

    fn report(&self) -> String {
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut lines = vec![format!(
            "routing: {:.3} s in timed calls, {:.3} s of it spent exploring beyond the cheaper path",
            table.total.as_secs_f64(),
            table.explored.as_secs_f64()
        )];
        for call in Call::ALL {
            for (bucket, cell) in table.cells[call.index()].iter().enumerate() {
                if cell.calls == 0 {
                    continue;
                }
                let us = |p: Path| {
                    let c = cell.paths[p.index()];
                    if c.samples == 0 {
                        "-".to_string()
                    } else {
                        format!("{:.0} us ({})", c.mean_ns / 1e3, c.samples)
                    }
                };
                lines.push(format!(
                    "{call:?} work < 2^{bucket}: {} calls, cpu {}, gpu {}",
                    cell.calls,
                    us(Path::Cpu),
                    us(Path::Gpu)
                ));
            }
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN_WORK: u64 = 1 << 20;

    /// Runs `calls` calls of `work` through `routing`, each path costing what `cost` says, and
    /// returns how many went to the GPU.
    fn run(
        routing: &Routing,
        call: Call,
        work: u64,
        calls: usize,
        cost: impl Fn(Path) -> u64,
    ) -> usize {
        let mut on_gpu = 0;
        for _ in 0..calls {
            let d = routing.choose(call, work);
            if d.path == Path::Gpu {
                on_gpu += 1;
            }
            routing.record(d, d.path, Duration::from_micros(cost(d.path)));
        }
        on_gpu
    }

    #[test]
    fn the_threshold_rule_sends_each_kind_of_call_to_the_gpu_from_its_own_share() {
        let r = Routing::Threshold(MIN_WORK);
        assert_eq!(r.choose(Call::FirstFits, MIN_WORK - 1).path, Path::Cpu);
        assert_eq!(r.choose(Call::FirstFits, MIN_WORK).path, Path::Gpu);
        assert_eq!(r.choose(Call::Lines, MIN_WORK / 16).path, Path::Gpu);
        assert_eq!(r.choose(Call::Lines, MIN_WORK / 16 - 1).path, Path::Cpu);
        assert_eq!(r.choose(Call::WeightedLines, MIN_WORK).path, Path::Cpu);
        assert_eq!(Routing::Always.choose(Call::Lines, 0).path, Path::Gpu);
    }

    #[test]
    fn measured_routing_settles_on_the_cheaper_path_either_way_of_the_prior() {
        // below the prior's threshold, but the GPU is the cheaper: most calls go to it
        let r = Routing::measured(MIN_WORK);
        let on_gpu = run(&r, Call::Lines, 1_000, 1_000, |p| match p {
            Path::Cpu => 400,
            Path::Gpu => 100,
        });
        assert!(on_gpu > 950, "{on_gpu} of 1000 on the GPU");
        // above it, but the CPU is the cheaper: most calls go to the CPU
        let r = Routing::measured(MIN_WORK);
        let on_gpu = run(&r, Call::FirstFits, MIN_WORK * 4, 1_000, |p| match p {
            Path::Cpu => 100,
            Path::Gpu => 400,
        });
        assert!(on_gpu < 50, "{on_gpu} of 1000 on the GPU");
    }

    #[test]
    fn each_size_of_work_is_routed_by_its_own_timings() {
        let r = Routing::measured(MIN_WORK);
        // small calls are cheaper on the CPU, large ones on the GPU
        let cost = |work: u64| {
            move |p: Path| match p {
                Path::Cpu => work / 10,
                Path::Gpu => 500,
            }
        };
        for _ in 0..20 {
            run(&r, Call::Lines, 1_000, 50, cost(1_000));
            run(&r, Call::Lines, 100_000, 50, cost(100_000));
        }
        assert_eq!(r.choose(Call::Lines, 1_000).path, Path::Cpu);
        assert_eq!(r.choose(Call::Lines, 100_000).path, Path::Gpu);
    }

    #[test]
    fn a_path_that_becomes_cheaper_is_found_again() {
        // the GPU is slow while other searches crowd it, then fast
        let r = Routing::measured(MIN_WORK);
        run(&r, Call::Lines, 1 << 20, 2_000, |p| match p {
            Path::Cpu => 100,
            Path::Gpu => 1_000,
        });
        assert_eq!(r.choose(Call::Lines, 1 << 20).path, Path::Cpu);
        let on_gpu = run(&r, Call::Lines, 1 << 20, 2_000, |p| match p {
            Path::Cpu => 100,
            Path::Gpu => 20,
        });
        assert!(
            on_gpu > 1_500,
            "{on_gpu} of 2000 on the GPU after it got faster"
        );
    }

    #[test]
    fn exploring_the_slower_path_stays_within_its_budget() {
        // a software adapter: ten times slower than the CPU at every size
        let r = Routing::measured(MIN_WORK);
        let (cpu, gpu) = (200u64, 2_000u64);
        let on_gpu = run(&r, Call::Lines, 1 << 22, 20_000, |p| match p {
            Path::Cpu => cpu,
            Path::Gpu => gpu,
        }) as u64;
        let spent = on_gpu * gpu + (20_000 - on_gpu) * cpu;
        let all_cpu = 20_000 * cpu;
        // the prior sent this size to the GPU; once timed, the GPU gets only the exploration
        // budget: 50 ms plus 2 % of the time spent
        let allowance = EXPLORE_ALLOWANCE.as_micros() as u64;
        // (the prior's first timings and the warm-up are not exploration, and the last call
        // may overrun)
        let slack = (MIN_SAMPLES as u64 + 4) * gpu;
        assert!(
            spent <= all_cpu + allowance + (spent as f64 * EXPLORE_SHARE) as u64 + slack,
            "spent {spent} us against {all_cpu} us on the CPU alone"
        );
        assert!(on_gpu >= MIN_SAMPLES as u64, "the GPU was timed");
    }

    #[test]
    fn once_a_path_is_timed_the_prior_no_longer_decides() {
        // a software adapter: the prior sends large batches to the GPU. The GPU's first call
        // (a warm-up of 100 ms, averaged into nothing) spends the exploration budget, so the
        // GPU is timed at no size; large calls then go to the CPU, timed on small ones, and
        // not to the GPU as the prior would send them
        let r = Routing::measured(MIN_WORK);
        let cost = |work: u64| {
            move |p: Path| match p {
                Path::Cpu => work / 100,
                Path::Gpu => 100_000,
            }
        };
        run(&r, Call::Lines, 1_000, 200, cost(1_000));
        let on_gpu = run(&r, Call::Lines, 1 << 20, 200, cost(1 << 20));
        assert_eq!(on_gpu, 0, "{on_gpu} of 200 large calls on the slower GPU");
        assert_eq!(r.choose(Call::Lines, 1 << 20).path, Path::Cpu);
    }

    #[test]
    fn an_untimed_size_is_estimated_from_the_nearest_timed_one_scaled_by_the_work() {
        let mut row = [Cell::default(); BUCKETS];
        let timed = |mean_ns| PathCost {
            samples: MIN_SAMPLES,
            mean_ns,
            timed_at: 0,
        };
        row[10].paths[Path::Cpu.index()] = timed(1_000.0);
        row[20].paths[Path::Gpu.index()] = timed(50_000.0);
        // twice the work per bucket up, half per bucket down
        assert_eq!(estimate(&row, Path::Cpu, 10), Some(1_000.0));
        assert_eq!(estimate(&row, Path::Cpu, 13), Some(8_000.0));
        assert_eq!(estimate(&row, Path::Cpu, 20), Some(1_024_000.0));
        assert_eq!(estimate(&row, Path::Gpu, 18), Some(12_500.0));
        assert_eq!(estimate(&row, Path::Gpu, 0), Some(50_000.0 / 1_048_576.0));
        assert_eq!(
            estimate(&row, Path::Gpu, BUCKETS - 1),
            Some(50_000.0 * 2f64.powi(44))
        );
        // so a large size goes to the GPU where the CPU, timed on small calls, is priced higher
        // (unscaled, the CPU's 1 us would win), with no budget left to time the CPU there
        let router = CostRouter::new(MIN_WORK);
        router.table.lock().unwrap().cells[Call::Lines.index()] = row;
        router.table.lock().unwrap().explored = Duration::from_secs(1);
        assert_eq!(router.choose(Call::Lines, 1 << 19).path, Path::Gpu);
        // a size with a path timed below and above it: the nearer wins, the lower on a tie
        row[12].paths[Path::Gpu.index()] = timed(400.0);
        assert_eq!(estimate(&row, Path::Gpu, 16), Some(6_400.0));
        assert_eq!(estimate(&row, Path::Gpu, 17), Some(6_250.0));
        assert_eq!(estimate(&row, Path::Gpu, 19), Some(25_000.0));
        assert_eq!(estimate(&[Cell::default(); BUCKETS], Path::Gpu, 19), None);
    }

    #[test]
    fn the_first_gpu_call_of_a_kind_is_a_warm_up_that_counts_in_no_mean() {
        // a first dispatch of a second against 20 us after it: the GPU still wins
        let r = Routing::measured(MIN_WORK);
        let mut first = true;
        let mut on_gpu = 0;
        for _ in 0..500 {
            let d = r.choose(Call::FirstFits, MIN_WORK * 2);
            let us = match d.path {
                Path::Cpu => 100,
                Path::Gpu if first => 1_000_000,
                Path::Gpu => 20,
            };
            if d.path == Path::Gpu {
                first = false;
                on_gpu += 1;
            }
            r.record(d, d.path, Duration::from_micros(us));
        }
        assert!(on_gpu > 450, "{on_gpu} of 500 on the GPU");
        // a call the GPU declined (answered on the CPU) is no warm-up
        let r = Routing::measured(MIN_WORK);
        let d = r.choose(Call::Lines, MIN_WORK);
        assert_eq!(d.path, Path::Gpu, "the prior");
        r.record(d, Path::Cpu, Duration::from_micros(100));
        let Routing::Measured(router) = &r else {
            unreachable!()
        };
        let table = router.table.lock().unwrap();
        assert!(!table.warmed[Call::Lines.index()]);
        assert_eq!(
            table.cells[Call::Lines.index()][d.bucket].paths[Path::Gpu.index()].samples,
            1
        );
    }

    #[test]
    fn one_exploring_call_runs_at_a_time() {
        let r = Routing::measured(MIN_WORK);
        let us = Duration::from_micros;
        // the CPU timed three times at a small size: the next call explores the GPU
        for _ in 0..MIN_SAMPLES {
            let d = r.choose(Call::Lines, 1_000);
            assert_eq!(d.path, Path::Cpu, "the prior");
            r.record(d, d.path, us(10));
        }
        let exploring = r.choose(Call::Lines, 1_000);
        assert_eq!(
            (exploring.path, exploring.exploring.is_some()),
            (Path::Gpu, true)
        );
        // another thread's call meanwhile does not explore as well
        let meanwhile = r.choose(Call::Lines, 1_000);
        assert_eq!((meanwhile.path, meanwhile.exploring), (Path::Cpu, None));
        r.record(meanwhile, Path::Cpu, us(10));
        r.record(exploring, Path::Gpu, us(10_000));
        // once it is recorded, exploring goes on (the GPU's first call was its warm-up)
        let next = r.choose(Call::Lines, 1_000);
        assert_eq!((next.path, next.exploring.is_some()), (Path::Gpu, true));
    }
}
