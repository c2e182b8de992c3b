//! The `kerf` binary: subcommands over the library.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "kerf", version, about = "Nesting engine and service")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Nest DXF parts on sheets and write the layout (no server).
    Nest {
        /// A part file, optionally with a quantity: FILE[:QTY] (repeatable).
        #[arg(long = "part", required = true)]
        parts: Vec<String>,
        /// A rectangular sheet: WIDTHxHEIGHT[:QTY] in millimetres (repeatable).
        #[arg(long = "sheet")]
        sheets: Vec<String>,
        /// An irregular sheet outline from a DXF file: FILE[:QTY] (repeatable).
        #[arg(long = "sheet-dxf")]
        sheet_dxfs: Vec<String>,
        /// Minimum distance between parts, in millimetres.
        #[arg(long, default_value_t = 0.0)]
        spacing: f64,
        /// Time limit in seconds.
        #[arg(long, default_value_t = 10.0)]
        time: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Allowed rotations: Any (90-degree steps), None, Rotate90, Rotate180, or a step in degrees.
        #[arg(long, default_value = "Any")]
        rotation: String,
        /// AllowableTilt: degrees a part may turn either side of each allowed rotation (0 to 45).
        #[arg(long, default_value_t = 0.0)]
        tilt: f64,
        /// NestingAngleDegrees: the fill turned from the X axis towards Y, from the bottom-left
        /// corner (0 to under 90).
        #[arg(long, default_value_t = 0.0)]
        angle: f64,
        /// Common-line cutting for every part: pairs, chains or grid, with the gap between the
        /// parts along a cut after a colon (grid:0.5; default 0), importance High.
        #[arg(long = "common-cut")]
        common_cut: Option<String>,
        /// The most copies in a common-cut block (0: the importance's, 9).
        #[arg(long = "cut-block", default_value_t = 0)]
        cut_block: u32,
        #[arg(long)]
        out: PathBuf,
        /// A picture of the layouts (SVG).
        #[arg(long)]
        svg: Option<PathBuf>,
        /// A picture of the layouts (PNG, 1600 pixels wide).
        #[arg(long)]
        png: Option<PathBuf>,
        /// Evaluation backend: auto (a hardware GPU if there is one), gpu (any Vulkan adapter,
        /// lavapipe included), cpu. Default: KERF_COMPUTE, else auto.
        #[arg(long)]
        compute: Option<String>,
    },
    /// A 1D cutting plan: lengths on bars (no server).
    Nest1d {
        /// A stock length: LEN[:QTY[:COST]] (QTY 0 or absent: unlimited; repeatable).
        #[arg(long = "stock", required = true)]
        stock: Vec<String>,
        /// Pieces: LEN:QTY[:ID] (repeatable).
        #[arg(long = "part", required = true)]
        parts: Vec<String>,
        /// Material lost at each cut, in millimetres.
        #[arg(long, default_value_t = 0.0)]
        kerf: f64,
        /// Trimmed off each end of every bar, in millimetres.
        #[arg(long, default_value_t = 0.0)]
        trim: f64,
        /// Time limit in seconds.
        #[arg(long, default_value_t = 2.0)]
        time: f64,
        /// MinimiseStock, MinimiseWaste or MinimiseCost.
        #[arg(long, default_value = "MinimiseStock")]
        objective: String,
    },
    /// Run the HTTP service, its workers and its webhook deliverer on one store
    /// (--no-workers: the HTTP service only, beside `kerf worker` nodes on PostgreSQL).
    Serve {
        /// Answer HTTP only; jobs are run by `kerf worker` nodes on the same PostgreSQL.
        #[arg(long)]
        no_workers: bool,
        /// Address to listen on (port 0: any free port; the bound address is printed).
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: String,
        /// The store: an SQLite file path (created if missing), an sqlite: URL, or a
        /// postgres:// URL (the database several nodes share).
        #[arg(long, default_value = "kerf.db")]
        database: String,
        #[command(flatten)]
        node: kerf::cli::serve::NodeArgs,
        /// Largest request body, in MiB.
        #[arg(long, default_value_t = 64)]
        body_limit_mib: usize,
        /// Nests a key may have waiting beyond its Parallelism (which caps those running);
        /// past that, submissions are refused with 429.
        #[arg(long, default_value_t = 100)]
        max_queued_per_key: i64,
        /// Requests per minute each key may make (a minute's worth may come at once); past
        /// that, 429 with Retry-After. 0: unlimited.
        #[arg(long, default_value_t = 3000)]
        key_requests_per_minute: u32,
        /// The origin (scheme://host[:port]) users reach this server's own pages at, such as
        /// the dashboard (repeatable): requests from it are not held to their key's origins.
        #[arg(long)]
        public_origin: Vec<String>,
        /// How long an export made through the hub (GenerateExport) stays in the export
        /// cache, in minutes.
        #[arg(long, default_value_t = 60.0)]
        export_cache_minutes: f64,
    },
    /// Claim and run jobs and deliver webhooks from a PostgreSQL store shared with other
    /// nodes (no HTTP).
    Worker {
        /// The store: a postgres:// URL.
        #[arg(long)]
        database: String,
        #[command(flatten)]
        node: kerf::cli::serve::NodeArgs,
    },
    /// The live nodes on the store: id, role, compute adapter, slots, host, last heartbeat.
    Nodes {
        /// The store: a postgres:// URL, or an SQLite file.
        #[arg(long, default_value = "kerf.db")]
        database: String,
    },
    /// API keys on the store.
    Keys {
        #[command(subcommand)]
        which: KeysCmd,
    },
    /// Accounts on the store (each with its own keys, jobs and results).
    Accounts {
        #[command(subcommand)]
        which: AccountsCmd,
    },
    /// Benchmarks that print tables.
    Bench {
        #[command(subcommand)]
        which: BenchCmd,
    },
}

#[derive(Subcommand)]
enum KeysCmd {
    /// Create a key on the store's account and print it (alone) on standard output.
    Create {
        #[arg(long, default_value = "kerf.db")]
        database: String,
        /// Usage or Admin.
        #[arg(long = "type", default_value = "Usage")]
        key_type: String,
        /// Your own label for the key.
        #[arg(long, default_value = "")]
        reference: String,
        /// Nests the key may have queued or running at once.
        #[arg(long, default_value_t = 4)]
        parallelism: i64,
        /// Expiry, RFC 3339 (for example 2027-01-31T00:00:00Z); none: never expires.
        #[arg(long)]
        expires: Option<String>,
        /// The account (its id, from `kerf accounts create`); default: the store's first.
        #[arg(long)]
        account: Option<i64>,
    },
}

