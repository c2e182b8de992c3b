//! Exact pricing for column generation: the bounded knapsack
//! max sum(value_i a_i) subject to sum(size_i a_i) <= capacity, 0 <= a_i <= bound_i, integers,
//! by dynamic programming over the capacity (bounds split into powers of two), with a bit table
//! to read the best pattern back.

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
/// columns save later tables.
pub fn bounded_many(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    k: usize,
) -> Vec<(f64, Vec<u32>)> {
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
    // two rows, the previous chunk's and this one's: written this way (no branch, no
    // dependence between cells) the compiler vectorizes the inner loops
    let mut best = vec![0.0f64; cap + 1];
    let mut next = vec![0.0f64; cap + 1];
    let mut take = vec![0u64; words * chunks.len()];
    for (k, ch) in chunks.iter().enumerate() {
        let w = ch.size as usize;
        let v = ch.value;
        next[..w].copy_from_slice(&best[..w]);
        for ((n, &keep), &from) in next[w..].iter_mut().zip(&best[w..]).zip(&best[..=cap - w]) {
            *n = keep.max(from + v);
        }
        let row = &mut take[k * words..(k + 1) * words];
        for (word, (n, b)) in row.iter_mut().zip(next.chunks(64).zip(best.chunks(64))) {
            let mut bits = 0u64;
            for (bit, (&n, &b)) in n.iter().zip(b).enumerate() {
                bits |= ((n > b + 1e-12) as u64) << bit;
            }
            *word = bits;
        }
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
    out
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

/// The same problem by depth-first branch and bound (items by value per size, Dantzig's
/// fractional bound), which is fast when few pieces fill a bar or the values are uneven.
/// Returns the best pattern found and whether the search finished (the pattern is then the
/// optimum); past `node_limit` nodes it stops with the best found so far.
pub fn bounded_search(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    node_limit: u64,
) -> (f64, Vec<u32>, bool) {
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
            if self.nodes > self.limit {
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
    let finished = s.go(0, capacity, 0.0);
    (s.best, s.best_counts, finished)
}

/// Nodes the exact pricing's branch and bound may take before the table is built instead.
const EXACT_SEARCH_NODES: u64 = 5_000;

/// The exact pricing: branch and bound first, the table when the search grows too big (then
/// with up to `k - 1` runners-up, see `bounded_many`).
pub fn best_patterns(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
    k: usize,
) -> Vec<(f64, Vec<u32>)> {
    match bounded_search(values, sizes, bounds, capacity, EXACT_SEARCH_NODES) {
        (v, c, true) => vec![(v, c)],
        _ => bounded_many(values, sizes, bounds, capacity, k),
    }
}

/// The exact pricing's best pattern alone.
pub fn best_pattern(
    values: &[f64],
    sizes: &[i64],
    bounds: &[u32],
    capacity: i64,
) -> (f64, Vec<u32>) {
    best_patterns(values, sizes, bounds, capacity, 1)
        .into_iter()
        .next()
        .expect("the best pattern comes first")
}
