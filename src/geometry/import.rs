//! Import entry points: DXF, JSON contours and parametric shapes, each turned into parts
//! (one or more outlines with holes, in millimetres) after units, scale and initial rotation.

use super::curve::{Piece, Side};
use super::dxf_import;
use super::error::ImportError;
use super::loops::{chain, nest_loops, outline_to_shape, Loop, Outline};
use super::primitives::{Affine, BBox, Point};
use super::shape::Shape;
use super::units::Units;
use crate::lenient::scale_or_one;

/// One rule of CutLayers / AttachLayers / IgnoreLayers: every field given must match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerRule {
    pub layer_name: Option<String>,
    pub colour_rgb: Option<u32>,
    pub line_type: Option<String>,
}

impl LayerRule {
    pub fn matches(&self, layer: &str, rgb: u32, line_type: &str) -> bool {
        let any =
            self.layer_name.is_some() || self.colour_rgb.is_some() || self.line_type.is_some();
        any && self
            .layer_name
            .as_ref()
            .is_none_or(|n| n.eq_ignore_ascii_case(layer))
            && self.colour_rgb.is_none_or(|c| c == rgb)
            && self
                .line_type
                .as_ref()
                .is_none_or(|l| l.eq_ignore_ascii_case(line_type))
    }
}

/// How to read geometry (the engine's view of ImportSettings).
#[derive(Clone, Debug)]
pub struct ImportOptions {
    pub units: Units,
    /// Coordinates are multiplied by to_scale / from_scale after unit conversion.
    pub from_scale: f64,
    pub to_scale: f64,
    pub initial_rotation_deg: f64,
    /// Loose ends closer than this (mm) are joined into loops. CAD exports leave gaps of a
    /// hundredth or so (`part_4.dxf` from DeepNestSharp: 0.0139 mm, which a default of 0.01
    /// refused, with no setting anywhere to loosen it). Not looser: at the chord tolerance
    /// (0.05) the same file fails with "zero area" (it has segments 0.01 to 0.05 long, which
    /// presumably close loops early: measured, not traced).
    pub chain_tolerance: f64,
    /// Maximum deviation (mm) of flattened curves from the true curve.
    pub chord_tolerance: f64,
    pub use_all_parts_in_file: bool,
    pub cut_layers: Vec<LayerRule>,
    pub attach_layers: Vec<LayerRule>,
    pub ignore_layers: Vec<LayerRule>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            units: Units::FromFile,
            from_scale: 1.0,
            to_scale: 1.0,
            initial_rotation_deg: 0.0,
            chain_tolerance: 0.02,
            chord_tolerance: 0.05,
            use_all_parts_in_file: false,
            cut_layers: vec![],
            attach_layers: vec![],
            ignore_layers: vec![],
        }
    }
}

/// A part's geometry: one or more outlines (with holes) that move together.
#[derive(Clone, Debug, PartialEq)]
pub struct PartGeometry {
    components: Vec<Shape>,
    /// The length of every outline and hole as drawn (arcs as arcs): the polygons above are
    /// conservative flattenings, a little longer than the true curves.
    cut_length: f64,
}