#[derive(Subcommand)]
enum AccountsCmd {
    /// Create an account and print its id (alone) on standard output; give it keys with
    /// `kerf keys create --account ID`.
    Create {
        #[arg(long, default_value = "kerf.db")]
        database: String,
        #[arg(long)]
        name: String,
    },
    /// Every account with its plan, one line each.
    List {
        #[arg(long, default_value = "kerf.db")]
        database: String,
    },
    /// One account: its plan, this period's nesting time, and its keys.
    Show {
        #[arg(long, default_value = "kerf.db")]
        database: String,
        #[arg(long)]
        account: i64,
    },
    /// Changes an account's plan (only the options given).
    SetPlan {
        #[arg(long, default_value = "kerf.db")]
        database: String,
        #[arg(long)]
        account: i64,
        #[command(flatten)]
        plan: kerf::cli::accounts::PlanArgs,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// ESICUP strip packing (jagua-rs JSON): density at a time limit, layouts written and checked.
    Esicup {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value_t = 60.0)]
        time: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads per instance (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: u32,
        /// Raster resolution: cells across a typical part's smaller side.
        #[arg(long, default_value_t = kerf::nest2d::Settings::default().cells_per_part)]
        cells_per_part: f64,
        #[arg(long)]
        out: PathBuf,
        /// Evaluation backend: auto, gpu or cpu. Default: KERF_COMPUTE, else auto.
        #[arg(long)]
        compute: Option<String>,
        /// How the local search evaluates its moves: batched (one call a pass) or one-by-one.
        #[arg(long, default_value = "batched")]
        moves: kerf::nest2d::Moves,
        /// Rows of positions spread over the strip's height that each move also scans, per
        /// orientation (wide moves; 0: none).
        #[arg(long, default_value_t = 0)]
        sampled_rows: u32,
        /// The overlap measure's depth levels: off, or fraction:extra,... (for example
        /// 0.0625:1,0.125:2,0.25:4: cells 1/16 of a typical part's side deep cost 1 more, ...).
        #[arg(long, default_value = "off")]
        depth_levels: kerf::nest2d::DepthLevels,
        /// What the local search's threads pay for the cells two parts share: cells (the
        /// count itself), root (the square root of 64 x the cells, the pair weights starting
        /// at the parts' sizes) or mixed (the default: even threads cells, odd threads root).
        #[arg(long, default_value = "mixed")]
        overlap_measure: kerf::nest2d::ThreadMeasures,
    },
    /// Multi-sheet nesting (jagua-rs JSON with a `sheets` list): sheets used against the area
    /// bound, sheet equivalents, utilisation of every sheet but the last; layouts written and
    /// checked.
    Sheets {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value_t = 60.0)]
        time: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads per instance (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: u32,
        /// Stop after this many local-search rounds per thread (deterministic runs).
        #[arg(long)]
        iterations: Option<u64>,
        /// None, Low, Medium or High: how strongly identical sheet layouts are preferred.
        #[arg(long, default_value = "None")]
        repeat: String,
        /// Also nest the same parts as one strip of the first sheet's height, in the same time,
        /// and print its density, the sheets the area bound needs at that density (the bar) and
        /// how far the emptiest full sheet lies under it.
        #[arg(long)]
        strip: bool,
        /// Rows of positions spread over a sheet's height that each move also scans, per
        /// orientation (wide moves; 0: none).
        #[arg(long, default_value_t = 0)]
        sampled_rows: u32,
        /// What the local search's threads pay for the cells two parts share: cells, root or
        /// mixed, the default (see `bench esicup`).
        #[arg(long, default_value = "mixed")]
        overlap_measure: kerf::nest2d::ThreadMeasures,
        #[arg(long)]
        out: PathBuf,
        /// Evaluation backend: auto, gpu or cpu. Default: KERF_COMPUTE, else auto.
        #[arg(long)]
        compute: Option<String>,
    },
    /// Common-line cutting: each multi-sheet instance (as `bench sheets` reads) nested with
    /// every part cut alone, then with common cuts: sheets, utilisation, cut length, cuts,
    /// seconds, each layout checked.
    Commoncut {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, default_value_t = 60.0)]
        time: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads per instance (0: all cores).
        #[arg(long, default_value_t = 0)]
        threads: u32,
        /// Part spacing, in millimetres.
        #[arg(long, default_value_t = 5.0)]
        spacing: f64,
        /// Common cut: MODE[:GAP] as `kerf nest --common-cut` takes it.
        #[arg(long, default_value = "grid:0.3")]
        common_cut: String,
        /// The most copies in a block (0: the importance's, 9).
        #[arg(long, default_value_t = 0)]
        block: u32,
        #[arg(long)]
        out: PathBuf,
        /// Evaluation backend: auto, gpu or cpu. Default: KERF_COMPUTE, else auto.
        #[arg(long)]
        compute: Option<String>,
    },
    /// Cutting-stock instances in BPPLIB format. With DIR/optima.csv (published optima): a
    /// table per class of how often the optimum is reached and proven, and how fast. With
    /// DIR/instances.csv (from `bench bpp-generate`): a table per family of bars against the
    /// proven bound and against first-fit decreasing, and seconds against the limit.
    Bpp {
        dir: PathBuf,
        /// Time limit per instance, in seconds.
        #[arg(long, default_value_t = 2.0)]
        time: f64,
        /// Only classes whose name contains this (or the one instance of this name).
        #[arg(long)]
        class: Option<String>,
        /// Also a line per instance: bars, optimum, whether proven, seconds.
        #[arg(long)]
        each: bool,
        /// With DIR/optima.csv: exactly the optimum's bars in stock for each instance (every
        /// piece must be placed within that limit).
        #[arg(long)]
        stock_at_optimum: bool,
    },
    /// Writes large cutting-stock instances (capacities 10^4 to 10^6, 100 to 1,000 lengths, up
    /// to 10,000 pieces, five families) in BPPLIB format, with DIR/instances.csv.
    BppGenerate {
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 50)]
        count: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// How long each export takes for one result: a nest of the DXF files in DIR (copies up
    /// to --parts) on --sheet sheets, then each export type generated as the service does.
    Exports {
        #[arg(default_value = "tests/data")]
        dir: PathBuf,
        #[arg(long, default_value_t = 100)]
        parts: u32,
        /// WIDTHxHEIGHT in millimetres.
        #[arg(long, default_value = "500x400")]
        sheet: String,
        /// Seconds for the nest.
        #[arg(long, default_value_t = 20.0)]
        time: f64,
        /// Runs of each export (the median is printed).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// A quote as the service runs it: every part of the DXF files in DIR (at most --parts),
    /// each --quantity times, priced alone on a --sheet sheet: seconds per sub-nest, parts per
    /// sheet against the area bound and against a grid of bounding boxes.
    Quote {
        #[arg(default_value = "tests/data")]
        dir: PathBuf,
        #[arg(long, default_value_t = 50)]
        parts: usize,
        #[arg(long, default_value_t = 100)]
        quantity: u32,
        /// WIDTHxHEIGHT in millimetres.
        #[arg(long, default_value = "3000x1500")]
        sheet: String,
        /// Seconds per sub-nest (the request's MaxRunTimeSeconds).
        #[arg(long, default_value_t = 2.0)]
        time: f64,
        /// PartSpacing in millimetres.
        #[arg(long, default_value_t = 0.0)]
        spacing: f64,
        /// ESICUP instances whose pieces fill up to --parts when DIR has fewer (one piece from
        /// each in turn, scaled so the strip height is the sheet's shorter side).
        #[arg(long, default_values = ["benches/data/nest2d/jakobs1.json", "benches/data/nest2d/shapes1.json", "benches/data/nest2d/fu.json", "benches/data/nest2d/mao.json", "benches/data/nest2d/marques.json", "benches/data/nest2d/swim.json", "benches/data/nest2d/shirts.json", "benches/data/nest2d/trousers.json", "benches/data/nest2d/albano.json", "benches/data/nest2d/dagli.json"])]
        esicup: Vec<PathBuf>,
        /// Evaluation backend: auto, gpu or cpu. Default: KERF_COMPUTE, else auto.
        #[arg(long)]
        compute: Option<String>,
    },
    /// What building the search's rasters costs on the CPU: each instance's orientation table at
    /// several resolutions, against the seconds a run searches with it.
    Raster {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Resolutions (cells across a typical part's smaller side), comma separated.
        #[arg(long, value_delimiter = ',', default_values_t = [32.0, 64.0, 128.0, 256.0, 512.0])]
        cells_per_part: Vec<f64>,
        /// Evenly spaced rotations per part instead of the instance's own (as a tilt gives).
        #[arg(long)]
        turns: Option<u32>,
        /// Builds per figure; the fastest counts.
        #[arg(long, default_value_t = 3)]
        repeats: u32,
    },
    /// Whole-map overlap evaluations per second (positions x orientations) on each backend:
    /// the CPU backend, and the GPU backend when a Vulkan adapter exists.
    Kernels {
        /// Seconds to aim for per measurement.
        #[arg(long, default_value_t = 2.0)]
        budget: f64,
        /// Only sheets up to this many cells wide (the largest is 16384).
        #[arg(long, default_value_t = 16384)]
        max_sheet: u32,
        /// Skip the GPU even when there is one.
        #[arg(long)]
        cpu_only: bool,
    },
    /// Fair sharing through a real `kerf serve`: key A floods the queue with short nests,
    /// then key B submits a few (all at once, or one per nest run time); each key's wait from
    /// submission to Running.
    Fairness {
        #[arg(long, default_value_t = 200)]
        a_nests: usize,
        #[arg(long, default_value_t = 10)]
        b_nests: usize,
        /// Job slots of the server; each key's Parallelism too.
        #[arg(long, default_value_t = 2)]
        slots: usize,
        /// MaxRunTimeSeconds of every nest.
        #[arg(long, default_value_t = 1.0)]
        nest_seconds: f64,
        /// burst, trickle or both.
        #[arg(long, default_value = "both")]
        arrival: String,
    },
    /// The live hub under load through a real `kerf serve`: idle connections, subscribers of
    /// running nests, probes timing invocation round trips; memory per connection, round trip
    /// p50/p99, and whether every subscriber got its final result.
    Hub {
        #[arg(long, default_value_t = 2000)]
        idle: usize,
        #[arg(long, default_value_t = 50)]
        subscribers: usize,
        #[arg(long, default_value_t = 10)]
        probes: usize,
        /// MaxRunTimeSeconds of the subscribers' nests.
        #[arg(long, default_value_t = 1.0)]
        nest_seconds: f64,
        /// Job slots of the server.
        #[arg(long, default_value_t = 2)]
        slots: usize,
    },
}

fn main() {
    let cli = Cli::parse();
    // the service logs its jobs and deliveries; the one-shot commands only what goes wrong
    let default_filter = match cli.cmd {
        Cmd::Serve { .. } | Cmd::Worker { .. } => "warn,kerf=info,kerf_kernels=info",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KERF_LOG")
                .unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Nest {
            parts,
            sheets,
            sheet_dxfs,
            spacing,
            time,
            seed,
            rotation,
            tilt,
            angle,
            common_cut,
            cut_block,
            out,
            svg,
            png,
            compute,
        } => kerf::cli::nest::run(kerf::cli::nest::NestArgs {
            compute,
            common_cut,
            cut_block,
            parts,
            sheets,
            sheet_dxfs,
            spacing,
            time,
            seed,
            rotation,
            tilt,
            angle,
            out,
            svg,
            png,
        }),
        Cmd::Nest1d {
            stock,
            parts,
            kerf,
            trim,
            time,
            objective,
        } => kerf::cli::nest1d::run(kerf::cli::nest1d::Nest1dArgs {
            stock,
            parts,
            kerf,
            trim,
            time,
            objective,
        }),
        Cmd::Serve {
            no_workers,
            listen,
            database,
            node,
            body_limit_mib,
            max_queued_per_key,
            key_requests_per_minute,
            public_origin,
            export_cache_minutes,
        } => kerf::cli::serve::run(kerf::cli::serve::ServeArgs {
            role: if no_workers {
                kerf::cluster::Role::Front
            } else {
                kerf::cluster::Role::Serve
            },
            listen,
            database,
            node,
            body_limit_mib,
            max_queued_per_key,
            key_requests_per_minute,
            public_origin,
            export_cache_minutes,
        }),
        Cmd::Worker { database, node } => {
            kerf::cli::serve::run(kerf::cli::serve::ServeArgs::worker(database, node))
        }
        Cmd::Nodes { database } => kerf::cli::nodes::run(&database),
        Cmd::Keys {
            which:
                KeysCmd::Create {
                    database,
                    key_type,
                    reference,
                    parallelism,
                    expires,
                    account,
                },
        } => kerf::cli::keys::create(kerf::cli::keys::CreateArgs {
            database,
            key_type,
            reference,
            parallelism,
            expires,
            account,
        }),
        Cmd::Accounts {
            which: AccountsCmd::Create { database, name },
        } => kerf::cli::accounts::create(&database, &name),
        Cmd::Accounts {
            which: AccountsCmd::List { database },
        } => kerf::cli::accounts::list(&database),
        Cmd::Accounts {
            which: AccountsCmd::Show { database, account },
        } => kerf::cli::accounts::show(&database, account),
        Cmd::Accounts {
            which:
                AccountsCmd::SetPlan {
                    database,
                    account,
                    plan,
                },
        } => kerf::cli::accounts::set_plan(&database, account, &plan),
        Cmd::Bench {
            which:
                BenchCmd::Esicup {
                    files,
                    time,
                    seed,
                    threads,
                    cells_per_part,
                    out,
                    compute,
                    moves,
                    sampled_rows,
                    depth_levels,
                    overlap_measure,
                },
        } => bench_esicup(
            &files,
            &out,
            compute.as_deref(),
            kerf::nest2d::Settings {
                max_run_time_s: time,
                seed,
                max_cpu: threads,
                cells_per_part,
                objective: kerf::nest2d::Objective::MinimiseLength,
                moves,
                sampled_rows,
                overlap_measure,
                overlap_depth: depth_levels,
                ..Default::default()
            },
        ),
        Cmd::Bench {
            which:
                BenchCmd::Sheets {
                    files,
                    time,
                    seed,
                    threads,
                    iterations,
                    repeat,
                    strip,
                    sampled_rows,
                    overlap_measure,
                    out,
                    compute,
                },
        } => bench_sheets(
            &files,
            SheetsBenchArgs {
                time,
                seed,
                threads,
                iterations,
                repeat: &repeat,
                strip,
                sampled_rows,
                overlap_measure,
                compute: compute.as_deref(),
            },
            &out,
        ),
        Cmd::Bench {
            which:
                BenchCmd::Commoncut {
                    files,
                    time,
                    seed,
                    threads,
                    spacing,
                    common_cut,
                    block,
                    out,
                    compute,
                },
        } => bench_commoncut(
            &files,
            kerf::nest2d::Settings {
                max_run_time_s: time,
                seed,
                max_cpu: threads,
                part_spacing: spacing,
                ..Default::default()
            },
            &common_cut,
            block,
            compute.as_deref(),
            &out,
        ),
        Cmd::Bench {
            which:
                BenchCmd::Bpp {
                    dir,
                    time,
                    class,
                    each,
                    stock_at_optimum,
                },
        } => {
            // published optima (BPPLIB) or a generated list (`bench bpp-generate`)
            if dir.join("instances.csv").exists() && !dir.join("optima.csv").exists() {
                if stock_at_optimum {
                    anyhow::bail!("--stock-at-optimum needs DIR/optima.csv (published optima)");
                }
                bench_bpp_large(&dir, time, class.as_deref(), each)
            } else {
                bench_bpp(&dir, time, class.as_deref(), each, stock_at_optimum)
            }
        }
        Cmd::Bench {
            which: BenchCmd::BppGenerate { out, count, seed },
        } => bpp_generate(&out, count, seed),
        Cmd::Bench {
            which:
                BenchCmd::Exports {
                    dir,
                    parts,
                    sheet,
                    time,
                    runs,
                },
        } => bench_exports(&dir, parts, &sheet, time, runs),
        Cmd::Bench {
            which:
                BenchCmd::Quote {
                    dir,
                    parts,
                    quantity,
                    sheet,
                    time,
                    spacing,
                    esicup,
                    compute,
                },
        } => bench_quote(
            &dir,
            &esicup,
            parts,
            quantity,
            &sheet,
            time,
            spacing,
            compute.as_deref(),
        ),
        Cmd::Bench {
            which:
                BenchCmd::Raster {
                    files,
                    cells_per_part,
                    turns,
                    repeats,
                },
        } => bench_raster(&files, &cells_per_part, turns, repeats),
        Cmd::Bench {
            which:
                BenchCmd::Kernels {
                    budget,
                    max_sheet,
                    cpu_only,
                },
        } => bench_kernels(budget, max_sheet, cpu_only),
        Cmd::Bench {
            which:
                BenchCmd::Fairness {
                    a_nests,
                    b_nests,
                    slots,
                    nest_seconds,
                    arrival,
                },
        } => bench_fairness(a_nests, b_nests, slots, nest_seconds, &arrival),
        Cmd::Bench {
            which:
                BenchCmd::Hub {
                    idle,
                    subscribers,
                    probes,
                    nest_seconds,
                    slots,
                },
        } => bench_hub(&kerf::bench::hub::Options {
            idle,
            subscribers,
            probes,
            nest_seconds,
            slots,
        }),
    }
}

fn bench_hub(o: &kerf::bench::hub::Options) -> Result<()> {
    use kerf::bench::quantile;
    let m = kerf::bench::hub::run(o)?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "live hub: {} idle connections, {} subscribers of {} s nests on {} job slots, {} probes",
        o.idle, o.subscribers, o.nest_seconds, o.slots, o.probes
    );
    println!(
        "{:>6} {:>13} {:>12} {:>12} {:>13} {:>12} {:>12} {:>6} {:>7} {:>5} {:>9}",
        "idle",
        "idle kept",
        "RSS before",
        "RSS after",
        "KiB per conn",
        "RTT p50 ms",
        "RTT p99 ms",
        "nests",
        "finals",
        "lost",
        "seconds"
    );
    println!(
        "{:>6} {:>13} {:>10.1}Mi {:>10.1}Mi {:>13.1} {:>12.2} {:>12.2} {:>6} {:>7} {:>5} {:>9.1}",
        o.idle,
        m.idle,
        mib(m.rss_before),
        mib(m.rss_after),
        m.rss_after.saturating_sub(m.rss_before) as f64 / 1024.0 / o.idle.max(1) as f64,
        quantile(&m.round_trips_ms, 0.5),
        quantile(&m.round_trips_ms, 0.99),
        m.nests,
        m.finals,
        m.nests - m.finals,
        m.seconds
    );
    println!("({} round trips sampled)", m.probes);
    Ok(())
}

