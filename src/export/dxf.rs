//! DXF of a result (DXFExportSettings): the placed parts' exact outlines, written by the `dxf`
//! crate in the requested version, as closed polylines, as exploded lines, or as one block per
//! part inserted at each placement; with part labels, nest statistics and sheet boundaries on
//! their own layers when asked. One drawing for every layout, or one per distinct layout, or
//! one per physical sheet.

use super::common_edges::{without_cut_edges, Path};
use super::remnants::Remnant;
use crate::geometry::{Affine, Point, Shape};
use crate::nest2d::verify::{nesting_geometry, PlacedShape};
use crate::nest2d::{placed_shapes, CommonCut, Problem, SheetLayout};
use dxf::entities::{Entity, EntityType, Insert, Line, LwPolyline, Polyline, Text, Vertex};
use dxf::enums::AcadVersion;
use dxf::tables::Layer;
use dxf::{Block, Drawing, LwPolylineVertex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SheetFiles {
    /// Every distinct layout once, side by side along X.
    AllInOne,
    /// One drawing per physical sheet (a layout cut 3 times gives 3 files).
    PerSheet,
    /// One drawing per distinct layout.
    PerUniqueSheet,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopDirection {
    /// As kerf keeps them: outlines counter-clockwise, holes clockwise.
    Unchanged,
    Clockwise,
    CounterClockwise,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structure {
    Polylines,
    /// Each edge a LINE.
    Exploded,
    /// A block per part, INSERTed at each placement.
    Blocks,
}

/// DXFExportSettings, parsed (`wire::exports`).
#[derive(Clone, Debug, PartialEq)]
pub struct DxfOptions {
    pub version: AcadVersion,
    /// True: a zip of DXF files even when there is one.
    pub zip: bool,
    pub sheet_files: SheetFiles,
    pub outer: LoopDirection,
    pub inner: LoopDirection,
    pub structure: Structure,
    pub part_labels: bool,
    /// Millimetres; None: sized to each part.
    pub label_height: Option<f64>,
    pub statistics: bool,
    pub sheet_boundaries: bool,
    /// Some: every part on this layer; None: a layer per part identifier.
    pub parts_layer: Option<String>,
    pub sheets_layer: String,
    /// Where parts touch along an edge, it is written once (the later part's rings open).
    pub remove_common_edges: bool,
    /// The whole nest turned by this many degrees counter-clockwise about the origin.
    pub angle_ccw: f64,
    /// File name without extension (folders are the caller's business).
    pub file_stem: String,
    pub append_dimensions: bool,
    pub append_quantity: bool,
    pub append_sheet_id: bool,
}

impl Default for DxfOptions {
    fn default() -> Self {
        DxfOptions {
            version: AcadVersion::R2000,
            zip: false,
            sheet_files: SheetFiles::AllInOne,
            outer: LoopDirection::Unchanged,
            inner: LoopDirection::Unchanged,
            structure: Structure::Polylines,
            part_labels: false,
            label_height: None,
            statistics: false,
            sheet_boundaries: false,
            parts_layer: None,
            sheets_layer: "SHEETS".into(),
            remove_common_edges: false,
            angle_ccw: 0.0,
            file_stem: "nest".into(),
            append_dimensions: false,
            append_quantity: false,
            append_sheet_id: false,
        }
    }
}

/// Edges of two parts closer than this (mm) to one line, and overlapping by more, are one
/// common edge (RemoveCommonEdges): far below any cutter's kerf.
const COMMON_EDGE_TOLERANCE: f64 = 1e-3;

/// The layer common cuts are written on (with RemoveCommonEdges).
const COMMON_CUT_LAYER: &str = "COMMON_CUTS";

/// The DESIGN 5.1 index of a version written (the responses' numeric DXFVersion): R12 0,
/// R2000 1, R2004 2, R2007 3, R2010 4, R2013 5, R2018 6.
pub fn version_index(version: AcadVersion) -> u32 {
    match version {
        AcadVersion::R12 => 0,
        AcadVersion::R2004 => 2,
        AcadVersion::R2007 => 3,
        AcadVersion::R2010 => 4,
        AcadVersion::R2013 => 5,
        AcadVersion::R2018 => 6,
        _ => 1,
    }
}

/// One written file.
pub struct DxfFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Remnants to draw with the nest (IncludeRemnantsInExportedNests), on their own layer.
#[derive(Clone, Copy)]
pub struct RemnantLayer<'a> {
    pub remnants: &'a [Remnant],
    pub layer: &'a str,
}

/// A layout drawn in a file: its index, its X offset, and which physical copy it is (one file
/// per sheet) or None (it stands for all its copies).
type Drawn = (usize, f64, Option<u32>);

/// The DXF files of `layouts` per `options`, with `remnants` on their layer when given.
pub fn export(
    problem: &Problem,
    layouts: &[SheetLayout],
    remnants: Option<RemnantLayer>,
    options: &DxfOptions,
) -> Result<Vec<DxfFile>, String> {
    // which layouts go in which file, each at an X offset
    // (the names of the files holding one drawing, the layouts drawn in it)
    let mut files: Vec<(Vec<String>, Vec<Drawn>)> = Vec::new();
    match options.sheet_files {
        SheetFiles::AllInOne => {
            let gap = layouts
                .iter()
                .map(|l| problem.sheets[l.sheet].extent().0)
                .fold(0.0, f64::max)
                * 0.1;
            let mut x = 0.0;
            let mut placed = Vec::new();
            for (k, l) in layouts.iter().enumerate() {
                placed.push((k, x, None));
                x += problem.sheets[l.sheet].extent().0 + gap;
            }
            files.push((vec![options.file_stem.clone()], placed));
        }
        SheetFiles::PerUniqueSheet => {
            for (k, l) in layouts.iter().enumerate() {
                files.push((
                    vec![file_name(problem, l, k, None, options)],
                    vec![(k, 0.0, None)],
                ));
            }
        }
        SheetFiles::PerSheet => {
            for (k, l) in layouts.iter().enumerate() {
                // the copies of a layout are one drawing, but for the last copy when it alone
                // has (final-sheet-only) remnants
                let names: Vec<String> = (0..l.multiplicity)
                    .map(|copy| file_name(problem, l, k, Some(copy), options))
                    .collect();
                let last = l.multiplicity.saturating_sub(1);
                let last_differs = last > 0
                    && remnants.is_some_and(|g| {
                        g.remnants.iter().any(|r| r.layout == k && r.last_copy_only)
                    });
                if last_differs {
                    let (others, final_copy) = names.split_at(last as usize);
                    files.push((others.to_vec(), vec![(k, 0.0, Some(0))]));
                    files.push((final_copy.to_vec(), vec![(k, 0.0, Some(last))]));
                } else {
                    files.push((names, vec![(k, 0.0, Some(last))]));
                }
            }
        }
    }
    // each drawing is made and written once, then named once per file that holds it
    let mut out = Vec::new();
    for (names, placed) in files {
        let bytes = saved(drawing(problem, layouts, &placed, remnants, options))?;
        out.extend(names.into_iter().map(|name| DxfFile {
            name: format!("{name}.dxf"),
            bytes: bytes.clone(),
        }));
    }
    Ok(out)
}

fn file_name(
    problem: &Problem,
    l: &SheetLayout,
    k: usize,
    copy: Option<u32>,
    options: &DxfOptions,
) -> String {
    let mut name = format!("{}_{}", options.file_stem, k + 1);
    if let Some(c) = copy {
        name.push_str(&format!("_{}", c + 1));
    }
    let sheet = &problem.sheets[l.sheet];
    if options.append_sheet_id {
        name.push_str(&format!("_{}", safe_name(&sheet.id)));
    }
    if options.append_dimensions {
        let (w, h) = sheet.extent();
        name.push_str(&format!("_{}x{}", round_mm(w), round_mm(h)));
    }
    if options.append_quantity {
        name.push_str(&format!("_x{}", l.multiplicity));
    }
    name
}

fn round_mm(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    format!("{r}")
}

/// A name safe for files, layers and blocks: letters, digits, `-` and `_` kept, the rest `_`.
fn safe_name(s: &str) -> String {
    let n: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() {
        "_".into()
    } else {
        n
    }
}

fn layer_of_part(problem: &Problem, part: usize, options: &DxfOptions) -> String {
    match &options.parts_layer {
        Some(l) => l.clone(),
        None => format!("PART_{}", safe_name(&problem.parts[part].id)),
    }
}

/// R12 drawings are written without handles ($HANDLING 0; R12 makes them optional): the `dxf`
/// crate gives a POLYLINE inside a block no handle for its SEQEND, and writes "0" for each.
fn no_r12_handles(d: &mut Drawing) {
    if d.header.version < AcadVersion::R13 {
        d.header.handles_enabled = false;
    }
}

/// The drawing as DXF bytes (R12: with R12 names and without subclass markers).
fn saved(mut drawing: Drawing) -> Result<Vec<u8>, String> {
    if drawing.header.version < AcadVersion::R13 {
        with_r12_names(&mut drawing);
    }
    let mut bytes = Vec::new();
    drawing
        .save(&mut bytes)
        .map_err(|e| format!("writing the DXF: {e}"))?;
    if drawing.header.version < AcadVersion::R13 {
        bytes = without_subclass_markers(&bytes)?;
    }
    Ok(bytes)
}

/// Layer and block names as R12 takes them: at most 31 characters from A-Z, 0-9, `_`, `$`
/// and `-` (R12 folds case). A name that had other characters or was longer is cut to 26 and
/// given `_` and four hex digits of a hash of the whole name, so distinct names stay distinct.
fn r12_name(name: &str) -> String {
    let upper = name.to_uppercase();
    let safe: String = upper
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_$-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == upper && safe.len() <= 31 && !safe.is_empty() {
        return safe;
    }
    // FNV-1a: stable across builds and platforms
    let hash = name.bytes().fold(0x811c9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x01000193)
    });
    let head: String = safe.chars().take(26).collect();
    format!("{head}_{:04X}", hash & 0xFFFF)
}

