//! The wgpu backend: the whole-map evaluations run as WGSL compute (`shaders/`), everything
//! else is answered by its CPU twin. Every answer equals the CPU backend's (integer arithmetic,
//! the same formulas), so a job may switch to the CPU at any moment without changing its
//! layout: after a GPU error (device lost, out of memory, validation), the backend logs it once
//! and answers on the CPU from then on.

use crate::cpu::CpuEvaluator;
use crate::lines::{line_work, LineBest, Mover, OverlapMeasure, Shape};
use crate::occupancy::Occupancy;
use crate::raster::{PartRaster, Placed};
use crate::sheet::{fit_bounds, Candidate};
use crate::weighted::Corners;
use crate::{Axis, Bounds, Evaluator};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use wgpu::util::DeviceExt;

mod lines;
mod route;

use route::{Call, Path, Routing};

const WORKGROUP: u32 = 64;
/// Default of `KERF_GPU_MIN_WORK`, in positions x rectangles: the threshold rule's crossover
/// and the measured routing's prior (`route`). Tuned on an H100 for the batched line scans
/// (README, GPU or CPU).
const DEFAULT_MIN_WORK: u64 = 1 << 20;
const MAX_GROUPS: u32 = 65_535;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SatDims {
    width: u32,
    height: u32,
    words_per_row: u32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct EvalDims {
    width: u32,
    height: u32,
    row_span: u32,
    _pad: u32,
}

/// A candidate as the kernels read it (`Part` in shaders/common.wgsl).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuPart {
    rect_offset: u32,
    rect_count: u32,
    x_lo: i32,
    y_lo: i32,
    nx: u32,
    ny: u32,
    out_offset: u32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WeightedDims {
    gw: u32,
    gh: u32,
    x0: i32,
    y0: i32,
    row_span: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

/// What the adapter is, as wgpu reports it.
#[derive(Clone, Debug)]
pub struct AdapterDescription {
    pub name: String,
    pub device_type: wgpu::DeviceType,
    pub backend: wgpu::Backend,
}

impl AdapterDescription {
    /// A CPU-type adapter (lavapipe, SwiftShader): correct but no faster than the CPU backend.
    pub fn is_software(&self) -> bool {
        self.device_type == wgpu::DeviceType::Cpu
    }
}

pub struct GpuEvaluator {
    adapter: AdapterDescription,
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    sat_rows: wgpu::ComputePipeline,
    sat_cols: wgpu::ComputePipeline,
    overlap_map: wgpu::ComputePipeline,
    first_fit: wgpu::ComputePipeline,
    w_scatter: wgpu::ComputePipeline,
    w_seg_sums: wgpu::ComputePipeline,
    w_seg_offsets: wgpu::ComputePipeline,
    w_seg_apply: wgpu::ComputePipeline,
    w_map: wgpu::ComputePipeline,
    l_scatter: wgpu::ComputePipeline,
    l_best: wgpu::ComputePipeline,
    /// One evaluation at a time (the device and the scratch buffers are shared).
    busy: Mutex<()>,
    /// Buffers kept from call to call (the weighted table and its segment sums, tens of MB on
    /// a fine strip, and the readback): allocating and zeroing them anew cost more than the
    /// evaluation.
    scratch: Mutex<Vec<(Scratch, wgpu::Buffer)>>,
    /// Set after a GPU error: from then on the CPU twin answers.
    failed: std::sync::Arc<AtomicBool>,
    /// What that error was.
    failure: Mutex<Option<String>>,
    /// Calls the GPU answered.
    answered: std::sync::atomic::AtomicU64,
    /// Which calls the GPU answers and which the CPU twin (a dispatch and its readback cost
    /// more than a small evaluation). The answers are the same either way.
    routing: Routing,
    cpu: CpuEvaluator,
}

/// The buffers `GpuEvaluator::scratch` keeps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scratch {
    WeightedTable,
    SegmentSums,
    /// The batched line scans' difference arrays.
    LineDiffs,
    /// Where results are copied to be read by the CPU (mappable host memory: a fresh one
    /// each call cost more than the evaluation on a VM, where every page of it faults in).
    Readback,
}

impl Scratch {
    fn usage(self) -> wgpu::BufferUsages {
        match self {
            Scratch::Readback => wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            _ => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        }
    }
}

/// Entries per segment of the weighted table's prefix passes (see `shaders/weighted.wgsl`).
const SCAN_SEGMENT: u32 = 64;

/// A prefix pass over the weighted table, as the scan kernels read it (`Scan` in
/// shaders/weighted.wgsl).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ScanDims {
    lines: u32,
    length: u32,
    line_stride: u32,
    step: u32,
    seg: u32,
    segs: u32,
    _pad0: u32,
    _pad1: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ScatterDims {
    stride: u32,
    rects: u32,
    _pad0: u32,
    _pad1: u32,
}

/// Why a GPU evaluation did not run.
#[derive(Debug)]
enum GpuError {
    /// Not for the GPU kernels (larger than the device's buffers or dispatch limits allow, or
    /// an input they do not take: a rectangle of positions among lines, a mover without a
    /// weight for every shape): this call runs on the CPU twin.
    CpuThisCall,
    /// The device failed: every later call runs on the CPU.
    Failed(String),
}

impl GpuEvaluator {
    /// Opens the best Vulkan (or Metal / DX12) adapter: discrete, then integrated, then
    /// virtual GPUs; CPU-type adapters (lavapipe) only with `allow_software`.
    pub fn new(allow_software: bool) -> Result<GpuEvaluator, String> {
        pollster::block_on(Self::open(allow_software))
    }

    async fn open(allow_software: bool) -> Result<GpuEvaluator, String> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = desc_backends();
        let instance = wgpu::Instance::new(desc);
        let adapters = instance.enumerate_adapters(desc_backends()).await;
        let rank = |t: wgpu::DeviceType| match t {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Other => 3,
            wgpu::DeviceType::Cpu => 4,
        };
        let seen: Vec<String> = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?})", i.name, i.device_type)
            })
            .collect();
        let adapter = adapters
            .into_iter()
            .filter(|a| allow_software || a.get_info().device_type != wgpu::DeviceType::Cpu)
            .min_by_key(|a| rank(a.get_info().device_type))
            .ok_or_else(|| {
                if seen.is_empty() {
                    "no Vulkan adapter found".to_string()
                } else {
                    format!(
                        "no hardware GPU adapter (found only {}; ask for one with KERF_COMPUTE=gpu)",
                        seen.join(", ")
                    )
                }
            })?;
        let info = adapter.get_info();
        // ask for the largest buffers the adapter offers: sheet tables grow with the sheet
        let offered = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: offered.max_storage_buffer_binding_size,
            max_buffer_size: offered.max_buffer_size,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("kerf"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("{}: cannot open the device: {e}", info.name))?;
        let failed = std::sync::Arc::new(AtomicBool::new(false));
        {
            let failed = failed.clone();
            device.set_device_lost_callback(move |reason, message| {
                tracing::error!(?reason, %message, "GPU device lost; evaluations continue on the CPU");
                failed.store(true, Ordering::SeqCst);
            });
        }
        // a module from WGSL files laid one after the other (WGSL has no includes: the shared
        // declarations come first)
        let module = |label: &str, files: &[&str]| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(files.concat().into()),
            })
        };
        const COMMON: &str = include_str!("../../../shaders/common.wgsl");
        const LINES_COMMON: &str = include_str!("../../../shaders/lines_common.wgsl");
        let sat = module("sat", &[include_str!("../../../shaders/sat.wgsl")]);
        let overlap = module(
            "overlap",
            &[COMMON, include_str!("../../../shaders/overlap.wgsl")],
        );
        let weighted = module(
            "weighted",
            &[COMMON, include_str!("../../../shaders/weighted.wgsl")],
        );
        let weighted_scatter = module(
            "weighted_scatter",
            &[include_str!("../../../shaders/weighted_scatter.wgsl")],
        );
        let lines_scatter = module(
            "lines_scatter",
            &[
                LINES_COMMON,
                include_str!("../../../shaders/lines_scatter.wgsl"),
            ],
        );
        let lines_best = module(
            "lines_best",
            &[
                LINES_COMMON,
                include_str!("../../../shaders/lines_best.wgsl"),
            ],
        );
        let pipeline = |m: &wgpu::ShaderModule, entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: m,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        Ok(GpuEvaluator {
            adapter: AdapterDescription {
                name: info.name.clone(),
                device_type: info.device_type,
                backend: info.backend,
            },
            sat_rows: pipeline(&sat, "rows"),
            sat_cols: pipeline(&sat, "cols"),
            overlap_map: pipeline(&overlap, "overlap_map"),
            first_fit: pipeline(&overlap, "first_fit"),
            w_scatter: pipeline(&weighted_scatter, "scatter"),
            w_seg_sums: pipeline(&weighted, "seg_sums"),
            w_seg_offsets: pipeline(&weighted, "seg_offsets"),
            w_seg_apply: pipeline(&weighted, "seg_apply"),
            w_map: pipeline(&weighted, "weighted_map"),
            l_scatter: pipeline(&lines_scatter, "scatter_lines"),
            l_best: pipeline(&lines_best, "best_on_lines"),
            scratch: Mutex::new(Vec::new()),
            device,
            queue,
            limits,
            busy: Mutex::new(()),
            failed,
            failure: Mutex::new(None),
            answered: Default::default(),
            routing: routing_from_env(),
            cpu: CpuEvaluator,
        })
    }

    /// Sends every call to the GPU however small (the parity tests, `kerf bench kernels`).
    pub fn every_call_on_gpu(mut self) -> GpuEvaluator {
        self.routing = Routing::Always;
        self
    }

    /// Answers a call on the path `routing` picks for its kind and work, and times it; a GPU
    /// that declines the call or fails answers it on the CPU twin (the same answer).
    fn answer<T>(
        &self,
        call: Call,
        work: u64,
        gpu: impl FnOnce() -> Result<T, GpuError>,
        cpu: impl FnOnce() -> T,
    ) -> T {
        if self.has_failed() {
            return cpu();
        }
        let decision = self.routing.choose(call, work);
        let t = Instant::now();
        let (out, answered_on) = match decision.path {
            Path::Cpu => (cpu(), Path::Cpu),
            Path::Gpu => match self.attempt(gpu) {
                Some(out) => (out, Path::Gpu),
                // declined (too large for the device) or failed: the CPU twin answers, and
                // the time counts as the GPU path's, which is what taking it cost
                None => (cpu(), Path::Cpu),
            },
        };
        self.routing.record(decision, answered_on, t.elapsed());
        out
    }

    /// Routes calls by measured cost (the default unless `KERF_GPU_ROUTE` says otherwise),
    /// with `KERF_GPU_MIN_WORK`'s default as the prior.
    pub fn routed_by_measured_cost(mut self) -> GpuEvaluator {
        self.routing = Routing::measured(DEFAULT_MIN_WORK);
        self
    }

    pub fn adapter(&self) -> &AdapterDescription {
        &self.adapter
    }

    /// How many calls the GPU itself answered.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// True once a GPU error has sent every evaluation to the CPU.
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    fn max_binding(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// Runs `f` on the GPU; a device failure is logged once and turns the backend to the CPU.
    fn attempt<T>(&self, f: impl FnOnce() -> Result<T, GpuError>) -> Option<T> {
        if self.has_failed() {
            return None;
        }
        let _guard = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let r = f();
        let errors = [
            pollster::block_on(oom.pop()),
            pollster::block_on(scope.pop()),
        ];
        if let Some(e) = errors.into_iter().flatten().next() {
            self.fail(&e.to_string());
            return None;
        }
        match r {
            Ok(v) => {
                self.answered.fetch_add(1, Ordering::Relaxed);
                Some(v)
            }
            Err(GpuError::CpuThisCall) => None,
            Err(GpuError::Failed(why)) => {
                self.fail(&why);
                None
            }
        }
    }

    /// The GPU error that sent evaluations to the CPU, if one did.
    pub fn failure(&self) -> Option<String> {
        if !self.has_failed() {
            return None;
        }
        Some(
            self.failure
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .unwrap_or_else(|| "the device was lost".into()),
        )
    }

    /// Destroys the device, as a driver reset or a GPU falling off the bus would: the
    /// device-lost path, for drills and the tests of what a node does without its GPU. Every
    /// evaluation after it is the CPU's.
    pub fn lose_device(&self) {
        self.device.destroy();
        let _ = self.device.poll(wgpu::PollType::Poll);
        // the lost callback may run later or not at all on some drivers: the state is the same
        self.fail("the device was destroyed (lose_device)");
    }

    fn fail(&self, why: &str) {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| why.to_string());
        if !self.failed.swap(true, Ordering::SeqCst) {
            tracing::error!(adapter = %self.adapter.name, error = why, "GPU evaluation failed; continuing on the CPU");
        }
    }

    /// Uploads the occupancy and builds its summed-area table on the GPU.
    fn build_sat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        occ: &Occupancy,
    ) -> Result<wgpu::Buffer, GpuError> {
        let (w, h) = (occ.width(), occ.height());
        let sat_bytes = (w as u64 + 1) * (h as u64 + 1) * 4;
        let bits: &[u8] = bytemuck::cast_slice(occ.words());
        if sat_bytes > self.max_binding() || bits.len() as u64 > self.max_binding() {
            return Err(GpuError::CpuThisCall);
        }
        let dims = SatDims {
            width: w,
            height: h,
            words_per_row: occ.words_per_row() as u32 * 2,
            _pad: 0,
        };
        let dims = self.uniform(bytemuck::bytes_of(&dims));
        // (an empty grid still needs a non-empty binding)
        let bits = self.storage(if bits.is_empty() { &[0; 4] } else { bits });
        let sat = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sat"),
            size: sat_bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        // (the column pass reads no bits: its derived layout has no binding 1)
        let passes = [
            (&self.sat_rows, h, vec![(0, &dims), (1, &bits), (2, &sat)]),
            (&self.sat_cols, w, vec![(0, &dims), (2, &sat)]),
        ];
        for (pipeline, threads, buffers) in passes {
            let groups = (threads.div_ceil(WORKGROUP).max(1), 1, 1);
            self.pass(encoder, pipeline, &buffers, groups);
        }
        Ok(sat)
    }

    /// Forgets the kept buffer `which` (the next call makes a new one).
    fn drop_scratch(&self, which: Scratch) {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(w, _)| *w != which);
    }

    /// The kept buffer `which`, at least `bytes` long (made anew, a quarter larger, when the
    /// kept one is too small). Callers hold `busy`, so no two calls share it at once.
    fn scratch(&self, which: Scratch, bytes: u64) -> wgpu::Buffer {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, b)) = kept.iter().find(|(w, b)| *w == which && b.size() >= bytes) {
            return b.clone();
        }
        kept.retain(|(w, _)| *w != which);
        // (rounded to whole u64 entries within the binding limit, which need not be a
        // multiple of 8)
        let size = (bytes + bytes / 4)
            .min(self.max_binding() / 8 * 8)
            .max(bytes)
            .next_multiple_of(8);
        let b = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(match which {
                Scratch::WeightedTable => "weighted table",
                Scratch::SegmentSums => "segment sums",
                Scratch::LineDiffs => "line differences",
                Scratch::Readback => "readback",
            }),
            size,
            usage: which.usage(),
            mapped_at_creation: false,
        });
        kept.push((which, b.clone()));
        b
    }

    fn uniform(&self, bytes: &[u8]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            })
    }

    fn storage(&self, bytes: &[u8]) -> wgpu::Buffer {
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
    }

    /// A bind group of (binding, buffer) pairs for group 0 of `pipeline`.
    fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let layout = pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: *i,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        })
    }

    /// Runs the overlap kernel `pipeline` for `parts` (their rectangles in `rects`) against
    /// `sat`, with `out` as `out` says, and reads `out` back.
    fn evaluate(
        &self,
        mut encoder: wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        grid: (u32, u32),
        sat: &wgpu::Buffer,
        parts: &[GpuPart],
        rects: &[[u32; 4]],
        out: Out<'_>,
    ) -> Result<Vec<u32>, GpuError> {
        let words = match out {
            Out::From(init) => init.len(),
            Out::Written(words) => words,
        };
        let out_bytes = (words as u64 * 4).max(4);
        if out_bytes > self.max_binding() || (rects.len() as u64 * 16) > self.max_binding() {
            return Err(GpuError::CpuThisCall);
        }
        let (gx, gy) = dispatch_grid(parts)?;
        let dims = EvalDims {
            width: grid.0,
            height: grid.1,
            row_span: gx * WORKGROUP,
            _pad: 0,
        };
        let dims = self.uniform(bytemuck::bytes_of(&dims));
        let parts_buf = self.storage(bytemuck::cast_slice(parts));
        let rects_buf = self.storage(if rects.is_empty() {
            &[0; 16]
        } else {
            bytemuck::cast_slice(rects)
        });
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let out = match out {
            Out::From(init) if !init.is_empty() => {
                self.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("out"),
                        contents: bytemuck::cast_slice(init),
                        usage,
                    })
            }
            // the kernel writes every word: nothing to upload
            _ => self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("out"),
                size: out_bytes,
                usage,
                mapped_at_creation: false,
            }),
        };
        self.pass(
            &mut encoder,
            pipeline,
            &[
                (0, &dims),
                (1, sat),
                (2, &parts_buf),
                (3, &rects_buf),
                (4, &out),
            ],
            (gx, gy, parts.len() as u32),
        );
        let mut values = self.read_back(encoder, &out, out_bytes)?;
        values.truncate(words);
        Ok(values)
    }

    /// Copies `out` into a mappable buffer, submits, waits and returns the words.
    fn read_back(
        &self,
        mut encoder: wgpu::CommandEncoder,
        out: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u32>, GpuError> {
        // (kept from call to call, so only its first `bytes` are this call's)
        let readback = self.scratch(Scratch::Readback, bytes);
        encoder.copy_buffer_to_buffer(out, 0, &readback, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        readback.map_async(wgpu::MapMode::Read, 0..bytes, move |r| {
            let _ = tx.send(r);
        });
        let mapped = self
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Failed(format!("waiting for the GPU: {e}")))
            .and_then(|_| {
                rx.recv()
                    .map_err(|_| GpuError::Failed("the readback was dropped".into()))?
                    .map_err(|e| GpuError::Failed(format!("reading results back: {e}")))
            });
        if let Err(e) = mapped {
            // a buffer whose mapping failed or never ended is not kept for the next call
            self.drop_scratch(Scratch::Readback);
            return Err(e);
        }
        let values = readback
            .get_mapped_range(0..bytes)
            .map(|view| bytemuck::cast_slice::<u8, u32>(&view).to_vec());
        readback.unmap();
        values.map_err(|e| GpuError::Failed(format!("reading results back: {e:?}")))
    }

    /// One compute pass of `pipeline` over a grid of workgroups.
    fn pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
        groups: (u32, u32, u32),
    ) {
        let bind = self.bind(pipeline, buffers);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }

    fn gpu_weighted_maps(
        &self,
        others: &[Placed],
        candidates: &[Candidate],
    ) -> Result<Vec<Vec<u64>>, GpuError> {
        let corners = Corners::of(others);
        let table_bytes = corners.table_len() as u64 * 8;
        let mut parts = Vec::with_capacity(candidates.len());
        let mut rects: Vec<[u32; 4]> = Vec::new();
        let mut total = 0u64;
        for c in candidates {
            let (nx, ny) = c.dims();
            parts.push(GpuPart {
                rect_offset: rects.len() as u32,
                rect_count: c.raster.rects().len() as u32,
                x_lo: c.bounds.x_lo,
                y_lo: c.bounds.y_lo,
                nx,
                ny,
                out_offset: total as u32,
                _pad: 0,
            });
            rects.extend_from_slice(c.raster.rects());
            total += nx as u64 * ny as u64;
        }
        let (stride, rows) = (corners.gw + 2, corners.gh + 2);
        // the prefix passes: rows (entries 1 apart), then columns (entries a row apart), twice
        let scans = [(rows, stride, stride, 1), (stride, rows, 1, stride)].map(
            |(lines, length, line_stride, step)| ScanDims {
                lines,
                length,
                line_stride,
                step,
                seg: SCAN_SEGMENT,
                segs: length.div_ceil(SCAN_SEGMENT),
                _pad0: 0,
                _pad1: 0,
            },
        );
        let sums_bytes = scans
            .iter()
            .map(|d| d.lines as u64 * d.segs as u64 * 8)
            .max()
            .unwrap_or(8);
        let out_bytes = (total * 8).max(8);
        let corner_words: Vec<[u32; 4]> = corners
            .rects
            .iter()
            .flat_map(|&(r, w)| [r, [w, 0, 0, 0]])
            .collect();
        if table_bytes > self.max_binding()
            || sums_bytes > self.max_binding()
            || out_bytes > self.max_binding()
            || total > u32::MAX as u64
            || corner_words.len() as u64 * 16 > self.max_binding()
            || scans.iter().any(|d| d.segs > MAX_GROUPS)
        {
            return Err(GpuError::CpuThisCall);
        }
        let (gx, gy) = dispatch_grid(&parts)?;
        let dims = WeightedDims {
            gw: corners.gw,
            gh: corners.gh,
            x0: corners.x0,
            y0: corners.y0,
            row_span: gx * WORKGROUP,
            _pad0: 0,
            _pad1: 0,
            _pad2: 0,
        };
        let dims = self.uniform(bytemuck::bytes_of(&dims));
        let table = self.scratch(Scratch::WeightedTable, table_bytes);
        let parts_buf = self.storage(if parts.is_empty() {
            &[0; 32]
        } else {
            bytemuck::cast_slice(&parts)
        });
        let rects_buf = self.storage(if rects.is_empty() {
            &[0; 16]
        } else {
            bytemuck::cast_slice(&rects)
        });
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("weighted out"),
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = self.encoder();
        encoder.clear_buffer(&table, 0, Some(table_bytes));
        let groups = |n: u32| n.div_ceil(WORKGROUP).max(1);
        if !corners.rects.is_empty() {
            let scatter_dims = self.uniform(bytemuck::bytes_of(&ScatterDims {
                stride,
                rects: corners.rects.len() as u32,
                _pad0: 0,
                _pad1: 0,
            }));
            let corner_buf = self.storage(bytemuck::cast_slice(&corner_words));
            self.pass(
                &mut encoder,
                &self.w_scatter,
                &[(0, &scatter_dims), (1, &table), (2, &corner_buf)],
                (groups(corners.rects.len() as u32), 1, 1),
            );
            let sums = self.scratch(Scratch::SegmentSums, sums_bytes);
            let scan_dims = scans.map(|d| (d, self.uniform(bytemuck::bytes_of(&d))));
            for _ in 0..2 {
                for (d, u) in &scan_dims {
                    let lines = groups(d.lines);
                    let bufs = [(1, &table), (6, u), (7, &sums)];
                    self.pass(&mut encoder, &self.w_seg_sums, &bufs, (lines, d.segs, 1));
                    self.pass(&mut encoder, &self.w_seg_offsets, &bufs[1..], (lines, 1, 1));
                    self.pass(&mut encoder, &self.w_seg_apply, &bufs, (lines, d.segs, 1));
                }
            }
        }
        if !parts.is_empty() && total > 0 {
            self.pass(
                &mut encoder,
                &self.w_map,
                &[
                    (0, &dims),
                    (1, &table),
                    (3, &parts_buf),
                    (4, &rects_buf),
                    (5, &out),
                ],
                (gx, gy, parts.len() as u32),
            );
        }
        let words = self.read_back(encoder, &out, out_bytes)?;
        let mut maps = Vec::with_capacity(parts.len());
        for p in &parts {
            let n = p.nx as usize * p.ny as usize;
            let at = p.out_offset as usize * 2;
            maps.push(
                words[at..at + 2 * n]
                    .chunks_exact(2)
                    .map(|w| w[0] as u64 | (w[1] as u64) << 32)
                    .collect(),
            );
        }
        Ok(maps)
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None })
    }

    fn gpu_first_fits(
        &self,
        occ: &Occupancy,
        candidates: &[Candidate],
    ) -> Result<Vec<Option<(i32, i32)>>, GpuError> {
        let grid = (occ.width(), occ.height());
        let mut parts = Vec::new();
        let mut rects: Vec<[u32; 4]> = Vec::new();
        let mut which = Vec::new();
        for (k, c) in candidates.iter().enumerate() {
            let b = fit_bounds(grid, c.raster, c.bounds);
            let clipped = Candidate {
                raster: c.raster,
                bounds: b,
            };
            let (nx, ny) = clipped.dims();
            if nx == 0 {
                continue;
            }
            parts.push(GpuPart {
                rect_offset: rects.len() as u32,
                rect_count: c.raster.rects().len() as u32,
                x_lo: b.x_lo,
                y_lo: b.y_lo,
                nx,
                ny,
                out_offset: 0,
                _pad: 0,
            });
            rects.extend_from_slice(c.raster.rects());
            which.push(k);
        }
        let mut found = vec![None; candidates.len()];
        if parts.is_empty() {
            return Ok(found);
        }
        let mut encoder = self.encoder();
        let sat = self.build_sat(&mut encoder, occ)?;
        let init = vec![u32::MAX; parts.len()];
        let best = self.evaluate(
            encoder,
            &self.first_fit,
            grid,
            &sat,
            &parts,
            &rects,
            Out::From(&init),
        )?;
        for ((k, p), i) in which.iter().zip(&parts).zip(best) {
            if i != u32::MAX {
                found[*k] = Some((p.x_lo + (i / p.ny) as i32, p.y_lo + (i % p.ny) as i32));
            }
        }
        Ok(found)
    }

    fn gpu_overlap_maps(
        &self,
        occ: &Occupancy,
        candidates: &[Candidate],
    ) -> Result<Vec<Vec<u32>>, GpuError> {
        let grid = (occ.width(), occ.height());
        let mut encoder = self.encoder();
        let sat = self.build_sat(&mut encoder, occ)?;
        // the table is built by the first submission and reused by the others
        self.queue.submit([encoder.finish()]);
        let band_cells = (self.max_binding() / 4).min(1 << 26);
        let mut maps = Vec::with_capacity(candidates.len());
        for c in candidates {
            let (nx, ny) = c.dims();
            let mut map = Vec::with_capacity(nx as usize * ny as usize);
            if nx > 0 {
                // rows of positions in bands whose output fits one buffer
                let rows_per_band = (band_cells / nx as u64).max(1) as u32;
                let mut y = 0;
                while y < ny {
                    let rows = rows_per_band.min(ny - y);
                    let part = GpuPart {
                        rect_offset: 0,
                        rect_count: c.raster.rects().len() as u32,
                        x_lo: c.bounds.x_lo,
                        y_lo: c.bounds.y_lo + y as i32,
                        nx,
                        ny: rows,
                        out_offset: 0,
                        _pad: 0,
                    };
                    map.extend(self.evaluate(
                        self.encoder(),
                        &self.overlap_map,
                        grid,
                        &sat,
                        &[part],
                        c.raster.rects(),
                        Out::Written(nx as usize * rows as usize),
                    )?);
                    y += rows;
                }
            }
            maps.push(map);
        }
        Ok(maps)
    }
}