fn bench_fairness(
    a_nests: usize,
    b_nests: usize,
    slots: usize,
    nest_seconds: f64,
    arrival: &str,
) -> Result<()> {
    use kerf::bench::fairness::{self, Arrival};
    let arrivals = match arrival {
        "burst" => vec![Arrival::Burst],
        "trickle" => vec![Arrival::Trickle],
        "both" => vec![Arrival::Burst, Arrival::Trickle],
        other => anyhow::bail!("--arrival: '{other}' is not burst, trickle or both"),
    };
    println!(
        "fair sharing: key A queues {a_nests} nests, then key B submits {b_nests}; {slots} job slots, nests of {nest_seconds} s, weights 1 and 1"
    );
    println!(
        "{:<8} {:<4} {:>6} {:>6} {:>12} {:>14} {:>11} {:>11} {:>13} {:>16}",
        "B comes",
        "key",
        "weight",
        "nests",
        "first wait s",
        "median wait s",
        "p90 wait s",
        "max wait s",
        "median run s",
        "median wait/run"
    );
    for arrival in arrivals {
        let rows = fairness::run(&fairness::Options {
            a_nests,
            b_nests,
            slots,
            nest_seconds,
            arrival,
        })?;
        for r in rows {
            println!(
                "{:<8} {:<4} {:>6} {:>12.2} {:>14.2} {:>11.2} {:>11.2} {:>13.2} {:>16.2}",
                arrival.name(),
                r.key,
                r.nests,
                r.first_wait,
                r.median_wait,
                r.p90_wait,
                r.max_wait,
                r.median_run,
                r.median_wait / r.median_run
            );
        }
    }
    Ok(())
}

