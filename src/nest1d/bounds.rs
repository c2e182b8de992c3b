//! Lower bounds on the number of bars of classic cutting stock (one capacity): L1 (material)
//! and Martello and Toth's L2, which also counts the big pieces that cannot share a bar.

/// ceil(total size / capacity).
pub fn l1(size: &[i64], demand: &[u32], capacity: i64) -> u64 {
    let total: i128 = size
        .iter()
        .zip(demand)
        .map(|(s, d)| *s as i128 * *d as i128)
        .sum();
    (total as u128).div_ceil(capacity.max(1) as u128) as u64
}

/// Martello-Toth L2: for each threshold a <= C/2, pieces above C - a need a bar each, pieces
/// in (C/2, C - a] a bar each too, and pieces in [a, C/2] fill what those leave.
pub fn l2(size: &[i64], demand: &[u32], capacity: i64) -> u64 {
    let c = capacity as i128;
    let mut best = l1(size, demand, capacity);
    let mut thresholds: Vec<i64> = size
        .iter()
        .copied()
        .filter(|&s| 2 * s as i128 <= c)
        .collect();
    thresholds.push(0);
    thresholds.sort_unstable();
    thresholds.dedup();
    for a in thresholds {
        let a = a as i128;
        let (mut n1, mut n2, mut s2, mut s3) = (0i128, 0i128, 0i128, 0i128);
        for (s, d) in size.iter().zip(demand) {
            let (s, d) = (*s as i128, *d as i128);
            if s > c - a {
                n1 += d;
            } else if 2 * s > c {
                n2 += d;
                s2 += s * d;
            } else if s >= a {
                s3 += s * d;
            }
        }
        let spill = (s3 - (n2 * c - s2)).max(0);
        let bound = n1 + n2 + (spill + c - 1) / c;
        best = best.max(bound as u64);
    }
    best
}

/// The waste that `bars` bars of `capacity` leave in all, once they hold every piece, if that
/// is less than the smallest piece: then every plan of that many bars is a perfect packing up
/// to it (no bar has room for another piece, and together they waste no more than this).
/// None when the pieces do not fit in that many bars, or when a plan of them may waste more.
/// `size` is longest first.
pub fn waste_budget(size: &[i64], demand: &[u32], capacity: i64, bars: u64) -> Option<i64> {
    let total: i128 = size
        .iter()
        .zip(demand)
        .map(|(&s, &d)| s as i128 * d as i128)
        .sum();
    let budget = bars as i128 * capacity as i128 - total;
    let smallest = *size.last()? as i128;
    (0..smallest).contains(&budget).then_some(budget as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waste_budget_is_what_the_bars_leave_when_less_than_the_smallest_piece() {
        // 6 + 4 + 5 + 5 = 20 on two bars of 10: nothing to waste; on bars of 11, 2 (< 4)
        let (size, demand) = ([6, 5, 4], [1, 2, 1]);
        assert_eq!(waste_budget(&size, &demand, 10, 2), Some(0));
        assert_eq!(waste_budget(&size, &demand, 11, 2), Some(2));
        // bars of 12 leave 4, as much as the smallest piece: a plan may waste a piece's room
        assert_eq!(waste_budget(&size, &demand, 12, 2), None);
        // the pieces do not fit in one bar
        assert_eq!(waste_budget(&size, &demand, 10, 1), None);
        assert_eq!(waste_budget(&[], &[], 10, 1), None);
    }
}
