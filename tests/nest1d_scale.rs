//! The 1D solver at a saw shop's scale (capacities up to 10^6, hundreds of lengths, thousands
//! of pieces, from `bench::bpp_gen`): the time limit holds whatever the size, a limit too short
//! for more than the first answers says so, and column generation ends (and proves) on a
//! capacity of a million, where a knapsack table over the capacity cannot be built.
//!
//! The time checks have wide margins (a loaded 2-core CI machine must never fail them); the
//! exact figures belong in `kerf bench bpp benches/data/bpp-large`.

use kerf::bench::{bpp, bpp_gen};
use kerf::nest1d::{self, instance::Instance, Plan};
use std::time::Instant;

/// What a solve may run past its limit here: far below the seconds an unchecked stage took
/// (9 s at a 2 s limit before the clock was checked in every stage).
const MARGIN_S: f64 = 2.0;

fn as_bpp(g: &bpp_gen::Generated) -> bpp::Instance {
    bpp::parse(&g.to_bpplib()).expect("the generator writes BPPLIB")
}

/// Solves with `limit`; checks the plan (demand covered exactly, no bar overfull), that it is
/// no worse than first-fit decreasing and no better than its own bound, and the wall time.
fn solve_checked(inst: &bpp::Instance, limit: f64, name: &str) -> Plan {
    let problem = bpp::problem(inst, limit);
    let began = Instant::now();
    let plan = nest1d::solve(&problem);
    let wall = began.elapsed().as_secs_f64();
    bpp::check(inst, &plan).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        wall <= limit + MARGIN_S,
        "{name}: {wall:.2} s at a limit of {limit} s"
    );
    let (ffd, _) = nest1d::heuristic::decreasing(&Instance::of(&problem), false);
    assert!(plan.bars() as usize <= ffd.len(), "{name}: worse than FFD");
    assert!(plan.bars() as f64 >= plan.lower_bound - 1e-9, "{name}");
    plan
}

#[test]
fn the_time_limit_holds_on_large_instances_of_every_family() {
    // instances 10 to 14: one of each family, all on a bar of 10^6
    let all = bpp_gen::generate(15, 3);
    for g in &all[10..] {
        assert_eq!(g.capacity, 1_000_000);
        let plan = solve_checked(&as_bpp(g), 0.5, &g.name);
        if let Some(optimum) = g.optimum {
            assert!(
                plan.bars() as u64 >= optimum,
                "{}: below the optimum",
                g.name
            );
        }
    }
}

#[test]
fn a_limit_too_short_for_more_than_the_first_answers_says_so() {
    // triplets: first-fit decreasing is far from the bound, so the solver would go on
    let g = &bpp_gen::generate(4, 5)[3];
    assert_eq!(g.family, "triplet");
    let plan = solve_checked(&as_bpp(g), 0.05, &g.name);
    assert!(!plan.proven_optimal);
    let note = plan
        .note
        .expect("the plan says the limit cut the method short");
    assert!(note.contains("time limit"), "{note}");
}

#[test]
fn column_generation_ends_on_a_bar_of_a_million() {
    // 60 lengths in [0.1, 0.45] of the bar, about 400 pieces: a table over the capacity would
    // take 10^6 cells per piece type, the branch-and-bound pricing needs none
    let mut seed = 0x853C_49E6_748F_EA9Bu64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let capacity = 1_000_000.0;
    let mut items: Vec<(f64, u32)> = (0..60)
        .map(|_| {
            let length = 100_000 + next() % 350_000;
            (length as f64, 1 + (next() % 12) as u32)
        })
        .collect();
    items.sort_by(|a, b| b.0.total_cmp(&a.0));
    items.dedup_by(|a, b| a.0 == b.0);
    let inst = bpp::Instance { capacity, items };
    let plan = solve_checked(&inst, 30.0, "a bar of 10^6");
    assert!(
        plan.note.is_none(),
        "column generation should end: {:?}",
        plan.note
    );
    // the LP bound rounded up, and a plan from it within one bar
    assert!(
        plan.bars() as f64 <= plan.lower_bound + 1.0,
        "{} bars against a bound of {}",
        plan.bars(),
        plan.lower_bound
    );
}
