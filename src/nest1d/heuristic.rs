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

/// Minimum bin slack: each new bar takes the longest piece left, then the set of remaining
/// pieces that fills the rest of it best (a subset-sum, solved exactly by the pricing
/// knapsack with values equal to sizes). Strong where pieces combine into exact fits.
/// Stock limits are honoured as in `decreasing`; pieces left over are returned.
pub fn min_slack(inst: &Instance) -> (Vec<Bar>, Vec<u32>) {
    let n = inst.types();
    let mut left = inst.demand.clone();
    let mut bars = Vec::new();
    let mut used = vec![0u32; inst.stock.len()];
    let types = opening_order(inst);
    let values: Vec<f64> = inst.size.iter().map(|&s| s as f64).collect();
    while let Some(first) = (0..n).find(|&i| left[i] > 0) {
        let Some(&t) = types.iter().find(|&&t| {
            inst.capacity[t] >= inst.size[first] && inst.limit[t].is_none_or(|l| used[t] < l)
        }) else {
            break;
        };
        used[t] += 1;
        left[first] -= 1;
        let room = inst.capacity[t] - inst.size[first];
        let (_, mut counts) = super::knapsack::best_pattern(&values, &inst.size, &left, room);
        for (l, c) in left.iter_mut().zip(&counts) {
            *l -= *c;
        }
        counts[first] += 1;
        let load: i64 = counts
            .iter()
            .zip(&inst.size)
            .map(|(&c, &s)| c as i64 * s)
            .sum();
        bars.push(Bar {
            stock: t,
            free: inst.capacity[t] - load,
            counts,
        });
    }
    (bars, left)
}
