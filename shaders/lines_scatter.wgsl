// One invocation per (job, lane of the mover's raster): every scene shape that the mover
// weighs and that shares the lane adds its run pairs' trapezoid corners to the job's
// difference array. Corners right of the line's last position change nothing on it and are
// dropped; corners left of its first are folded into its first two entries (a corner c with
// value d adds d * (x - c) at every x past it: that is d * (lo - c) at entry 0 and
// -d * (lo - 1 - c) at entry 1). Adds are atomic u64 as (low, high) u32 pairs with the carry
// out of the low word added to the high word, so the sums are the CPU's wrapping sums in any
// order.

@group(0) @binding(2) var<storage, read_write> diffs: array<atomic<u32>>;

fn atomic_add64(entry: u32, v: vec2<u32>) {
    let old = atomicAdd(&diffs[2u * entry], v.x);
    let high = v.y + select(0u, 1u, old + v.x < old);
    if (high != 0u) {
        atomicAdd(&diffs[2u * entry + 1u], high);
    }
}

fn neg64(v: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(0u - v.x, ~v.y + select(0u, 1u, v.x == 0u));
}

// a x b as u64 (WGSL has no 64-bit integers): 16-bit halves
fn mul64(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p10 = a1 * b0;
    let mid = a0 * b1 + (p00 >> 16u) + (p10 & 0xffffu);
    return vec2<u32>((mid << 16u) | (p00 & 0xffffu), a1 * b1 + (mid >> 16u) + (p10 >> 16u));
}

// adds w (negated when `neg`) at position c of the job
fn corner(job: Job, c: i32, w: u32, neg: bool) {
    if (c >= job.hi) {
        return;
    }
    if (c >= job.lo - 1) {
        let v = vec2<u32>(w, 0u);
        atomic_add64(job.at + u32(c - (job.lo - 1)), select(v, neg64(v), neg));
        return;
    }
    let first = mul64(w, u32(job.lo - c));
    let second = mul64(w, u32(job.lo - 1 - c));
    atomic_add64(job.at, select(first, neg64(first), neg));
    atomic_add64(job.at + 1u, select(neg64(second), second, neg));
}

// the runs of one lane: indices into the runs section, each run two words (start, end)
fn lane_runs(r: Raster, along_x: bool, lane: u32) -> vec2<u32> {
    let k = dims.starts_at + select(r.cols, r.rows, along_x) + lane;
    return vec2<u32>(data[k], data[k + 1u]);
}

fn run_at(k: u32) -> vec2<u32> {
    return vec2<u32>(data[dims.runs_at + 2u * k], data[dims.runs_at + 2u * k + 1u]);
}

@compute @workgroup_size(64)
fn scatter_lines(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.y + gid.z * 65535u;
    if (j >= dims.jobs) {
        return;
    }
    let job = job_at(j);
    let along_x = job.along_x == 1u;
    let a = raster_at(job.raster);
    let lanes_a = select(a.width, a.height, along_x);
    let extent_a = i32(select(a.height, a.width, along_x));
    let lane = gid.x;
    if (lane >= lanes_a) {
        return;
    }
    let ra = lane_runs(a, along_x, lane);
    if (ra.x == ra.y) {
        return;
    }
    let ln = job.fixed + i32(lane);
    for (var s = 0u; s < dims.shapes; s = s + 1u) {
        let w = data[dims.weights_at + job.mover * dims.shapes + s];
        if (w == 0u) {
            continue;
        }
        let at = dims.shapes_at + 3u * s;
        let shape = vec3<i32>(bitcast<i32>(data[at]), bitcast<i32>(data[at + 1u]),
            bitcast<i32>(data[at + 2u]));
        let b = raster_at(u32(shape.x));
        let o_lane0 = select(shape.y, shape.z, along_x);
        let o_off = select(shape.z, shape.y, along_x);
        let o_lanes = i32(select(b.width, b.height, along_x));
        let o_extent = i32(select(b.height, b.width, along_x));
        if (o_off + o_extent <= job.lo || o_off >= job.hi + extent_a) {
            continue;
        }
        if (ln < o_lane0 || ln >= o_lane0 + o_lanes) {
            continue;
        }
        let rb = lane_runs(b, along_x, u32(ln - o_lane0));
        for (var kb = rb.x; kb < rb.y; kb = kb + 1u) {
            let run_b = run_at(kb);
            let b0 = i32(run_b.x) + o_off;
            let b1 = i32(run_b.y) + o_off;
            for (var ka = ra.x; ka < ra.y; ka = ka + 1u) {
                let run_a = run_at(ka);
                let m = min(i32(run_a.y - run_a.x), b1 - b0);
                let x1 = b0 - i32(run_a.y);
                let x4 = b1 - i32(run_a.x);
                if (x4 <= job.lo || x1 >= job.hi) {
                    continue;
                }
                corner(job, x1, w, false);
                corner(job, x1 + m, w, true);
                corner(job, x4 - m, w, true);
                corner(job, x4, w, false);
            }
        }
    }
}