/// The output buffer of an evaluation.
enum Out<'a> {
    /// Starts as these words (the kernel updates some of them, e.g. by atomicMin).
    From(&'a [u32]),
    /// This many words, every one written by the kernel.
    Written(usize),
}

/// Workgroups along x and y so that every position of the largest part gets an invocation
/// (`row_span` = x groups x 64 invocations per row of the grid); z is the part.
fn dispatch_grid(parts: &[GpuPart]) -> Result<(u32, u32), GpuError> {
    let most = parts
        .iter()
        .map(|p| p.nx as u64 * p.ny as u64)
        .max()
        .unwrap_or(0);
    let groups = most.div_ceil(WORKGROUP as u64).max(1);
    let gx = groups.min(MAX_GROUPS as u64) as u32;
    let gy = groups.div_ceil(gx as u64);
    if gy > MAX_GROUPS as u64 || parts.len() > MAX_GROUPS as usize {
        return Err(GpuError::CpuThisCall);
    }
    Ok((gx, gy as u32))
}

/// A call's work as the routing counts it: positions x rectangles of every candidate.
fn candidate_work(candidates: &[Candidate]) -> u64 {
    candidates
        .iter()
        .map(|c| c.positions() * c.raster.rects().len() as u64)
        .sum()
}

/// The routing `KERF_GPU_ROUTE` asks for: `measured` (the default) or `threshold`, with
/// `KERF_GPU_MIN_WORK` as the threshold and the measured routing's prior.
fn routing_from_env() -> Routing {
    let min_work = match std::env::var("KERF_GPU_MIN_WORK") {
        Err(_) => DEFAULT_MIN_WORK,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            tracing::warn!(value = %v, default = DEFAULT_MIN_WORK, "KERF_GPU_MIN_WORK is not a whole number; using the default");
            DEFAULT_MIN_WORK
        }),
    };
    match std::env::var("KERF_GPU_ROUTE").as_deref().map(str::trim) {
        Ok("threshold") => Routing::Threshold(min_work),
        Err(_) | Ok("measured") => Routing::measured(min_work),
        Ok(other) => {
            tracing::warn!(
                value = other,
                "KERF_GPU_ROUTE is neither measured nor threshold; routing by measured cost"
            );
            Routing::measured(min_work)
        }
    }
}

