// One workgroup per job: integrates the job's difference array twice (the slope, then the
// overlap at each position: f(x) = the sum of the slopes left of x, as the CPU's `scan_line`
// does) and finds the least overlap and its first position. Each invocation takes a chunk of
// consecutive entries; chunk totals are scanned across the workgroup in shared memory.

const THREADS: u32 = 256u;

@group(0) @binding(2) var<storage, read_write> diffs: array<vec2<u32>>;
// per job: (value low, value high, position, 1 when the line has positions)
@group(0) @binding(3) var<storage, read_write> best: array<vec4<u32>>;

var<workgroup> partial: array<vec2<u32>, 256>;
var<workgroup> least: array<vec4<u32>, 256>;

// exclusive running sum of `partial` across the workgroup (Hillis-Steele, then shifted)
fn exclusive_scan(t: u32, mine: vec2<u32>) -> vec2<u32> {
    partial[t] = mine;
    workgroupBarrier();
    for (var d = 1u; d < THREADS; d = d * 2u) {
        var v = partial[t];
        if (t >= d) {
            v = add64(v, partial[t - d]);
        }
        workgroupBarrier();
        partial[t] = v;
        workgroupBarrier();
    }
    var before = vec2<u32>(0u, 0u);
    if (t > 0u) {
        before = partial[t - 1u];
    }
    workgroupBarrier();
    return before;
}

// (value, position) a before b: the smaller value, then the smaller position
fn less(a: vec4<u32>, b: vec4<u32>) -> bool {
    if (a.w != b.w) {
        return a.w > b.w;
    }
    if (a.y != b.y) {
        return a.y < b.y;
    }
    if (a.x != b.x) {
        return a.x < b.x;
    }
    return a.z < b.z;
}

@compute @workgroup_size(256)
fn best_on_lines(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let j = wid.x + wid.y * 65535u;
    // (every invocation of a workgroup takes the same branch: barriers stay uniform)
    if (j >= dims.jobs) {
        return;
    }
    let job = job_at(j);
    let t = lid.x;
    let len = u32(job.hi - job.lo) + 2u;
    let chunk = (len + THREADS - 1u) / THREADS;
    let first = min(t * chunk, len);
    let last = min(first + chunk, len);

    // the slope: running sums of the corners
    var sum = vec2<u32>(0u, 0u);
    for (var k = first; k < last; k = k + 1u) {
        sum = add64(sum, diffs[job.at + k]);
    }
    var slope = exclusive_scan(t, sum);
    for (var k = first; k < last; k = k + 1u) {
        slope = add64(slope, diffs[job.at + k]);
        diffs[job.at + k] = slope;
    }
    // the overlap: f at entry k is the sum of the slopes of entries before k
    sum = vec2<u32>(0u, 0u);
    for (var k = first; k < last; k = k + 1u) {
        sum = add64(sum, diffs[job.at + k]);
    }
    var f = exclusive_scan(t, sum);
    var mine = vec4<u32>(0u, 0u, 0u, 0u);
    for (var k = first; k < last; k = k + 1u) {
        // entry k is position lo - 1 + k: positions are entries 1 ..= len - 1
        if (k >= 1u) {
            let c = vec4<u32>(f.x, f.y, k - 1u, 1u);
            if (less(c, mine)) {
                mine = c;
            }
        }
        f = add64(f, diffs[job.at + k]);
    }
    least[t] = mine;
    workgroupBarrier();
    for (var d = THREADS / 2u; d > 0u; d = d / 2u) {
        if (t < d && less(least[t + d], least[t])) {
            least[t] = least[t + d];
        }
        workgroupBarrier();
    }
    if (t == 0u) {
        best[j] = least[0];
    }
}