fn sheet_size(sheet: &str) -> Result<(f64, f64)> {
    sheet
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.parse::<f64>().ok()?, h.parse::<f64>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--sheet '{sheet}': give WIDTHxHEIGHT in millimetres"))
}

#[allow(clippy::too_many_arguments)]
fn bench_quote(
    dir: &std::path::Path,
    esicup: &[PathBuf],
    parts: usize,
    quantity: u32,
    sheet: &str,
    time: f64,
    spacing: f64,
    compute: Option<&str>,
) -> Result<()> {
    let sheet = sheet_size(sheet)?;
    let eval = kerf::cli::choose_compute(compute)?;
    let options = kerf::bench::quote::Options {
        dir,
        parts,
        quantity,
        sheet,
        seconds: time,
        spacing,
        esicup,
    };
    let (rows, total) = kerf::bench::quote::run(&options, eval.as_ref())?;
    println!(
        "quote: {} parts x {quantity} on {}x{} mm, {time} s per sub-nest, spacing {spacing} mm, {}",
        rows.len(),
        sheet.0,
        sheet.1,
        eval.name()
    );
    println!(
        "{:<34} {:>15} {:>11} {:>7} {:>6} {:>9} {:>7} {:>7} {:>6} {:>8}",
        "part",
        "bbox mm",
        "area mm2",
        "bound",
        "grid",
        "per sheet",
        "of bound",
        "sheets",
        "util%",
        "seconds"
    );
    let (mut within, mut shape_limited, mut unpriced) = (0, 0, 0);
    let mut ratios = Vec::new();
    let mut seconds = Vec::new();
    for r in &rows {
        seconds.push(r.seconds);
        let Some(s) = &r.priced else {
            unpriced += 1;
            println!(
                "{:<34} {:>7.1}x{:<7.1} {:>11.1} {:>7} {:>6}  fits on no sheet",
                r.part, r.bounding_box.0, r.bounding_box.1, r.part_area, r.area_bound, r.grid
            );
            continue;
        };
        let ratio = s.parts_per_sheet as f64 / r.area_bound.max(1) as f64;
        ratios.push(ratio);
        if ratio >= 0.9 {
            within += 1;
        } else if s.parts_per_sheet >= r.grid {
            shape_limited += 1;
        }
        println!(
            "{:<34} {:>7.1}x{:<7.1} {:>11.1} {:>7} {:>6} {:>9} {:>7.1}% {:>7} {:>6.1} {:>8.2}",
            r.part,
            r.bounding_box.0,
            r.bounding_box.1,
            r.part_area,
            r.area_bound,
            r.grid,
            s.parts_per_sheet,
            100.0 * ratio,
            s.sheets_required,
            s.utilisation,
            r.seconds
        );
    }
    seconds.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    println!(
        "whole quote {total:.1} s; per sub-nest median {:.2} s, max {:.2} s",
        kerf::bench::quantile(&seconds, 0.5),
        seconds.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "parts per sheet within 10 % of the area bound: {within} of {}; below it but at least the bounding-box grid (the shape's limit): {shape_limited}; median of bound {:.1}%; not priced: {unpriced}",
        rows.len() - unpriced,
        100.0 * kerf::bench::quantile(&ratios, 0.5)
    );
    Ok(())
}

