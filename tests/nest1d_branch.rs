//! Branch-and-price against an exhaustive search: on small random bin-packing instances it
//! must find an optimal plan from an incumbent one bar worse, and exhaust its tree without a
//! better plan from an optimal incumbent (its proof). And an instance whose optimum lies above
//! the LP bound rounded up, which only the tree can prove, is proven.

use kerf::nest1d::branch;
use kerf::nest1d::instance::Instance;
use kerf::nest1d::{Objective, Piece, Problem, Stock};

fn random(seed: &mut u64, n: u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed % n
}

/// The fewest bars for these sizes: over subsets, the fewest bars and the least fill of the
/// last bar (items in any order; the classic dynamic programme over subsets).
fn exhaustive(sizes: &[i64], capacity: i64) -> u64 {
    let n = sizes.len();
    let mut best = vec![(u64::MAX, 0i64); 1 << n];
    best[0] = (1, 0);
    for mask in 0..1usize << n {
        let (bars, fill) = best[mask];
        if bars == u64::MAX {
            continue;
        }
        for (i, &s) in sizes.iter().enumerate() {
            if mask >> i & 1 == 1 {
                continue;
            }
            let next = if fill + s <= capacity {
                (bars, fill + s)
            } else {
                (bars + 1, s)
            };
            let to = &mut best[mask | 1 << i];
            if next < *to {
                *to = next;
            }
        }
    }
    best[(1 << n) - 1].0
}

fn instance(sizes: &[i64], capacity: i64) -> Instance {
    Instance::of(&problem_of(sizes, capacity))
}

/// Equal sizes become one piece with a quantity (so the tree meets copies of a piece).
fn problem_of(sizes: &[i64], capacity: i64) -> Problem {
    let mut pieces: Vec<Piece> = Vec::new();
    for &s in sizes {
        match pieces.iter_mut().find(|p| p.length == s as f64) {
            Some(p) => p.quantity += 1,
            None => pieces.push(Piece {
                id: format!("P{s}"),
                length: s as f64,
                quantity: 1,
            }),
        }
    }
    Problem {
        stock: vec![Stock {
            id: "bar".into(),
            length: capacity as f64,
            quantity: None,
            cost: 0.0,
            priority: 0,
        }],
        pieces,
        kerf: 0.0,
        start_trim: 0.0,
        end_trim: 0.0,
        max_time_s: 10.0,
        objective: Objective::MinimiseStock,
    }
}

#[test]
fn the_tree_finds_and_proves_the_optimum_of_small_instances() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut deep = 0;
    for _ in 0..100 {
        let n = 9 + random(&mut seed, 5) as usize;
        let capacity = 100 + random(&mut seed, 900) as i64;
        // sizes between a fifth and a half of the bar (few fit together, and the LP is often
        // loose there), a few distinct ones, so that pieces come in copies
        let distinct: Vec<i64> = (0..2 + random(&mut seed, 8))
            .map(|_| capacity / 5 + random(&mut seed, (capacity * 3 / 10) as u64) as i64)
            .collect();
        let sizes: Vec<i64> = (0..n)
            .map(|_| distinct[random(&mut seed, distinct.len() as u64) as usize])
            .collect();
        let optimum = exhaustive(&sizes, capacity);
        let inst = instance(&sizes, capacity);
        let never = || false;

        let mut found = branch::search(&inst, optimum + 1, &[], &never);
        assert!(found.exhausted(), "{sizes:?} in {capacity}");
        let bars = found
            .take_improved()
            .expect("an optimal plan from a worse incumbent");
        assert_eq!(bars.len() as u64, optimum, "{sizes:?} in {capacity}");
        let mut counts = vec![0u32; inst.types()];
        for bar in &bars {
            let load: i64 = bar
                .counts
                .iter()
                .zip(&inst.size)
                .map(|(&c, &s)| c as i64 * s)
                .sum();
            assert!(load <= inst.capacity[0], "{sizes:?}: a bar holds {load}");
            for (k, &c) in bar.counts.iter().enumerate() {
                counts[k] += c;
            }
        }
        assert_eq!(counts, inst.demand, "{sizes:?}: every piece once");

        // the branching alone (no rounding) must still reach an optimal plan
        let mut tree = branch::Tree::new(&inst, optimum + 1, &[]).leaves_only();
        assert!(tree.run(&never), "{sizes:?} in {capacity}");
        let leaf = tree.take_improved().expect("an optimal leaf");
        assert_eq!(leaf.len() as u64, optimum, "{sizes:?} in {capacity}");
        deep += (tree.nodes > 1) as u32;

        let mut proof = branch::search(&inst, optimum, &[], &never);
        assert!(
            proof.exhausted() && proof.take_improved().is_none(),
            "{sizes:?} in {capacity}"
        );
    }
    // the branching was exercised: many optima lie below the root
    assert!(deep >= 20, "only {deep} instances branched");
}

#[test]
fn the_branching_alone_finds_perfect_packings() {
    // bars cut at random into pieces: the pieces fill that many bars exactly, and a plan with
    // that many bars must cut every bar without waste, so the tree (without its rounding)
    // may look only at perfect patterns. Few plans are optimal: branching that loses some
    // loses the answer
    let mut seed = 0x5DEE_CE66_D1CE_4E5Bu64;
    for _ in 0..60 {
        let capacity = 60 + random(&mut seed, 200) as i64;
        let bars = 3 + random(&mut seed, 2);
        let mut sizes = Vec::new();
        for _ in 0..bars {
            let mut left = capacity;
            while left > capacity / 3 {
                let s = capacity / 8 + random(&mut seed, (capacity / 4) as u64) as i64;
                if s >= left {
                    break;
                }
                sizes.push(s);
                left -= s;
            }
            sizes.push(left);
        }
        sizes.truncate(15);
        let optimum = exhaustive(&sizes, capacity);
        let inst = instance(&sizes, capacity);
        let mut tree = branch::Tree::new(&inst, optimum + 1, &[]).leaves_only();
        assert!(tree.run(&|| false), "{sizes:?} in {capacity}");
        let leaf = tree.take_improved().unwrap_or_else(|| {
            panic!(
                "no leaf: {sizes:?} in {capacity}, optimum {optimum}, nodes {}",
                tree.nodes
            )
        });
        assert_eq!(leaf.len() as u64, optimum, "{sizes:?} in {capacity}");
    }
}

/// Found by a search over random small instances (one in 200,000 was of this kind): 5 x 36,
/// 3 x 37, 3 x 17 and 3 x 20 on bars of 72. The LP bound is 5.58.., so 6 rounded up, yet no 6
/// bars hold them (a 37 shares a bar with no 36 nor 37, and the rest will not go round): 7.
const NON_IRUP: [i64; 14] = [36, 36, 36, 36, 36, 37, 37, 37, 17, 17, 17, 20, 20, 20];

#[test]
fn the_tree_proves_an_optimum_above_the_lp_bound_rounded_up() {
    assert_eq!(exhaustive(&NON_IRUP, 72), 7);
    let inst = instance(&NON_IRUP, 72);
    let mut proof = branch::search(&inst, 7, &[], &|| false);
    assert!(proof.exhausted() && proof.take_improved().is_none());
    assert!(proof.nodes > 1, "the root alone should not prove it");
    // and through the solver: the LP bound says 6, the tree proves 7
    let plan = kerf::nest1d::solve(&Problem {
        max_time_s: 30.0,
        ..problem_of(&NON_IRUP, 72)
    });
    assert_eq!(plan.bars(), 7);
    assert!(plan.proven_optimal, "lower bound {}", plan.lower_bound);
}
