//! The exact slide never pushes parts into each other, not even by less than the verifier's
//! tolerance: an outside reader computing overlap areas must find none.

use kerf::geometry::exact::SegmentSet;
use kerf::geometry::{PartGeometry, Shape};
use kerf::nest2d::slide::slide;
use kerf::nest2d::verify::TOLERANCE;
use std::time::{Duration, Instant};

fn square(x: f64) -> PartGeometry {
    PartGeometry::single(Shape::rectangle(10.0, 10.0).translate(x, 0.0))
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
        let mut parts = vec![square(0.0), square(b_at)];
        let deadline = Instant::now() + Duration::from_secs(5);
        slide(&mut parts, &[spacing, spacing], 0.0, 0.0, 3.0, deadline);
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