impl PartGeometry {
    /// `components` must not be empty. Its cut length is the polygons' perimeter (exact for
    /// parts drawn as polygons; an import that knows the true curves sets it with
    /// `with_cut_length`).
    pub fn new(components: Vec<Shape>) -> PartGeometry {
        assert!(!components.is_empty(), "a part has at least one outline");
        let cut_length = components.iter().map(Shape::perimeter).sum();
        PartGeometry {
            components,
            cut_length,
        }
    }
    pub fn single(shape: Shape) -> PartGeometry {
        PartGeometry::new(vec![shape])
    }
    /// The same geometry whose outlines and holes, as drawn, are `length` long.
    pub fn with_cut_length(mut self, length: f64) -> PartGeometry {
        self.cut_length = length;
        self
    }
    /// The length of every outline and hole as drawn (what cutting the part travels).
    pub fn cut_length(&self) -> f64 {
        self.cut_length
    }
    pub fn components(&self) -> &[Shape] {
        &self.components
    }
    pub fn area(&self) -> f64 {
        self.components.iter().map(|s| s.area()).sum()
    }
    pub fn hole_count(&self) -> usize {
        self.components.iter().map(|s| s.holes().len()).sum()
    }
    pub fn bbox(&self) -> BBox {
        BBox::of(
            self.components
                .iter()
                .flat_map(|s| s.outer().iter().copied()),
        )
    }
    pub fn vertex_count(&self) -> usize {
        self.components.iter().map(|s| s.vertex_count()).sum()
    }
    pub fn transformed(&self, t: &Affine) -> PartGeometry {
        PartGeometry {
            components: self.components.iter().map(|s| s.transformed(t)).collect(),
            // lengths scale by sqrt|det| under a similarity (placements are rigid: unchanged)
            cut_length: self.cut_length * t.det().abs().sqrt(),
        }
    }
    /// The outlines alone (for nesting, where holes are not used). The cut length stays the
    /// part's own: the holes are still cut.
    pub fn without_holes(&self) -> PartGeometry {
        PartGeometry {
            components: self.components.iter().map(|s| s.without_holes()).collect(),
            cut_length: self.cut_length,
        }
    }
}

/// One imported part.
#[derive(Clone, Debug)]
pub struct ImportedPart {
    pub name: String,
    pub geometry: PartGeometry,
    /// Attached (non-cut) geometry such as engraving, as open polylines in the part's frame.
    pub marks: Vec<Vec<Point>>,
}

#[derive(Clone, Debug, Default)]
pub struct Imported {
    pub parts: Vec<ImportedPart>,
    pub warnings: Vec<String>,
}

/// Imports a DXF file as parts (material grows under flattening).
pub fn import_dxf(
    source_name: &str,
    bytes: &[u8],
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let c = collect_dxf(source_name, bytes, opts)?;
    let (mm, warnings, cut, attach) = c;
    build_parts(source_name, cut, attach, mm, opts, Side::Grow, warnings)
}

/// Imports a DXF file as a sheet: the largest outline is the sheet, holes in it are defects.
/// Flattening errs towards less usable area.
pub fn import_dxf_sheet(
    source_name: &str,
    bytes: &[u8],
    opts: &ImportOptions,
) -> Result<(Shape, Vec<String>), ImportError> {
    let (mm, warnings, cut, _attach) = collect_dxf(source_name, bytes, opts)?;
    let mut o = opts.clone();
    o.use_all_parts_in_file = true;
    let imported = build_parts(source_name, cut, vec![], mm, &o, Side::Shrink, warnings)?;
    largest_as_sheet(source_name, imported)
}

fn largest_as_sheet(
    source_name: &str,
    mut imported: Imported,
) -> Result<(Shape, Vec<String>), ImportError> {
    imported
        .parts
        .sort_by(|a, b| b.geometry.area().total_cmp(&a.geometry.area()));
    let extra = imported.parts.len().saturating_sub(1);
    if extra > 0 {
        imported.warnings.push(format!("{source_name}: {extra} outline(s) outside the largest one ignored; the largest outline is the sheet"));
    }
    let first = imported
        .parts
        .into_iter()
        .next()
        .ok_or(ImportError::Empty {
            source_name: source_name.into(),
            detail: String::new(),
        })?;
    Ok((first.geometry.components()[0].clone(), imported.warnings))
}

type CollectedDxf = (f64, Vec<String>, Vec<Piece>, Vec<Piece>);

