//! `kerf nest`: one nest from DXF files, no server.

use crate::geometry::{import_dxf, import_dxf_sheet, ImportOptions};
use crate::nest2d::{
    self, BlockMode, CancelHandle, CommonCutting, CutImportance, FillAngle, PartSpec, Problem,
    Settings, SheetShape, SheetSpec,
};
use anyhow::{anyhow, bail, Context, Result};

/// Splits `VALUE[:QTY]`; the quantity must be a positive integer.
fn with_qty(arg: &str, what: &str) -> Result<(String, Option<u32>)> {
    match arg.rsplit_once(':') {
        Some((v, q)) if !q.is_empty() && q.chars().all(|c| c.is_ascii_digit()) => {
            let n: u32 = q
                .parse()
                .map_err(|_| anyhow!("{what} '{arg}': quantity '{q}' is not a whole number"))?;
            if n == 0 {
                bail!("{what} '{arg}': quantity must be at least 1");
            }
            Ok((v.to_string(), Some(n)))
        }
        _ => Ok((arg.to_string(), None)),
    }
}

/// Parses `--common-cut MODE[:GAP]`: every part may share edges, importance High.
pub fn common_cutting(arg: &str) -> Result<CommonCutting> {
    let (mode, gap) = arg.split_once(':').unwrap_or((arg, "0"));
    let mode = match crate::lenient::enum_key(mode).as_str() {
        "pairs" => BlockMode::Pairs,
        "chains" => BlockMode::Chains,
        "grid" => BlockMode::Grid,
        _ => bail!("--common-cut '{arg}': the mode is pairs, chains or grid"),
    };
    let gap: f64 = gap
        .parse()
        .ok()
        .filter(|g: &f64| *g >= 0.0 && g.is_finite())
        .ok_or_else(|| {
            anyhow!("--common-cut '{arg}': the gap is a number of millimetres, 0 or more")
        })?;
    Ok(CommonCutting::new(mode, CutImportance::High, gap))
}

/// Parses `--rotation`: Any (90-degree steps), None, Rotate90, Rotate180, or a step in degrees.
pub fn rotations(spec: &str) -> Result<Vec<f64>> {
    crate::nest2d::rotation_set(spec, 90.0).map_err(|why| anyhow!("--rotation '{spec}': {why}"))
}

pub struct NestArgs {
    pub parts: Vec<String>,
    pub sheets: Vec<String>,
    pub sheet_dxfs: Vec<String>,
    pub spacing: f64,
    pub time: f64,
    pub seed: u64,
    pub rotation: String,
    /// AllowableTilt in degrees (0: none).
    pub tilt: f64,
    /// NestingAngleDegrees (0: the plain fill).
    pub angle: f64,
    /// Common-line cutting for every part: MODE[:GAP] (pairs, chains, grid).
    pub common_cut: Option<String>,
    /// CommonCutMaxBlockSize for every part (0: the importance's).
    pub cut_block: u32,
    pub out: std::path::PathBuf,
    pub svg: Option<std::path::PathBuf>,
    pub png: Option<std::path::PathBuf>,
    /// The evaluation backend (None: KERF_COMPUTE, else auto).
    pub compute: Option<String>,
}