fn bench_exports(
    dir: &std::path::Path,
    parts: u32,
    sheet: &str,
    time: f64,
    runs: usize,
) -> Result<()> {
    let (w, h) = sheet
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.parse::<f64>().ok()?, h.parse::<f64>().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--sheet '{sheet}': give WIDTHxHEIGHT in millimetres"))?;
    let eval = kerf::cli::choose_compute(None)?;
    let m = kerf::bench::exports::run(dir, parts, (w, h), time, runs, eval.as_ref())?;
    println!(
        "result: {} parts placed on {} sheets ({} distinct layouts), {w}x{h} mm",
        m.parts, m.sheets, m.layouts
    );
    for (part, quantity, why) in &m.unplaced {
        println!("unplaced: {part} x{quantity}: {why}");
    }
    println!("{:<26} {:>10} {:>12}", "export", "seconds", "bytes");
    for r in &m.rows {
        println!("{:<26} {:>10.3} {:>12}", r.export, r.seconds, r.bytes);
    }
    Ok(())
}

/// `bench esicup`: every file nested as a strip with `settings` (its options, the objective
/// MinimiseLength), each layout written and checked.
fn bench_esicup(
    files: &[PathBuf],
    out: &PathBuf,
    compute: Option<&str>,
    settings: kerf::nest2d::Settings,
) -> Result<()> {
    use kerf::bench::esicup;
    std::fs::create_dir_all(out)?;
    let eval = kerf::cli::choose_compute(compute)?;
    println!("compute: {}", eval.name());
    println!(
        "{:<10} {:>6} {:>9} {:>12} {:>8}  check",
        "instance", "parts", "density%", "used_length", "seconds"
    );
    let mut densities = Vec::new();
    let mut failed = false;
    for f in files {
        let inst = esicup::load(f)?;
        let o = esicup::run(&inst, settings.clone(), eval.as_ref())?;
        let check = match &o.verified {
            Ok(()) => "verified".to_string(),
            Err(e) => {
                failed = true;
                format!("FAILED: {e}")
            }
        };
        println!(
            "{:<10} {:>6} {:>9.2} {:>12.3} {:>8.1}  {}",
            inst.name,
            o.parts,
            o.solution.density * 100.0,
            o.solution.used_length,
            o.seconds,
            check
        );
        densities.push(o.solution.density * 100.0);
        std::fs::write(
            out.join(format!("{}.json", inst.name)),
            serde_json::to_string_pretty(&o.solution)?,
        )?;
        std::fs::write(out.join(format!("{}.svg", inst.name)), &o.svg)?;
    }
    if !densities.is_empty() {
        println!(
            "{:<10} {:>6} {:>9.2}",
            "mean",
            "",
            densities.iter().sum::<f64>() / densities.len() as f64
        );
    }
    print_gpu_calls(eval.as_ref());
    if failed {
        anyhow::bail!("some layouts failed the exact check");
    }
    Ok(())
}

