//! Reads DXF drawings (ASCII or binary) into boundary pieces, sorted by layer role.
//! Handles LINE, ARC, CIRCLE, LWPOLYLINE and POLYLINE with bulges, SPLINE, ELLIPSE and INSERT
//! (nested blocks, arrays, scale, rotation, mirroring by negative scale, OCS normals).

use super::colour::aci_to_rgb;
use super::curve::{flatten_nurbs, Piece};
use super::import::{ImportOptions, LayerRule};
use super::primitives::{Affine, Point};
use crate::lenient::scale_or_one;
use dxf::entities::{Entity, EntityType};
use dxf::Drawing;
use std::collections::{BTreeMap, HashMap};
use std::f64::consts::TAU;

/// What an entity is used for, decided by CutLayers / AttachLayers / IgnoreLayers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Cut,
    Attach,
    Ignore,
}

/// Pieces gathered from a drawing.
#[derive(Default)]
pub struct Collected {
    pub cut: Vec<Piece>,
    pub attach: Vec<Piece>,
    /// Entity type name -> how many were skipped (text, hatches, dimensions...).
    pub skipped: BTreeMap<String, usize>,
    /// Layers whose geometry was left out because they matched no CutLayers rule.
    pub unassigned_layers: BTreeMap<String, usize>,
    /// Entities drawn in paper space (a layout sheet), which is not nested: only model space
    /// holds parts. Counted so that a drawing made in a layout gets an error that says so.
    pub paper_space: usize,
    pub notes: Vec<String>,
    /// Millimetres per drawing unit, from $INSUNITS.
    pub file_mm_per_unit: f64,
}

struct Ctx<'a> {
    drawing: &'a Drawing,
    layers: HashMap<String, (u32, String)>, // upper-cased name -> (rgb, line type)
    blocks: HashMap<String, &'a dxf::Block>,
    opts: &'a ImportOptions,
    out: Collected,
}

/// Inherited attributes of an INSERT, for entities on layer "0" or coloured BYBLOCK.
#[derive(Clone)]
struct Inherit {
    layer: String,
    rgb: u32,
    line_type: String,
}

pub fn load(bytes: &[u8]) -> Result<Drawing, String> {
    let mut cursor = std::io::Cursor::new(bytes);
    Drawing::load(&mut cursor).map_err(|e| format!("not a readable DXF file ({e})"))
}

pub fn collect(drawing: &Drawing, opts: &ImportOptions) -> Collected {
    let layers = drawing
        .layers()
        .map(|l| {
            let rgb = l.color.index().map(aci_to_rgb).unwrap_or(0xFFFFFF);
            (l.name.to_ascii_uppercase(), (rgb, l.line_type_name.clone()))
        })
        .collect();
    let blocks = drawing
        .blocks()
        .map(|b| (b.name.to_ascii_uppercase(), b))
        .collect();
    let mut ctx = Ctx {
        drawing,
        layers,
        blocks,
        opts,
        out: Collected::default(),
    };
    ctx.out.file_mm_per_unit =
        super::units::insunits_to_mm(drawing.header.default_drawing_units as i32);
    let root = Inherit {
        layer: "0".into(),
        rgb: 0xFFFFFF,
        line_type: "CONTINUOUS".into(),
    };
    for e in ctx.drawing.entities() {
        if e.common.is_in_paper_space {
            ctx.out.paper_space += 1;
            continue;
        }
        ctx.entity(e, &Affine::IDENTITY, &root, 0);
    }
    ctx.out
}

impl<'a> Ctx<'a> {
    fn resolve(&self, e: &Entity, parent: &Inherit) -> Inherit {
        let layer = if e.common.layer == "0" && parent.layer != "0" {
            parent.layer.clone()
        } else {
            e.common.layer.clone()
        };
        let (layer_rgb, layer_lt) = self
            .layers
            .get(&layer.to_ascii_uppercase())
            .cloned()
            .unwrap_or((0xFFFFFF, "CONTINUOUS".into()));
        let c = &e.common.color;
        let rgb = if e.common.color_24_bit != 0 {
            (e.common.color_24_bit as u32) & 0xFFFFFF
        } else if c.is_by_layer() {
            layer_rgb
        } else if c.is_by_block() {
            parent.rgb
        } else {
            c.index().map(aci_to_rgb).unwrap_or(layer_rgb)
        };
        let lt = &e.common.line_type_name;
        let line_type = if lt.is_empty() || lt.eq_ignore_ascii_case("BYLAYER") {
            layer_lt
        } else if lt.eq_ignore_ascii_case("BYBLOCK") {
            parent.line_type.clone()
        } else {
            lt.clone()
        };
        Inherit {
            layer,
            rgb,
            line_type,
        }
    }

