//! `kerf bench bpp-generate`: large cutting-stock instances of the kind a saw shop sends
//! (lengths in tenths of a millimetre or finer: capacities 10^4 to 10^6, 100 to 1,000 distinct
//! lengths, up to 10,000 pieces), in five families so that no one distribution is tuned for:
//!
//! - `wide`: lengths uniform in [0.2, 0.8] of the bar (two to four pieces a bar; the issue's
//!   500-length, 500,000 example is of this kind);
//! - `mid`: [0.1, 0.5] (two to nine a bar);
//! - `small`: [0.02, 0.25] (many a bar: the knapsacks are deep);
//! - `triplet`: [0.25, 0.5] (three a bar at best: waste is forced, the bound is loose);
//! - `perfect`: bars cut into pieces with nothing left over (each pattern's last piece is the
//!   rest of its bar), so the optimum is the material bound and is known.
//!
//! Demands are skewed (a weight squared per length), as real orders are: a few lengths in
//! hundreds, many in ones and twos. Everything comes from one seed: the same seed writes the
//! same files.

use crate::nest2d::rng::Rng;

/// The families, in the order instances cycle through them.
pub const FAMILIES: [&str; 5] = ["wide", "mid", "small", "triplet", "perfect"];

/// Capacities the instances cycle through (after the families).
const CAPACITIES: [i64; 3] = [10_000, 100_000, 1_000_000];
const MIN_LENGTHS: usize = 100;
const MAX_LENGTHS: usize = 1_000;
const MAX_PIECES: u64 = 10_000;

/// One generated instance: BPPLIB cutting-stock data and, where the family makes it known,
/// the optimum.
pub struct Generated {
    pub name: String,
    pub family: &'static str,
    pub capacity: i64,
    /// (length, demand), longest first, lengths distinct.
    pub items: Vec<(i64, u32)>,
    pub optimum: Option<u64>,
}

impl Generated {
    pub fn pieces(&self) -> u64 {
        self.items.iter().map(|&(_, d)| d as u64).sum()
    }

    /// The BPPLIB cutting-stock format that `kerf bench bpp` and `bpp::parse` read.
    pub fn to_bpplib(&self) -> String {
        let mut s = format!("{}\n{}\n", self.items.len(), self.capacity);
        for (l, d) in &self.items {
            s.push_str(&format!("{l}\t{d}\n"));
        }
        s
    }
}

/// `count` instances from `seed`: instance k is of family k mod 5 and capacity (k / 5) mod 3.
pub fn generate(count: usize, seed: u64) -> Vec<Generated> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|k| {
            let family = FAMILIES[k % FAMILIES.len()];
            let capacity = CAPACITIES[(k / FAMILIES.len()) % CAPACITIES.len()];
            let lengths = MIN_LENGTHS + rng.below(MAX_LENGTHS - MIN_LENGTHS + 1);
            let pieces = (lengths as u64 + rng.next_u64() % MAX_PIECES).min(MAX_PIECES);
            let (items, optimum) = match random_range(family) {
                Some(range) => (
                    random_order(&mut rng, capacity, range, lengths, pieces),
                    None,
                ),
                None => {
                    let (items, bars) = perfect_order(&mut rng, capacity, lengths, pieces);
                    (items, Some(bars))
                }
            };
            Generated {
                name: format!("{family}_{capacity}_{k:02}"),
                family,
                capacity,
                items,
                optimum,
            }
        })
        .collect()
}

/// The lengths of a random family, as fractions of the bar; `None` for `perfect`, whose bars
/// are cut into pieces with nothing left.
fn random_range(family: &str) -> Option<(f64, f64)> {
    match family {
        "wide" => Some((0.2, 0.8)),
        "mid" => Some((0.1, 0.5)),
        "small" => Some((0.02, 0.25)),
        "triplet" => Some((0.25, 0.5)),
        _ => None,
    }
}

/// `count` distinct lengths uniform in `range` (fractions of `capacity`).
fn distinct_lengths(rng: &mut Rng, capacity: i64, range: (f64, f64), count: usize) -> Vec<i64> {
    let lo = (range.0 * capacity as f64).ceil() as i64;
    let hi = (range.1 * capacity as f64).floor() as i64;
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < count.min((hi - lo + 1) as usize) {
        seen.insert(lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64);
    }
    seen.into_iter().rev().collect()
}

