//! The problem as the solver sees it: integer sizes in the coarsest unit that keeps every length
//! exact, with the kerf folded in (each piece takes its length plus one kerf; a bar holds its
//! usable length plus one kerf, because the last piece needs no cut after it), and the pieces no
//! bar can hold set aside.

use super::model::{Objective, Problem};

#[derive(Clone, Debug)]
pub struct Instance {
    /// Piece types the solver works on (index into `Problem::pieces`), longest first.
    pub piece: Vec<usize>,
    pub size: Vec<i64>,
    pub demand: Vec<u32>,
    /// Stock types (index into `Problem::stock`) with room for at least one piece, the higher
    /// priority first.
    pub stock: Vec<usize>,
    pub capacity: Vec<i64>,
    /// Objective cost of one bar of each stock type.
    pub cost: Vec<f64>,
    pub limit: Vec<Option<u32>>,
    /// Stock priority: among equally good choices, the higher is opened first.
    pub priority: Vec<i32>,
    /// True when every cost is a whole number (bounds may then be rounded up).
    pub integral_costs: bool,
    /// True when the sizes are the lengths exactly (no rounding was needed).
    pub exact: bool,
    /// Pieces that fit no bar: (piece index, quantity).
    pub too_long: Vec<(usize, u32)>,
}

/// The largest table the knapsack pricing may build (capacity x expanded items, in bits).
pub const MAX_TABLE_BITS: u64 = 400_000_000;

fn scale_of(values: &[f64]) -> Option<f64> {
    [1.0, 10.0, 100.0, 1000.0].into_iter().find(|s| {
        values
            .iter()
            .all(|v| ((v * s).round() - v * s).abs() < 1e-6 * s.max(1.0))
    })
}

/// The greatest common divisor (0 with 0: the start of a fold).
pub(crate) fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Instance {
    pub fn of(p: &Problem) -> Instance {
        let mut all: Vec<f64> = vec![p.kerf, p.start_trim, p.end_trim];
        all.extend(p.pieces.iter().map(|x| x.length));
        all.extend(p.stock.iter().map(|s| s.length));
        // exact integers when the lengths allow (mm, 0.1 mm, ...), else micrometres rounded
        // against us (pieces up, bars down), so every pattern truly fits
        let (scale, exact) = match scale_of(&all) {
            Some(s) => (s, true),
            None => (1000.0, false),
        };
        let up = |v: f64| (v * scale - 1e-9).ceil() as i64;
        let down = |v: f64| (v * scale + 1e-9).floor() as i64;
        let kerf = up(p.kerf);
        let mut raw_size: Vec<i64> = p.pieces.iter().map(|x| up(x.length) + kerf).collect();
        let mut raw_cap: Vec<i64> = p
            .stock
            .iter()
            .map(|s| down(s.length) - up(p.start_trim) - up(p.end_trim) + kerf)
            .collect();
        let g = raw_size
            .iter()
            .chain(raw_cap.iter())
            .filter(|v| **v > 0)
            .fold(0, |g, v| gcd(g, *v))
            .max(1);
        raw_size.iter_mut().for_each(|v| *v /= g);
        raw_cap.iter_mut().for_each(|v| *v = v.div_euclid(g));
        let cost_of = |k: usize| match p.objective {
            Objective::MinimiseStock => 1.0,
            Objective::MinimiseWaste => p.stock[k].length,
            Objective::MinimiseCost => {
                if p.stock[k].cost > 0.0 {
                    p.stock[k].cost
                } else {
                    p.stock[k].length
                }
            }
        };
        let biggest = raw_cap.iter().copied().max().unwrap_or(0);
        let mut order: Vec<usize> = (0..p.pieces.len())
            .filter(|&i| p.pieces[i].quantity > 0)
            .collect();
        order.sort_by(|&a, &b| raw_size[b].cmp(&raw_size[a]).then(a.cmp(&b)));
        let (fits, too_long): (Vec<usize>, Vec<usize>) =
            order.into_iter().partition(|&i| raw_size[i] <= biggest);
        let smallest = fits.iter().map(|&i| raw_size[i]).min().unwrap_or(i64::MAX);
        // the higher priority first: every tie between stock types (in the first answers, in
        // pricing) then goes its way
        let mut stock: Vec<usize> = (0..p.stock.len())
            .filter(|&k| raw_cap[k] >= smallest && p.stock[k].quantity != Some(0))
            .collect();
        stock.sort_by_key(|&k| std::cmp::Reverse(p.stock[k].priority));
        let cost: Vec<f64> = stock.iter().map(|&k| cost_of(k)).collect();
        Instance {
            size: fits.iter().map(|&i| raw_size[i]).collect(),
            demand: fits.iter().map(|&i| p.pieces[i].quantity).collect(),
            piece: fits,
            capacity: stock.iter().map(|&k| raw_cap[k]).collect(),
            limit: stock.iter().map(|&k| p.stock[k].quantity).collect(),
            priority: stock.iter().map(|&k| p.stock[k].priority).collect(),
            integral_costs: cost.iter().all(|c| c.fract() == 0.0),
            cost,
            stock,
            exact,
            too_long: too_long
                .into_iter()
                .map(|i| (i, p.pieces[i].quantity))
                .collect(),
        }
    }

    pub fn types(&self) -> usize {
        self.size.len()
    }

    /// True for one stock type: classic cutting stock, where the combinatorial bounds (L2)
    /// and branch-and-price apply. A limit on that one type changes nothing in them: a plan
    /// with fewer bars than one that keeps the limit keeps it too, so the limit only decides
    /// whether a plan is possible at all (bounds of the problem without it hold with it).
    pub fn is_classic(&self) -> bool {
        self.stock.len() == 1
    }
}