fn collect_dxf(
    source_name: &str,
    bytes: &[u8],
    opts: &ImportOptions,
) -> Result<CollectedDxf, ImportError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ImportError::Empty {
            source_name: source_name.into(),
            detail: ": the file is empty".into(),
        });
    }
    let drawing = dxf_import::load(bytes).map_err(|reason| ImportError::Unreadable {
        source_name: source_name.into(),
        reason,
    })?;
    let c = dxf_import::collect(&drawing, opts);
    let mut warnings = Vec::new();
    let mut skipped = c.skipped.clone();
    for (name, n) in raw_entity_counts(bytes) {
        if !KNOWN_TO_READER.contains(&name.as_str()) {
            *skipped.entry(name).or_default() += n;
        }
    }
    if !skipped.is_empty() {
        let list: Vec<String> = skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
        warnings.push(format!(
            "{source_name}: skipped entities that are not cut geometry: {}",
            list.join(", ")
        ));
    }
    if !c.unassigned_layers.is_empty() {
        let list: Vec<String> = c.unassigned_layers.keys().cloned().collect();
        warnings.push(format!(
            "{source_name}: geometry on layers not in CutLayers was ignored: {}",
            list.join(", ")
        ));
    }
    if c.paper_space > 0 {
        warnings.push(format!(
            "{source_name}: ignored what paper space (a layout) holds, {} {}: only model space is nested",
            c.paper_space,
            if c.paper_space == 1 { "entity" } else { "entities" }
        ));
    }
    warnings.extend(c.notes.iter().map(|n| format!("{source_name}: {n}")));
    let mm = match opts.units.to_mm() {
        Some(f) => f,
        None => c.file_mm_per_unit,
    };
    if c.cut.is_empty() {
        return Err(nothing_to_cut(source_name, &warnings));
    }
    Ok((mm, warnings, c.cut, c.attach))
}

/// A file with no outline to cut, with what was skipped or ignored in it (the warnings).
fn nothing_to_cut(source_name: &str, warnings: &[String]) -> ImportError {
    let detail = if warnings.is_empty() {
        String::new()
    } else {
        format!("; {}", warnings.join("; "))
    };
    ImportError::Empty {
        source_name: source_name.into(),
        detail,
    }
}

/// Entity types the `dxf` crate parses; anything else in the file is dropped by it, and we
/// report those from a raw scan so the user learns what was not imported.
const KNOWN_TO_READER: &[&str] = &[
    "3DFACE",
    "3DSOLID",
    "ACAD_PROXY_ENTITY",
    "ARC",
    "ARCALIGNEDTEXT",
    "ATTDEF",
    "ATTRIB",
    "BODY",
    "CIRCLE",
    "DIMENSION",
    "ELLIPSE",
    "HELIX",
    "IMAGE",
    "INSERT",
    "LEADER",
    "LIGHT",
    "LINE",
    "LWPOLYLINE",
    "MLINE",
    "MTEXT",
    "OLEFRAME",
    "OLE2FRAME",
    "POINT",
    "POLYLINE",
    "RAY",
    "REGION",
    "RTEXT",
    "SECTION",
    "SEQEND",
    "SHAPE",
    "SOLID",
    "SPLINE",
    "TEXT",
    "TOLERANCE",
    "TRACE",
    "DGNUNDERLAY",
    "DWFUNDERLAY",
    "PDFUNDERLAY",
    "VERTEX",
    "WIPEOUT",
    "XLINE",
    "ENDBLK",
    "BLOCK",
    "ENDSEC",
];

/// Counts of entity type names in the ENTITIES and BLOCKS sections of an ASCII DXF.
fn raw_entity_counts(bytes: &[u8]) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    if bytes.starts_with(b"AutoCAD Binary DXF") {
        return out;
    }
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines().map(|l| l.trim());
    let mut in_geometry = false;
    let mut expect_section_name = false;
    while let (Some(code), Some(value)) = (lines.next(), lines.next()) {
        if code != "0" && code != "2" {
            continue;
        }
        if code == "2" {
            if expect_section_name {
                in_geometry = value == "ENTITIES" || value == "BLOCKS";
                expect_section_name = false;
            }
            continue;
        }
        match value {
            "SECTION" => expect_section_name = true,
            "ENDSEC" => in_geometry = false,
            v if in_geometry => *out.entry(v.to_string()).or_default() += 1,
            _ => {}
        }
    }
    out
}

