//! The 1D solver: first answers by first-fit and best-fit decreasing; lower bounds (L2 for
//! classic cutting stock, the LP bound of column generation with exact knapsack pricing, and
//! Farley's bound while it runs); integer plans from the LP by rounding down and finishing the
//! rest greedily, then by diving (take what the LP uses, lower its demand in place, price again,
//! give up when the bound says the dive is lost, start again from the LP at perturbed costs).
//! A plan whose value meets the bound is proven optimal.

use super::bounds;
use super::branch;
use super::heuristic::{decreasing, min_slack, Bar};
use super::instance::{Instance, MAX_TABLE_BITS};
use super::knapsack;
use super::knapsack::Budget;
use super::master::{Column, Master};
use super::model::{Pattern, Plan, Problem};
use crate::cancel::CancelHandle;
use std::time::{Duration, Instant};

const EPS: f64 = 1e-9;
/// Nodes of the quick pricing search (see `column_generation`).
const QUICK_NODES: u64 = 2_000;
/// Patterns besides the best one that an exact pricing by table adds (see
/// `knapsack::bounded_many`).
const RUNNERS_UP: usize = 9;
/// Weight of the best bound's duals in the exact pricing's smoothed point.
const WENTGES: f64 = 0.8;
/// Weight of the past in the smoothed duals of the quick pricing.
const SMOOTHING: f64 = 0.5;
/// The most used columns among which a dive after the first picks one at random.
const DIVE_WIDTH: usize = 3;
/// The share of the time after the root LP that branch-and-price gets, in slices between the
/// dives. Measured on the BPPLIB set at 2 s: a quarter proves three more instances than no
/// tree and loses none of the dives' optima; half loses two Hard28 optima to the dives' time.
const TREE_SHARE: f64 = 0.25;
/// The shortest slice of branch-and-price between two dives.
const MIN_SLICE: Duration = Duration::from_millis(10);
/// The share of the time limit that minimum bin slack, the slowest first answer, may take
/// (the rest of its plan is then first-fit decreasing): the LP needs the rest.
const MIN_SLACK_SHARE: f64 = 0.2;
/// The share of the time left at its start that the root LP may take before its solution so
/// far is rounded into a plan, and the share by which it must end (the rest rounds it again:
/// on large orders the greedy part of the rounding needs time too).
const ROOT_SHARE: f64 = 0.6;
const LATE_SHARE: f64 = 0.9;
/// Share of the time left that the greedy part of rounding an unfinished LP may take (minimum
/// bin slack over thousands of pieces left would take all of it; first-fit decreasing follows).
const EARLY_GREEDY_SHARE: f64 = 0.25;
/// Said in the plan when the limit left time for the first answers only.
const FIRST_ANSWERS_ONLY: &str = "the time limit left time for the first answers only \
     (first-fit and best-fit decreasing, minimum bin slack): no column generation ran";
/// Said in the plan when column generation had not ended at the limit.
const LP_UNFINISHED: &str =
    "column generation had not ended at the time limit: the lower bound is not the LP bound";

/// Solves `p` within its time limit.
pub fn solve(p: &Problem) -> Plan {
    solve_unless_cancelled(p, &CancelHandle::default())
}

/// Solves `p` within its time limit, or until `cancel` (then with the best plan so far).
pub fn solve_unless_cancelled(p: &Problem, cancel: &CancelHandle) -> Plan {
    let start = Instant::now();
    let deadline = Deadline {
        at: start + Duration::from_secs_f64(p.max_time_s.max(0.05)),
        cancel,
    };
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
            note: None,
        };
    }

    // stock limits are rows of the LP, so limited plans get the whole method and its bound
    let o = optimise(&inst, deadline, start);
    for (k, &l) in o.left.iter().enumerate() {
        if l > 0 {
            unplaced.push((inst.piece[k], l, "not enough stock".into()));
        }
    }
    finish(&inst, o.bars, o.value, o.bound, unplaced, start, o.note)
}

/// When the solver stops: at its time limit, or as soon as it is cancelled.
#[derive(Clone, Copy)]
struct Deadline<'a> {
    at: Instant,
    cancel: &'a CancelHandle,
}

impl Deadline<'_> {
    fn passed(&self) -> bool {
        Instant::now() >= self.at || self.cancel.is_cancelled()
    }

    /// The time left until `at` (zero once passed).
    fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// The same, but no later than `at`.
    fn sooner(self, at: Instant) -> Self {
        Deadline {
            at: self.at.min(at),
            ..self
        }
    }
}