impl Drop for GpuEvaluator {
    fn drop(&mut self) {
        let report = self.routing.report();
        if !report.is_empty() {
            tracing::debug!(adapter = %self.adapter.name, "{report}");
        }
    }
}

/// Vulkan, Metal, DX12: never OpenGL (with no Vulkan driver wgpu would otherwise settle for
/// a software OpenGL adapter).
fn desc_backends() -> wgpu::Backends {
    wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12
}

impl Evaluator for GpuEvaluator {
    fn adapter_failure(&self) -> Option<String> {
        self.failure()
    }

    fn accelerated_calls(&self) -> u64 {
        self.answered()
    }

    fn routing_report(&self) -> String {
        self.routing.report()
    }

    fn name(&self) -> String {
        match self.failure() {
            None => format!("gpu: {}", self.adapter.name),
            Some(why) => format!(
                "cpu (gpu: {} failed: {})",
                self.adapter.name,
                why.lines().next().unwrap_or("")
            ),
        }
    }

    fn first_fit(&self, occ: &Occupancy, part: &PartRaster, bounds: Bounds) -> Option<(i32, i32)> {
        self.first_fits(
            occ,
            &[Candidate {
                raster: part,
                bounds,
            }],
        )[0]
    }

    fn first_fits(&self, occ: &Occupancy, candidates: &[Candidate]) -> Vec<Option<(i32, i32)>> {
        self.answer(
            Call::FirstFits,
            candidate_work(candidates),
            || self.gpu_first_fits(occ, candidates),
            || self.cpu.first_fits(occ, candidates),
        )
    }

