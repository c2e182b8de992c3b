// Whole-map evaluation of part rasters against the sheet's summed-area table: the set cells a
// part covers at a position are four lookups per rectangle of the part (cells outside the grid
// count as set). Exactly the arithmetic of `kerf_kernels::sheet::SheetSat::overlap_at`.

struct Dims {
    width: u32,
    height: u32,
    // invocations per row of the dispatch grid (workgroups along x times 64)
    row_span: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> sat: array<u32>;
@group(0) @binding(2) var<storage, read> parts: array<Part>;
@group(0) @binding(3) var<storage, read> rects: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<atomic<u32>>;

fn sat_at(x: i32, y: i32) -> u32 {
    return sat[u32(y) * (dims.width + 1u) + u32(x)];
}

// Set cells under part p at (x, y); with `any_only`, stops at the first rectangle that covers one.
fn overlap(p: Part, x: i32, y: i32, any_only: bool) -> u32 {
    let w = i32(dims.width);
    let h = i32(dims.height);
    var total = 0u;
    for (var k = 0u; k < p.rect_count; k = k + 1u) {
        let r = rects[p.rect_offset + k];
        let x0 = x + i32(r.x);
        let y0 = y + i32(r.y);
        let x1 = x + i32(r.z);
        let y1 = y + i32(r.w);
        let cx0 = clamp(x0, 0, w);
        let cy0 = clamp(y0, 0, h);
        let cx1 = clamp(x1, 0, w);
        let cy1 = clamp(y1, 0, h);
        let inside = sat_at(cx1, cy1) - sat_at(cx0, cy1) - sat_at(cx1, cy0) + sat_at(cx0, cy0);
        let area = u32((x1 - x0) * (y1 - y0));
        let clipped = u32((cx1 - cx0) * (cy1 - cy0));
        total = total + inside + (area - clipped);
        if (any_only && total != 0u) {
            return total;
        }
    }
    return total;
}

// One invocation per (position, part): the overlap count, row-major (y outer, x inner) from
// the part's out_offset.
@compute @workgroup_size(64)
fn overlap_map(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = parts[gid.z];
    let i = gid.x + gid.y * dims.row_span;
    if (i >= p.nx * p.ny) {
        return;
    }
    let x = p.x_lo + i32(i % p.nx);
    let y = p.y_lo + i32(i / p.nx);
    atomicStore(&out[p.out_offset + i], overlap(p, x, y, false));
}

// One invocation per (position, part): positions are numbered in (x, then y) order; out[part]
// (starting at 0xFFFFFFFF) ends as the smallest number of a position with no overlap.
@compute @workgroup_size(64)
fn first_fit(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = parts[gid.z];
    let i = gid.x + gid.y * dims.row_span;
    if (i >= p.nx * p.ny) {
        return;
    }
    // a fitting position earlier in the order is known already: nothing to learn here
    if (atomicLoad(&out[gid.z]) <= i) {
        return;
    }
    let x = p.x_lo + i32(i / p.ny);
    let y = p.y_lo + i32(i % p.ny);
    if (overlap(p, x, y, true) == 0u) {
        atomicMin(&out[gid.z], i);
    }
}
