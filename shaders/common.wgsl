// Shared by the evaluation kernels (prepended to overlap.wgsl and weighted.wgsl when they are
// loaded: WGSL has no includes). A candidate raster: its rectangles in `rects`, its positions
// (x_lo + [0, nx)) x (y_lo + [0, ny)), where its results start in `out`. Mirrors `GpuPart`.

struct Part {
    rect_offset: u32,
    rect_count: u32,
    x_lo: i32,
    y_lo: i32,
    nx: u32,
    ny: u32,
    out_offset: u32,
    _pad: u32,
}
