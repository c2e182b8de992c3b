//! The 1D solver: kerf and trim arithmetic by hand, stock limits and costs, pieces no bar holds,
//! random instances whose plans must cover the demand exactly and fit every bar, and BPPLIB
//! instances on which the published optimum must be reached.

use kerf::nest1d::*;
use std::path::Path;

fn stock(length: f64, quantity: Option<u32>, cost: f64) -> Stock {
    Stock {
        id: format!("S{length}"),
        length,
        quantity,
        cost,
        priority: 0,
    }
}

fn piece(length: f64, quantity: u32) -> Piece {
    Piece {
        id: format!("P{length}"),
        length,
        quantity,
    }
}

fn problem(stock: Vec<Stock>, pieces: Vec<Piece>, kerf: f64, trim: f64) -> Problem {
    Problem {
        stock,
        pieces,
        kerf,
        start_trim: trim,
        end_trim: trim,
        max_time_s: 5.0,
        objective: Objective::MinimiseStock,
    }
}

/// Every piece cut exactly as often as asked (or reported unplaced), every bar within its
/// length with kerfs between pieces and the trims, stock limits kept.
fn check(p: &Problem, plan: &Plan) {
    let mut cut = vec![0u32; p.pieces.len()];
    let mut used = vec![0u32; p.stock.len()];
    for pat in &plan.patterns {
        let n: u32 = pat.pieces.iter().map(|&(_, c)| c).sum();
        let need: f64 = pat
            .pieces
            .iter()
            .map(|&(i, c)| p.pieces[i].length * c as f64)
            .sum::<f64>()
            + p.kerf * n.saturating_sub(1) as f64
            + p.start_trim
            + p.end_trim;
        assert!(
            need <= p.stock[pat.stock].length + 1e-9,
            "{pat:?} needs {need} on a bar of {}",
            p.stock[pat.stock].length
        );
        for &(i, c) in &pat.pieces {
            cut[i] += c * pat.multiplicity;
        }
        used[pat.stock] += pat.multiplicity;
    }
    for &(i, q, _) in &plan.unplaced {
        cut[i] += q;
    }
    for (i, pc) in p.pieces.iter().enumerate() {
        assert_eq!(cut[i], pc.quantity, "piece {i}");
    }
    for (k, s) in p.stock.iter().enumerate() {
        if let Some(q) = s.quantity {
            assert!(used[k] <= q, "stock {k}: {} bars of {q}", used[k]);
        }
    }
    assert!(plan.value + 1e-9 >= plan.lower_bound);
}

#[test]
fn kerf_between_pieces_not_after_the_last() {
    // 3 x 330 + 2 kerfs of 5 = 1000: one bar exactly
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(330.0, 3)],
        5.0,
        0.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 1);
    assert!(plan.proven_optimal);
    // 3 x 331 + 10 = 1003: two bars
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(331.0, 3)],
        5.0,
        0.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 2);
    assert!(plan.proven_optimal);
}

#[test]
fn trims_come_off_both_ends() {
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(490.0, 2)],
        0.0,
        10.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 1);
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(490.5, 2)],
        0.0,
        10.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 2);
}

#[test]
fn limited_stock_and_costs() {
    // one long bar only; the rest on short bars
    let p = Problem {
        objective: Objective::MinimiseStock,
        ..problem(
            vec![stock(1000.0, Some(1), 0.0), stock(600.0, None, 0.0)],
            vec![piece(500.0, 4), piece(300.0, 2)],
            0.0,
            0.0,
        )
    };
    let plan = solve(&p);
    check(&p, &plan);
    assert!(plan.bars() <= 4, "{plan:?}");
    // the cheaper way by cost: 2 short bars (cost 1 each) beat 1 long bar (cost 5)
    let p = Problem {
        objective: Objective::MinimiseCost,
        ..problem(
            vec![stock(1000.0, None, 5.0), stock(500.0, None, 1.0)],
            vec![piece(450.0, 2)],
            0.0,
            0.0,
        )
    };
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.value, 2.0);
    assert!(plan.patterns.iter().all(|q| q.stock == 1));
    assert!(plan.proven_optimal, "{plan:?}");
}

#[test]
fn a_piece_longer_than_every_bar_is_unplaced_with_a_reason() {
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(1200.0, 2), piece(400.0, 2)],
        0.0,
        0.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.unplaced.len(), 1);
    assert_eq!(plan.unplaced[0].0, 0);
    assert!(plan.unplaced[0].2.contains("longer"));
    assert_eq!(plan.bars(), 1);
}