/// Every layer and block name of `d` (tables, entities, blocks, inserts) made an R12 name.
fn with_r12_names(d: &mut Drawing) {
    for l in d.layers_mut() {
        l.name = r12_name(&l.name);
    }
    let fix = |e: &mut Entity| {
        e.common.layer = r12_name(&e.common.layer);
        if let EntityType::Insert(i) = &mut e.specific {
            i.name = r12_name(&i.name);
        }
    };
    for e in d.entities_mut() {
        fix(e);
    }
    for b in d.blocks_mut() {
        b.name = r12_name(&b.name);
        b.layer = r12_name(&b.layer);
        b.entities.iter_mut().for_each(fix);
    }
}

/// An ASCII DXF without its subclass markers (group code 100). The `dxf` crate writes them
/// in the TABLES section whatever the version, but R12 has none, and R12 readers (ezdxf's
/// among them) refuse a table record that has them. Removing every code-100 pair is exact for
/// R12: no R12 group uses the code.
fn without_subclass_markers(dxf: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(dxf).map_err(|e| format!("writing the DXF: {e}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for pair in lines.chunks(2) {
        if pair[0].trim() == "100" {
            continue;
        }
        for line in pair {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    Ok(out.into_bytes())
}

/// The drawing of the layouts `placed`.
fn drawing(
    problem: &Problem,
    layouts: &[SheetLayout],
    placed: &[Drawn],
    remnants: Option<RemnantLayer>,
    options: &DxfOptions,
) -> Drawing {
    let mut d = Drawing::new();
    d.header.version = options.version;
    no_r12_handles(&mut d);
    d.header.default_drawing_units = dxf::enums::Units::Millimeters;
    // exact at multiples of 90 degrees
    let turn = Affine::rotate_deg(options.angle_ccw);
    let mut layers: Vec<String> = Vec::new();
    let mut use_layer = |d: &mut Drawing, name: &str| {
        if !layers.iter().any(|l| l == name) {
            layers.push(name.to_string());
            d.add_layer(Layer {
                name: name.to_string(),
                ..Default::default()
            });
        }
    };
    // blocks: one per part type used, in the part's own frame
    if options.structure == Structure::Blocks {
        let mut used: Vec<usize> = placed
            .iter()
            .flat_map(|&(k, _, _)| layouts[k].placements.iter().map(|p| p.part))
            .collect();
        used.sort_unstable();
        used.dedup();
        for part in used {
            let layer = layer_of_part(problem, part, options);
            use_layer(&mut d, &layer);
            let mut block = Block {
                name: block_name(problem, part),
                layer: layer.clone(),
                ..Default::default()
            };
            for shape in nesting_geometry(problem, part).components() {
                for ring in rings(shape, options) {
                    block.entities.push(polyline(&mut d, &ring, &layer));
                }
            }
            d.add_block(block);
        }
    }
    for &(k, x_off, copy) in placed {
        let l = &layouts[k];
        let sheet = &problem.sheets[l.sheet];
        let at = |p: Point| turn.apply(Point::new(p.x + x_off, p.y));
        // a final-sheet-only remnant is on the last copy of its layout
        let on_this_copy = |r: &Remnant| {
            r.layout == k && (!r.last_copy_only || copy.is_none_or(|c| c + 1 == l.multiplicity))
        };
        for (r, layer) in remnants.iter().flat_map(|g| {
            g.remnants
                .iter()
                .filter(|r| on_this_copy(r))
                .map(|r| (r, g.layer))
        }) {
            use_layer(&mut d, layer);
            for ring in rings(&r.shape, options) {
                let ring: Vec<Point> = ring.iter().map(|&p| at(p)).collect();
                let e = polyline(&mut d, &ring, layer);
                d.add_entity(e);
            }
        }
        if options.sheet_boundaries {
            use_layer(&mut d, &options.sheets_layer);
            let outline = sheet.material();
            for ring in outline.rings() {
                let ring: Vec<Point> = ring.iter().map(|&p| at(p)).collect();
                let e = polyline(&mut d, &ring, &options.sheets_layer);
                d.add_entity(e);
            }
        }
        if options.statistics {
            use_layer(&mut d, "STATISTICS");
            let (w, h) = sheet.extent();
            let text = format!(
                "{} layout {} x{}: {} parts, {:.1} % ({} x {} mm)",
                sheet.id,
                k + 1,
                l.multiplicity,
                l.placements.len(),
                l.utilisation,
                round_mm(w),
                round_mm(h)
            );
            let height = (h * 0.02).max(1.0);
            d.add_entity(text_entity(
                at(Point::new(0.0, h + height)),
                height,
                options.angle_ccw,
                &text,
                "STATISTICS",
            ));
        }
        let shapes = placed_shapes(problem, l);
        let part_paths = if options.structure == Structure::Blocks {
            vec![Vec::new(); shapes.len()] // blocks hold the outlines
        } else {
            paths_of(&shapes, &l.common_cuts, cut_gap(problem), options)
        };
        // with RemoveCommonEdges each common cut is drawn once, as a line of its own (the
        // parts' edges along it were taken out above)
        if options.remove_common_edges && options.structure != Structure::Blocks {
            for c in &l.common_cuts {
                use_layer(&mut d, COMMON_CUT_LAYER);
                let (a, b) = (at(c.from), at(c.to));
                let mut e = Entity::new(EntityType::Line(Line::new(
                    dxf::Point::new(a.x, a.y, 0.0),
                    dxf::Point::new(b.x, b.y, 0.0),
                )));
                e.common.layer = COMMON_CUT_LAYER.into();
                d.add_entity(e);
            }
        }
        for ((p, shape), paths) in l.placements.iter().zip(shapes).zip(part_paths) {
            let layer = layer_of_part(problem, p.part, options);
            use_layer(&mut d, &layer);
            match options.structure {
                Structure::Blocks => {
                    let location = at(Point::new(p.x, p.y));
                    let insert = Insert {
                        name: block_name(problem, p.part),
                        location: dxf::Point::new(location.x, location.y, 0.0),
                        x_scale_factor: if p.mirrored { -1.0 } else { 1.0 },
                        y_scale_factor: 1.0,
                        z_scale_factor: 1.0,
                        rotation: p.rotation + options.angle_ccw,
                        ..Default::default()
                    };
                    let mut e = Entity::new(EntityType::Insert(insert));
                    e.common.layer = layer.clone();
                    d.add_entity(e);
                }
                Structure::Polylines | Structure::Exploded => {
                    for path in paths {
                        let (points, closed) = match path {
                            Path::Closed(r) => (r, true),
                            Path::Open(r) => (r, false),
                        };
                        let points: Vec<Point> = points.iter().map(|&q| at(q)).collect();
                        if options.structure == Structure::Exploded {
                            let n = points.len();
                            let segments = if closed { n } else { n - 1 };
                            for i in 0..segments {
                                let (a, b) = (points[i], points[(i + 1) % n]);
                                let mut e = Entity::new(EntityType::Line(Line::new(
                                    dxf::Point::new(a.x, a.y, 0.0),
                                    dxf::Point::new(b.x, b.y, 0.0),
                                )));
                                e.common.layer = layer.clone();
                                d.add_entity(e);
                            }
                        } else {
                            let e = polyline_of(&mut d, &points, closed, &layer);
                            d.add_entity(e);
                        }
                    }
                }
            }
            if options.part_labels {
                let b = shape.geometry.bbox();
                let text = &problem.parts[p.part].id;
                if let Some((spot, size, upright)) = super::render::label_spot(
                    &b,
                    shape.geometry.components(),
                    text,
                    options.label_height,
                    1.0,
                    0.0,
                    f64::INFINITY,
                ) {
                    use_layer(&mut d, "LABELS");
                    let angle = options.angle_ccw + if upright { 90.0 } else { 0.0 };
                    let mut t = text_entity(at(spot), size, angle, text, "LABELS");
                    if let EntityType::Text(ref mut tx) = t.specific {
                        // centred on the spot
                        tx.horizontal_text_justification =
                            dxf::enums::HorizontalTextJustification::Center;
                        tx.vertical_text_justification =
                            dxf::enums::VerticalTextJustification::Middle;
                        tx.second_alignment_point = tx.location.clone();
                    }
                    d.add_entity(t);
                }
            }
        }
    }
    d
}

/// The gap parts keep along a common cut (0 without common cutting).
fn cut_gap(problem: &Problem) -> f64 {
    problem
        .settings
        .common_cutting
        .as_ref()
        .map_or(0.0, |c| c.gap)
}

/// Each placed part's rings as paths to write: closed, or open where RemoveCommonEdges took
/// out a stretch an earlier part already has, or that lies along a common cut (`cuts`, its
/// parts `gap` apart: the cut is written on its own).
fn paths_of(
    shapes: &[PlacedShape],
    cuts: &[CommonCut],
    gap: f64,
    options: &DxfOptions,
) -> Vec<Vec<Path>> {
    let part_rings: Vec<Vec<Vec<Point>>> = shapes
        .iter()
        .map(|s| {
            s.geometry
                .components()
                .iter()
                .flat_map(|c| rings(c, options))
                .collect()
        })
        .collect();
    if options.remove_common_edges {
        // a part's edge along a cut lies half the gap from it
        let cuts: Vec<(Point, Point)> = cuts.iter().map(|c| (c.from, c.to)).collect();
        let along_cut = COMMON_EDGE_TOLERANCE.max(gap / 2.0 + 1e-6);
        without_cut_edges(&cuts, &part_rings, COMMON_EDGE_TOLERANCE, along_cut)
    } else {
        part_rings
            .into_iter()
            .map(|rings| rings.into_iter().map(Path::Closed).collect())
            .collect()
    }
}

fn block_name(problem: &Problem, part: usize) -> String {
    format!("PART_{}_{}", part + 1, safe_name(&problem.parts[part].id))
}

/// A shape's rings in the requested directions.
fn rings(shape: &Shape, options: &DxfOptions) -> Vec<Vec<Point>> {
    shape
        .rings()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.to_vec();
            let want = if i == 0 { options.outer } else { options.inner };
            // kerf keeps outlines counter-clockwise and holes clockwise
            let ccw = i == 0;
            let flip = match want {
                LoopDirection::Unchanged => false,
                LoopDirection::Clockwise => ccw,
                LoopDirection::CounterClockwise => !ccw,
            };
            if flip {
                r.reverse();
            }
            r
        })
        .collect()
}

/// A closed polyline (see `polyline_of`).
fn polyline(d: &mut Drawing, ring: &[Point], layer: &str) -> Entity {
    polyline_of(d, ring, true, layer)
}

/// A polyline: an LWPOLYLINE from R2000 on; in R12, which has none, a POLYLINE with its
/// VERTEX entities (their handles come from the drawing).
fn polyline_of(d: &mut Drawing, ring: &[Point], closed: bool, layer: &str) -> Entity {
    let specific = if d.header.version < AcadVersion::R2000 {
        let mut p = Polyline::default();
        p.set_is_closed(closed);
        for q in ring {
            p.add_vertex(d, Vertex::new(dxf::Point::new(q.x, q.y, 0.0)));
        }
        EntityType::Polyline(p)
    } else {
        let mut p = LwPolyline::default();
        p.set_is_closed(closed);
        p.vertices = ring
            .iter()
            .map(|q| LwPolylineVertex {
                x: q.x,
                y: q.y,
                ..Default::default()
            })
            .collect();
        EntityType::LwPolyline(p)
    };
    let mut e = Entity::new(specific);
    e.common.layer = layer.to_string();
    e
}

fn text_entity(at: Point, height: f64, angle: f64, value: &str, layer: &str) -> Entity {
    let t = Text {
        location: dxf::Point::new(at.x, at.y, 0.0),
        text_height: height,
        value: value.chars().filter(|c| !c.is_control()).collect(),
        rotation: angle,
        ..Default::default()
    };
    let mut e = Entity::new(EntityType::Text(t));
    e.common.layer = layer.to_string();
    e
}

/// Each part of `problem` alone, in its own frame (as nested, unrotated), as a DXF file per
/// `options` (PartsExport). Returns (part index, file) in part order.
pub fn export_parts(
    problem: &Problem,
    options: &DxfOptions,
) -> Result<Vec<(usize, DxfFile)>, String> {
    (0..problem.parts.len())
        .map(|k| {
            // in the part's own frame: the sheet reaches from the origin to the part's far corner
            let b = nesting_geometry(problem, k).bbox();
            let (alone, layout) = super::part_alone(problem, k, (0.0, 0.0), (b.max.x, b.max.y));
            let one = DxfOptions {
                sheet_files: SheetFiles::AllInOne,
                statistics: false,
                sheet_boundaries: false,
                file_stem: safe_name(&problem.parts[k].id),
                ..options.clone()
            };
            let mut files = export(&alone, &[layout], None, &one)?;
            Ok((k, files.remove(0)))
        })
        .collect()
}

/// Each remnant as a DXF file of its own (RemnantExport): its outline and holes as closed
/// polylines on `layer`, in sheet coordinates (so it can be laid over the nest), in `version`.
/// Named remnant_<layout>_<n>_<sheet>_<width>x<height>.dxf (layout and n counted from 1, the
/// size in whole millimetres).
pub fn export_remnants(
    problem: &Problem,
    layouts: &[SheetLayout],
    remnants: &[Remnant],
    layer: &str,
    version: AcadVersion,
) -> Result<Vec<DxfFile>, String> {
    let mut n = 0;
    let mut previous = usize::MAX;
    remnants
        .iter()
        .map(|r| {
            n = if r.layout == previous { n + 1 } else { 1 };
            previous = r.layout;
            let mut d = Drawing::new();
            d.header.version = version;
            no_r12_handles(&mut d);
            d.header.default_drawing_units = dxf::enums::Units::Millimeters;
            d.add_layer(Layer {
                name: layer.to_string(),
                ..Default::default()
            });
            for ring in r.shape.rings() {
                let e = polyline(&mut d, ring, layer);
                d.add_entity(e);
            }
            let b = r.shape.bbox();
            let sheet = &problem.sheets[layouts[r.layout].sheet];
            let name = format!(
                "remnant_{}_{}_{}_{}x{}.dxf",
                r.layout + 1,
                n,
                safe_name(&sheet.id),
                b.width().round(),
                b.height().round()
            );
            Ok(DxfFile {
                name,
                bytes: saved(d)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::r12_name;

    #[test]
    fn r12_names_are_short_plain_and_distinct() {
        assert_eq!(r12_name("PART_part-1"), "PART_PART-1");
        assert_eq!(r12_name("REMNANTS"), "REMNANTS");
        let spaced = r12_name("Off cuts é");
        assert!(
            spaced.starts_with("OFF_CUTS__") && spaced.len() <= 31,
            "{spaced}"
        );
        let long_a = r12_name(&format!("PART_{}", "a".repeat(40)));
        let long_b = r12_name(&format!("PART_{}b", "a".repeat(39)));
        assert!(long_a.len() <= 31 && long_b.len() <= 31);
        assert_ne!(long_a, long_b, "names cut to the same head stay apart");
        assert!(long_a
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_$-".contains(c)));
    }
}