/// What `optimise` found: the best plan (bars on the instance's stock types), its value, the
/// pieces it could not place (only when no plan within the stock limits was found), and the
/// best proven lower bound (0 for a plan that leaves pieces).
struct Outcome {
    value: f64,
    bars: Vec<Bar>,
    left: Vec<u32>,
    bound: f64,
    /// How the time limit cut the method short, if it did.
    note: Option<&'static str>,
}

/// First answers, then column generation for the bound and integer plans from the LP, until
/// `deadline`. A first answer short of stock (the limits leave pieces over) is kept only
/// until the LP's plans find one that places every piece.
fn optimise(inst: &Instance, deadline: Deadline, start: Instant) -> Outcome {
    // first answers: the one that places the most pieces, then the cheaper
    let (mut short, mut best) = (vec![0u32; inst.types()], None::<(f64, Vec<Bar>)>);
    let mut best_key = (u64::MAX, f64::INFINITY);
    let slack_deadline = deadline.sooner(Instant::now() + deadline.left().mul_f64(MIN_SLACK_SHARE));
    for heuristic in 0..3 {
        let (bars, left) = match heuristic {
            0 => decreasing(inst, false),
            1 => decreasing(inst, true),
            _ => min_slack(inst, &|| slack_deadline.passed()),
        };
        let key = (
            left.iter().map(|&l| l as u64).sum::<u64>(),
            value_of(inst, &bars),
        );
        tracing::debug!(
            heuristic,
            value = key.1,
            left = key.0,
            seconds = start.elapsed().as_secs_f64(),
            "first answer"
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
    let (first_value, first_bars) = best.expect("a first answer");
    // a first answer short of stock is no plan yet: any plan that places every piece beats
    // it; it is kept aside, to be returned only if none does
    let (mut ub, mut plan, short_answer) = if short.iter().all(|&l| l == 0) {
        (first_value, first_bars, None)
    } else {
        (f64::INFINITY, Vec::new(), Some((first_value, first_bars)))
    };
    let mut lb = classic_bound;
    let mut note = None;
    if ub > lb + EPS && deadline.passed() {
        note = Some(FIRST_ANSWERS_ONLY);
    }
    if ub > lb + EPS && !deadline.passed() {
        // the LP bound by column generation, from the first answer's patterns (each once)
        let first_bars = short_answer.as_ref().map_or(&plan, |(_, bars)| bars);
        let mut pool: Vec<Column> = first_bars.iter().map(|b| column_of(inst, b)).collect();
        pool.sort_by(|a, b| (a.stock, &a.counts).cmp(&(b.stock, &b.counts)));
        pool.dedup();
        let mut master = Master::with_limits(
            &inst.demand,
            &inst.limit,
            homogeneous(inst, &inst.demand),
            pool,
        );
        master.add_exchanges(&inst.size);
        let (lp_start, lp_time) = (Instant::now(), deadline.left());
        let share = |s: f64| deadline.sooner(lp_start + lp_time.mul_f64(s));
        let (mut done, mut bound) =
            column_generation(inst, &mut master, &inst.demand, share(ROOT_SHARE));
        if !done && !deadline.passed() {
            // a large LP that has not ended: its solution so far is rounded into a plan while
            // there is time for the greedy part, then it goes on (a new Farley bound starts
            // from nothing, so the better of the two is kept)
            lb = lb.max(round_up(inst, bound));
            if ub > lb + EPS {
                // the greedy part gets a share of the time: the LP goes on after it
                let greedy =
                    deadline.sooner(Instant::now() + deadline.left().mul_f64(EARLY_GREEDY_SHARE));
                if let Some(bars) = round_down_then_greedy(inst, &master, greedy) {
                    let v = value_of(inst, &bars);
                    tracing::debug!(value = v, "early LP rounded down + greedy");
                    if v < ub - EPS {
                        (ub, plan) = (v, bars);
                    }
                }
            }
            let (later_done, later_bound) =
                column_generation(inst, &mut master, &inst.demand, share(LATE_SHARE));
            done = later_done;
            bound = if later_done {
                later_bound
            } else {
                bound.max(later_bound)
            };
        }
        lb = lb.max(round_up(inst, bound));
        // the bound is read; the dives need the LP's solution in patterns alone, without
        // exchanges, so the LP goes on without them (`done` then says whether it ended)
        let bound_done = done;
        master.drop_exchanges();
        if done && ub > lb + EPS {
            done = column_generation(inst, &mut master, &inst.demand, share(LATE_SHARE)).0;
        }
        // an LP that ends with bars past the stock limits has no solution within them (the
        // overflow's penalty outweighs any pattern): no plan from it can keep the limits
        let keeps_limits = master.overflow() < 1e-4;
        if !bound_done && ub > lb + EPS {
            note = Some(LP_UNFINISHED);
        }
        tracing::debug!(
            done,
            lp = master.objective(),
            overflow = master.overflow(),
            columns = master.cols.len(),
            lb,
            ub,
            seconds = start.elapsed().as_secs_f64(),
            "root LP"
        );
        // integer plans from the LP
        if ub > lb + EPS && keeps_limits {
            if let Some(bars) = round_down_then_greedy(inst, &master, deadline) {
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
        // column when nothing is whole, later ones pick among the most used at random. Where
        // branch-and-price applies, each dive is followed by a slice of its tree (the tree
        // resumes where it stopped; `TREE_SHARE` of the time), so an instance only the tree
        // can prove waits for no stagnation test, and the dives keep most of the time
        // (an instance closed at the root, most of them, builds no tree)
        let searchable = done && keeps_limits && ub > lb + EPS && branch::applies(inst);
        // the tree's incumbent in bars: the plan's, or, while no plan keeps the one stock
        // type's limit, one bar past the limit (the tree then looks for plans within it)
        let bars_of = |value: f64| match (value.is_finite(), inst.limit[0]) {
            (true, _) => (value / inst.cost[0]).round() as u64,
            (false, Some(limit)) => limit as u64 + 1,
            (false, None) => u64::MAX,
        };
        let mut tree = searchable.then(|| branch::Tree::new(inst, bars_of(ub), &master.cols));
        let mut round = 0u64;
        // the waste a plan that meets the bound may have, if less than the smallest piece (the
        // bound moves in the loop only when the tree ends it)
        let perfect_budget = inst
            .is_classic()
            .then(|| {
                let bars = (lb / inst.cost[0]).round() as u64;
                bounds::waste_budget(&inst.size, &inst.demand, inst.capacity[0], bars)
            })
            .flatten();
        while ub > lb + EPS && done && keeps_limits && !deadline.passed() {
            let dive_start = Instant::now();
            // one bar above a bound that only a perfect packing meets: look for one
            let perfect = perfect_budget.filter(|_| ub - inst.cost[0] <= lb + EPS);
            match dive(inst, &master, deadline, round, ub, perfect) {
                Some(bars) => {
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
                }
                None => tracing::debug!(
                    round,
                    seconds = start.elapsed().as_secs_f64(),
                    "dive failed"
                ),
            }
            round += 1;
            let Some(tree) = tree.as_mut().filter(|_| ub > lb + EPS) else {
                continue;
            };
            tree.lower_incumbent(bars_of(ub));
            let slice = dive_start
                .elapsed()
                .mul_f64(TREE_SHARE / (1.0 - TREE_SHARE))
                .max(MIN_SLICE);
            let slice = deadline.sooner(Instant::now() + slice);
            let exhausted = tree.run(&|| slice.passed());
            if let Some(bars) = tree.take_improved() {
                ub = value_of(inst, &bars);
                plan = bars;
            }
            if exhausted {
                tracing::debug!(
                    nodes = tree.nodes,
                    seconds = start.elapsed().as_secs_f64(),
                    "branch-and-price: tree exhausted"
                );
                lb = ub;
            }
        }
    }
    if ub == f64::INFINITY {
        // no plan placed every piece: the first answer with the fewest left over
        let (value, bars) = short_answer.expect("kept while no plan places every piece");
        return Outcome {
            value,
            bars,
            left: short,
            bound: 0.0,
            note,
        };
    }
    Outcome {
        value: ub,
        bars: plan,
        left: vec![0; inst.types()],
        bound: lb,
        note: if ub > lb + EPS { note } else { None },
    }
}

fn finish(
    inst: &Instance,
    bars: Vec<Bar>,
    value: f64,
    lower_bound: f64,
    unplaced: Vec<(usize, u32, String)>,
    start: Instant,
    note: Option<&'static str>,
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
        note: note.map(String::from),
    }
}

/// A lower bound rounded up to the next whole value where costs are whole (1e-6 of slack
/// for the floating point of the LP).
fn round_up(inst: &Instance, bound: f64) -> f64 {
    if inst.integral_costs {
        (bound - 1e-6).ceil()
    } else {
        bound
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

/// Column generation to LP optimality (or the deadline). Returns whether it is done (the LP
/// is optimal, or, with one stock type and whole costs, its value rounded up is known: the
/// best bound and the master's value round up alike) and a lower bound on the LP (the duals'
/// at optimality, else Farley's; 0 before any).
fn column_generation(
    inst: &Instance,
    master: &mut Master,
    demand: &[u32],
    deadline: Deadline,
) -> (bool, f64) {
    let mut farley = 0.0f64;
    let unit = inst.stock.len() == 1;
    let (mut steps, mut pricings, mut exact) = (0u64, 0u64, 0u64);
    let (mut t_master, mut t_price) = (0.0f64, 0.0f64);
    let mut smooth: Option<Vec<f64>> = None;
    // the duals of the best bound so far, and that bound
    let mut centre: Option<(Vec<f64>, f64)> = None;
    let stop = || deadline.passed();
    let budget = Budget {
        table_bits: MAX_TABLE_BITS,
        nodes: u64::MAX,
        stop: &stop,
    };
    loop {
        if deadline.passed() {
            tracing::debug!(
                steps,
                pricings,
                exact,
                t_master,
                t_price,
                "column generation stopped by the deadline"
            );
            return (false, farley);
        }
        let t0 = Instant::now();
        let improved = master.improve();
        t_master += t0.elapsed().as_secs_f64();
        if improved {
            steps += 1;
            continue;
        }
        pricings += 1;
        let y = master.duals();
        // a pattern on stock type t prices out when its pieces are worth more than the bar's
        // cost plus its limit's dual; a type with no bar left is not priced (its limit row
        // holds its columns at 0, and its dual may rise as far as the bound needs at no cost)
        let mu = master.stock_duals();
        let price = |t: usize| inst.cost[t] + mu[t];
        let open: Vec<usize> = (0..inst.stock.len())
            .filter(|&t| !master.exhausted(t))
            .collect();
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
        for &t in &open {
            let counts = knapsack::bounded_search(
                &priced,
                &inst.size,
                demand,
                inst.capacity[t],
                QUICK_NODES,
                &stop,
            )
            .counts;
            let rc = price(t) - worth(&counts, &y);
            keep_best(&mut entering, inst, t, rc, counts);
        }
        if let Some((_, col)) = entering {
            t_price += t1.elapsed().as_secs_f64();
            master.add_and_enter(col);
            continue;
        }
        exact += 1;
        // a bound that rounds up to the master's value rounded up: more columns cannot move
        // the integer bound, so stop here (the master's value is that of a plan of the LP, an
        // upper bound on it)
        if unit
            && inst.integral_costs
            && master.overflow() < EPS
            && round_up(inst, farley) >= round_up(inst, master.objective())
        {
            return (true, farley);
        }
        // one stock type: price first at a point between the duals of the best bound so far
        // and the current ones (Wentges's smoothing: the current duals swing, and columns
        // priced at the smoothed point lead the LP to its end in fewer steps); a column is
        // taken only if it prices out at the current duals, else the exact pricing at them
        // follows (it proves that the LP is optimal)
        if let (true, true, Some((duals, _))) = (unit, open == [0], &centre) {
            let pi: Vec<f64> = duals
                .iter()
                .zip(&y)
                .map(|(c, v)| WENTGES * c + (1.0 - WENTGES) * v)
                .collect();
            let priced = knapsack::best_patterns(
                &pi,
                &inst.size,
                demand,
                inst.capacity[0],
                RUNNERS_UP + 1,
                &budget,
            );
            let cost = inst.cost[0];
            let bound = master.value_of_duals(&pi) * cost / priced.upper.max(cost);
            farley = farley.max(bound);
            if centre.as_ref().is_none_or(|(_, b)| bound > *b) {
                centre = Some((pi, bound));
            }
            let mut columns = priced_out(inst, 0, price(0), &y, priced.patterns);
            if let Some(first) = columns.next() {
                columns.for_each(|col| master.add(col));
                t_price += t1.elapsed().as_secs_f64();
                master.add_and_enter(first);
                continue;
            }
        }
        let mut proven = true;
        for &t in &open {
            let priced = knapsack::best_patterns(
                &y,
                &inst.size,
                demand,
                inst.capacity[t],
                RUNNERS_UP + 1,
                &budget,
            );
            proven &= priced.exact;
            let value = priced.upper;
            if unit && value > EPS {
                // every pattern is worth at most `value` in duals: the LP needs at least
                // objective / (value / cost) bars' worth
                let bound = master.dual_bound() * inst.cost[t] / value.max(inst.cost[t]);
                farley = farley.max(bound);
                if centre.as_ref().is_none_or(|(_, b)| bound > *b) {
                    centre = Some((y.clone(), bound));
                }
            }
            // the best enters (if it beats the other stock types'), the runners-up wait
            let mut columns = priced_out(inst, t, price(t), &y, priced.patterns);
            if let Some(best) = columns.next() {
                let rc = price(t) - worth(&best.counts, &y);
                keep_best(&mut entering, inst, t, rc, best.counts);
            }
            columns.for_each(|col| master.add(col));
        }
        t_price += t1.elapsed().as_secs_f64();
        match entering {
            Some((_, col)) => master.add_and_enter(col),
            // no column prices out, and the pricing proved that none does: the LP is optimal
            None if proven => return (true, master.dual_bound().max(farley)),
            // the pricing was cut short (by the deadline): Farley's bound is what is proven
            None => return (false, farley),
        }
    }
}

/// What the pieces of a pattern are worth at duals `y`.
fn worth(counts: &[u32], y: &[f64]) -> f64 {
    counts.iter().zip(y).map(|(&a, &yi)| a as f64 * yi).sum()
}

/// The patterns (best first) as columns on stock type `t`, those that price out at `y` (a bar of
/// `t` priced at `price`: its cost and its limit's dual).
fn priced_out<'a>(
    inst: &'a Instance,
    t: usize,
    price: f64,
    y: &'a [f64],
    patterns: Vec<(f64, Vec<u32>)>,
) -> impl Iterator<Item = Column> + 'a {
    patterns.into_iter().filter_map(move |(_, counts)| {
        (price - worth(&counts, y) < -1e-9).then(|| Column {
            stock: t,
            counts,
            cost: inst.cost[t],
        })
    })
}

/// Keeps the pattern `counts` on stock type `t`, of reduced cost `rc`, if it prices out and
/// beats the one kept so far.
fn keep_best(
    best: &mut Option<(f64, Column)>,
    inst: &Instance,
    t: usize,
    rc: f64,
    counts: Vec<u32>,
) {
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

/// Bars of stock type `t` that `bars` leaves of its limit (u32::MAX for unlimited stock).
fn bars_left(inst: &Instance, bars: &[Bar], t: usize) -> u32 {
    inst.limit[t].map_or(u32::MAX, |l| {
        l.saturating_sub(bars.iter().filter(|b| b.stock == t).count() as u32)
    })
}

/// Takes `col` `copies` times (as many as its stock's limit leaves), each copy trimmed to what
/// is still needed, into `bars`; returns how many it took.
fn take(
    col: &Column,
    copies: u32,
    residual: &mut [u32],
    bars: &mut Vec<Bar>,
    inst: &Instance,
) -> u32 {
    let copies = copies.min(bars_left(inst, bars, col.stock));
    for n in 0..copies {
        let counts: Vec<u32> = col
            .counts
            .iter()
            .zip(residual.iter())
            .map(|(&c, &r)| c.min(r))
            .collect();
        if counts.iter().all(|&c| c == 0) {
            return n;
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
    copies
}

/// The residual of `residual` packed greedily (minimum bin slack until `deadline`, then
/// first-fit decreasing), on the stock that `bars` leaves.
fn greedy_rest(inst: &Instance, residual: &[u32], bars: &mut Vec<Bar>, deadline: Deadline) -> bool {
    if residual.iter().all(|&r| r == 0) {
        return true;
    }
    let rest = Instance {
        demand: residual.to_vec(),
        limit: (0..inst.stock.len())
            .map(|t| inst.limit[t].map(|_| bars_left(inst, bars, t)))
            .collect(),
        ..inst.clone()
    };
    let (more, left) = min_slack(&rest, &|| deadline.passed());
    bars.extend(more);
    left.iter().all(|&l| l == 0)
}

/// The LP's columns rounded down, the rest by minimum bin slack.
fn round_down_then_greedy(
    inst: &Instance,
    master: &Master,
    deadline: Deadline,
) -> Option<Vec<Bar>> {
    let mut residual = inst.demand.clone();
    let mut bars = Vec::new();
    let mut sol = master.solution();
    sol.sort_by(|a, b| b.1.total_cmp(&a.1));
    for &(j, x) in &sol {
        take(
            &master.cols[j],
            (x + 1e-4).floor() as u32,
            &mut residual,
            &mut bars,
            inst,
        );
    }
    // then one more copy of the columns used in part, the largest part first, while every
    // piece of the copy is still wanted (a copy that would cut pieces nobody wants is left to
    // the greedy rest)
    let mut parts: Vec<(usize, f64)> = sol
        .iter()
        .map(|&(j, x)| (j, x - (x + 1e-4).floor()))
        .filter(|&(_, f)| f > 1e-4)
        .collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (j, _) in parts {
        let col = &master.cols[j];
        if col.counts.iter().zip(&residual).all(|(&c, &r)| c <= r) {
            take(col, 1, &mut residual, &mut bars, inst);
        }
    }
    fill_free_room(inst, &mut bars, &mut residual);
    greedy_rest(inst, &residual, &mut bars, deadline).then_some(bars)
}

/// Fills the free room of `bars` with the pieces `residual` still wants, the biggest that fits
/// first. Why: a column copy trimmed to what is still needed leaves room (and an LP solved with
/// exchanges, `Master::add_exchanges`, counts bigger pieces where smaller ones go), and a piece
/// put there is one bar's worth of waste less for the greedy rest.
fn fill_free_room(inst: &Instance, bars: &mut [Bar], residual: &mut [u32]) {
    for bar in bars.iter_mut() {
        // the instance's rows are longest first
        for i in 0..inst.types() {
            if residual[i] == 0 || inst.size[i] > bar.free {
                continue;
            }
            let n = ((bar.free / inst.size[i]) as u32).min(residual[i]);
            bar.counts[i] += n;
            bar.free -= n as i64 * inst.size[i];
            residual[i] -= n;
        }
    }
}

/// One dive. Along it: take what the LP uses whole, then one bar of a column it uses in part,
/// lower the demand in the LP by what was taken (a few dual simplex steps, not a new LP),
/// price new columns for what is left, until nothing is left. The dive gives up as soon as its
/// LP shows that it can no longer beat `incumbent` (the bars taken plus the rounded-up LP of
/// the rest reach it).
///
/// Round 0 follows the LP as it is and takes the most used column. Later rounds first perturb
/// the LP's costs (seeded by `round`; see `Master::perturb_costs`) and optimise it again, so
/// they start from another of its many optimal solutions and take other bars whole, then pick
/// at random among the `DIVE_WIDTH` most used columns. Why restarts and not backtracking:
/// every dive from the same LP solution takes the same whole bars first, and when those are
/// wrong no backtracking below them helps; measured on Hard28, restarts from perturbed costs
/// without backtracking reach the optimum on more instances in the same time than dives
/// that back up. Returns a plan that beats the incumbent, or (when the deadline stops it) the
/// dive so far finished greedily, or None.
///
/// With `waste_budget` (the incumbent is one bar above a bound that leaves less waste than the
/// smallest piece, `bounds::waste_budget`), the dive looks for a perfect packing: the only
/// plans that beat the incumbent waste at most that much in all their bars, so columns that
/// waste more than the budget still left are retired after each step, and a bar taken that
/// overdraws it ends the dive. (Pricing is left free: kept to such columns too, it cut column
/// generation short, and the AI class fell from 8 of 10 optima to 3 at 2 s.)
fn dive(
    inst: &Instance,
    root: &Master,
    deadline: Deadline,
    round: u64,
    incumbent: f64,
    waste_budget: Option<i64>,
) -> Option<Vec<Bar>> {
    let mut d = Dive {
        inst,
        deadline,
        incumbent,
        seed: round.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        waste_left: waste_budget,
    };
    let mut master = root.clone();
    let mut residual = inst.demand.clone();
    let mut bars = Vec::new();
    d.retire_wasteful(&mut master);
    if round > 0 || waste_budget.is_some() {
        // (a perfect-packing dive re-optimises first: the columns it retired may be basic)
        if round > 0 {
            master.perturb_costs(round.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        }
        let (done, bound) = column_generation(inst, &mut master, &residual, deadline);
        if d.hopeless(done, bound, &bars) {
            return None;
        }
    }
    loop {
        if residual.iter().all(|&r| r == 0) {
            return Some(bars);
        }
        if deadline.passed() {
            return greedy_rest(inst, &residual, &mut bars, deadline).then_some(bars);
        }
        // the columns used whole cost the LP nothing: take them
        let whole: Vec<(usize, u32)> = master
            .solution()
            .into_iter()
            .map(|(j, x)| (j, (x + 1e-4).floor() as u32))
            .filter(|&(_, copies)| copies > 0)
            .collect();
        match d.advance(&mut master, &mut residual, &mut bars, &whole) {
            Some(true) => return None,
            Some(false) => continue,
            None => {}
        }
        // then one bar of a column used in part
        let mut sol = master.solution();
        sol.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        sol.truncate(DIVE_WIDTH);
        if round > 0 && !sol.is_empty() {
            let pick = d.random(sol.len());
            sol.swap(0, pick);
        }
        let mut moved = false;
        for &(j, _) in &sol {
            match d.advance(&mut master, &mut residual, &mut bars, &[(j, 1)]) {
                Some(true) => return None,
                Some(false) => {
                    moved = true;
                    break;
                }
                None => {}
            }
        }
        if !moved {
            return greedy_rest(inst, &residual, &mut bars, deadline).then_some(bars);
        }
    }
}

struct Dive<'a> {
    inst: &'a Instance,
    deadline: Deadline<'a>,
    incumbent: f64,
    seed: u64,
    /// In a perfect-packing dive, the waste the bars still to take may have together.
    waste_left: Option<i64>,
}

impl Dive<'_> {
    fn random(&mut self, n: usize) -> usize {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        (self.seed % n.max(1) as u64) as usize
    }

    /// True when `bound` (on the LP of the pieces left, from a column generation that ended)
    /// shows that the bars taken cannot lead to a plan better than the incumbent.
    fn hopeless(&self, done: bool, bound: f64, bars: &[Bar]) -> bool {
        done && value_of(self.inst, bars) + round_up(self.inst, bound) >= self.incumbent - EPS
    }

    /// In a perfect-packing dive, retires the columns that waste more than is left to waste.
    fn retire_wasteful(&self, master: &mut Master) {
        if let Some(left) = self.waste_left {
            let inst = self.inst;
            master.retire_if(|col| {
                let load: i64 = col
                    .counts
                    .iter()
                    .zip(&inst.size)
                    .map(|(&c, &s)| c as i64 * s)
                    .sum();
                inst.capacity[col.stock] - load > left
            });
        }
    }

    /// Takes `taken` ((column, copies) each) into `bars`, lowers the LP's demand by it and
    /// prices what is left. None when it gives no piece still wanted; else whether the dive
    /// is now hopeless.
    fn advance(
        &mut self,
        master: &mut Master,
        residual: &mut Vec<u32>,
        bars: &mut Vec<Bar>,
        taken: &[(usize, u32)],
    ) -> Option<bool> {
        let before: u32 = residual.iter().sum();
        let bars_before = bars.len();
        let taken: Vec<(usize, u32)> = taken
            .iter()
            .map(|&(j, copies)| (j, take(&master.cols[j], copies, residual, bars, self.inst)))
            .filter(|&(_, n)| n > 0)
            .collect();
        if residual.iter().sum::<u32>() == before {
            return None;
        }
        if let Some(left) = self.waste_left.as_mut() {
            *left -= bars[bars_before..].iter().map(|b| b.free).sum::<i64>();
            if *left < 0 {
                return Some(true);
            }
        }
        master.fix(&taken);
        master.trim_to(residual);
        self.retire_wasteful(master);
        if residual.iter().all(|&r| r == 0) {
            return Some(false);
        }
        let (done, bound) = column_generation(self.inst, master, residual, self.deadline);
        tracing::trace!(
            done,
            lp = master.objective(),
            bars = bars.len(),
            "dive step"
        );
        Some(self.hopeless(done, bound, bars))
    }
}