#[test]
fn random_instances_cover_the_demand_and_fit_every_bar() {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % n
    };
    for round in 0..40 {
        let stocks: Vec<Stock> = (0..1 + next(3))
            .map(|_| {
                let q = if next(4) == 0 {
                    Some(1 + next(5) as u32)
                } else {
                    None
                };
                stock(1000.0 + next(5000) as f64, q, next(20) as f64)
            })
            .collect();
        let pieces: Vec<Piece> = (0..1 + next(12))
            .map(|_| {
                piece(
                    10.0 + next(900) as f64 + next(10) as f64 / 10.0,
                    1 + next(15) as u32,
                )
            })
            .collect();
        let mut p = problem(stocks, pieces, next(6) as f64, next(20) as f64 / 2.0);
        p.max_time_s = 1.0;
        p.objective = match round % 3 {
            0 => Objective::MinimiseStock,
            1 => Objective::MinimiseWaste,
            _ => Objective::MinimiseCost,
        };
        let plan = solve(&p);
        check(&p, &plan);
    }
}

#[test]
fn bpplib_instances_reach_their_optimum() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cut1d");
    for k in kerf::bench::bpp::optima(&dir).unwrap() {
        let text = std::fs::read_to_string(dir.join(&k.file)).unwrap();
        let inst = kerf::bench::bpp::parse(&text).unwrap();
        // a generous limit: the test is about reaching the optimum, not about speed
        let plan = solve(&kerf::bench::bpp::problem(&inst, 5.0));
        kerf::bench::bpp::check(&inst, &plan).unwrap();
        assert_eq!(plan.bars(), k.optimum, "{}", k.name);
    }
}

#[test]
fn every_first_answer_covers_the_demand() {
    // two of one length (the first answer's own piece must be counted once)
    let p = problem(
        vec![stock(1000.0, None, 0.0)],
        vec![piece(600.0, 2), piece(300.0, 2)],
        0.0,
        0.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 2);
}

#[test]
fn limited_stock_is_bounded_by_the_problem_without_limits() {
    // the README example: 9 bars, and the LP of the problem without the limit proves it
    let p = Problem {
        max_time_s: 2.0,
        ..problem(
            vec![stock(6000.0, None, 0.0), stock(4000.0, Some(10), 0.8)],
            vec![piece(1200.0, 14), piece(850.0, 20), piece(430.0, 31)],
            3.0,
            5.0,
        )
    };
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 9);
    assert!(plan.proven_optimal, "{plan:?}");
    // among equally cheap bars the shorter one carries a light load
    assert!(plan.patterns.iter().any(|q| q.stock == 1), "{plan:?}");
}

#[test]
fn stock_limits_are_rows_of_the_lp_and_their_bound_is_proven() {
    // long bars hold two 500s but only three are in stock; short bars hold one 500 and a 100.
    // Without the limit the LP needs 5 bars; with it, 3 long and 4 short: 7, and the LP with
    // the limit as a row proves it
    let p = problem(
        vec![stock(1000.0, Some(3), 0.0), stock(600.0, None, 0.0)],
        vec![piece(500.0, 10), piece(100.0, 4)],
        0.0,
        0.0,
    );
    let plan = solve(&p);
    check(&p, &plan);
    assert_eq!(plan.bars(), 7, "{plan:?}");
    assert!(plan.proven_optimal, "{plan:?}");
    assert_eq!(plan.lower_bound, 7.0);
}

#[test]
fn exactly_enough_bars_in_stock_still_give_the_optimum() {
    // each BPPLIB instance with exactly its optimum's bars in stock: the first answers need
    // more on most of them, so the plan must come from the LP, its dives or the tree, within
    // the limit, and nothing may be left over
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cut1d");
    for k in kerf::bench::bpp::optima(&dir).unwrap() {
        let text = std::fs::read_to_string(dir.join(&k.file)).unwrap();
        let inst = kerf::bench::bpp::parse(&text).unwrap();
        let mut p = kerf::bench::bpp::problem(&inst, 5.0);
        p.stock[0].quantity = Some(k.optimum);
        let plan = solve(&p);
        check(&p, &plan);
        assert!(plan.unplaced.is_empty(), "{}: {:?}", k.name, plan.unplaced);
        assert_eq!(plan.bars(), k.optimum, "{}", k.name);
        // the LP with the limit bounds it as well as the LP without (Hard28's instance is
        // proven only by a long tree search, with or without a limit)
        assert!(plan.lower_bound >= (k.optimum - 1) as f64, "{}", k.name);
        // one bar fewer than the optimum: pieces are left, and said to be
        p.stock[0].quantity = Some(k.optimum - 1);
        p.max_time_s = 0.5;
        let plan = solve(&p);
        check(&p, &plan);
        assert!(!plan.unplaced.is_empty(), "{}", k.name);
    }
}

/// Solves the master LP over its columns (no pricing).
fn solve_lp(m: &mut master::Master) {
    for _ in 0..10_000 {
        if !m.improve() {
            return;
        }
    }
    panic!("the simplex did not end");
}