    fn role(&mut self, a: &Inherit) -> Role {
        let o = self.opts;
        let m = |rules: &[LayerRule]| {
            rules
                .iter()
                .any(|r| r.matches(&a.layer, a.rgb, &a.line_type))
        };
        if m(&o.ignore_layers) {
            Role::Ignore
        } else if m(&o.attach_layers) {
            Role::Attach
        } else if o.cut_layers.is_empty() || m(&o.cut_layers) {
            Role::Cut
        } else {
            *self
                .out
                .unassigned_layers
                .entry(a.layer.clone())
                .or_default() += 1;
            Role::Ignore
        }
    }

    fn push(&mut self, role: Role, p: Piece) {
        match role {
            Role::Cut => self.out.cut.push(p),
            Role::Attach => self.out.attach.push(p),
            Role::Ignore => {}
        }
    }

    fn skip(&mut self, what: &str) {
        *self.out.skipped.entry(what.to_string()).or_default() += 1;
    }

    fn entity(&mut self, e: &Entity, t: &Affine, parent: &Inherit, depth: usize) {
        let attrs = self.resolve(e, parent);
        if let EntityType::Insert(ins) = &e.specific {
            if depth > 32 {
                self.out.notes.push(format!(
                    "block nesting deeper than 32 levels at INSERT of '{}'; ignored",
                    ins.name
                ));
                return;
            }
            let Some(block) = self.blocks.get(&ins.name.to_ascii_uppercase()).copied() else {
                self.out
                    .notes
                    .push(format!("INSERT of undefined block '{}' ignored", ins.name));
                return;
            };
            let ocs = ocs_map(ins.extrusion_direction.z);
            let sx = scale_or_one(ins.x_scale_factor);
            let sy = scale_or_one(ins.y_scale_factor);
            let base = Affine::scale(sx, sy)
                .then_after(&Affine::translate(-block.base_point.x, -block.base_point.y));
            let rot = Affine::rotate_deg(ins.rotation);
            let cols = ins.column_count.max(1);
            let rows = ins.row_count.max(1);
            for r in 0..rows {
                for c in 0..cols {
                    let cell = Affine::translate(
                        c as f64 * ins.column_spacing,
                        r as f64 * ins.row_spacing,
                    );
                    let local = Affine::translate(ins.location.x, ins.location.y)
                        .then_after(&rot)
                        .then_after(&cell)
                        .then_after(&base);
                    let m = t.then_after(&ocs).then_after(&local);
                    for be in &block.entities {
                        self.entity(be, &m, &attrs, depth + 1);
                    }
                }
            }
            return;
        }
        let role = self.role(&attrs);
        let mut pieces: Vec<Piece> = Vec::new();
        match &e.specific {
            EntityType::Line(l) => {
                pieces.push(Piece::Line {
                    a: Point::new(l.p1.x, l.p1.y),
                    b: Point::new(l.p2.x, l.p2.y),
                });
            }
            EntityType::Arc(a) => {
                let mut start = a.start_angle.to_radians();
                let mut sweep = (a.end_angle - a.start_angle).rem_euclid(360.0).to_radians();
                if sweep == 0.0 {
                    sweep = TAU;
                }
                if !(a.radius > 0.0) {
                    self.skip("ARC of no radius");
                    return;
                }
                start = start.rem_euclid(TAU);
                let p = Piece::arc(Point::new(a.center.x, a.center.y), a.radius, start, sweep);
                pieces.push(p.transformed(&ocs_map(a.normal.z)));
            }
            EntityType::Circle(c) => {
                if c.radius > 0.0 {
                    let p = Piece::circle(Point::new(c.center.x, c.center.y), c.radius);
                    pieces.push(p.transformed(&ocs_map(c.normal.z)));
                } else {
                    self.skip("CIRCLE of no radius");
                }
            }
            EntityType::LwPolyline(pl) => {
                let v: Vec<(Point, f64)> = pl
                    .vertices
                    .iter()
                    .map(|v| (Point::new(v.x, v.y), v.bulge))
                    .collect();
                let ocs = ocs_map(pl.extrusion_direction.z);
                for p in bulge_path(&v, pl.is_closed()) {
                    pieces.push(p.transformed(&ocs));
                }
            }
            EntityType::Polyline(pl) => {
                if pl.flags & (16 | 64) != 0 {
                    self.skip("POLYLINE (mesh)");
                    return;
                }
                let v: Vec<(Point, f64)> = pl
                    .vertices()
                    .filter(|v| v.flags & 16 == 0) // spline frame control points are not on the curve
                    .map(|v| (Point::new(v.location.x, v.location.y), v.bulge))
                    .collect();
                let ocs = ocs_map(pl.normal.z);
                for p in bulge_path(&v, pl.is_closed()) {
                    pieces.push(p.transformed(&ocs));
                }
            }
            EntityType::Ellipse(el) => {
                let c = Point::new(el.center.x, el.center.y);
                let maj = Point::new(el.major_axis.x, el.major_axis.y);
                let minor = Point::new(-maj.y, maj.x).scale(el.minor_axis_ratio);
                let map = Affine {
                    a: maj.x,
                    b: minor.x,
                    c: maj.y,
                    d: minor.y,
                    tx: c.x,
                    ty: c.y,
                };
                let mut sweep = (el.end_parameter - el.start_parameter).rem_euclid(TAU);
                if sweep < 1e-12 {
                    sweep = TAU;
                }
                let p = Piece::Conic {
                    map,
                    t0: el.start_parameter,
                    sweep,
                };
                pieces.push(p.transformed(&ocs_map(el.normal.z)));
            }
            EntityType::Spline(sp) => {
                let ctrl: Vec<Point> = sp
                    .control_points
                    .iter()
                    .map(|p| Point::new(p.x, p.y))
                    .collect();
                // flatten in drawing units, at the tolerance converted from millimetres
                let scale = self.out.file_mm_per_unit.max(1e-12);
                let tol = self.opts.chord_tolerance / scale / max_scale(t).max(1e-12);
                let pts = if !ctrl.is_empty() {
                    flatten_nurbs(
                        sp.degree_of_curve.max(1) as usize,
                        &sp.knot_values,
                        &ctrl,
                        &sp.weight_values,
                        tol,
                    )
                } else {
                    None
                };
                let pts = match pts {
                    Some(p) => p,
                    None if sp.fit_points.len() >= 2 => {
                        self.out.notes.push("SPLINE without usable control points: its fit points were joined by straight lines".into());
                        sp.fit_points.iter().map(|p| Point::new(p.x, p.y)).collect()
                    }
                    None => {
                        self.skip("SPLINE (degenerate)");
                        return;
                    }
                };
                let ocs = ocs_map(sp.normal.z);
                let mut pts: Vec<Point> = pts.into_iter().map(|p| ocs.apply(p)).collect();
                if sp.is_closed() && pts[0].dist(*pts.last().unwrap()) > 0.0 {
                    pts.push(pts[0]);
                }
                if pts.len() >= 2 {
                    pieces.push(Piece::Path { points: pts });
                }
            }
            other => {
                self.skip(entity_name(other));
                return;
            }
        }
        for p in pieces {
            self.push(role, p.transformed(t));
        }
    }
}