    fn occupancy_overlap_maps(&self, occ: &Occupancy, candidates: &[Candidate]) -> Vec<Vec<u32>> {
        self.answer(
            Call::OverlapMaps,
            candidate_work(candidates),
            || self.gpu_overlap_maps(occ, candidates),
            || self.cpu.occupancy_overlap_maps(occ, candidates),
        )
    }

    fn weighted_overlap_maps(&self, others: &[Placed], candidates: &[Candidate]) -> Vec<Vec<u64>> {
        // lines cost the CPU no table (trapezoid scans); the GPU must build one over every
        // placed raster first: they are a kind of call of their own
        let call = if candidates.iter().all(Candidate::is_line) {
            Call::WeightedLines
        } else {
            Call::WeightedMaps
        };
        self.answer(
            call,
            candidate_work(candidates),
            || self.gpu_weighted_maps(others, candidates),
            || self.cpu.weighted_overlap_maps(others, candidates),
        )
    }

    fn best_on_lines(&self, scene: &[Shape], movers: &[Mover]) -> Vec<Vec<Option<LineBest>>> {
        // the line shader sums cells over all shapes at once; another measure needs each
        // shape's cells on their own, which only the CPU twin computes (the same answers)
        if movers.iter().any(|m| m.measure != OverlapMeasure::Cells) {
            return self.cpu.best_on_lines(scene, movers);
        }
        self.answer(
            Call::Lines,
            line_work(scene, movers),
            || self.gpu_best_on_lines(scene, movers),
            || self.cpu.best_on_lines(scene, movers),
        )
    }

    fn overlap_line(
        &self,
        part: &PartRaster,
        axis: Axis,
        fixed: i32,
        range: (i32, i32),
        others: &[Placed],
    ) -> Vec<u64> {
        // single lines are too little work for a dispatch: the CPU twin (same integers)
        self.cpu.overlap_line(part, axis, fixed, range, others)
    }
}
