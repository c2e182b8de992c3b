//! Exact pricing for column generation: the bounded knapsack
//! max sum(value_i a_i) subject to sum(size_i a_i) <= capacity, 0 <= a_i <= bound_i, integers,
//! by dynamic programming over the capacity (bounds split into powers of two), with a bit table
//! to read the best pattern back, or by branch and bound where a table over the capacity would
//! be too big.

use super::instance::MAX_TABLE_BITS;

/// A 0/1 item of the split problem: `count` copies of item `item`.
struct Chunk {
    item: usize,
    count: u32,
    size: i64,
    value: f64,
}

/// The bounded knapsack by table: the best value and its counts per item (items with value
/// <= 0 are never taken), and up to `k - 1` runners-up from the same table: the best pattern within
/// each smaller capacity where the best value drops (distinct patterns, best first). Column
/// generation adds them all: one table costs the same for one pattern or ten, and the extra
/// columns save later tables. None when `stop` says so between two rows (a row costs one
/// pass over the capacity).
pub fn bounded_many(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    k: usize,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<(f64, Vec<u32>)>> {
    let n = values.len();
    let cap = capacity.max(0) as usize;
    let mut chunks = Vec::new();
    for i in 0..n {
        if values[i] <= 0.0 || sizes[i] > capacity || sizes[i] <= 0 {
            continue;
        }
        let mut left = bounds[i].min((capacity / sizes[i]) as u32);
        let mut k = 1u32;
        while left > 0 {
            let c = k.min(left);
            chunks.push(Chunk {
                item: i,
                count: c,
                size: sizes[i] * c as i64,
                value: values[i] * c as f64,
            });
            left -= c;
            k *= 2;
        }
    }
    let words = cap / 64 + 1;
    // two rows, the previous chunk's and this one's (see `table_row`)
    let mut best = vec![0.0f64; cap + 1];
    let mut next = vec![0.0f64; cap + 1];
    let mut take = vec![0u64; words * chunks.len()];
    for (k, ch) in chunks.iter().enumerate() {
        if stop() {
            return None;
        }
        let w = ch.size as usize;
        let v = ch.value;
        table_row(
            &best,
            &mut next,
            w,
            v,
            1e-12,
            &mut take[k * words..(k + 1) * words],
        );
        std::mem::swap(&mut best, &mut next);
    }
    let read_back = |mut c: usize| {
        let mut counts = vec![0u32; n];
        for (k, ch) in chunks.iter().enumerate().rev() {
            if take[k * words + c / 64] >> (c % 64) & 1 == 1 {
                counts[ch.item] += ch.count;
                c -= ch.size as usize;
            }
        }
        counts
    };
    let mut out: Vec<(f64, Vec<u32>)> = vec![(best[cap], read_back(cap))];
    let mut c = cap;
    while out.len() < k && c > 0 {
        c -= 1;
        if best[c] < best[c + 1] - 1e-12 {
            let counts = read_back(c);
            if !out.iter().any(|(_, o)| *o == counts) {
                out.push((best[c], counts));
            }
        }
    }
    Some(out)
}

/// One step of a knapsack table: `next` is `best` with one more item of size `w` and value
/// `v` allowed, and `taken` gets a bit per load where taking it gained more than `margin`
/// (what the read-back follows). Written without branches or dependences between cells, so
/// the compiler vectorizes it.
fn table_row(best: &[f64], next: &mut [f64], w: usize, v: f64, margin: f64, taken: &mut [u64]) {
    let cap = best.len() - 1;
    next[..w].copy_from_slice(&best[..w]);
    for ((n, &keep), &from) in next[w..].iter_mut().zip(&best[w..]).zip(&best[..=cap - w]) {
        *n = keep.max(from + v);
    }
    for (word, (n, b)) in taken.iter_mut().zip(next.chunks(64).zip(best.chunks(64))) {
        let mut bits = 0u64;
        for (bit, (&n, &b)) in n.iter().zip(b).enumerate() {
            bits |= ((n > b + margin) as u64) << bit;
        }
        *word = bits;
    }
}

/// Bits the table of `bounded_many` would take.
pub fn table_bits(sizes: &[i64], bounds: &[u32], capacity: i64) -> u64 {
    let chunks: u64 = sizes
        .iter()
        .zip(bounds)
        .filter(|(s, _)| **s > 0 && **s <= capacity)
        .map(|(s, b)| {
            let n = (*b as i64).min(capacity / s).max(0) as u64;
            64 - n.leading_zeros() as u64
        })
        .sum();
    chunks * (capacity.max(0) as u64 + 64)
}

/// What `bounded_search` found.
pub struct Found {
    pub value: f64,
    pub counts: Vec<u32>,
    /// True when the search ended: `counts` is then an optimum.
    pub finished: bool,
    /// An upper bound on the value of every pattern: the optimum's value when the search
    /// ended, else the root's bound.
    pub upper: f64,
}

/// Nodes between two looks at the clock in `bounded_search`.
const NODES_PER_CLOCK_CHECK: u64 = 1024;

/// The same problem by depth-first branch and bound (items by value per size, Dantzig's
/// fractional bound), which is fast when few pieces fill a bar or the values are uneven, and
/// needs no table over the capacity (so it serves capacities of millions). Past `node_limit`
/// nodes, or once `stop` says so (asked every `NODES_PER_CLOCK_CHECK` nodes), it ends with
/// the best pattern found so far.
pub fn bounded_search(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    node_limit: u64,
    stop: &dyn Fn() -> bool,
) -> Found {
    let mut items: Vec<usize> = (0..values.len())
        .filter(|&i| values[i] > 0.0 && sizes[i] > 0 && sizes[i] <= capacity && bounds[i] > 0)
        .collect();
    items.sort_by(|&a, &b| {
        (values[b] / sizes[b] as f64)
            .total_cmp(&(values[a] / sizes[a] as f64))
            .then(a.cmp(&b))
    });
    // a second bound: a bar holds at most room / (smallest size) more pieces, worth at most the
    // most valuable that many (tight when few pieces fill a bar and values per size are even)
    let smallest = items.iter().map(|&i| sizes[i]).min().unwrap_or(1).max(1);
    let mut by_value: Vec<f64> = Vec::new();
    let mut order = items.clone();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let most_pieces = (capacity / smallest) as usize;
    'fill: for &i in &order {
        for _ in 0..bounds[i] {
            if by_value.len() >= most_pieces {
                break 'fill;
            }
            by_value.push(values[i]);
        }
    }
    let mut top = vec![0.0; by_value.len() + 1];
    for (k, v) in by_value.iter().enumerate() {
        top[k + 1] = top[k] + v;
    }
    struct Search<'a> {
        stop: &'a dyn Fn() -> bool,
        top: Vec<f64>,
        smallest: i64,
        values: &'a [f64],
        sizes: &'a [i64],
        bounds: &'a [u32],
        items: Vec<usize>,
        counts: Vec<u32>,
        best: f64,
        best_counts: Vec<u32>,
        nodes: u64,
        limit: u64,
    }
    impl Search<'_> {
        /// Dantzig's bound: the rest filled greedily by ratio, the last item fractionally; and
        /// the value of the most valuable pieces that could still fit by count.
        fn bound(&self, from: usize, mut room: i64) -> f64 {
            let by_count = self.top[((room / self.smallest) as usize).min(self.top.len() - 1)];
            let mut v = 0.0;
            for &i in &self.items[from..] {
                let take = (self.bounds[i] as i64).min(room / self.sizes[i]);
                v += take as f64 * self.values[i];
                room -= take * self.sizes[i];
                if take < self.bounds[i] as i64 {
                    v += self.values[i] * room as f64 / self.sizes[i] as f64;
                    break;
                }
            }
            v.min(by_count)
        }
        fn go(&mut self, k: usize, room: i64, value: f64) -> bool {
            self.nodes += 1;
            if self.nodes > self.limit || (self.nodes % NODES_PER_CLOCK_CHECK == 0 && (self.stop)())
            {
                return false;
            }
            if value > self.best + 1e-12 {
                self.best = value;
                self.best_counts = self.counts.clone();
            }
            if k == self.items.len() || value + self.bound(k, room) <= self.best + 1e-12 {
                return true;
            }
            let i = self.items[k];
            let most = (self.bounds[i] as i64).min(room / self.sizes[i]) as u32;
            for c in (0..=most).rev() {
                self.counts[i] = c;
                let ok = self.go(
                    k + 1,
                    room - c as i64 * self.sizes[i],
                    value + c as f64 * self.values[i],
                );
                self.counts[i] = 0;
                if !ok {
                    return false;
                }
            }
            true
        }
    }
    let n = values.len();
    let mut s = Search {
        stop,
        top,
        smallest,
        values,
        sizes,
        bounds,
        items,
        counts: vec![0; n],
        best: 0.0,
        best_counts: vec![0; n],
        nodes: 0,
        limit: node_limit,
    };
    let root_bound = s.bound(0, capacity);
    let finished = s.go(0, capacity, 0.0);
    Found {
        value: s.best,
        upper: if finished {
            s.best
        } else {
            root_bound.max(s.best)
        },
        counts: s.best_counts,
        finished,
    }
}

