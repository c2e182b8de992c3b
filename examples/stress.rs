//! Stress: many distinct random parts on several sheets; prints how long the nest took.
use kerf::geometry::{PartGeometry, Point, Shape};
use kerf::nest2d::*;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let limit: f64 = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(10.0);
    let mut seed = 12345u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 1_000_000) as f64 / 1e6
    };
    let parts: Vec<PartSpec> = (0..n)
        .map(|i| {
            let k = 3 + (rnd() * 8.0) as usize;
            let r0 = 20.0 + rnd() * 120.0;
            let pts: Vec<Point> = (0..k)
                .map(|j| {
                    let a = j as f64 / k as f64 * std::f64::consts::TAU;
                    let r = r0 * (0.6 + 0.4 * rnd());
                    Point::new(r * a.cos(), r * a.sin())
                })
                .collect();
            PartSpec {
                rotations: vec![0.0, 90.0, 180.0, 270.0],
                ..PartSpec::new(
                    &format!("p{i}"),
                    PartGeometry::single(Shape::new(pts, vec![])),
                    1 + (rnd() * 2.0) as u32,
                )
            }
        })
        .collect();
    let settings = Settings {
        max_run_time_s: limit,
        part_spacing: 3.0,
        ..Default::default()
    };
    let p = Problem {
        parts,
        sheets: vec![SheetSpec::rectangle("s", 3000.0, 1500.0)],
        settings,
    };
    let t = std::time::Instant::now();
    let r = nest(
        &p,
        &kerf_kernels::CpuEvaluator,
        &CancelHandle::default(),
        &|_| {},
    )
    .unwrap();
    println!(
        "parts {} placed {} sheets {} util {:.2} elapsed {:.2}s (limit {limit})",
        r.stats.parts_requested,
        r.stats.parts_placed,
        r.stats.sheets_used,
        r.stats.utilisation,
        t.elapsed().as_secs_f64()
    );
}
