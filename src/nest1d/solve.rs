//! The 1D solver: first answers by first-fit and best-fit decreasing; lower bounds (L2 for
//! classic cutting stock, the LP bound of column generation with exact knapsack pricing, and
//! Farley's bound while it runs); integer plans from the LP by rounding down and finishing the
//! rest greedily, then by diving (fix the columns the LP uses most, solve the rest again).
//! A plan whose value meets the bound is proven optimal.

use super::bounds;
use super::heuristic::{decreasing, min_slack, Bar};
use super::instance::{Instance, MAX_TABLE_BITS};
use super::knapsack;
use super::master::{Column, Master};
use super::model::{Pattern, Plan, Problem};
use std::time::{Duration, Instant};

const EPS: f64 = 1e-9;
/// Nodes of the quick pricing search (see `column_generation`).
const QUICK_NODES: u64 = 2_000;
/// Weight of the past in the smoothed duals of the quick pricing.
const SMOOTHING: f64 = 0.5;

/// Solves `p` within its time limit.
pub fn solve(p: &Problem) -> Plan {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(p.max_time_s.max(0.05));
    let inst = Instance::of(p);
    let mut unplaced: Vec<(usize, u32, String)> = inst
        .too_long
        .iter()
        .map(|&(i, q)| {
            (
                i,
                q,
                "longer than every stock length (after trims)".to_string(),
            )
        })
        .collect();
    if inst.types() == 0 || inst.stock.is_empty() {
        if inst.stock.is_empty() {
            unplaced.extend(
                inst.piece
                    .iter()
                    .zip(&inst.demand)
                    .map(|(&i, &q)| (i, q, "no stock length holds it".to_string())),
            );
        }
        return Plan {
            patterns: vec![],
            unplaced,
            value: 0.0,
            lower_bound: 0.0,
            proven_optimal: true,
            seconds: start.elapsed().as_secs_f64(),
        };
    }

    let limited = inst.limit.iter().any(|l| l.is_some());
    if !limited {
        let o = optimise(&inst, deadline, start, false);
        return finish(&inst, o.bars, o.value, o.bound, unplaced, start);
    }
    // Limited stock. Plans: the first answers (they keep the limits) and, when some stock is
    // unlimited, the full method on the unlimited stock alone. Bound: the same problem
    // without the limits (a relaxation: its bound holds for this problem too).
    let budget = deadline.saturating_duration_since(Instant::now());
    let greedy = optimise(&inst, Instant::now(), start, true);
    let relaxed = Instance {
        limit: vec![None; inst.limit.len()],
        ..inst.clone()
    };
    let bound = optimise(&relaxed, Instant::now() + budget / 3, start, true).bound;
    let unlimited: Vec<usize> = (0..inst.stock.len())
        .filter(|&t| inst.limit[t].is_none())
        .collect();
    let restricted = Instance {
        stock: unlimited.iter().map(|&t| inst.stock[t]).collect(),
        capacity: unlimited.iter().map(|&t| inst.capacity[t]).collect(),
        cost: unlimited.iter().map(|&t| inst.cost[t]).collect(),
        limit: vec![None; unlimited.len()],
        ..inst.clone()
    };
    let on_unlimited = (!unlimited.is_empty())
        .then(|| optimise(&restricted, deadline, start, false))
        .filter(|o| o.left.iter().all(|&l| l == 0));
    match on_unlimited {
        Some(o) if greedy.left.iter().any(|&l| l > 0) || o.value < greedy.value - EPS => {
            finish(&restricted, o.bars, o.value, bound, unplaced, start)
        }
        _ => {
            for (k, &l) in greedy.left.iter().enumerate() {
                if l > 0 {
                    unplaced.push((inst.piece[k], l, "not enough stock".into()));
                }
            }
            let bound = if greedy.left.iter().any(|&l| l > 0) {
                0.0
            } else {
                bound
            };
            finish(&inst, greedy.bars, greedy.value, bound, unplaced, start)
        }
    }
}

/// What `optimise` found: the best plan (bars on the instance's stock types), its value, the
/// pieces it could not place, and the best proven lower bound.
struct Outcome {
    value: f64,
    bars: Vec<Bar>,
    left: Vec<u32>,
    bound: f64,
}