/// Nodes the exact pricing's branch and bound may take before a table is built instead.
const EXACT_SEARCH_NODES: u64 = 5_000;

/// What an exact pricing may spend: the largest table (bits; `MAX_TABLE_BITS` at most), the
/// nodes of the branch and bound where no table may be built, and a stop (the deadline).
pub struct Budget<'a> {
    pub table_bits: u64,
    pub nodes: u64,
    pub stop: &'a dyn Fn() -> bool,
}

/// Patterns best first, and an upper bound on the value of every pattern.
pub struct Priced {
    pub patterns: Vec<(f64, Vec<u32>)>,
    pub upper: f64,
    /// True when the first pattern is proven best (`upper` is then its value).
    pub exact: bool,
}

/// The most kinds of piece whose multisets of four `at_most_four` enumerates (about 10^5 of
/// them); more, and the table or the branch and bound prices instead.
const MAX_FOUR_PIECE_KINDS: usize = 40;

/// The best `k` patterns by enumeration, when no bar holds more than three of the pieces worth
/// something, or four of a few short ones (`None` otherwise): for every pair of pieces, the best
/// third one that fits, found by a running maximum over the pieces by size; four pieces fit only
/// where each is at most the bar less three of the shortest, and those few kinds' multisets of
/// four are enumerated outright. Why: orders of pieces between a quarter and a
/// half of the bar (and any with few long pieces) have hundreds of lengths on a capacity of
/// 10^5 or more; a table over the capacity costs tens of milliseconds a pricing and the branch
/// and bound rarely ends, while the pairs are a few hundred thousand additions. Exact.
fn at_most_four(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    k: usize,
) -> Option<Priced> {
    // the pieces worth something, by size (smallest first)
    let mut items: Vec<usize> = (0..values.len())
        .filter(|&i| values[i] > 0.0 && sizes[i] > 0 && sizes[i] <= capacity && bounds[i] > 0)
        .collect();
    let smallest = items.iter().map(|&i| sizes[i]).min()?;
    if capacity / smallest > 4 {
        return None;
    }
    items.sort_by(|&a, &b| sizes[a].cmp(&sizes[b]).then(a.cmp(&b)));
    let n = items.len();
    // the kinds a bar of four pieces can hold (none when four of the shortest do not fit)
    let four = if capacity / smallest == 4 {
        items.partition_point(|&i| sizes[i] <= capacity - 3 * smallest)
    } else {
        0
    };
    if four > MAX_FOUR_PIECE_KINDS {
        return None;
    }
    // best[p]: the position (among items[..=p]) of the most valuable piece
    let mut best = vec![0usize; n];
    for p in 1..n {
        let b = best[p - 1];
        best[p] = if values[items[p]] > values[items[b]] {
            p
        } else {
            b
        };
    }
    // the most valuable piece at a position <= `upto` that fits in `room`, except that
    // position `upto` itself needs `need` copies of its piece
    let third = |upto: usize, room: i64, need: u32| -> Option<usize> {
        let fits = items[..=upto].partition_point(|&i| sizes[i] <= room);
        if fits == 0 {
            return None;
        }
        let p = best[fits - 1];
        if p != upto || bounds[items[p]] >= need {
            return Some(p);
        }
        (p > 0).then(|| best[p - 1]).filter(|_| fits > 1)
    };
    // the k best (value, positions), best first
    let mut top: Vec<(f64, [Option<usize>; 4])> = Vec::with_capacity(k + 1);
    let mut keep = |value: f64, pick: [Option<usize>; 4]| {
        if top.len() == k && value <= top[k - 1].0 {
            return;
        }
        let at = top.partition_point(|t| t.0 >= value);
        top.insert(at, (value, pick));
        top.truncate(k);
    };
    for a in 0..n {
        let (ia, room_a) = (items[a], capacity - sizes[items[a]]);
        let mut paired = false;
        // the second piece no bigger than the first (by position), the third no bigger than it
        let b_fits = items[..=a].partition_point(|&i| sizes[i] <= room_a);
        for b in 0..b_fits {
            let ib = items[b];
            if b == a && bounds[ia] < 2 {
                continue;
            }
            paired = true;
            let room_b = room_a - sizes[ib];
            let need = if b == a { 3 } else { 2 };
            let value = values[ia] + values[ib];
            match third(b, room_b, need) {
                Some(c) => keep(value + values[items[c]], [Some(a), Some(b), Some(c), None]),
                None => keep(value, [Some(a), Some(b), None, None]),
            }
        }
        if !paired {
            keep(values[ia], [Some(a), None, None, None]);
        }
    }
    for a in 0..four {
        for b in 0..=a {
            for c in 0..=b {
                for d in 0..=c {
                    let pick = [a, b, c, d];
                    let load: i64 = pick.iter().map(|&p| sizes[items[p]]).sum();
                    // positions come in order, so copies of one kind are next to each other
                    let within_bounds = pick.iter().all(|&p| {
                        pick.iter().filter(|&&q| q == p).count() as u32 <= bounds[items[p]]
                    });
                    if load <= capacity && within_bounds {
                        let value = pick.iter().map(|&p| values[items[p]]).sum();
                        keep(value, pick.map(Some));
                    }
                }
            }
        }
    }
    let patterns: Vec<(f64, Vec<u32>)> = top
        .into_iter()
        .map(|(value, pick)| {
            let mut counts = vec![0u32; values.len()];
            for p in pick.into_iter().flatten() {
                counts[items[p]] += 1;
            }
            (value, counts)
        })
        .collect();
    Some(Priced {
        upper: patterns.first().map_or(0.0, |p| p.0),
        patterns,
        exact: true,
    })
}

