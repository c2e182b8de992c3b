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

/// The best value and its counts per item. Items with value <= 0 are never taken.
pub fn bounded(values: &[f64], sizes: &[i64], bounds: &[u32], capacity: i64) -> (f64, Vec<u32>) {
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
    let mut best = vec![0.0f64; cap + 1];
    let mut take = vec![0u64; words * chunks.len()];
    for (k, ch) in chunks.iter().enumerate() {
        let w = ch.size as usize;
        let row = &mut take[k * words..(k + 1) * words];
        for c in (w..=cap).rev() {
            let with = best[c - w] + ch.value;
            if with > best[c] + 1e-12 {
                best[c] = with;
                row[c / 64] |= 1 << (c % 64);
            }
        }
    }
    let mut counts = vec![0u32; n];
    let mut c = cap;
    for (k, ch) in chunks.iter().enumerate().rev() {
        if take[k * words + c / 64] >> (c % 64) & 1 == 1 {
            counts[ch.item] += ch.count;
            c -= ch.size as usize;
        }
    }
    (best[cap], counts)
}

/// Bits the table of `bounded` would take.
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