/// First answers, then (unless `greedy_only`, or a first answer is short of stock) column
/// generation for the bound and integer plans from the LP, until `deadline`. With
/// `greedy_only` the LP still runs when there is time, for the bound.
fn optimise(inst: &Instance, deadline: Instant, start: Instant, greedy_only: bool) -> Outcome {
    // first answers: the one that places the most pieces, then the cheaper
    let (mut short, mut best) = (vec![0u32; inst.types()], None::<(f64, Vec<Bar>)>);
    let mut best_key = (u64::MAX, f64::INFINITY);
    for heuristic in 0..3 {
        let (bars, left) = match heuristic {
            0 => decreasing(inst, false),
            1 => decreasing(inst, true),
            _ => min_slack(inst),
        };
        let key = (
            left.iter().map(|&l| l as u64).sum::<u64>(),
            value_of(inst, &bars),
        );
        if key.0 < best_key.0 || (key.0 == best_key.0 && key.1 < best_key.1 - EPS) {
            best_key = key;
            best = Some((key.1, bars));
            short = left;
        }
    }
    let classic_bound = if inst.is_classic() {
        bounds::l2(&inst.size, &inst.demand, inst.capacity[0]) as f64 * inst.cost[0]
    } else {
        0.0
    };
    if short.iter().any(|&l| l > 0) {
        let (value, bars) = best.expect("a first answer");
        return Outcome {
            value,
            bars,
            left: short,
            bound: 0.0,
        };
    }
    let (mut ub, mut plan) = best.expect("a first answer");
    let mut lb = classic_bound;
    let round_up = |v: f64| {
        if inst.integral_costs {
            (v - 1e-6).ceil()
        } else {
            v
        }
    };
    let priceable = inst.stock.iter().enumerate().all(|(t, _)| {
        knapsack::table_bits(&inst.size, &inst.demand, inst.capacity[t]) <= MAX_TABLE_BITS
    });
    if (ub > lb + EPS || greedy_only) && priceable && Instant::now() < deadline {
        // the LP bound by column generation
        let pool: Vec<Column> = plan.iter().map(|b| column_of(inst, b)).collect();
        let mut master = Master::new(&inst.demand, homogeneous(inst, &inst.demand), pool);
        let (optimal, farley) = column_generation(inst, &mut master, &inst.demand, deadline);
        lb = lb.max(round_up(farley));
        if optimal {
            lb = lb.max(round_up(master.objective()));
        }
        tracing::debug!(
            optimal,
            lp = master.objective(),
            columns = master.cols.len(),
            lb,
            ub,
            seconds = start.elapsed().as_secs_f64(),
            "root LP"
        );
        // integer plans from the LP
        if ub > lb + EPS && !greedy_only {
            if let Some(bars) = round_down_then_greedy(inst, &master) {
                let v = value_of(inst, &bars);
                tracing::debug!(
                    value = v,
                    seconds = start.elapsed().as_secs_f64(),
                    "rounded down + greedy"
                );
                if v < ub - EPS {
                    (ub, plan) = (v, bars);
                }
            }
        }
        // dives until the bound is met or time is up: the first takes the LP's most used
        // column when nothing is whole, later ones pick among the most used at random
        let mut round = 0u64;
        while ub > lb + EPS && optimal && !greedy_only && Instant::now() < deadline {
            let Some(bars) = dive(inst, &master, deadline, round, ub) else {
                round += 1;
                continue;
            };
            let v = value_of(inst, &bars);
            tracing::debug!(
                round,
                value = v,
                seconds = start.elapsed().as_secs_f64(),
                "dive"
            );
            if v < ub - EPS {
                (ub, plan) = (v, bars);
            }
            round += 1;
        }
    }
    Outcome {
        value: ub,
        bars: plan,
        left: short,
        bound: lb,
    }
}

