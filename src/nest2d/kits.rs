//! Assemblies (kits): the parts of an assembly nest together, one kit on one sheet. Copies of a
//! part are interchangeable, so the rule is a count on each sheet: for every assembly, a sheet
//! holds k whole kits, that is `k * per_kit` copies of each of its parts, and no odd copy. The
//! search moves copies freely; `surplus` finds the copies that break the count, and the places
//! that place parts (`SheetOpener::open`, the multi-sheet search) call `keep_whole`, which
//! takes them off again and refills the room. The
//! instance numbers of the result are given out in sheet order (`instances`), so the copies of
//! kit c are instances `c * per_kit ..` of each part and a kit's copies share a sheet.

use super::engine::{sort_for_placing, FilledSheet, Item, PlacingOrder};
use super::model::Problem;
use kerf_kernels::Evaluator;
use std::collections::BTreeMap;
use std::time::Instant;

/// How results and errors name an assembly (it has no identifier of its own).
pub fn assembly_name(assembly: u32) -> String {
    format!("Assemblies[{assembly}]")
}

/// Refuses kit roles that cannot make whole kits: every part of an assembly must give the same
/// number of kits, at the same priority, without filler copies.
pub(super) fn check(problem: &Problem) -> Result<(), String> {
    // assembly -> (kits, priority, the first part seen)
    let mut seen: BTreeMap<u32, (u32, i32, usize)> = BTreeMap::new();
    for (pi, p) in problem.parts.iter().enumerate() {
        let Some(k) = p.kit else { continue };
        let name = assembly_name(k.assembly);
        if k.per_kit == 0 || p.quantity % k.per_kit != 0 {
            return Err(format!(
                "part {} of {name}: {} copies do not make whole kits of {}",
                p.id, p.quantity, k.per_kit
            ));
        }
        if p.filler_quantity > 0 {
            return Err(format!(
                "part {} of {name}: an assembly's part takes no filler copies",
                p.id
            ));
        }
        let kits = p.quantity / k.per_kit;
        match seen.get(&k.assembly) {
            None => {
                seen.insert(k.assembly, (kits, p.priority, pi));
            }
            Some(&(n, priority, first)) => {
                let first = &problem.parts[first].id;
                if n != kits {
                    return Err(format!(
                        "{name}: part {first} makes {n} kits, part {} makes {kits}",
                        p.id
                    ));
                }
                if priority != p.priority {
                    return Err(format!(
                        "{name}: parts {first} and {} differ in priority (a kit nests at one)",
                        p.id
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The assembly an item's part belongs to (fillers never do).
pub(super) fn assembly_of(problem: &Problem, item: &Item) -> Option<u32> {
    problem.parts[item.part]
        .kit
        .filter(|_| !item.is_filler)
        .map(|k| k.assembly)
}

/// Positions in `items` (the parts on one sheet) of the copies that make no whole kit: for each
/// assembly, the copies past the fewest whole kits its parts allow, latest first.
pub(super) fn surplus(problem: &Problem, items: &[Item]) -> Vec<usize> {
    let mut count: BTreeMap<usize, u32> = BTreeMap::new();
    for it in items {
        if assembly_of(problem, it).is_some() {
            *count.entry(it.part).or_default() += 1;
        }
    }
    if count.is_empty() {
        return Vec::new();
    }
    // whole kits per assembly: the fewest any of its parts allows (a part absent allows none)
    let mut whole: BTreeMap<u32, u32> = BTreeMap::new();
    for &part in count.keys() {
        whole
            .entry(problem.parts[part].kit.expect("kit part").assembly)
            .or_insert(u32::MAX);
    }
    for (pi, p) in problem.parts.iter().enumerate() {
        let Some(k) = p.kit else { continue };
        if let Some(w) = whole.get_mut(&k.assembly) {
            *w = (*w).min(count.get(&pi).copied().unwrap_or(0) / k.per_kit);
        }
    }
    // keep the first copies of each part, up to its share of the whole kits
    let mut keep: BTreeMap<usize, u32> = count
        .keys()
        .map(|&pi| {
            let k = problem.parts[pi].kit.expect("kit part");
            (pi, whole[&k.assembly] * k.per_kit)
        })
        .collect();
    let mut out = Vec::new();
    for (n, it) in items.iter().enumerate() {
        if assembly_of(problem, it).is_none() {
            continue;
        }
        let left = keep.get_mut(&it.part).expect("counted");
        if *left > 0 {
            *left -= 1;
        } else {
            out.push(n);
        }
    }
    out
}

/// First-fits of a sheet's room after copies that made no whole kit came off it: each one may
/// break another kit, so they stop after this many (the room then stays empty).
const MAX_REFILLS: usize = 3;

/// Makes `sheet` hold whole kits only: takes the surplus copies off (those not on it in
/// `before` first, so a sheet that held whole kits before a pass only gives back what the pass
/// brought) and back to `pool`, and first-fits the room they leave from the pool, without any
/// copy of a part that was surplus here (a kit too big for the sheet would otherwise take every
/// refill), a few times at most. Taking parts off never makes an overlap. The pool is left in
/// `order`.
pub(super) fn keep_whole(
    problem: &Problem,
    eval: &dyn Evaluator,
    sheet: &mut FilledSheet,
    before: &[Item],
    pool: &mut Vec<Item>,
    deadline: Instant,
    order: PlacingOrder,
) {
    let mut held_back: Vec<Item> = Vec::new();
    let mut surplus_parts: Vec<usize> = Vec::new();
    for round in 0..=MAX_REFILLS {
        // the copies the sheet had before first, so that the surplus is what the pass brought
        let mut old_first: Vec<usize> = (0..sheet.placed.len()).collect();
        old_first.sort_by_key(|&k| !before.iter().any(|b| b.same_unit(&sheet.placed[k].0)));
        let items: Vec<Item> = old_first.iter().map(|&k| sheet.placed[k].0).collect();
        let mut off: Vec<usize> = surplus(problem, &items)
            .into_iter()
            .map(|n| old_first[n])
            .collect();
        if off.is_empty() {
            break;
        }
        off.sort_unstable();
        for &k in off.iter().rev() {
            let (it, _) = sheet.placed.remove(k);
            if k < sheet.nudges.len() {
                sheet.nudges.remove(k);
            }
            if !surplus_parts.contains(&it.part) {
                surplus_parts.push(it.part);
            }
            held_back.push(it);
        }
        if round < MAX_REFILLS {
            let (mut open, shut): (Vec<Item>, Vec<Item>) =
                pool.iter().partition(|i| !surplus_parts.contains(&i.part));
            sheet.refill(eval, &mut open, deadline);
            *pool = open;
            pool.extend(shut);
        }
    }
    if !held_back.is_empty() {
        pool.extend(held_back);
        sort_for_placing(problem, pool, order);
    }
}

/// Whether every sheet holds whole kits only.
pub(super) fn all_whole(problem: &Problem, sheets: &[FilledSheet]) -> bool {
    sheets.iter().all(|f| {
        let items: Vec<Item> = f.placed.iter().map(|(i, _)| *i).collect();
        surplus(problem, &items).is_empty()
    })
}

/// Instance numbers for the result: the copies of each assembly's parts numbered in sheet
/// order (then in each sheet's order), so that when every sheet holds whole kits the copies of
/// kit c are instances `c * per_kit .. (c + 1) * per_kit` and lie on one sheet. Other parts
/// keep theirs. `sheets` lists each sheet's items; the answer has the same shape.
pub(super) fn instances(problem: &Problem, sheets: &[Vec<Item>]) -> Vec<Vec<u32>> {
    let mut next: BTreeMap<usize, u32> = BTreeMap::new();
    sheets
        .iter()
        .map(|items| {
            items
                .iter()
                .map(|it| {
                    if assembly_of(problem, it).is_none() {
                        return it.instance;
                    }
                    let n = next.entry(it.part).or_default();
                    *n += 1;
                    *n - 1
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{PartGeometry, Shape};
    use crate::nest2d::model::{KitRole, PartSpec, Settings, SheetSpec};

    /// Assembly 0: two of part "a" and one of "b" per kit, 3 kits; "loose" is no kit's.
    fn problem() -> Problem {
        let part = |id: &str, qty: u32, kit: Option<KitRole>| PartSpec {
            kit,
            ..PartSpec::new(id, PartGeometry::single(Shape::rectangle(1.0, 1.0)), qty)
        };
        Problem {
            parts: vec![
                part(
                    "a",
                    6,
                    Some(KitRole {
                        assembly: 0,
                        per_kit: 2,
                    }),
                ),
                part(
                    "b",
                    3,
                    Some(KitRole {
                        assembly: 0,
                        per_kit: 1,
                    }),
                ),
                part("loose", 4, None),
            ],
            sheets: vec![SheetSpec::rectangle("s", 10.0, 10.0)],
            settings: Settings::default(),
        }
    }

    fn item(part: usize, instance: u32) -> Item {
        Item {
            part,
            instance,
            is_filler: false,
        }
    }

    #[test]
    fn copies_past_the_whole_kits_are_surplus_latest_first() {
        let p = problem();
        // three a, two b: one whole kit (2 a + 1 b); the third a and the second b are surplus
        let items = [
            item(0, 0),
            item(2, 0),
            item(1, 0),
            item(0, 1),
            item(0, 2),
            item(1, 1),
        ];
        assert_eq!(surplus(&p, &items), vec![4, 5]);
        // a sheet without any b holds no kit: every a is surplus, loose parts never are
        assert_eq!(
            surplus(&p, &[item(0, 0), item(0, 1), item(2, 1)]),
            vec![0, 1]
        );
        // two whole kits
        let two = [
            item(0, 0),
            item(0, 1),
            item(0, 2),
            item(0, 3),
            item(1, 0),
            item(1, 2),
        ];
        assert!(surplus(&p, &two).is_empty());
    }

    #[test]
    fn instances_follow_the_sheets_so_a_kit_shares_one() {
        let p = problem();
        let sheets = vec![
            vec![item(0, 4), item(1, 2), item(0, 0), item(2, 3)],
            vec![
                item(1, 0),
                item(0, 1),
                item(0, 5),
                item(1, 1),
                item(0, 2),
                item(0, 3),
            ],
        ];
        assert_eq!(
            instances(&p, &sheets),
            vec![vec![0, 0, 1, 3], vec![1, 2, 3, 2, 4, 5]]
        );
    }

    #[test]
    fn kits_that_cannot_be_whole_are_refused() {
        let mut p = problem();
        assert!(check(&p).is_ok());
        p.parts[1].quantity = 4;
        assert!(check(&p)
            .unwrap_err()
            .contains("makes 3 kits, part b makes 4"));
        p.parts[1].quantity = 3;
        p.parts[0].quantity = 5;
        assert!(check(&p)
            .unwrap_err()
            .contains("do not make whole kits of 2"));
        p.parts[0].quantity = 6;
        p.parts[1].priority = 2;
        assert!(check(&p).unwrap_err().contains("differ in priority"));
        p.parts[1].priority = 0;
        p.parts[0].filler_quantity = 1;
        assert!(check(&p).unwrap_err().contains("no filler copies"));
    }
}