/// Splits `total` pieces over `n` lengths, at least one each, skewed: weight w^2 for w uniform
/// in 1..=100.
fn skewed_demands(rng: &mut Rng, n: usize, total: u64) -> Vec<u32> {
    let weights: Vec<u64> = (0..n)
        .map(|_| {
            let w = 1 + rng.next_u64() % 100;
            w * w
        })
        .collect();
    let sum: u64 = weights.iter().sum();
    let extra = total.saturating_sub(n as u64);
    weights
        .iter()
        .map(|w| 1 + (extra * w / sum) as u32)
        .collect()
}

fn random_order(
    rng: &mut Rng,
    capacity: i64,
    range: (f64, f64),
    lengths: usize,
    pieces: u64,
) -> Vec<(i64, u32)> {
    let sizes = distinct_lengths(rng, capacity, range, lengths);
    let demand = skewed_demands(rng, sizes.len(), pieces);
    sizes.into_iter().zip(demand).collect()
}

/// An order with a perfect plan: a palette of lengths; patterns of two to five palette pieces
/// plus the rest of the bar as one more piece (never shorter than a tenth of the bar), each
/// pattern cut a skewed number of times. Returns the order and its optimum (the bars of that
/// plan, which equals the material bound since no bar wastes anything).
fn perfect_order(
    rng: &mut Rng,
    capacity: i64,
    lengths: usize,
    pieces: u64,
) -> (Vec<(i64, u32)>, u64) {
    let palette = distinct_lengths(rng, capacity, (0.1, 0.45), (lengths / 3).max(10));
    let floor = capacity / 10;
    let mut patterns: Vec<Vec<i64>> = Vec::new();
    let mut distinct = std::collections::BTreeSet::new();
    distinct.extend(palette.iter().copied());
    // each pattern adds at most one new length (its rest): stop at the number asked for
    while distinct.len() < lengths {
        let mut rest = capacity;
        let mut cut = Vec::new();
        for _ in 0..5 {
            let l = palette[rng.below(palette.len())];
            if rest - l < floor {
                break;
            }
            cut.push(l);
            rest -= l;
        }
        cut.push(rest);
        distinct.insert(rest);
        patterns.push(cut);
    }
    let per_pattern: f64 =
        patterns.iter().map(|p| p.len()).sum::<usize>() as f64 / patterns.len().max(1) as f64;
    let bars = ((pieces as f64 / per_pattern).round() as u64).max(patterns.len() as u64);
    let times = skewed_demands(rng, patterns.len(), bars);
    let mut demand: std::collections::BTreeMap<i64, u32> = Default::default();
    for (p, &t) in patterns.iter().zip(&times) {
        for &l in p {
            *demand.entry(l).or_default() += t;
        }
    }
    let optimum = times.iter().map(|&t| t as u64).sum();
    (demand.into_iter().rev().collect(), optimum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_keep_their_sizes_and_perfect_ones_meet_the_material_bound() {
        let all = generate(10, 7);
        for g in &all {
            assert!(
                (MIN_LENGTHS..=MAX_LENGTHS).contains(&g.items.len()),
                "{}",
                g.name
            );
            assert!(g.pieces() <= MAX_PIECES + MAX_LENGTHS as u64, "{}", g.name);
            assert!(g.items.windows(2).all(|w| w[0].0 > w[1].0), "{}", g.name);
            assert!(g
                .items
                .iter()
                .all(|&(l, d)| l > 0 && l <= g.capacity && d > 0));
            if let Some(bars) = g.optimum {
                let total: i64 = g.items.iter().map(|&(l, d)| l * d as i64).sum();
                assert_eq!(total, bars as i64 * g.capacity, "{}", g.name);
            }
        }
        assert_eq!(all.iter().filter(|g| g.optimum.is_some()).count(), 2);
        // the same seed, the same files
        let again = generate(10, 7);
        assert!(all
            .iter()
            .zip(&again)
            .all(|(a, b)| a.to_bpplib() == b.to_bpplib()));
    }
}
