//! First answers: first-fit and best-fit decreasing. With several stock types a new bar is the
//! type with the lowest cost per unit of capacity that holds the piece and has bars left; after
//! packing, each bar moves to the cheapest type that still holds what it carries.

use super::instance::Instance;

/// A packed bar: its stock type (index into the instance's types), free room, piece counts.
#[derive(Clone, Debug)]
pub struct Bar {
    pub stock: usize,
    pub free: i64,
    pub counts: Vec<u32>,
}

/// The order in which stock types are tried for a new bar: by cost per unit of capacity, then
/// the higher priority, then the longer first.
fn opening_order(inst: &Instance) -> Vec<usize> {
    let mut types: Vec<usize> = (0..inst.stock.len()).collect();
    types.sort_by(|&a, &b| {
        let ra = inst.cost[a] / inst.capacity[a] as f64;
        let rb = inst.cost[b] / inst.capacity[b] as f64;
        ra.total_cmp(&rb)
            .then(inst.priority[b].cmp(&inst.priority[a]))
            .then(inst.capacity[b].cmp(&inst.capacity[a]))
    });
    types
}

/// Packs every piece; None when the stock limits leave pieces without a bar (then `left`
/// says how many of each type).
pub fn decreasing(inst: &Instance, best_fit: bool) -> (Vec<Bar>, Vec<u32>) {
    let n = inst.types();
    let mut bars: Vec<Bar> = Vec::new();
    let mut used = vec![0u32; inst.stock.len()];
    let mut left = vec![0u32; n];
    let types = opening_order(inst);
    for i in 0..n {
        let s = inst.size[i];
        for _ in 0..inst.demand[i] {
            let choice = if best_fit {
                bars.iter()
                    .enumerate()
                    .filter(|(_, b)| b.free >= s)
                    .min_by_key(|(_, b)| b.free)
                    .map(|(k, _)| k)
            } else {
                bars.iter().position(|b| b.free >= s)
            };
            let k = match choice {
                Some(k) => k,
                None => {
                    let Some(&t) = types.iter().find(|&&t| {
                        inst.capacity[t] >= s && inst.limit[t].is_none_or(|l| used[t] < l)
                    }) else {
                        left[i] += 1;
                        continue;
                    };
                    used[t] += 1;
                    bars.push(Bar {
                        stock: t,
                        free: inst.capacity[t],
                        counts: vec![0; n],
                    });
                    bars.len() - 1
                }
            };
            bars[k].free -= s;
            bars[k].counts[i] += 1;
        }
    }
    // each bar on the cheapest type that holds its load (and has bars left), the shortest
    // among equally cheap ones
    for b in bars.iter_mut() {
        let load = inst.capacity[b.stock] - b.free;
        // cheaper, or as cheap and shorter (less waste)
        let key = |t: usize| (inst.cost[t], inst.capacity[t]);
        let better = (0..inst.stock.len())
            .filter(|&t| inst.capacity[t] >= load)
            .filter(|&t| {
                let (c, cap) = key(t);
                let (c0, cap0) = key(b.stock);
                c < c0 - 1e-12 || (c <= c0 + 1e-12 && cap < cap0)
            })
            .filter(|&t| inst.limit[t].is_none_or(|l| used[t] < l))
            .min_by(|&x, &y| key(x).0.total_cmp(&key(y).0).then(key(x).1.cmp(&key(y).1)));
        if let Some(t) = better {
            used[b.stock] -= 1;
            used[t] += 1;
            b.free = inst.capacity[t] - load;
            b.stock = t;
        }
    }
    (bars, left)
}

/// The largest table (bits) `min_slack` builds for one bar, and the nodes of its branch and
/// bound where a table would be bigger: one bar's fill needs no proof, and an order of
/// thousands of bars on a capacity of 10^6 cannot pay a table each.
const FILL_TABLE_BITS: u64 = 100_000_000;
const FILL_NODES: u64 = 20_000;

/// Minimum bin slack, pattern by pattern (Haessler's sequential heuristic): each new bar takes
/// the longest piece left, then the set of remaining pieces that fills the rest of it best (a
/// subset-sum, by the pricing knapsack with values equal to sizes: exact where a small table
/// or a short search settles it, else the best of a bounded search), and that pattern is cut
/// as many times as the pieces left allow. Strong where pieces combine into exact fits, and
/// one fill serves many bars on large orders. Once `stop` says so, the rest is packed first-fit
/// decreasing. Stock limits are honoured as in `decreasing`; pieces left over are returned.
pub fn min_slack(inst: &Instance, stop: &dyn Fn() -> bool) -> (Vec<Bar>, Vec<u32>) {
    let n = inst.types();
    let mut left = inst.demand.clone();
    let mut bars = Vec::new();
    let mut used = vec![0u32; inst.stock.len()];
    let types = opening_order(inst);
    let values: Vec<f64> = inst.size.iter().map(|&s| s as f64).collect();
    let budget = super::knapsack::Budget {
        table_bits: FILL_TABLE_BITS,
        nodes: FILL_NODES,
        stop,
    };
    while let Some(first) = (0..n).find(|&i| left[i] > 0) {
        if stop() {
            let rest = Instance {
                demand: left,
                limit: (0..inst.stock.len())
                    .map(|t| inst.limit[t].map(|l| l - used[t]))
                    .collect(),
                ..inst.clone()
            };
            let (more, short) = decreasing(&rest, false);
            bars.extend(more);
            return (bars, short);
        }
        let Some(&t) = types.iter().find(|&&t| {
            inst.capacity[t] >= inst.size[first] && inst.limit[t].is_none_or(|l| used[t] < l)
        }) else {
            break;
        };
        left[first] -= 1;
        let room = inst.capacity[t] - inst.size[first];
        let priced = super::knapsack::best_patterns(&values, &inst.size, &left, room, 1, &budget);
        left[first] += 1;
        let mut counts = priced.patterns.into_iter().next().expect("a pattern").1;
        counts[first] += 1;
        let copies = counts
            .iter()
            .zip(&left)
            .filter(|(&c, _)| c > 0)
            .map(|(&c, &l)| l / c)
            .min()
            .unwrap_or(1)
            .min(inst.limit[t].map_or(u32::MAX, |l| l - used[t]))
            .max(1);
        used[t] += copies;
        for (l, c) in left.iter_mut().zip(&counts) {
            *l -= *c * copies;
        }
        let load: i64 = counts
            .iter()
            .zip(&inst.size)
            .map(|(&c, &s)| c as i64 * s)
            .sum();
        for _ in 0..copies {
            bars.push(Bar {
                stock: t,
                free: inst.capacity[t] - load,
                counts: counts.clone(),
            });
        }
    }
    (bars, left)
}