/// How many evaluations the GPU answered (the rest went to its CPU twin): what
/// `benches/gpu-device.sh` reads to show the GPU did the work; then what the measured routing
/// timed on each path. Nothing on the CPU backend.
fn print_gpu_calls(eval: &dyn kerf_kernels::Evaluator) {
    if eval.accelerated_calls() > 0 {
        println!("calls answered by the GPU: {}", eval.accelerated_calls());
    }
    let report = eval.routing_report();
    if !report.is_empty() {
        println!("{report}");
    }
}

struct SheetsBenchArgs<'a> {
    time: f64,
    seed: u64,
    threads: u32,
    iterations: Option<u64>,
    repeat: &'a str,
    strip: bool,
    sampled_rows: u32,
    overlap_measure: kerf::nest2d::ThreadMeasures,
    compute: Option<&'a str>,
}

fn bench_sheets(files: &[PathBuf], a: SheetsBenchArgs, out: &PathBuf) -> Result<()> {
    use kerf::bench::sheets;
    std::fs::create_dir_all(out)?;
    let eval = kerf::cli::choose_compute(a.compute)?;
    let repeat = kerf::nest2d::RepeatPreference::parse(a.repeat).ok_or_else(|| {
        anyhow::anyhow!("--repeat '{}': allowed None, Low, Medium, High", a.repeat)
    })?;
    println!("compute: {}", eval.name());
    println!(
        "{:<18} {:>5} {:>6} {:>7} {:>8} {:>7} {:>8} {:>7} {:>4} {:>6}  {:<40}  check",
        "instance",
        "parts",
        "sheets",
        "bound",
        "sheet_eq",
        "layouts",
        "seconds",
        "strip%",
        "bar",
        "gap",
        "utilisation% of all but the last"
    );
    let mut failed = false;
    for f in files {
        let inst = sheets::load(f)?;
        let settings = kerf::nest2d::Settings {
            max_run_time_s: a.time,
            seed: a.seed,
            max_cpu: a.threads,
            max_iterations: a.iterations,
            repeat,
            sampled_rows: a.sampled_rows,
            overlap_measure: a.overlap_measure,
            ..Default::default()
        };
        // the same parts as one strip, in the same time: the density the sheets are held to
        let strip = if a.strip {
            let s = kerf::bench::esicup::run(
                &sheets::as_strip(&inst),
                settings.clone(),
                eval.as_ref(),
            )?;
            if let Err(e) = &s.verified {
                failed = true;
                println!("{}: the strip FAILED its check: {e}", inst.name);
            }
            Some(s.solution.density)
        } else {
            None
        };
        let o = sheets::run(&inst, settings, eval.as_ref())?;
        let (strip_col, bar_col, gap_col) = match strip {
            Some(d) => (
                format!("{:.2}", 100.0 * d),
                sheets::sheets_at_density(o.area_bound, d).to_string(),
                sheets::worst_gap(&o.full_sheet_utilisation, d)
                    .map_or("-".to_string(), |g| format!("{g:.1}")),
            ),
            None => ("-".to_string(), "-".to_string(), "-".to_string()),
        };
        let check = match &o.verified {
            Ok(()) if o.placed == o.parts => "verified".to_string(),
            Ok(()) => {
                failed = true;
                format!("FAILED: {} of {} parts placed", o.placed, o.parts)
            }
            Err(e) => {
                failed = true;
                format!("FAILED: {e}")
            }
        };
        let utils: Vec<String> = o
            .full_sheet_utilisation
            .iter()
            .map(|u| format!("{u:.0}"))
            .collect();
        println!(
            "{:<18} {:>5} {:>6} {:>7.2} {:>8.2} {:>7} {:>8.1} {:>7} {:>4} {:>6}  {:<40}  {}",
            inst.name,
            o.parts,
            o.solution.sheets_used,
            o.area_bound,
            o.solution.sheet_equivalents,
            o.layouts,
            o.seconds,
            strip_col,
            bar_col,
            gap_col,
            utils.join(" "),
            check
        );
        std::fs::write(
            out.join(format!("{}.json", inst.name)),
            serde_json::to_string_pretty(&o.solution)?,
        )?;
        std::fs::write(out.join(format!("{}.svg", inst.name)), &o.svg)?;
    }
    print_gpu_calls(eval.as_ref());
    if failed {
        anyhow::bail!("some layouts failed the exact check");
    }
    Ok(())
}

