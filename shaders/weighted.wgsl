// Whole-map evaluation against weighted placed rasters (see kernels/src/weighted.rs): the
// difference table of the rectangles' corners is added in (weighted_scatter.wgsl), four
// inclusive prefix passes make it the summed-area table of the weighted grid, and each
// (position, candidate) sums four lookups per rectangle. Values are u64 as vec2<u32> (low,
// high) with wrapping arithmetic, exactly as the CPU computes them.

struct Dims {
    // the table is (gw + 2) x (gh + 2)
    gw: u32,
    gh: u32,
    x0: i32,
    y0: i32,
    // invocations per row of the evaluation dispatch
    row_span: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read_write> table: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> parts: array<Part>;
@group(0) @binding(4) var<storage, read> rects: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> out: array<vec2<u32>>;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x - b.x;
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(lo, a.y - b.y - borrow);
}

// The prefix passes: every line (a row, or a column) of the table becomes its running sum.
// A line is cut into segments of `seg` entries, so that many invocations share each line:
// `seg_sums` adds up each segment, `seg_offsets` turns each line's segment sums into
// exclusive running sums, `seg_apply` rewrites each segment as running sums from its offset.
// (One invocation per whole line would walk thousands of entries one after the other.)
struct Scan {
    lines: u32,
    length: u32,
    // index of entry k of line l: l * line_stride + k * step
    line_stride: u32,
    step: u32,
    seg: u32,
    segs: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(6) var<uniform> scan: Scan;
@group(0) @binding(7) var<storage, read_write> sums: array<vec2<u32>>;

@compute @workgroup_size(64)
fn seg_sums(@builtin(global_invocation_id) gid: vec3<u32>) {
    let line = gid.x;
    let s = gid.y;
    if (line >= scan.lines || s >= scan.segs) {
        return;
    }
    let end = min((s + 1u) * scan.seg, scan.length);
    var acc = vec2<u32>(0u, 0u);
    for (var k = s * scan.seg; k < end; k = k + 1u) {
        acc = add64(acc, table[line * scan.line_stride + k * scan.step]);
    }
    sums[line * scan.segs + s] = acc;
}

@compute @workgroup_size(64)
fn seg_offsets(@builtin(global_invocation_id) gid: vec3<u32>) {
    let line = gid.x;
    if (line >= scan.lines) {
        return;
    }
    var acc = vec2<u32>(0u, 0u);
    for (var s = 0u; s < scan.segs; s = s + 1u) {
        let v = sums[line * scan.segs + s];
        sums[line * scan.segs + s] = acc;
        acc = add64(acc, v);
    }
}

@compute @workgroup_size(64)
fn seg_apply(@builtin(global_invocation_id) gid: vec3<u32>) {
    let line = gid.x;
    let s = gid.y;
    if (line >= scan.lines || s >= scan.segs) {
        return;
    }
    let end = min((s + 1u) * scan.seg, scan.length);
    var acc = sums[line * scan.segs + s];
    for (var k = s * scan.seg; k < end; k = k + 1u) {
        let i = line * scan.line_stride + k * scan.step;
        acc = add64(acc, table[i]);
        table[i] = acc;
    }
}

fn at(x: i32, y: i32) -> vec2<u32> {
    return table[u32(y) * (dims.gw + 2u) + u32(x)];
}

@compute @workgroup_size(64)
fn weighted_map(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = parts[gid.z];
    let i = gid.x + gid.y * dims.row_span;
    if (i >= p.nx * p.ny) {
        return;
    }
    let x = p.x_lo + i32(i % p.nx) - dims.x0;
    let y = p.y_lo + i32(i / p.nx) - dims.y0;
    let gw = i32(dims.gw);
    let gh = i32(dims.gh);
    var total = vec2<u32>(0u, 0u);
    for (var k = 0u; k < p.rect_count; k = k + 1u) {
        let r = rects[p.rect_offset + k];
        let cx0 = clamp(x + i32(r.x), 0, gw);
        let cy0 = clamp(y + i32(r.y), 0, gh);
        let cx1 = clamp(x + i32(r.z), 0, gw);
        let cy1 = clamp(y + i32(r.w), 0, gh);
        total = add64(total, at(cx1, cy1));
        total = sub64(total, at(cx0, cy1));
        total = sub64(total, at(cx1, cy0));
        total = add64(total, at(cx0, cy0));
    }
    out[p.out_offset + i] = total;
}