fn finish(
    inst: &Instance,
    bars: Vec<Bar>,
    value: f64,
    lower_bound: f64,
    unplaced: Vec<(usize, u32, String)>,
    start: Instant,
) -> Plan {
    // identical bars become one pattern with a multiplicity
    let mut patterns: Vec<Pattern> = Vec::new();
    for b in bars {
        if b.counts.iter().all(|&c| c == 0) {
            continue;
        }
        let pieces: Vec<(usize, u32)> = b
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| (inst.piece[k], c))
            .collect();
        let stock = inst.stock[b.stock];
        match patterns
            .iter_mut()
            .find(|q| q.stock == stock && q.pieces == pieces)
        {
            Some(q) => q.multiplicity += 1,
            None => patterns.push(Pattern {
                stock,
                multiplicity: 1,
                pieces,
            }),
        }
    }
    // the most used patterns first
    patterns.sort_by(|a, b| b.multiplicity.cmp(&a.multiplicity));
    Plan {
        patterns,
        unplaced,
        value,
        lower_bound: lower_bound.min(value),
        proven_optimal: value <= lower_bound + EPS,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn value_of(inst: &Instance, bars: &[Bar]) -> f64 {
    bars.iter().map(|b| inst.cost[b.stock]).sum()
}

fn column_of(inst: &Instance, b: &Bar) -> Column {
    Column {
        stock: b.stock,
        counts: b.counts.clone(),
        cost: inst.cost[b.stock],
    }
}

/// For each piece type, a pattern of only that piece: on the stock type that makes it
/// cheapest per piece, as many as fit (at most the demand).
fn homogeneous(inst: &Instance, demand: &[u32]) -> Vec<Column> {
    (0..inst.types())
        .map(|i| {
            let (t, k) = (0..inst.stock.len())
                .filter(|&t| inst.capacity[t] >= inst.size[i])
                .map(|t| {
                    let k = ((inst.capacity[t] / inst.size[i]) as u32).min(demand[i].max(1));
                    (t, k)
                })
                .min_by(|a, b| {
                    (inst.cost[a.0] / a.1 as f64).total_cmp(&(inst.cost[b.0] / b.1 as f64))
                })
                .expect("every piece type fits some stock type");
            let mut counts = vec![0; inst.types()];
            counts[i] = k;
            Column {
                stock: t,
                counts,
                cost: inst.cost[t],
            }
        })
        .collect()
}

/// Column generation to LP optimality (or the deadline). Returns whether the LP is optimal and
/// Farley's lower bound on the LP value (classic cutting stock only; 0 otherwise).
fn column_generation(
    inst: &Instance,
    master: &mut Master,
    demand: &[u32],
    deadline: Instant,
) -> (bool, f64) {
    let mut farley = 0.0f64;
    let unit = inst.stock.len() == 1;
    let (mut steps, mut pricings) = (0u64, 0u64);
    let (mut t_master, mut t_price) = (0.0f64, 0.0f64);
    let mut smooth: Option<Vec<f64>> = None;
    loop {
        if Instant::now() >= deadline {
            tracing::debug!(
                steps,
                pricings,
                t_master,
                t_price,
                "column generation stopped by the deadline"
            );
            return (false, farley);
        }
        let t0 = Instant::now();
        let y = master.duals();
        let improved = master.improve(&y);
        t_master += t0.elapsed().as_secs_f64();
        if improved {
            steps += 1;
            continue;
        }
        pricings += 1;
        let t1 = Instant::now();
        let mut entering: Option<(f64, Column)> = None;
        // a short search usually finds a pattern that prices out; the exact (and slower)
        // optimum is needed only to prove that none does, and for Farley's bound. The search
        // prices with smoothed duals (a running mix of past and present ones: column
        // generation's duals swing wildly, smoothed ones find columns of lasting use); a
        // column is taken only if it prices out under the true duals
        let priced = match &smooth {
            Some(prev) => prev
                .iter()
                .zip(&y)
                .map(|(p, c)| SMOOTHING * p + (1.0 - SMOOTHING) * c)
                .collect(),
            None => y.clone(),
        };
        smooth = Some(priced.clone());
        for t in 0..inst.stock.len() {
            let (_, counts, _) = knapsack::bounded_search(
                &priced,
                &inst.size,
                demand,
                inst.capacity[t],
                QUICK_NODES,
            );
            let value: f64 = counts.iter().zip(&y).map(|(&a, &yi)| a as f64 * yi).sum();
            keep_best(&mut entering, inst, t, value, counts);
        }
        if let Some((_, col)) = entering {
            t_price += t1.elapsed().as_secs_f64();
            master.add_and_enter(col);
            continue;
        }
        for t in 0..inst.stock.len() {
            let (value, counts) = knapsack::best_pattern(&y, &inst.size, demand, inst.capacity[t]);
            if unit && value > EPS {
                // every pattern is worth at most `value` in duals: the LP needs at least
                // objective / (value / cost) bars' worth
                farley = farley.max(master.objective() * inst.cost[t] / value.max(inst.cost[t]));
            }
            keep_best(&mut entering, inst, t, value, counts);
        }
        t_price += t1.elapsed().as_secs_f64();
        match entering {
            Some((_, col)) => master.add_and_enter(col),
            None => return (true, master.objective().max(farley)),
        }
    }
}

/// Keeps the pattern `counts` on stock type `t`, worth `value` in duals, if it prices out and
/// beats the one kept so far (by reduced cost).
fn keep_best(
    best: &mut Option<(f64, Column)>,
    inst: &Instance,
    t: usize,
    value: f64,
    counts: Vec<u32>,
) {
    let rc = inst.cost[t] - value;
    if rc < -1e-9 && best.as_ref().is_none_or(|(b, _)| rc < *b) {
        *best = Some((
            rc,
            Column {
                stock: t,
                counts,
                cost: inst.cost[t],
            },
        ));
    }
}

/// Takes `col` `copies` times, each copy trimmed to what is still needed; returns the bars.
fn take(col: &Column, copies: u32, residual: &mut [u32], bars: &mut Vec<Bar>, inst: &Instance) {
    for _ in 0..copies {
        let counts: Vec<u32> = col
            .counts
            .iter()
            .zip(residual.iter())
            .map(|(&c, &r)| c.min(r))
            .collect();
        if counts.iter().all(|&c| c == 0) {
            return;
        }
        for (r, c) in residual.iter_mut().zip(&counts) {
            *r -= c;
        }
        let load: i64 = counts
            .iter()
            .zip(&inst.size)
            .map(|(&c, &s)| c as i64 * s)
            .sum();
        bars.push(Bar {
            stock: col.stock,
            free: inst.capacity[col.stock] - load,
            counts,
        });
    }
}

/// The residual of `residual` packed greedily (minimum bin slack).
fn greedy_rest(inst: &Instance, residual: &[u32], bars: &mut Vec<Bar>) -> bool {
    if residual.iter().all(|&r| r == 0) {
        return true;
    }
    let rest = Instance {
        demand: residual.to_vec(),
        ..inst.clone()
    };
    let (more, left) = min_slack(&rest);
    bars.extend(more);
    left.iter().all(|&l| l == 0)
}

/// The LP's columns rounded down, the rest by minimum bin slack.
fn round_down_then_greedy(inst: &Instance, master: &Master) -> Option<Vec<Bar>> {
    let mut residual = inst.demand.clone();
    let mut bars = Vec::new();
    let mut sol = master.solution();
    sol.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (j, x) in sol {
        take(
            &master.cols[j],
            (x + 1e-6).floor() as u32,
            &mut residual,
            &mut bars,
            inst,
        );
    }
    greedy_rest(inst, &residual, &mut bars).then_some(bars)
}

/// Diving: take what the LP uses whole (or its most used column once), solve the LP of what is
/// left by column generation again, until nothing is left.
///
/// Round 0 is deterministic; later rounds (`round` seeds them) take one of the three most used
/// columns at random when none is whole. A dive is abandoned (None) as soon as it cannot beat
/// `incumbent`: the bars taken plus the rounded-up LP of the rest reach it.
fn dive(
    inst: &Instance,
    root: &Master,
    deadline: Instant,
    round: u64,
    incumbent: f64,
) -> Option<Vec<Bar>> {
    let mut residual = inst.demand.clone();
    let mut bars = Vec::new();
    let mut seed = round.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut random = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    // the first step uses the root LP as it is (the residual is the whole demand)
    let mut solved: Option<(Vec<(Column, f64)>, Vec<Column>)> = Some((
        root.solution()
            .into_iter()
            .map(|(j, x)| (root.cols[j].clone(), x))
            .collect(),
        root.cols.clone(),
    ));
    let mut pool: Vec<Column> = Vec::new();
    while residual.iter().any(|&r| r > 0) {
        if Instant::now() >= deadline {
            return greedy_rest(inst, &residual, &mut bars).then_some(bars);
        }
        let (mut sol, cols) = match solved.take() {
            Some(s) => s,
            None => {
                // keep only columns that still serve: trimmed to the residual, no duplicates
                let mut extra: Vec<Column> = Vec::new();
                for c in pool.drain(..) {
                    let counts: Vec<u32> = c
                        .counts
                        .iter()
                        .zip(&residual)
                        .map(|(&a, &r)| a.min(r))
                        .collect();
                    if counts.iter().any(|&a| a > 0) {
                        let col = Column { counts, ..c };
                        if !extra.contains(&col) {
                            extra.push(col);
                        }
                    }
                }
                // rows with no demand left keep a trivial homogeneous column (never used)
                let demand: Vec<u32> = residual.clone();
                let mut master = Master::new(&demand, homogeneous(inst, &demand), extra);
                let (optimal, _) = column_generation(inst, &mut master, &demand, deadline);
                if optimal && round > 0 {
                    let rest = if inst.integral_costs {
                        (master.objective() - 1e-6).ceil()
                    } else {
                        master.objective()
                    };
                    if value_of(inst, &bars) + rest >= incumbent - EPS {
                        return None;
                    }
                }
                let sol = master
                    .solution()
                    .into_iter()
                    .map(|(j, x)| (master.cols[j].clone(), x))
                    .collect();
                (sol, master.cols)
            }
        };
        sol.sort_by(|a, b| b.1.total_cmp(&a.1));
        let before: u32 = residual.iter().sum();
        for (col, x) in &sol {
            let whole = (x + 1e-6).floor() as u32;
            if whole > 0 {
                take(col, whole, &mut residual, &mut bars, inst);
            }
        }
        if residual.iter().sum::<u32>() == before {
            // nothing whole: the most used column (or, in later rounds, one of the three most
            // used), once
            let pick = if round == 0 {
                0
            } else {
                random(sol.len().min(3))
            };
            match sol.get(pick) {
                Some((col, _)) => take(col, 1, &mut residual, &mut bars, inst),
                None => return greedy_rest(inst, &residual, &mut bars).then_some(bars),
            }
            if residual.iter().sum::<u32>() == before {
                return greedy_rest(inst, &residual, &mut bars).then_some(bars);
            }
        }
        pool = cols;
    }
    Some(bars)
}