fn bench_commoncut(
    files: &[PathBuf],
    settings: kerf::nest2d::Settings,
    common_cut: &str,
    block: u32,
    compute: Option<&str>,
    out: &PathBuf,
) -> Result<()> {
    use kerf::bench::{commoncut, sheets};
    std::fs::create_dir_all(out)?;
    let cutting = kerf::cli::nest::common_cutting(common_cut)?;
    let eval = kerf::cli::choose_compute(compute)?;
    println!(
        "compute: {}  spacing {} mm  gap {} mm  mode {:?}  time {} s",
        eval.name(),
        settings.part_spacing,
        cutting.gap,
        cutting.mode,
        settings.max_run_time_s
    );
    println!(
        "{:<18} {:<7} {:>9} {:>6} {:>7} {:>14} {:>7} {:>6} {:>8}  check",
        "instance",
        "cutting",
        "placed",
        "sheets",
        "util %",
        "cut length m",
        "saved %",
        "cuts",
        "seconds"
    );
    let mut failed = false;
    for f in files {
        let inst = sheets::load(f)?;
        let mut alone_length = None;
        for (label, c) in [("alone", None), ("common", Some(cutting.clone()))] {
            let o = commoncut::run(&inst, settings.clone(), c, block, eval.as_ref())?;
            let check = match &o.verified {
                Ok(()) if o.placed == o.parts => "verified".to_string(),
                Ok(()) => {
                    failed = true;
                    format!("FAILED: {} of {} parts placed", o.placed, o.parts)
                }
                Err(e) => {
                    failed = true;
                    format!("FAILED: {e}")
                }
            };
            let base = *alone_length.get_or_insert(o.cut_length);
            println!(
                "{:<18} {:<7} {:>9} {:>6} {:>7.2} {:>14.2} {:>7.1} {:>6} {:>8.1}  {}",
                inst.name,
                label,
                format!("{}/{}", o.placed, o.parts),
                o.sheets,
                o.utilisation,
                o.cut_length / 1000.0,
                100.0 * (1.0 - o.cut_length / base),
                o.cuts,
                o.seconds,
                check
            );
            std::fs::write(
                out.join(format!("{}_{label}.json", inst.name)),
                serde_json::to_string_pretty(&o.solution)?,
            )?;
            std::fs::write(out.join(format!("{}_{label}.svg", inst.name)), &o.svg)?;
            std::fs::write(out.join(format!("{}_{label}.png", inst.name)), &o.png)?;
        }
    }
    if failed {
        anyhow::bail!("some layouts failed the exact check");
    }
    Ok(())
}

fn bench_raster(
    files: &[PathBuf],
    resolutions: &[f64],
    turns: Option<u32>,
    repeats: u32,
) -> Result<()> {
    use kerf::bench::{esicup, raster};
    // a run builds a table for its construction and one per compaction phase (five, the
    // last at four times the final resolution: engine::PHASES), and one more for a multi-sheet
    // search
    println!(
        "orientation table built on the CPU (fastest of {repeats}); a run builds one for its construction and one per compaction phase"
    );
    println!(
        "(the cell grows past the asked resolution where the strip would pass 64 million cells)"
    );
    println!(
        "{:<12} {:>10} {:>12} {:>7} {:>12} {:>9} {:>10} {:>11}",
        "instance", "cells/part", "cell", "orients", "cells", "rects", "build ms", "% of 60 s"
    );
    for f in files {
        let inst = esicup::load(f)?;
        for &cpp in resolutions {
            let row = raster::measure(&inst, cpp, turns, repeats);
            println!(
                "{:<12} {:>10} {:>12.6} {:>7} {:>12} {:>9} {:>10.2} {:>11.4}",
                inst.name,
                row.cells_per_part,
                row.cell,
                row.orientations,
                row.cells,
                row.rects,
                row.seconds * 1e3,
                100.0 * row.seconds / 60.0
            );
        }
    }
    Ok(())
}

fn bench_kernels(budget: f64, max_sheet: u32, cpu_only: bool) -> Result<()> {
    use kerf::bench::kernels;
    let cpu = kerf_kernels::CpuEvaluator;
    let gpu = if cpu_only {
        None
    } else {
        match kerf_kernels::GpuEvaluator::new(true).map(|g| g.every_call_on_gpu()) {
            Ok(g) => Some(g),
            Err(why) => {
                println!("no GPU backend: {why}");
                None
            }
        }
    };
    let mut backends: Vec<&dyn kerf_kernels::Evaluator> = vec![&cpu];
    if let Some(g) = &gpu {
        backends.push(g);
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!(
        "whole-map overlap evaluation, {} orientations per call, CPU backend on {threads} threads; evals/s leaves the sheet table's time out",
        kernels::ORIENTATIONS
    );
    println!(
        "{:<13} {:>5} {:>6}  {:<40} {:>14} {:>8} {:>8} {:>14} {:>8}  same",
        "sheet",
        "part",
        "rects",
        "backend",
        "evaluations",
        "table s",
        "seconds",
        "evals/s",
        "x cpu"
    );
    let mut all_agree = true;
    for sheet in kernels::SHEETS.into_iter().filter(|s| s.0 <= max_sheet) {
        for part in kernels::PARTS {
            let rows = kernels::measure(&backends, sheet, part, budget);
            let cpu_rate = rows[0].rate();
            for r in rows {
                all_agree &= r.agrees;
                println!(
                    "{:<13} {:>5} {:>6}  {:<40} {:>14} {:>8.3} {:>8.3} {:>14.3e} {:>8.2}  {}",
                    format!("{}x{}", r.sheet.0, r.sheet.1),
                    r.part,
                    r.rects,
                    r.backend,
                    r.evaluations,
                    r.table_seconds,
                    r.seconds,
                    r.rate(),
                    r.rate() / cpu_rate,
                    if r.agrees { "yes" } else { "NO" }
                );
            }
        }
    }
    if !all_agree {
        anyhow::bail!("the backends disagree");
    }
    Ok(())
}

fn bpp_generate(out: &std::path::Path, count: usize, seed: u64) -> Result<()> {
    use kerf::bench::{bpp, bpp_gen};
    std::fs::create_dir_all(out)?;
    let mut list = format!("{}\n", bpp::LIST_HEADER);
    for g in bpp_gen::generate(count, seed) {
        let file = format!("{}.txt", g.name);
        std::fs::write(out.join(&file), g.to_bpplib())?;
        list.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            g.name,
            g.family,
            file,
            g.pieces(),
            g.capacity,
            g.items.len(),
            g.optimum.map(|o| o.to_string()).unwrap_or_default()
        ));
    }
    std::fs::write(out.join("instances.csv"), list)?;
    println!("{count} instances written to {}", out.display());
    Ok(())
}