/// The transform from drawing coordinates to kerf millimetres.
fn import_transform(mm_per_unit: f64, opts: &ImportOptions) -> Affine {
    let k = mm_per_unit * scale_or_one(opts.to_scale) / scale_or_one(opts.from_scale);
    Affine::rotate_deg(opts.initial_rotation_deg).then_after(&Affine::scale(k, k))
}

fn build_parts(
    source_name: &str,
    cut: Vec<Piece>,
    attach: Vec<Piece>,
    mm_per_unit: f64,
    opts: &ImportOptions,
    side: Side,
    warnings: Vec<String>,
) -> Result<Imported, ImportError> {
    let t = import_transform(mm_per_unit, opts);
    let cut: Vec<Piece> = cut.iter().map(|p| p.transformed(&t)).collect();
    let loops = chain(cut, opts.chain_tolerance, source_name)?;
    let outlines = nest_loops(loops, source_name)?;
    let mut imported = outlines_to_parts(source_name, outlines, opts, side, warnings)?;
    attach_marks(
        &mut imported,
        attach.iter().map(|p| p.transformed(&t)).collect(),
        opts.chord_tolerance,
        source_name,
    );
    Ok(imported)
}

fn outlines_to_parts(
    source_name: &str,
    outlines: Vec<Outline>,
    opts: &ImportOptions,
    side: Side,
    warnings: Vec<String>,
) -> Result<Imported, ImportError> {
    if outlines.is_empty() {
        // (every loop was a sliver under the tolerance: what else the file held is still news)
        return Err(nothing_to_cut(source_name, &warnings));
    }
    let mut shapes = Vec::new();
    let many = outlines.len() > 1;
    for (i, o) in outlines.iter().enumerate() {
        let name = if many && opts.use_all_parts_in_file {
            format!("{source_name}#{}", i + 1)
        } else {
            source_name.to_string()
        };
        shapes.push((
            name,
            outline_to_shape(o, opts.chord_tolerance, side, source_name)?,
            o.cut_length(),
        ));
    }
    let parts = if opts.use_all_parts_in_file {
        shapes
            .into_iter()
            .map(|(name, s, cut)| ImportedPart {
                name,
                geometry: PartGeometry::single(s).with_cut_length(cut),
                marks: vec![],
            })
            .collect()
    } else {
        let cut = shapes.iter().map(|(_, _, cut)| cut).sum();
        vec![ImportedPart {
            name: source_name.to_string(),
            geometry: PartGeometry::new(shapes.into_iter().map(|(_, s, _)| s).collect())
                .with_cut_length(cut),
            marks: vec![],
        }]
    };
    Ok(Imported { parts, warnings })
}