/// Lines and bulge arcs of a polyline's vertex list.
fn bulge_path(v: &[(Point, f64)], closed: bool) -> Vec<Piece> {
    let n = v.len();
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    let segs = if closed { n } else { n - 1 };
    for i in 0..segs {
        let (a, bulge) = v[i];
        let b = v[(i + 1) % n].0;
        if a.dist(b) > 1e-12 {
            out.push(Piece::from_bulge(a, b, bulge));
        }
    }
    out
}

/// Object coordinate system for a normal of (0, 0, +-1): a downward normal mirrors X.
fn ocs_map(nz: f64) -> Affine {
    if nz < 0.0 {
        Affine::mirror_x()
    } else {
        Affine::IDENTITY
    }
}

fn max_scale(t: &Affine) -> f64 {
    (t.a.hypot(t.c)).max(t.b.hypot(t.d))
}

/// The DXF name of an entity type, for the list of skipped entities.
fn entity_name(e: &EntityType) -> &'static str {
    use EntityType as E;
    match e {
        E::Face3D(_) => "3DFACE",
        E::Solid3D(_) => "3DSOLID",
        E::ProxyEntity(_) => "ACAD_PROXY_ENTITY",
        E::Arc(_) => "ARC",
        E::ArcAlignedText(_) => "ARCALIGNEDTEXT",
        E::AttributeDefinition(_) | E::Attribute(_) => "ATTRIB",
        E::Body(_) => "BODY",
        E::Circle(_) => "CIRCLE",
        E::RotatedDimension(_)
        | E::RadialDimension(_)
        | E::DiameterDimension(_)
        | E::AngularThreePointDimension(_)
        | E::OrdinateDimension(_) => "DIMENSION",
        E::Ellipse(_) => "ELLIPSE",
        E::Helix(_) => "HELIX",
        E::Image(_) => "IMAGE",
        E::Insert(_) => "INSERT",
        E::Leader(_) => "LEADER",
        E::Light(_) => "LIGHT",
        E::Line(_) => "LINE",
        E::LwPolyline(_) => "LWPOLYLINE",
        E::MLine(_) => "MLINE",
        E::MText(_) => "MTEXT",
        E::OleFrame(_) | E::Ole2Frame(_) => "OLEFRAME",
        E::ModelPoint(_) => "POINT",
        E::Polyline(_) => "POLYLINE",
        E::Ray(_) => "RAY",
        E::Region(_) => "REGION",
        E::RText(_) => "RTEXT",
        E::Section(_) => "SECTION",
        E::Seqend(_) => "SEQEND",
        E::Shape(_) => "SHAPE",
        E::Solid(_) => "SOLID",
        E::Spline(_) => "SPLINE",
        E::Text(_) => "TEXT",
        E::Tolerance(_) => "TOLERANCE",
        E::Trace(_) => "TRACE",
        E::DgnUnderlay(_) | E::DwfUnderlay(_) | E::PdfUnderlay(_) => "UNDERLAY",
        E::Vertex(_) => "VERTEX",
        E::Wipeout(_) => "WIPEOUT",
        E::XLine(_) => "XLINE",
    }
}
