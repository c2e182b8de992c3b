// The difference table of weighted rectangles (see kernels/src/weighted.rs): each rectangle
// adds +w, -w, -w, +w at its four corners. Corners of different rectangles can share an
// entry, so the adds are atomic: u64 values as (low, high) pairs of u32, where a carry out of
// the low word (seen in the value the atomic add returns) goes into the high word. The sum of
// the carries does not depend on the order of the adds, so the table is exactly the CPU's
// wrapping sum. (Its own module: the other passes read the same buffer as plain vec2<u32>.)

struct ScatterDims {
    // the table's row stride, in entries
    stride: u32,
    rects: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: ScatterDims;
@group(0) @binding(1) var<storage, read_write> table: array<atomic<u32>>;
// two words per rectangle: its corners' table coordinates (x0, y0, x1, y1), then (w, 0, 0, 0)
@group(0) @binding(2) var<storage, read> rects: array<vec4<u32>>;

fn add64(entry: u32, lo: u32, hi: u32) {
    let old = atomicAdd(&table[2u * entry], lo);
    let carry = select(0u, 1u, old + lo < old);
    let high = hi + carry;
    if (high != 0u) {
        atomicAdd(&table[2u * entry + 1u], high);
    }
}

@compute @workgroup_size(64)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= dims.rects) {
        return;
    }
    let r = rects[2u * gid.x];
    let w = rects[2u * gid.x + 1u].x;
    // -w as a wrapping u64 (w > 0: the CPU leaves weight-0 rectangles out)
    let neg_lo = 0u - w;
    let neg_hi = 0xffffffffu;
    add64(r.y * dims.stride + r.x, w, 0u);
    add64(r.y * dims.stride + r.z, neg_lo, neg_hi);
    add64(r.w * dims.stride + r.x, neg_lo, neg_hi);
    add64(r.w * dims.stride + r.z, w, 0u);
}