/// The pricing. Where no bar holds more than three pieces (or four of a few short kinds), every
/// pattern by enumeration (`at_most_four`). Else, where `budget` allows a table that big:
/// branch and bound first, and when that grows past `EXACT_SEARCH_NODES`, the table (with up to `k - 1` runners-up, see
/// `bounded_many`). Else the branch and bound alone, with the budget's nodes and stop. Large
/// capacities (a bar of 10^6 units) take the second way: a table over them is too big and too slow, while a bar
/// holds few pieces and the search ends quickly. When it does not end, the best pattern found
/// comes back with the root's bound, `exact` false.
pub fn best_patterns(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    k: usize,
    budget: &Budget,
) -> Priced {
    if let Some(priced) = at_most_four(values, sizes, bounds, capacity, k) {
        return priced;
    }
    let of_search = |found: Found| Priced {
        upper: found.upper,
        exact: found.finished,
        patterns: vec![(found.value, found.counts)],
    };
    // no table affordable: one search with the whole budget (the search is depth first in a
    // fixed order, so a quick one first would only repeat its first nodes)
    if table_bits(sizes, bounds, capacity) > budget.table_bits.min(MAX_TABLE_BITS) {
        let nodes = budget.nodes.max(EXACT_SEARCH_NODES);
        return of_search(bounded_search(
            values,
            sizes,
            bounds,
            capacity,
            nodes,
            budget.stop,
        ));
    }
    let quick = bounded_search(
        values,
        sizes,
        bounds,
        capacity,
        EXACT_SEARCH_NODES,
        budget.stop,
    );
    if quick.finished {
        return of_search(quick);
    }
    match bounded_many(values, sizes, bounds, capacity, k, budget.stop) {
        Some(patterns) => Priced {
            upper: patterns[0].0,
            patterns,
            exact: true,
        },
        None => of_search(quick),
    }
}