/// Gives each attached polyline to the part whose outline contains its first point.
fn attach_marks(imported: &mut Imported, attach: Vec<Piece>, tol: f64, source_name: &str) {
    let mut orphans = 0;
    for p in attach {
        let mut pts = Vec::new();
        p.flatten(tol, Side::Grow, &mut pts);
        pts.push(p.end());
        let owner = imported.parts.iter_mut().find(|part| {
            part.geometry
                .components()
                .iter()
                .any(|s| super::exact::point_in_ring(pts[0], s.outer()))
        });
        match owner {
            Some(part) => part.marks.push(pts),
            None => orphans += 1,
        }
    }
    if orphans > 0 {
        imported.warnings.push(format!(
            "{source_name}: {orphans} attached entit(ies) lie outside every part and were dropped"
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// JSON contours (DESIGN 5.4)

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContourDoc {
    contours: Vec<ContourJson>,
    #[serde(default)]
    units: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContourJson {
    vertices: Vec<VertexJson>,
}

#[derive(serde::Deserialize, Debug, Clone)]
#[serde(rename_all = "PascalCase")]
pub struct VertexJson {
    #[serde(rename = "X")]
    x: f64,
    #[serde(rename = "Y")]
    y: f64,
    #[serde(default)]
    bulge: f64,
}

fn contour_loop(v: &[VertexJson]) -> Option<Loop> {
    let pts: Vec<(Point, f64)> = v.iter().map(|v| (Point::new(v.x, v.y), v.bulge)).collect();
    let n = pts.len();
    let mut pieces = Vec::new();
    for i in 0..n {
        let (a, b) = (pts[i].0, pts[(i + 1) % n].0);
        if a.dist(b) > 1e-12 {
            pieces.push(Piece::from_bulge(a, b, pts[i].1));
        }
    }
    (!pieces.is_empty()).then_some(Loop { pieces })
}

/// Imports JSON contours: `{"Contours":[{"Vertices":[{"X","Y","Bulge"}...]}...], "Units":"mm"}`.
/// The largest loop is the outline; loops inside it are holes, whatever their orientation.
pub fn import_contour_json(
    source_name: &str,
    bytes: &[u8],
    opts: &ImportOptions,
    side: Side,
) -> Result<Imported, ImportError> {
    let doc: ContourDoc = serde_json::from_slice(bytes).map_err(|e| ImportError::Unreadable {
        source_name: source_name.into(),
        reason: format!("not a JSON contour document ({e})"),
    })?;
    let file_units = match doc.units.as_deref() {
        None | Some("") => 1.0,
        Some(u) => {
            Units::parse(u)
                .and_then(|u| u.to_mm())
                .ok_or_else(|| ImportError::BadSetting {
                    source_name: source_name.into(),
                    field: "Units".into(),
                    reason: format!("unknown unit '{u}' (use mm, cm, m, in or ft)"),
                })?
        }
    };
    let mm = opts.units.to_mm().unwrap_or(file_units);
    let t = import_transform(mm, opts);
    let mut loops = Vec::new();
    for (i, c) in doc.contours.iter().enumerate() {
        if c.vertices.len() < 2 {
            return Err(ImportError::ZeroArea {
                source_name: format!("{source_name} (contour {i})"),
            });
        }
        if let Some(l) = contour_loop(&c.vertices) {
            loops.push(Loop {
                pieces: l.pieces.iter().map(|p| p.transformed(&t)).collect(),
            });
        }
    }
    if loops.is_empty() {
        return Err(ImportError::Empty {
            source_name: source_name.into(),
            detail: ": no contours".into(),
        });
    }
    let outlines = nest_loops(loops, source_name)?;
    outlines_to_parts(source_name, outlines, opts, side, vec![])
}

/// Imports a JSON contour document as a sheet outline.
pub fn import_contour_json_sheet(
    source_name: &str,
    bytes: &[u8],
    opts: &ImportOptions,
) -> Result<(Shape, Vec<String>), ImportError> {
    let mut o = opts.clone();
    o.use_all_parts_in_file = true;
    largest_as_sheet(
        source_name,
        import_contour_json(source_name, bytes, &o, Side::Shrink)?,
    )
}

// ---------------------------------------------------------------------------------------------
// Parametric shapes (DESIGN 5.4)

#[derive(serde::Deserialize, Debug, Clone)]
#[serde(tag = "Shape")]
pub enum Parametric {
    Rectangle {
        #[serde(rename = "Width")]
        width: f64,
        #[serde(rename = "Height")]
        height: f64,
    },
    Circle {
        #[serde(rename = "Diameter")]
        diameter: f64,
    },
    Ring {
        #[serde(rename = "OuterDiameter")]
        outer_diameter: f64,
        #[serde(rename = "InnerDiameter")]
        inner_diameter: f64,
    },
    RoundedRectangle {
        #[serde(rename = "Width")]
        width: f64,
        #[serde(rename = "Height")]
        height: f64,
        #[serde(rename = "Radius")]
        radius: f64,
    },
    Polygon {
        #[serde(rename = "Vertices")]
        vertices: Vec<VertexJson>,
    },
}

/// Builds a parametric part (millimetres), checking its dimensions.
pub fn parametric_part(
    source_name: &str,
    p: &Parametric,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let bad = |field: &str, reason: &str| ImportError::BadSetting {
        source_name: source_name.into(),
        field: field.into(),
        reason: reason.into(),
    };
    let pos = |v: f64, field: &str| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(bad(field, "must be a positive number"))
        }
    };
    let rect = |w: f64, h: f64| Loop {
        pieces: vec![
            Piece::Line {
                a: Point::new(0.0, 0.0),
                b: Point::new(w, 0.0),
            },
            Piece::Line {
                a: Point::new(w, 0.0),
                b: Point::new(w, h),
            },
            Piece::Line {
                a: Point::new(w, h),
                b: Point::new(0.0, h),
            },
            Piece::Line {
                a: Point::new(0.0, h),
                b: Point::new(0.0, 0.0),
            },
        ],
    };
    let loops = match p {
        Parametric::Rectangle { width, height } => {
            vec![rect(pos(*width, "Width")?, pos(*height, "Height")?)]
        }
        Parametric::Circle { diameter } => {
            let r = pos(*diameter, "Diameter")? / 2.0;
            vec![Loop {
                pieces: vec![Piece::circle(Point::new(r, r), r)],
            }]
        }
        Parametric::Ring {
            outer_diameter,
            inner_diameter,
        } => {
            let ro = pos(*outer_diameter, "OuterDiameter")? / 2.0;
            let ri = pos(*inner_diameter, "InnerDiameter")? / 2.0;
            if ri >= ro {
                return Err(bad("InnerDiameter", "must be smaller than OuterDiameter"));
            }
            let c = Point::new(ro, ro);
            vec![
                Loop {
                    pieces: vec![Piece::circle(c, ro)],
                },
                Loop {
                    pieces: vec![Piece::circle(c, ri)],
                },
            ]
        }
        Parametric::RoundedRectangle {
            width,
            height,
            radius,
        } => {
            let (w, h) = (pos(*width, "Width")?, pos(*height, "Height")?);
            let r = *radius;
            if !(r.is_finite() && r >= 0.0 && 2.0 * r <= w.min(h)) {
                return Err(bad("Radius", "must be between 0 and half the smaller side"));
            }
            if r == 0.0 {
                vec![rect(w, h)]
            } else {
                use std::f64::consts::FRAC_PI_2 as Q;
                let mut pieces = Vec::new();
                let corners = [
                    (w - r, r, -Q),
                    (w - r, h - r, 0.0),
                    (r, h - r, Q),
                    (r, r, 2.0 * Q),
                ];
                for (k, &(cx, cy, a0)) in corners.iter().enumerate() {
                    let arc = Piece::arc(Point::new(cx, cy), r, a0, Q);
                    let next = corners[(k + 1) % 4];
                    let na = next.2;
                    let end = arc.end();
                    let next_start = Point::new(next.0 + r * na.cos(), next.1 + r * na.sin());
                    pieces.push(arc);
                    if end.dist(next_start) > 1e-12 {
                        pieces.push(Piece::Line {
                            a: end,
                            b: next_start,
                        });
                    }
                }
                vec![Loop { pieces }]
            }
        }
        Parametric::Polygon { vertices } => {
            if vertices.len() < 3 {
                return Err(bad("Vertices", "a polygon needs at least three vertices"));
            }
            vec![contour_loop(vertices).ok_or_else(|| bad("Vertices", "degenerate polygon"))?]
        }
    };
    let t = import_transform(opts.units.to_mm().unwrap_or(1.0), opts);
    let loops = loops
        .into_iter()
        .map(|l| Loop {
            pieces: l.pieces.iter().map(|p| p.transformed(&t)).collect(),
        })
        .collect();
    let outlines = nest_loops(loops, source_name)?;
    outlines_to_parts(source_name, outlines, opts, Side::Grow, vec![])
}