pub fn run(a: NestArgs) -> Result<()> {
    if a.parts.is_empty() {
        bail!("give at least one --part FILE[:QTY]");
    }
    if a.sheets.is_empty() && a.sheet_dxfs.is_empty() {
        bail!("give at least one --sheet WxH[:QTY] or --sheet-dxf FILE[:QTY]");
    }
    if !(a.spacing >= 0.0 && a.spacing.is_finite()) {
        bail!("--spacing must be a non-negative number of millimetres");
    }
    if !(a.time > 0.0 && a.time.is_finite()) {
        bail!("--time must be a positive number of seconds");
    }
    let rot = crate::nest2d::tilted(&rotations(&a.rotation)?, a.tilt)
        .map_err(|why| anyhow!("--tilt {why}"))?;
    let fill_angle = FillAngle::new(a.angle).map_err(|why| anyhow!("--angle {why}"))?;
    let common_cutting = a.common_cut.as_deref().map(common_cutting).transpose()?;
    let opts = ImportOptions::default();
    let mut parts = Vec::new();
    for arg in &a.parts {
        let (file, qty) = with_qty(arg, "--part")?;
        let bytes =
            std::fs::read(&file).with_context(|| format!("--part {file}: cannot read the file"))?;
        let name = std::path::Path::new(&file)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or(file.clone());
        let imported = import_dxf(&name, &bytes, &opts).map_err(|e| anyhow!("--part {e}"))?;
        for w in &imported.warnings {
            eprintln!("warning: {w}");
        }
        for p in imported.parts {
            parts.push(PartSpec {
                rotations: rot.clone(),
                common_cut: common_cutting.is_some().then_some(a.cut_block),
                ..PartSpec::new(&p.name, p.geometry, qty.unwrap_or(1))
            });
        }
    }
    let mut sheets = Vec::new();
    for arg in &a.sheets {
        let (dims, qty) = with_qty(arg, "--sheet")?;
        let (w, h) = dims
            .split_once(['x', 'X'])
            .and_then(|(w, h)| Some((w.trim().parse::<f64>().ok()?, h.trim().parse::<f64>().ok()?)))
            .filter(|(w, h)| *w > 0.0 && *h > 0.0 && w.is_finite() && h.is_finite())
            .ok_or_else(|| {
                anyhow!(
                    "--sheet '{arg}': expected WIDTHxHEIGHT in millimetres, for example 3000x1500"
                )
            })?;
        let mut s = SheetSpec::rectangle(&format!("{w}x{h}"), w, h);
        s.quantity = qty;
        sheets.push(s);
    }
    for arg in &a.sheet_dxfs {
        let (file, qty) = with_qty(arg, "--sheet-dxf")?;
        let bytes = std::fs::read(&file)
            .with_context(|| format!("--sheet-dxf {file}: cannot read the file"))?;
        let (shape, warnings) =
            import_dxf_sheet(&file, &bytes, &opts).map_err(|e| anyhow!("--sheet-dxf {e}"))?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        // put the outline's box at the origin
        let b = shape.bbox();
        let shape = shape.translate(-b.min.x, -b.min.y);
        let mut s = SheetSpec::rectangle(&file, b.width(), b.height());
        s.shape = SheetShape::Outline(shape);
        s.quantity = qty;
        sheets.push(s);
    }
    let settings = Settings {
        part_spacing: a.spacing,
        max_run_time_s: a.time,
        seed: a.seed,
        fill_angle,
        common_cutting,
        ..Default::default()
    };
    let problem = Problem {
        parts,
        sheets,
        settings,
    };
    let eval = super::choose_compute(a.compute.as_deref())?;
    let result = nest2d::nest(&problem, eval.as_ref(), &CancelHandle::default(), &|_| {})
        .map_err(|e| anyhow!("{e}"))?;

    println!(
        "{:<6} {:<24} {:>5} {:>7} {:>8} {:>12}",
        "layout", "sheet", "times", "parts", "util %", "used length"
    );
    for (i, l) in result.layouts.iter().enumerate() {
        println!(
            "{:<6} {:<24} {:>5} {:>7} {:>8.2} {:>12.2}",
            i + 1,
            problem.sheets[l.sheet].id,
            l.multiplicity,
            l.placements.len(),
            l.utilisation,
            l.used_length
        );
    }
    if problem.settings.common_cutting.is_some() {
        let cuts: usize = result
            .layouts
            .iter()
            .map(|l| l.multiplicity as usize * l.common_cuts.len())
            .sum();
        let travel: f64 = result
            .layouts
            .iter()
            .map(|l| l.multiplicity as f64 * nest2d::cut_length(&problem, l))
            .sum();
        println!("common cuts {cuts}  cut length {travel:.1} mm");
    }
    let st = &result.stats;
    println!(
        "sheets {}  parts placed {}/{}  utilisation {:.2} %  {:.1} s  engine {}",
        st.sheets_used,
        st.parts_placed,
        st.parts_requested,
        st.utilisation,
        st.elapsed_s,
        result.engine
    );
    for u in &result.unplaced {
        println!(
            "unplaced: {} x{}: {}",
            problem.parts[u.part].id, u.quantity, u.reason
        );
    }
    // the same machine-readable layout the service stores (the Result export)
    let json = crate::wire::results::layout(&problem, &result, "", "");
    std::fs::write(&a.out, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("--out {}: cannot write", a.out.display()))?;
    use crate::export::render::{render, RenderFormat, RenderOptions};
    for (path, format, flag) in [
        (&a.svg, RenderFormat::Svg, "--svg"),
        (&a.png, RenderFormat::Png, "--png"),
    ] {
        if let Some(path) = path {
            let options = RenderOptions {
                format,
                ..Default::default()
            };
            let picture = render(&problem, &result.layouts, &options)?;
            std::fs::write(path, picture.bytes)
                .with_context(|| format!("{flag} {}: cannot write", path.display()))?;
        }
    }
    Ok(())
}