/// What `best_loaded` found: conflict-free patterns (best first) and an upper bound on the
/// value of every conflict-free pattern within the loads asked (the optimum's value when the
/// search ended; 0 when no pattern is possible).
pub struct ConflictFree {
    pub patterns: Vec<(f64, Vec<u32>)>,
    pub upper: f64,
    /// True when the search ended: `upper` is then the optimum's value.
    pub complete: bool,
}

/// The 0/1 knapsack of branch-and-price: each item at most once, the load between `min_load`
/// and `capacity`, and never both items of a pair in `conflicts` (its "apart" decisions).
/// Values should be non-negative; items worth 0 are still taken where the load needs them.
///
/// Best-first search over tables: the table of the items allowed gives its best patterns and
/// a bound; while the best pattern holds a conflicting pair (u, v), that subproblem splits in
/// two disjoint halves, one without u and one with u and without all its partners. Past
/// `max_tables` it stops with the best conflict-free patterns seen and the largest
/// bound still open (valid for Farley's bound, though not a proof that none prices out); it
/// also stops between two tables when `stop` says so. Up to `k` patterns are returned.
#[allow(clippy::too_many_arguments)]
pub fn best_loaded(
    values: &[f64],
    sizes: &[i64],
    min_load: i64,
    capacity: i64,
    conflicts: &[(usize, usize)],
    k: usize,
    max_tables: usize,
    stop: &dyn Fn() -> bool,
) -> ConflictFree {
    let clashes = |counts: &[u32]| {
        conflicts
            .iter()
            .find(|&&(u, v)| counts[u] > 0 && counts[v] > 0)
            .copied()
    };
    // a subproblem: items left out, and items forced in (with their conflicting partners
    // left out); its table covers the rest, with the room the forced items leave
    let table = |excluded: &[usize], forced: &[usize]| {
        let load: i64 = forced.iter().map(|&i| sizes[i]).sum();
        if load > capacity {
            return Vec::new();
        }
        let worth: f64 = forced.iter().map(|&i| values[i].max(0.0)).sum();
        let mut out_too = excluded.to_vec();
        out_too.extend_from_slice(forced);
        let mut patterns =
            loaded_many(values, sizes, &out_too, min_load - load, capacity - load, k);
        for (v, counts) in &mut patterns {
            *v += worth;
            for &i in forced {
                counts[i] = 1;
            }
        }
        patterns
    };
    let mut found: Vec<(f64, Vec<u32>)> = Vec::new();
    let keep = |found: &mut Vec<(f64, Vec<u32>)>, patterns: &[(f64, Vec<u32>)]| {
        for (v, counts) in patterns {
            if clashes(counts).is_none() && !found.iter().any(|(_, c)| c == counts) {
                found.push((*v, counts.clone()));
            }
        }
    };
    // open subproblems: (bound, excluded, forced, the table's patterns, best first)
    type Subproblem = (f64, Vec<usize>, Vec<usize>, Vec<(f64, Vec<u32>)>);
    let mut open: Vec<Subproblem> = Vec::new();
    let first = table(&[], &[]);
    keep(&mut found, &first);
    if let Some(best) = first.first() {
        open.push((best.0, Vec::new(), Vec::new(), first));
    }
    let mut tables = 1;
    let (upper, complete) = loop {
        let Some(at) = (0..open.len()).max_by(|&a, &b| open[a].0.total_cmp(&open[b].0)) else {
            // every subproblem closed: the best conflict-free pattern is the optimum
            break (found.iter().map(|p| p.0).fold(0.0, f64::max), true);
        };
        let (bound, excluded, forced, patterns) = open.swap_remove(at);
        let Some((u, _)) = clashes(&patterns[0].1) else {
            // the best of the most promising subproblem is conflict-free
            break (bound, true);
        };
        if tables + 2 > max_tables || stop() {
            break (bound, false);
        }
        // split in two disjoint halves: without u, and with u (and without its partners)
        let mut without = excluded.clone();
        without.push(u);
        let mut with = forced.clone();
        with.push(u);
        let mut partners = excluded;
        partners.extend(
            conflicts
                .iter()
                .filter_map(|&(a, b)| (a == u).then_some(b).or((b == u).then_some(a))),
        );
        for (excluded, forced) in [(without, forced), (partners, with)] {
            let t = table(&excluded, &forced);
            tables += 1;
            keep(&mut found, &t);
            if let Some(best) = t.first() {
                open.push((best.0, excluded, forced, t));
            }
        }
    };
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found.truncate(k);
    ConflictFree {
        patterns: found,
        upper,
        complete,
    }
}