/// The table of `kerf bench bpp` on generated instances: per family, the gap of the plan to
/// the solver's proven bound (and to first-fit decreasing), how many plans are within one bar
/// of the bound, and seconds against the limit (a run over the limit by more than 5 % or
/// 0.1 s, whichever is larger, is counted).
fn bench_bpp_large(dir: &std::path::Path, time: f64, only: Option<&str>, each: bool) -> Result<()> {
    use kerf::bench::bpp;
    let listed: Vec<bpp::Listed> = bpp::listed(dir)?
        .into_iter()
        .filter(|l| only.is_none_or(|c| l.family.contains(c) || l.name == c))
        .collect();
    let families = first_seen(listed.iter().map(|l| l.family.as_str()));
    let allowed = time + (0.05 * time).max(0.1);
    println!(
        "{:<8} {:>4} {:>8} {:>8} {:>7} {:>7} {:>8} {:>8} {:>7} {:>7} {:>5}",
        "family",
        "n",
        "bars",
        "bound",
        "gap %",
        "<=1 bar",
        "optimal",
        "FFD gap%",
        "mean s",
        "max s",
        "over"
    );
    let row = |name: &str, o: &[&bpp::LargeOutcome]| {
        let n = o.len().max(1) as f64;
        let gap =
            |bars: u32, bound: u32| 100.0 * (bars as f64 - bound as f64) / bound.max(1) as f64;
        let known = o.iter().filter(|x| x.optimum.is_some()).count();
        println!(
            "{:<8} {:>4} {:>8} {:>8} {:>7.3} {:>7} {:>8} {:>8.3} {:>7.3} {:>7.3} {:>5}",
            name,
            o.len(),
            o.iter().map(|x| x.bars as u64).sum::<u64>(),
            o.iter().map(|x| x.bound as u64).sum::<u64>(),
            o.iter().map(|x| gap(x.bars, x.bound)).sum::<f64>() / n,
            o.iter().filter(|x| x.bars <= x.bound + 1).count(),
            if known > 0 {
                format!(
                    "{}/{known}",
                    o.iter()
                        .filter(|x| x.optimum.is_some_and(|b| x.bars <= b))
                        .count()
                )
            } else {
                "-".into()
            },
            o.iter().map(|x| gap(x.ffd_bars, x.bound)).sum::<f64>() / n,
            o.iter().map(|x| x.seconds).sum::<f64>() / n,
            o.iter().map(|x| x.seconds).fold(0.0, f64::max),
            o.iter().filter(|x| x.seconds > allowed).count(),
        );
    };
    let mut all = Vec::new();
    for f in &families {
        let mut outcomes = Vec::new();
        for l in listed.iter().filter(|l| &l.family == f) {
            let o = bpp::run_listed(dir, l, time)?;
            if each {
                println!(
                    "  {:<22} {:>6} pieces {:>6} bars, bound {:>6}, FFD {:>6}, {:>7.3} s{}",
                    o.name,
                    o.pieces,
                    o.bars,
                    o.bound,
                    o.ffd_bars,
                    o.seconds,
                    o.note
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                );
            }
            if let Some(opt) = o.optimum.filter(|&opt| o.bars < opt) {
                anyhow::bail!(
                    "{}: {} bars is below the known optimum {opt}",
                    o.name,
                    o.bars
                );
            }
            outcomes.push(o);
        }
        row(f, &outcomes.iter().collect::<Vec<_>>());
        all.extend(outcomes);
    }
    row("all", &all.iter().collect::<Vec<_>>());
    Ok(())
}

/// The distinct names, in the order they first appear (the tables' row order).
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn bench_bpp(
    dir: &std::path::Path,
    time: f64,
    only: Option<&str>,
    each: bool,
    at_optimum: bool,
) -> Result<()> {
    use kerf::bench::bpp;
    let known: Vec<bpp::Known> = bpp::optima(dir)?
        .into_iter()
        .filter(|k| only.is_none_or(|c| k.class.contains(c) || k.name == c))
        .collect();
    let classes = first_seen(known.iter().map(|k| k.class.as_str()));
    let mut all = Vec::new();
    let mut missed = Vec::new();
    let mut unproven = Vec::new();
    println!(
        "{:<14} {:>9} {:>8} {:>7} {:>11} {:>8} {:>8}",
        "class", "instances", "optimal", "proven", "extra bars", "mean s", "max s"
    );
    let row = |name: &str, o: &[&bpp::Outcome]| {
        let n = o.len().max(1) as f64;
        println!(
            "{:<14} {:>9} {:>8} {:>7} {:>11.3} {:>8.3} {:>8.3}",
            name,
            o.len(),
            o.iter().filter(|x| x.optimal()).count(),
            o.iter().filter(|x| x.proven).count(),
            o.iter()
                .map(|x| x.bars as f64 - x.optimum as f64)
                .sum::<f64>()
                / n,
            o.iter().map(|x| x.seconds).sum::<f64>() / n,
            o.iter().map(|x| x.seconds).fold(0.0, f64::max),
        );
    };
    for c in &classes {
        let mut outcomes = Vec::new();
        for k in known.iter().filter(|k| &k.class == c) {
            let o = bpp::run_one(dir, k, time, at_optimum)?;
            let left = match o.left {
                0 => String::new(),
                n => format!(", {n} pieces left"),
            };
            if each {
                println!(
                    "  {:<30} {:>5} bars, optimum {:>5}{}{left} {:>7.3} s",
                    o.name,
                    o.bars,
                    o.optimum,
                    if o.proven { ", proven" } else { "        " },
                    o.seconds
                );
            }
            if !o.optimal() {
                missed.push(format!(
                    "{} ({} bars, optimum {}{left})",
                    o.name, o.bars, o.optimum
                ));
            }
            if o.optimal() && !o.proven {
                unproven.push(o.name.clone());
            }
            if o.left == 0 && o.bars < o.optimum {
                anyhow::bail!(
                    "{}: {} bars is below the published optimum {}",
                    o.name,
                    o.bars,
                    o.optimum
                );
            }
            outcomes.push(o);
        }
        row(c, &outcomes.iter().collect::<Vec<_>>());
        all.extend(outcomes);
    }
    row("all", &all.iter().collect::<Vec<_>>());
    if !missed.is_empty() {
        println!("optimum not reached: {}", missed.join(", "));
    }
    if !unproven.is_empty() {
        println!("optimum reached, not proven: {}", unproven.join(", "));
    }
    Ok(())
}
