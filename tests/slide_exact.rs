//! The exact slide never pushes parts into each other, not even by less than the verifier's
//! tolerance: an outside reader computing overlap areas must find none.

use kerf::geometry::exact::SegmentSet;
use kerf::geometry::{PartGeometry, Shape};
use kerf::nest2d::slide::{slide, SlideBox};
use kerf::nest2d::verify::TOLERANCE;
use std::time::{Duration, Instant};

/// A 10 x 10 square with its lower left corner at (x, y).
fn square_at(x: f64, y: f64) -> PartGeometry {
    PartGeometry::single(Shape::rectangle(10.0, 10.0).translate(x, y))
}

fn gap(a: &PartGeometry, b: &PartGeometry) -> f64 {
    let sa = SegmentSet::from_rings(a.components()[0].rings());
    let sb = SegmentSet::from_rings(b.components()[0].rings());
    sa.min_dist(&sb, 1.0, -1.0)
}

#[test]
fn slid_parts_stay_strictly_apart() {
    // B sits just over one full step (3 mm) from A, less half a tolerance: a full step would
    // overlap A by 5e-7 mm, which a tolerance-based check accepts
    for spacing in [0.0, 2.0] {
        let b_at = 10.0 + spacing + 3.0 - 0.5 * TOLERANCE;
        let mut parts = vec![square_at(0.0, 0.0), square_at(b_at, 0.0)];
        let deadline = Instant::now() + Duration::from_secs(5);
        let area = SlideBox {
            x0: 0.0,
            y0: 0.0,
            y1: 10.0,
        };
        slide(&mut parts, &[spacing, spacing], area, 3.0, deadline);
        let b_min_x = parts[1].bbox().min.x;
        assert!(
            b_min_x >= 10.0 + spacing + TOLERANCE,
            "spacing {spacing}: B starts at {b_min_x}, inside A's clearance"
        );
        assert!(gap(&parts[0], &parts[1]) >= spacing + TOLERANCE);
        assert!(
            b_min_x < 10.0 + spacing + 1e-3,
            "B still slid close: {b_min_x}"
        );
    }
}

#[test]
fn a_part_held_by_a_corner_goes_on_at_another_height() {
    // B (10 x 10 at y 9..19) is held 1 mm behind A (10 x 10 at y 0..10) by the 1 mm of height
    // they share; 2 mm higher it clears A and goes on towards the start, then drops onto A
    let mut parts = vec![square_at(0.0, 0.0), square_at(11.0, 9.0)];
    let area = SlideBox {
        x0: 0.0,
        y0: 0.0,
        y1: 30.0,
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    slide(&mut parts, &[0.0, 0.0], area, 3.0, deadline);
    let b = parts[1].bbox();
    assert!(
        b.min.x < 6.0,
        "B went on past A's corner: starts at x {}",
        b.min.x
    );
    assert!(
        b.max.y <= 30.0 && b.min.y >= 10.0 + TOLERANCE,
        "B rests on A: {b:?}"
    );
    assert!(gap(&parts[0], &parts[1]) >= TOLERANCE);
    // A stays where it was: nothing is before it
    assert_eq!(parts[0].bbox().min.x, 0.0);
}

#[test]
fn parts_settle_upwards_when_that_ends_nearer_the_start() {
    // A (10 x 10) rests against the top of a strip 20 high; B (10 x 9.5) lies behind it at the
    // bottom, 0.5 mm away. Settling down, A drops in front of B and holds it back (the layout
    // ends at 20); settling up, A stays, B passes under it and the layout ends at 10
    let mut parts = vec![
        square_at(0.0, 10.0),
        PartGeometry::single(Shape::rectangle(10.0, 9.5).translate(10.5, 0.0)),
    ];
    let area = SlideBox {
        x0: 0.0,
        y0: 0.0,
        y1: 20.0,
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let before = parts.clone();
    let offsets = slide(&mut parts, &[0.0, 0.0], area, 3.0, deadline);
    // the engine keeps only the offsets: they must take the parts where the slide left them
    for ((b, a), o) in before.iter().zip(&parts).zip(&offsets) {
        let (bb, ab) = (b.bbox(), a.bbox());
        assert!(
            (bb.min.x + o.x - ab.min.x).abs() < 1e-9 && (bb.min.y + o.y - ab.min.y).abs() < 1e-9
        );
    }
    let end = kerf::nest2d::slide::parts_end(&parts);
    assert!(end <= 10.0 + 1e-6, "the layout ends at {end}");
    assert!(gap(&parts[0], &parts[1]) >= TOLERANCE);
    for p in &parts {
        let b = p.bbox();
        assert!(b.min.y >= 0.0 && b.max.y <= 20.0, "inside the strip: {b:?}");
    }
}