/// The 0/1 knapsack with a load between `min_load` and `capacity`, items in `excluded` left
/// out, by a table of the best value at each exact load: the best pattern at each load in
/// range, the `k` most valuable (distinct, since their loads differ), best first. Empty when
/// no load in range can be made.
fn loaded_many(
    values: &[f64],
    sizes: &[i64],
    excluded: &[usize],
    min_load: i64,
    capacity: i64,
    k: usize,
) -> Vec<(f64, Vec<u32>)> {
    if min_load > capacity {
        return Vec::new();
    }
    let cap = capacity.max(0) as usize;
    let items: Vec<usize> = (0..values.len())
        .filter(|&i| sizes[i] > 0 && sizes[i] <= capacity && !excluded.contains(&i))
        .collect();
    let words = cap / 64 + 1;
    let mut best = vec![f64::NEG_INFINITY; cap + 1];
    best[0] = 0.0;
    let mut next = best.clone();
    let mut take = vec![0u64; words * items.len()];
    for (row, &i) in items.iter().enumerate() {
        let w = sizes[i] as usize;
        let v = values[i].max(0.0);
        table_row(
            &best,
            &mut next,
            w,
            v,
            0.0,
            &mut take[row * words..(row + 1) * words],
        );
        std::mem::swap(&mut best, &mut next);
    }
    let read_back = |mut c: usize| {
        let mut counts = vec![0u32; values.len()];
        for (row, &i) in items.iter().enumerate().rev() {
            if take[row * words + c / 64] >> (c % 64) & 1 == 1 {
                counts[i] = 1;
                c -= sizes[i] as usize;
            }
        }
        counts
    };
    let lo = min_load.clamp(0, capacity.max(0)) as usize;
    let mut loads: Vec<usize> = (lo..=cap).filter(|&c| best[c].is_finite()).collect();
    loads.sort_by(|&a, &b| best[b].total_cmp(&best[a]).then(b.cmp(&a)));
    loads.truncate(k);
    loads.into_iter().map(|c| (best[c], read_back(c))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed stream of numbers below `n` (xorshift64), the same on every run.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// `at_most_four` against the table: the same best value on random orders whose bars hold
    /// at most three pieces, or four short ones (bounds of 1 to 3 copies, some values 0); every
    /// pattern within the capacity and the bounds, best first; no answer once five pieces fit.
    #[test]
    fn enumeration_of_short_bars_matches_the_table() {
        let mut random = xorshift(0x2545_F491_4F6C_DD1D);
        let capacity = 1000;
        for _ in 0..300 {
            let m = 1 + random(12) as usize;
            let sizes: Vec<i64> = (0..m).map(|_| 240 + random(610) as i64).collect();
            let values: Vec<f64> = (0..m)
                .map(|_| {
                    if random(5) == 0 {
                        0.0
                    } else {
                        random(100) as f64 / 37.0
                    }
                })
                .collect();
            let bounds: Vec<u32> = (0..m).map(|_| 1 + random(3) as u32).collect();
            let enumerated = at_most_four(&values, &sizes, &bounds, capacity, 4);
            let table =
                bounded_many(&values, &sizes, &bounds, capacity, 1, &|| false).expect("no stop");
            let Some(priced) = enumerated else {
                assert!(values.iter().all(|&v| v <= 0.0), "three at most always fit");
                continue;
            };
            assert!(
                (priced.upper - table[0].0).abs() < 1e-9,
                "{} vs {}",
                priced.upper,
                table[0].0
            );
            for w in priced.patterns.windows(2) {
                assert!(w[0].0 >= w[1].0);
            }
            for (value, counts) in &priced.patterns {
                let load: i64 = counts.iter().zip(&sizes).map(|(&c, &s)| c as i64 * s).sum();
                assert!(load <= capacity);
                assert!(counts.iter().zip(&bounds).all(|(c, b)| c <= b));
                let worth: f64 = counts
                    .iter()
                    .zip(&values)
                    .map(|(&c, &v)| c as f64 * v)
                    .sum();
                assert!((worth - value).abs() < 1e-9);
            }
        }
        assert!(at_most_four(&[1.0], &[199], &[9], capacity, 4).is_none());
        // four of the shortest fit: their multisets of four are found too
        let four = at_most_four(&[1.5, 1.0, 2.0], &[250, 260, 480], &[4, 4, 1], capacity, 4)
            .expect("few kinds fit four to a bar");
        assert_eq!(four.patterns[0].1, vec![4, 0, 0]);
        assert!((four.upper - 6.0).abs() < 1e-9);
    }

    /// `best_loaded` against every subset: its patterns keep the loads and the conflicts, its
    /// bound is never below the true optimum, and when it says it is complete the bound is the
    /// optimum and its first pattern reaches it; with one table it may stop, and says so.
    #[test]
    fn the_loaded_knapsack_with_conflicts_matches_every_subset() {
        let mut random = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut stopped_early = 0;
        for _ in 0..300 {
            let n = 3 + random(9) as usize;
            let capacity = 20 + random(80) as i64;
            let sizes: Vec<i64> = (0..n)
                .map(|_| 3 + random(capacity as u64 / 2) as i64)
                .collect();
            let values: Vec<f64> = (0..n).map(|_| random(100) as f64 / 37.0).collect();
            let conflicts: Vec<(usize, usize)> = (0..random(6))
                .map(|_| (random(n as u64) as usize, random(n as u64) as usize))
                .filter(|(u, v)| u != v)
                .collect();
            let min_load = capacity - random(capacity as u64 / 2 + 1) as i64;
            let ok = |mask: usize| {
                let load: i64 = (0..n)
                    .filter(|&i| mask >> i & 1 == 1)
                    .map(|i| sizes[i])
                    .sum();
                load >= min_load
                    && load <= capacity
                    && conflicts
                        .iter()
                        .all(|&(u, v)| mask >> u & 1 == 0 || mask >> v & 1 == 0)
            };
            let value = |mask: usize| -> f64 {
                (0..n)
                    .filter(|&i| mask >> i & 1 == 1)
                    .map(|i| values[i])
                    .sum()
            };
            let optimum = (0..1usize << n)
                .filter(|&m| ok(m))
                .map(value)
                .fold(None, |b: Option<f64>, v| Some(b.map_or(v, |b| b.max(v))));
            for tables in [1, 1000] {
                let r = best_loaded(
                    &values,
                    &sizes,
                    min_load,
                    capacity,
                    &conflicts,
                    5,
                    tables,
                    &|| false,
                );
                for (v, counts) in &r.patterns {
                    let mask = counts
                        .iter()
                        .enumerate()
                        .fold(0, |m, (i, &c)| m | (c as usize) << i);
                    assert!(ok(mask), "{counts:?} breaks the loads or conflicts");
                    assert!((value(mask) - v).abs() < 1e-9);
                }
                match optimum {
                    None => assert!(r.patterns.is_empty()),
                    Some(best) => {
                        assert!(r.upper >= best - 1e-9, "bound {} below {best}", r.upper);
                        if r.complete {
                            assert!((r.upper - best).abs() < 1e-9);
                            assert!((r.patterns[0].0 - best).abs() < 1e-9);
                        }
                    }
                }
                if tables == 1 && !r.complete {
                    stopped_early += 1;
                }
                if tables == 1000 {
                    assert!(r.complete);
                }
            }
        }
        assert!(stopped_early > 0, "the table limit was never met");
    }
}