/// A small master: pieces of 40, 30, 20 and 15 on bars of 100, the homogeneous patterns
/// (for `demand`) and a few mixed ones.
fn small_master_columns(demand: &[u32]) -> (Vec<master::Column>, Vec<master::Column>) {
    use master::Column;
    let counts = [
        [2, 0, 1, 0],
        [1, 2, 0, 0],
        [0, 1, 2, 1],
        [1, 1, 1, 0],
        [0, 0, 2, 4],
        [1, 0, 0, 4],
        [0, 2, 0, 2],
    ];
    let homogeneous = [2u32, 3, 5, 6]
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let mut c = vec![0; 4];
            c[i] = k.min(demand[i].max(1));
            Column {
                stock: 0,
                counts: c,
                cost: 1.0,
            }
        })
        .collect();
    let extra = counts
        .iter()
        .map(|c| Column {
            stock: 0,
            counts: c.to_vec(),
            cost: 1.0,
        })
        .collect();
    (homogeneous, extra)
}

#[test]
fn lowering_the_demand_in_place_gives_the_lp_solved_afresh() {
    use master::Master;
    let demand = [9u32, 8, 11, 13];
    let (homogeneous, extra) = small_master_columns(&demand);
    let mut lp = Master::new(&demand, homogeneous.clone(), extra);
    solve_lp(&mut lp);
    // take one bar of each column the LP uses, one after the other, and compare each time
    let mut left = demand.to_vec();
    for _ in 0..4 {
        let Some(&(j, _)) = lp.solution().first() else {
            break;
        };
        let col = lp.cols[j].clone();
        for (l, c) in left.iter_mut().zip(&col.counts) {
            *l = l.saturating_sub(*c);
        }
        lp.fix(&[(j, 1)]);
        solve_lp(&mut lp);
        let mut fresh = Master::new(&left, homogeneous.clone(), lp.cols[4..].to_vec());
        solve_lp(&mut fresh);
        assert!(
            (lp.dual_bound() - fresh.dual_bound()).abs() < 1e-6,
            "after taking {:?}: in place {} afresh {}",
            col.counts,
            lp.dual_bound(),
            fresh.dual_bound()
        );
        assert!((lp.objective() - fresh.objective()).abs() < 1e-4);
    }
}

#[test]
fn perturbed_costs_move_the_lp_solution_and_keep_its_bound_valid() {
    use master::Master;
    let demand = [9u32, 8, 11, 13];
    let (homogeneous, extra) = small_master_columns(&demand);
    let mut lp = Master::new(&demand, homogeneous, extra);
    solve_lp(&mut lp);
    let (value, used) = (lp.objective(), lp.solution());
    let mut moved = 0;
    for seed in 1..=20u64 {
        let mut perturbed = lp.clone();
        perturbed.perturb_costs(seed);
        solve_lp(&mut perturbed);
        // the duals bound the true LP from below, within the perturbation (1e-5 of the value)
        let bound = perturbed.dual_bound();
        assert!(
            bound <= value + 1e-6,
            "seed {seed}: bound {bound} above the LP {value}"
        );
        assert!(
            bound >= value * (1.0 - 1e-5) - 1e-6,
            "seed {seed}: bound {bound}"
        );
        // and its solution costs, at the true costs, at most that much more than the LP's
        let cost = perturbed.objective();
        assert!(
            cost >= value - 1e-6 && cost <= value * (1.0 + 1.1e-5) + 1e-6,
            "seed {seed}: {cost}"
        );
        // another vertex: another set of columns in use (not the same set in another order)
        let columns = |sol: &[(usize, f64)]| {
            let mut c: Vec<usize> = sol.iter().map(|s| s.0).collect();
            c.sort_unstable();
            c
        };
        moved += usize::from(columns(&perturbed.solution()) != columns(&used));
    }
    assert!(
        moved > 0,
        "no seed moved the LP to another optimal solution"
    );
}

#[test]
fn among_equally_good_stock_the_higher_priority_is_cut() {
    // two stock lengths of the same length and cost per mm: every plan is as good on either;
    // the one with the higher priority is used, whichever comes first in the request
    for (first, second) in [(0, 5), (5, 0)] {
        let mut a = stock(1000.0, None, 0.0);
        a.id = "A".into();
        a.priority = first;
        let mut b = stock(1000.0, None, 0.0);
        b.id = "B".into();
        b.priority = second;
        let p = problem(vec![a, b], vec![piece(300.0, 7)], 0.0, 0.0);
        let plan = solve(&p);
        check(&p, &plan);
        let wanted = if first > second { 0 } else { 1 };
        assert!(
            plan.patterns.iter().all(|q| q.stock == wanted),
            "priorities {first}/{second}: {:?}",
            plan.patterns
        );
    }
}
