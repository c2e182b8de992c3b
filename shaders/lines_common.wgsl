// Shared by lines_scatter.wgsl and lines_best.wgsl (prepended when they are loaded: WGSL has no
// includes). Batched line scans (see kernels/src/lines.rs and kernels/src/gpu/lines.rs): each
// job is one line of positions of one mover's raster; its difference array holds the corners
// of the trapezoids that each pair of runs (the mover's and a scene shape's, in the same row
// for a line along x, the same column along y) adds to the overlap along the line, as the CPU
// backend's `scan_line` builds them. Entry k of a job's array is position lo - 1 + k. Mirrors
// `GpuLineJob`.

struct Job {
    // the mover's raster (index into `rasters`), the mover (its row of `weights`)
    raster: u32,
    mover: u32,
    // 1: a row of positions (x varies, lanes are raster rows); 0: a column (lanes are columns)
    along_x: u32,
    // the fixed coordinate, and the positions lo..=hi along the line
    fixed: i32,
    lo: i32,
    hi: i32,
    // where the job's difference array starts (entries); it has hi - lo + 2 entries
    at: u32,
    _pad: u32,
}

// Mirrors `GpuRaster`: where a raster's lane starts begin in `starts` (rows: height + 1
// entries, then columns: width + 1), each an index into `runs`.
struct Raster {
    width: u32,
    height: u32,
    rows: u32,
    cols: u32,
}

// What the passes read: one storage buffer of u32 words (devices may bind as few as four
// storage buffers to a shader), its sections at the offsets `Dims` gives. Mirrors `LinesDims`.
struct Dims {
    jobs: u32,
    shapes: u32,
    // where each section of `data` begins (in words)
    jobs_at: u32,
    rasters_at: u32,
    starts_at: u32,
    runs_at: u32,
    shapes_at: u32,
    weights_at: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> data: array<u32>;

fn job_at(j: u32) -> Job {
    let k = dims.jobs_at + 8u * j;
    return Job(data[k], data[k + 1u], data[k + 2u], bitcast<i32>(data[k + 3u]),
        bitcast<i32>(data[k + 4u]), bitcast<i32>(data[k + 5u]), data[k + 6u], 0u);
}

fn raster_at(r: u32) -> Raster {
    let k = dims.rasters_at + 4u * r;
    return Raster(data[k], data[k + 1u], data[k + 2u], data[k + 3u]);
}

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}
