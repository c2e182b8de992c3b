//! Assemblies (kits): every kit's parts nest on one sheet, whole, or not at all; parts and
//! assemblies in one job; kits that cannot be whole are reported unplaced with the reason.

use kerf::geometry::{PartGeometry, Shape};
use kerf::nest2d::verify::verify_sheet;
use kerf::nest2d::*;
use kerf_kernels::CpuEvaluator;
use std::collections::BTreeMap;

fn rect(id: &str, w: f64, h: f64, qty: u32) -> PartSpec {
    PartSpec {
        rotations: vec![0.0, 90.0],
        ..PartSpec::new(id, PartGeometry::single(Shape::rectangle(w, h)), qty)
    }
}

/// A part of assembly `assembly`: `per_kit` copies in each of `kits` kits.
fn member(id: &str, w: f64, h: f64, per_kit: u32, assembly: u32, kits: u32) -> PartSpec {
    PartSpec {
        kit: Some(KitRole { assembly, per_kit }),
        ..rect(id, w, h, per_kit * kits)
    }
}

fn settings() -> Settings {
    Settings {
        max_iterations: Some(20),
        max_run_time_s: 60.0,
        max_cpu: 1,
        cells_per_part: 16.0,
        ..Default::default()
    }
}

fn run(p: &Problem) -> NestResult {
    let r = nest(p, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap();
    for l in &r.layouts {
        let v = verify_sheet(&p.sheets[l.sheet], &placed_shapes(p, l));
        assert!(v.is_empty(), "{}", v[0]);
    }
    r
}

/// Checks, from the result alone, that no kit is split: each kit (assembly, copy) is seen on
/// one layout only, and every layout holds whole kits (each part of an assembly `per_kit`
/// times the same number of kits). Returns the kits placed per assembly.
fn kits_whole(p: &Problem, r: &NestResult) -> BTreeMap<u32, u32> {
    let mut home: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut kits: BTreeMap<u32, u32> = BTreeMap::new();
    for (li, l) in r.layouts.iter().enumerate() {
        let mut count: BTreeMap<usize, u32> = BTreeMap::new();
        for pl in &l.placements {
            let Some(k) = p.parts[pl.part].kit else {
                continue;
            };
            *count.entry(pl.part).or_default() += 1;
            let kit = (k.assembly, pl.instance / k.per_kit);
            let first = *home.entry(kit).or_insert(li);
            assert_eq!(first, li, "kit {kit:?} on layouts {first} and {li}");
        }
        let mut per_assembly: BTreeMap<u32, u32> = BTreeMap::new();
        for (pi, part) in p.parts.iter().enumerate() {
            let Some(k) = part.kit else { continue };
            let n = count.get(&pi).copied().unwrap_or(0);
            assert_eq!(n % k.per_kit, 0, "layout {li}: {n} copies of {}", part.id);
            let whole = n / k.per_kit;
            let seen = *per_assembly.entry(k.assembly).or_insert(whole);
            assert_eq!(
                seen, whole,
                "layout {li}: part {} makes {whole} kits, not {seen}",
                part.id
            );
        }
        for (a, n) in per_assembly {
            *kits.entry(a).or_default() += n * l.multiplicity;
        }
    }
    kits
}

#[test]
fn kits_nest_whole_beside_loose_parts_over_several_sheets() {
    // assembly 0: a 45 x 40 base and three 15 x 15 brackets per kit, 7 kits; assembly 1: two
    // 30 x 20 sides per kit, 5 kits; loose 25 x 25 plates. About three 100 x 100 sheets.
    let p = Problem {
        parts: vec![
            member("base", 45.0, 40.0, 1, 0, 7),
            member("bracket", 15.0, 15.0, 3, 0, 7),
            member("side", 30.0, 20.0, 2, 1, 5),
            rect("plate", 25.0, 25.0, 9),
        ],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: settings(),
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 7 + 21 + 10 + 9, "{:?}", r.unplaced);
    let sheets: u32 = r.layouts.iter().map(|l| l.multiplicity).sum();
    assert!(sheets >= 3, "{sheets} sheets");
    let kits = kits_whole(&p, &r);
    assert_eq!(kits.get(&0), Some(&7));
    assert_eq!(kits.get(&1), Some(&5));
}

#[test]
fn a_kit_too_big_for_one_sheet_is_unplaced_whole_and_the_rest_nests() {
    // each kit is two 70 x 70 parts: either fits a 100 x 100 sheet, both never do
    let p = Problem {
        parts: vec![
            member("left", 70.0, 70.0, 1, 0, 2),
            member("right", 70.0, 70.0, 1, 0, 2),
            rect("plate", 20.0, 20.0, 4),
        ],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: settings(),
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 4, "only the plates");
    assert_eq!(kits_whole(&p, &r).get(&0).copied().unwrap_or(0), 0);
    for part in [0, 1] {
        let u = r
            .unplaced
            .iter()
            .find(|u| u.part == part)
            .expect("unplaced");
        assert_eq!(u.quantity, 2);
        assert!(
            u.reason.contains("Assemblies[0]") && u.reason.contains("do not fit together"),
            "{}",
            u.reason
        );
    }
}

#[test]
fn kits_too_big_for_a_sheet_never_crowd_out_loose_parts() {
    // each kit's first part fits a sheet alone, so every first-fit puts one there; the loose
    // 60 x 60 plate fits only once it is taken off again
    let p = Problem {
        parts: vec![
            member("left", 70.0, 70.0, 1, 0, 4),
            member("right", 70.0, 70.0, 1, 0, 4),
            rect("plate", 60.0, 60.0, 2),
        ],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: settings(),
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 2, "{:?}", r.unplaced);
    assert!(r.unplaced.iter().all(|u| u.part != 2), "{:?}", r.unplaced);
    assert!(r
        .unplaced
        .iter()
        .all(|u| u.reason.contains("do not fit together")));
}

#[test]
fn on_a_turned_fill_a_part_larger_than_the_sheet_is_refused_as_such() {
    // the turned frame's search box is larger than the sheet: the part's own box decides
    let p = Problem {
        parts: vec![rect("long", 130.0, 10.0, 1), rect("plate", 20.0, 20.0, 2)],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: Settings {
            fill_angle: FillAngle::new(45.0).unwrap(),
            ..settings()
        },
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 2);
    let u = r
        .unplaced
        .iter()
        .find(|u| u.part == 0)
        .expect("long unplaced");
    assert!(u.reason.contains("larger than every sheet"), "{}", u.reason);
}

#[test]
fn an_assembly_with_a_part_larger_than_every_sheet_nests_no_kit() {
    let p = Problem {
        parts: vec![
            member("huge", 150.0, 150.0, 1, 0, 3),
            member("small", 10.0, 10.0, 2, 0, 3),
            rect("plate", 20.0, 20.0, 2),
        ],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: settings(),
    };
    let r = run(&p);
    assert_eq!(r.stats.parts_placed, 2);
    let small = r
        .unplaced
        .iter()
        .find(|u| u.part == 1)
        .expect("small unplaced");
    assert_eq!(small.quantity, 6);
    assert!(
        small.reason.contains("huge") && small.reason.contains("Assemblies[0]"),
        "{}",
        small.reason
    );
}

#[test]
fn with_fewer_sheets_than_kits_need_only_whole_kits_are_placed() {
    // one sheet takes two kits of (40 x 40 + 4 of 10 x 10) and not a third whole: the third
    // kit's parts never go into the room left, though each would fit
    let mut sheet = SheetSpec::rectangle("s", 100.0, 50.0);
    sheet.quantity = Some(1);
    let p = Problem {
        parts: vec![
            member("body", 40.0, 40.0, 1, 0, 3),
            member("pin", 10.0, 10.0, 4, 0, 3),
        ],
        sheets: vec![sheet],
        settings: settings(),
    };
    let r = run(&p);
    let kits = kits_whole(&p, &r);
    assert_eq!(kits.get(&0), Some(&2), "{:?}", r.layouts);
    assert_eq!(r.stats.parts_placed, 10);
    assert!(r
        .unplaced
        .iter()
        .all(|u| u.reason.contains("Assemblies[0]")));
}

#[test]
fn kits_that_cannot_be_whole_are_refused_before_nesting() {
    let p = Problem {
        parts: vec![member("a", 10.0, 10.0, 2, 0, 3), {
            let mut b = member("b", 10.0, 10.0, 1, 0, 3);
            b.quantity = 4;
            b
        }],
        sheets: vec![SheetSpec::rectangle("s", 100.0, 100.0)],
        settings: settings(),
    };
    let err = nest(&p, &CpuEvaluator, &CancelHandle::default(), &|_| {}).unwrap_err();
    assert!(err.to_string().contains("Assemblies[0]"), "{err}");
}
