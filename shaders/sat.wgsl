// The summed-area table of the sheet's occupancy bits: entry (x, y) of the (width + 1) x
// (height + 1) table counts the set cells of [0, x) x [0, y). Row 0 and column 0 stay 0 (the
// buffer starts zeroed and nothing writes them). u32 arithmetic wraps, as on the CPU.

struct Dims {
    width: u32,
    height: u32,
    words_per_row: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> bits: array<u32>;
@group(0) @binding(2) var<storage, read_write> sat: array<u32>;

// pass 1: one invocation per grid row writes the row's running counts
@compute @workgroup_size(64)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let y = gid.x;
    if (y >= dims.height) {
        return;
    }
    let stride = dims.width + 1u;
    let base = (y + 1u) * stride + 1u;
    var run = 0u;
    for (var x = 0u; x < dims.width; x = x + 1u) {
        let word = bits[y * dims.words_per_row + (x >> 5u)];
        run = run + ((word >> (x & 31u)) & 1u);
        sat[base + x] = run;
    }
}

// pass 2: one invocation per table column adds up the rows
@compute @workgroup_size(64)
fn cols(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x + 1u;
    if (x > dims.width) {
        return;
    }
    let stride = dims.width + 1u;
    var acc = 0u;
    for (var y = 1u; y <= dims.height; y = y + 1u) {
        acc = acc + sat[y * stride + x];
        sat[y * stride + x] = acc;
    }
}
