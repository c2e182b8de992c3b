//! Wire -> engine, once, at the edge. Every problem found is a `FieldError` naming the field by
//! its JSON path (`Request.Parts[2].Base64EncodedGeometryDefinition`) and saying why; all of them
//! are collected so a caller fixes a request in one go.

use super::types::*;
use crate::geometry::colour::parse_colour;
use crate::geometry::{
    import_contour_json, import_contour_json_sheet, import_dxf, import_dxf_sheet, parametric_part,
    Compression, ImportOptions, Imported, LayerRule, Parametric, Side, Units,
};
use crate::lenient::enum_key;
use crate::nest2d::*;
use base64::Engine;
use serde::Serialize;

/// One thing wrong with a request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldError {
    /// JSON path of the field, as the caller wrote the request.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem of a request on one line (for a job's stored error).
pub fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Parses a JSON body; a syntax error or a wrongly typed field names where it is.
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, FieldError> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        FieldError {
            field: if path == "." { "(body)".into() } else { path },
            message: e.into_inner().to_string(),
        }
    })
}

/// How part and sheet geometry is given when GeometryDefinitionType does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryKind {
    Dxf,
    Json,
    Parametric,
}

impl GeometryKind {
    const NAMES: [(&'static str, GeometryKind); 3] = [
        ("dxf", GeometryKind::Dxf),
        ("json", GeometryKind::Json),
        ("parametric", GeometryKind::Parametric),
    ];

    /// Its name in job kinds (`nest2d:json`, `quote:dxf`).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, g)| *g == self)
            .map(|(n, _)| *n)
            .expect("every kind is named")
    }

    /// The kind a job kind's suffix names; DXF for any other (`nest2d:legacy`).
    pub fn from_name(name: &str) -> GeometryKind {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(GeometryKind::Dxf, |(_, g)| *g)
    }
}

/// Default MaxRunTimeSeconds when the request leaves it 0.
pub const DEFAULT_RUN_TIME_S: f64 = 60.0;
/// The longest run a request may ask for.
pub const MAX_RUN_TIME_S: f64 = 24.0 * 3600.0;

/// The most part instances (quantities plus filler quantities) one nest may ask for: far past
/// what fits on the sheets of real jobs, and a bound on the memory one request can claim.
pub const MAX_PART_INSTANCES: u64 = 100_000;

/// A request turned into an engine problem.
#[derive(Debug)]
pub struct Converted {
    pub problem: Problem,
    pub warnings: Vec<String>,
    pub report_intermediate_results: bool,
}

/// Every problem found in one request, collected.
#[derive(Default)]
pub(super) struct Errors(pub(super) Vec<FieldError>);

impl Errors {
    pub(super) fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }
    /// Parses a lenient enumeration (DESIGN 5.1): name in any case, without `_`, `-` or spaces,
    /// or the value's integer index. Unknown values list the allowed ones. An option whose name
    /// starts with `~` is an alias (another spelling): accepted, but neither listed nor indexed.
    pub(super) fn pick<T: Copy>(
        &mut self,
        field: &str,
        value: Option<&str>,
        default: T,
        options: &[(&str, T)],
    ) -> T {
        let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
            return default;
        };
        let key = enum_key(v);
        if let Ok(i) = key.parse::<usize>() {
            if let Some((_, t)) = options.iter().filter(|(n, _)| !n.starts_with('~')).nth(i) {
                return *t;
            }
        }
        if let Some((_, t)) = options
            .iter()
            .find(|(n, _)| enum_key(n.trim_start_matches('~')) == key)
        {
            return *t;
        }
        let names: Vec<&str> = options
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| !n.starts_with('~'))
            .collect();
        self.add(
            field,
            format!("unknown value '{v}'; allowed: {}", names.join(", ")),
        );
        default
    }
    pub(super) fn non_negative(&mut self, field: &str, v: f64) -> f64 {
        if v.is_finite() && v >= 0.0 {
            v
        } else {
            self.add(field, format!("must be a number of at least 0 (got {v})"));
            0.0
        }
    }

    /// MaxRunTimeSeconds: 0 means `default`; at most MAX_RUN_TIME_S.
    pub(super) fn run_time(&mut self, field: &str, run: f64, default: f64) -> f64 {
        if run == 0.0 {
            default
        } else if run.is_finite() && run > 0.0 && run <= MAX_RUN_TIME_S {
            run
        } else {
            self.add(
                field,
                format!("must be between 0 and {MAX_RUN_TIME_S} seconds (0 means {default})"),
            );
            default
        }
    }

    /// ResultsWebhookUri: an absolute HTTPS URL; absent or blank is refused when `required`.
    pub(super) fn webhook(&mut self, value: Option<&str>, required: bool) -> Option<url::Url> {
        match value.filter(|u| !u.trim().is_empty()) {
            Some(u) => crate::webhook::parse_target(u)
                .map_err(|why| self.add("ResultsWebhookUri", why))
                .ok(),
            None => {
                if required {
                    self.add(
                        "ResultsWebhookUri",
                        "missing: an absolute HTTPS URL is required",
                    );
                }
                None
            }
        }
    }
}

/// Converts a Base64NestingRequest (found at JSON path `at`) into an engine problem.
pub fn to_problem(
    req: &Base64NestingRequest,
    default_kind: GeometryKind,
    at: &str,
) -> Result<Converted, Vec<FieldError>> {
    let mut e = Errors(Vec::new());
    let import = import_options(
        &mut e,
        req.geometry_definition_import_settings.as_ref(),
        &format!("{at}.GeometryDefinitionImportSettings"),
    );
    let ns = req.nest_settings.clone().unwrap_or_default();
    let mut warnings = Vec::new();
    let mut settings = settings(&mut e, &ns, &format!("{at}.NestSettings"));
    settings.common_cutting = req
        .common_cut_settings
        .as_ref()
        .and_then(|c| common_cutting(&mut e, c, &format!("{at}.CommonCutSettings")));
    let mut parts = Vec::new();
    // identifiers must be unique, over Parts and every assembly's Parts: results and exports
    // name parts by them
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    // (`field` is where the part is, from `at`: a message names the first one from there)
    let mut unique = |e: &mut Errors, made: &[PartSpec], field: &str| {
        let from_request = field
            .strip_prefix(at)
            .unwrap_or(field)
            .trim_start_matches('.');
        for spec in made {
            if let Some(first) = seen.insert(spec.id.clone(), from_request.to_string()) {
                e.add(
                    format!("{field}.Identifier"),
                    format!("'{}' is already the identifier of a part from {first}: identifiers must be unique (results and exports name parts by them)", spec.id),
                );
            }
        }
    };
    let assemblies = req.assemblies.as_deref().unwrap_or_default();
    match req.parts.as_deref() {
        None | Some([]) if assemblies.is_empty() => e.add(
            format!("{at}.Parts"),
            "at least one part (or assembly) is required",
        ),
        None | Some([]) => {}
        Some(list) => {
            for (i, p) in list.iter().enumerate() {
                let field = format!("{at}.Parts[{i}]");
                let made = part(
                    &mut e,
                    p,
                    &field,
                    &format!("Part{}", i + 1),
                    default_kind,
                    &import,
                    &mut warnings,
                );
                unique(&mut e, &made, &field);
                parts.extend(made);
            }
        }
    }
    for (a, asm) in assemblies.iter().enumerate() {
        let made = assembly(
            &mut e,
            asm,
            a,
            &format!("{at}.Assemblies[{a}]"),
            |e, p, j| {
                let field = format!("{at}.Assemblies[{a}].Parts[{j}]");
                let made = part(
                    e,
                    p,
                    &field,
                    &format!("Assembly{}Part{}", a + 1, j + 1),
                    default_kind,
                    &import,
                    &mut warnings,
                );
                unique(e, &made, &field);
                made
            },
        );
        parts.extend(made);
    }
    let instances: u64 = parts
        .iter()
        .map(|p: &PartSpec| p.quantity as u64 + p.filler_quantity as u64)
        .sum();
    if instances > MAX_PART_INSTANCES {
        // named where the copies come from: Parts, or Assemblies when there are any
        let field = if assemblies.is_empty() {
            "Parts"
        } else {
            "Assemblies"
        };
        e.add(
            format!("{at}.{field}"),
            format!(
                "{instances} part instances (quantities and filler quantities, an assembly's parts times its kits) in one nest; at most {MAX_PART_INSTANCES} are accepted"
            ),
        );
    }
    let mut sheets = Vec::new();
    match req.sheets.as_deref() {
        None | Some([]) => e.add(format!("{at}.Sheets"), "at least one sheet is required"),
        Some(list) => {
            let mut sheet_ids: std::collections::HashMap<String, usize> = Default::default();
            for (j, s) in list.iter().enumerate() {
                if let Some(s) = sheet(
                    &mut e,
                    s,
                    &format!("{at}.Sheets[{j}]"),
                    j,
                    default_kind,
                    &import,
                    &mut warnings,
                ) {
                    if let Some(first) = sheet_ids.insert(s.id.clone(), j) {
                        e.add(
                            format!("{at}.Sheets[{j}].Identifier"),
                            format!("'{}' is already the identifier of Sheets[{first}]: identifiers must be unique (results and exports name sheets by them)", s.id),
                        );
                    }
                    sheets.push(s);
                }
            }
        }
    }
    if !e.0.is_empty() {
        return Err(e.0);
    }
    Ok(Converted {
        problem: Problem {
            parts,
            sheets,
            settings,
        },
        warnings,
        report_intermediate_results: ns.report_intermediate_results,
    })
}

fn import_options(e: &mut Errors, s: Option<&ImportSettings>, at: &str) -> ImportOptions {
    let mut o = ImportOptions::default();
    let Some(s) = s else { return o };
    let units_field = format!("{at}.MeasurementUnitsOfImportGeometry");
    o.units = match s
        .measurement_units_of_import_geometry
        .as_deref()
        .filter(|v| !v.trim().is_empty())
    {
        None => Units::FromFile,
        Some(v) => Units::parse(v).unwrap_or_else(|| {
            let names: Vec<String> = Units::ALL.iter().map(|u| u.to_string()).collect();
            e.add(
                units_field,
                format!("unknown value '{v}'; allowed: {}", names.join(", ")),
            );
            Units::FromFile
        }),
    };
    o.from_scale = e.non_negative(&format!("{at}.FromScale"), s.from_scale);
    o.to_scale = e.non_negative(&format!("{at}.ToScale"), s.to_scale);
    o.use_all_parts_in_file = s.use_all_parts_in_file.unwrap_or(false);
    let mut rules = |list: &Option<Vec<ImportLayerAssignment>>, name: &str| -> Vec<LayerRule> {
        list.iter()
            .flatten()
            .enumerate()
            .map(|(k, a)| {
                let colour_rgb = a.colour_hex.as_deref().filter(|c| !c.trim().is_empty()).and_then(|c| {
                    let v = parse_colour(c);
                    if v.is_none() {
                        e.add(format!("{at}.{name}[{k}].ColourHex"), format!("'{c}' is not a colour: use RRGGBB hex or an AutoCAD colour index 1-255"));
                    }
                    v
                });
                let text = |v: &Option<String>| v.as_ref().filter(|t| !t.trim().is_empty()).cloned();
                LayerRule { layer_name: text(&a.layer_name), colour_rgb, line_type: text(&a.line_type) }
            })
            .collect()
    };
    o.cut_layers = rules(&s.cut_layers, "CutLayers");
    o.attach_layers = rules(&s.attach_layers, "AttachLayers");
    o.ignore_layers = rules(&s.ignore_layers, "IgnoreLayers");
    o
}

fn settings(e: &mut Errors, s: &NestSettings, at: &str) -> Settings {
    let f = |name: &str| format!("{at}.{name}");
    let max_run_time_s = e.run_time(
        &f("MaxRunTimeSeconds"),
        s.max_run_time_seconds,
        DEFAULT_RUN_TIME_S,
    );
    let utilisation_target = match s.utilisation_stop_target {
        None => None,
        Some(t) if t == 0.0 => None,
        Some(t) if t > 0.0 && t <= 100.0 => Some(t),
        Some(t) => {
            e.add(
                f("UtilisationStopTarget"),
                format!("a percentage between 0 and 100 (got {t})"),
            );
            None
        }
    };
    let fill_angle = match FillAngle::new(s.nesting_angle_degrees.unwrap_or(0.0)) {
        Ok(a) => a,
        Err(why) => {
            e.add(f("NestingAngleDegrees"), why);
            FillAngle::default()
        }
    };
    if s.maximum_cpu_count < 0 {
        e.add(f("MaximumCPUCount"), "must be 0 (all cores) or more");
    }
    if s.maximum_different_sheet_sizes < 0 {
        e.add(
            f("MaximumDifferentSheetSizes"),
            "must be 0 (no limit) or more",
        );
    }
    let repeat = e.pick(
        &f("RepeatPreference"),
        s.repeat_preference.as_deref(),
        RepeatPreference::None,
        &[
            ("None", RepeatPreference::None),
            ("Low", RepeatPreference::Low),
            ("Medium", RepeatPreference::Medium),
            ("High", RepeatPreference::High),
        ],
    );
    Settings {
        part_spacing: e.non_negative(&f("PartSpacing"), s.part_spacing),
        max_run_time_s,
        utilisation_target,
        direction: e.pick(
            &f("NestingDirection"),
            s.nesting_direction.as_deref(),
            Direction::X,
            &[("X", Direction::X), ("Y", Direction::Y)],
        ),
        origin: e.pick(
            &f("NestingOrigin"),
            s.nesting_origin.as_deref(),
            Origin::BottomLeft,
            &[
                ("BottomLeft", Origin::BottomLeft),
                ("TopLeft", Origin::TopLeft),
                ("TopRight", Origin::TopRight),
                ("BottomRight", Origin::BottomRight),
            ],
        ),
        fill_angle,
        objective: e.pick(
            &f("NestingObjective"),
            s.nesting_objective.as_deref(),
            Objective::MaximiseUtilisation,
            &[
                ("MaximiseUtilisation", Objective::MaximiseUtilisation),
                ("MinimiseSheetCount", Objective::MinimiseSheetCount),
                ("MinimiseLength", Objective::MinimiseLength),
                ("MinimiseCost", Objective::MinimiseCost),
                ("~MaximizeUtilization", Objective::MaximiseUtilisation),
                ("~MinimizeSheetCount", Objective::MinimiseSheetCount),
                ("~MinimizeLength", Objective::MinimiseLength),
                ("~MinimizeCost", Objective::MinimiseCost),
            ],
        ),
        inner_loop_fill: e.pick(
            &f("InnerLoopFillPreference"),
            s.inner_loop_fill_preference.as_deref(),
            InnerLoopFill::Allow,
            &[
                ("None", InnerLoopFill::None),
                ("Allow", InnerLoopFill::Allow),
                ("Prefer", InnerLoopFill::Prefer),
            ],
        ),
        filler_strategy: e.pick(
            &f("FillerPartsStrategy"),
            s.filler_parts_strategy.as_deref(),
            FillerStrategy::None,
            &[
                ("None", FillerStrategy::None),
                ("FillLastSheet", FillerStrategy::FillLastSheet),
                ("FillAllSheets", FillerStrategy::FillAllSheets),
            ],
        ),
        strict_priorities: s.strict_part_priorities,
        repeat,
        max_different_sheet_sizes: s.maximum_different_sheet_sizes.max(0) as u32,
        max_cpu: s.maximum_cpu_count.max(0) as u32,
        ..Settings::default()
    }
}

/// Rotations from AllowableRotation and CustomRotationStepAngle (DESIGN 5.1).
fn rotations(e: &mut Errors, at: &str, allowable: Option<&str>, custom_step: f64) -> Vec<f64> {
    let step_field = format!("{at}.CustomRotationStepAngle");
    let custom = if custom_step == 0.0 {
        90.0
    } else if custom_step.is_finite() && custom_step > 0.0 && custom_step <= 360.0 {
        custom_step
    } else {
        e.add(
            step_field,
            "must be a step in degrees between 0 and 360 (0 means 90)",
        );
        90.0
    };
    rotation_set(allowable.unwrap_or(""), custom).unwrap_or_else(|why| {
        e.add(format!("{at}.AllowableRotation"), why);
        vec![0.0]
    })
}

fn geometry_kind(e: &mut Errors, at: &str, v: Option<&str>, default: GeometryKind) -> GeometryKind {
    e.pick(
        &format!("{at}.GeometryDefinitionType"),
        v,
        default,
        &[
            ("DXF", GeometryKind::Dxf),
            ("JSON", GeometryKind::Json),
            ("Parametric", GeometryKind::Parametric),
        ],
    )
}

/// Decodes a base64 field (whitespace and missing padding tolerated) and decompresses it.
fn decode(e: &mut Errors, field: &str, b64: &str, compression: Compression) -> Option<Vec<u8>> {
    let cleaned: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let url = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let raw = match lenient.decode(&cleaned).or_else(|_| url.decode(&cleaned)) {
        Ok(r) => r,
        Err(err) => {
            e.add(field, format!("not valid base64 ({err})"));
            return None;
        }
    };
    match compression.decode(&raw) {
        Ok(b) => Some(b),
        Err(why) => {
            e.add(field, why);
            None
        }
    }
}

fn compression(e: &mut Errors, at: &str, v: Option<&str>) -> Compression {
    let field = format!("{at}.GeometryDefinitionCompressionType");
    match v {
        None => Compression::None,
        Some(s) => Compression::parse(s).unwrap_or_else(|| {
            e.add(
                field,
                format!("unknown value '{s}'; allowed: {}", Compression::NAMES),
            );
            Compression::None
        }),
    }
}

/// The geometry source of a part or sheet: the base64 field of its kind, decoded.
fn source(
    e: &mut Errors,
    at: &str,
    kind: GeometryKind,
    b64: Option<&str>,
    json_name: &str,
    json: Option<&str>,
    comp: Compression,
) -> Option<(String, Vec<u8>)> {
    fn present(v: Option<&str>) -> Option<&str> {
        v.filter(|s| !s.trim().is_empty())
    }
    let (field, value, comp) = match kind {
        GeometryKind::Dxf => ("Base64EncodedGeometryDefinition", present(b64), comp),
        // JSON and parametric geometry: EncodedPartJson / EncodedSheetJson (base64 of UTF-8 JSON),
        // or the geometry field when only that is given
        _ => match present(json) {
            Some(j) => (json_name, Some(j), Compression::None),
            None => ("Base64EncodedGeometryDefinition", present(b64), comp),
        },
    };
    let path = format!("{at}.{field}");
    let Some(value) = value else {
        e.add(path, "missing: the geometry of this entry is required");
        return None;
    };
    decode(e, &path, value, comp).map(|bytes| (path, bytes))
}

fn part(
    e: &mut Errors,
    p: &Base64Part,
    at: &str,
    default_id: &str,
    default_kind: GeometryKind,
    import: &ImportOptions,
    warnings: &mut Vec<String>,
) -> Vec<PartSpec> {
    let before = e.0.len();
    let id = p
        .identifier
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default_id.to_string());
    let name = p
        .file_name_with_extension
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| id.clone());
    if p.quantity < 0 || (p.quantity == 0 && p.filler_part_quantity <= 0) {
        e.add(
            format!("{at}.Quantity"),
            format!("must be at least 1 (got {})", p.quantity),
        );
    }
    if p.filler_part_quantity < 0 {
        e.add(format!("{at}.FillerPartQuantity"), "must be 0 or more");
    }
    if p.common_cut_max_block_size < 0 {
        e.add(
            format!("{at}.CommonCutMaxBlockSize"),
            "must be 0 (the importance decides) or more",
        );
    }
    let spacing_override = p
        .part_spacing_override
        .map(|v| e.non_negative(&format!("{at}.PartSpacingOverride"), v));
    // a tilt turns the part a little either side of each allowed rotation (searched as extra
    // angles; the result's Rotation is the exact angle used)
    let allowed = rotations(
        e,
        at,
        p.allowable_rotation.as_deref(),
        p.custom_rotation_step_angle,
    );
    let rotations = tilted(&allowed, p.allowable_tilt).unwrap_or_else(|why| {
        e.add(format!("{at}.AllowableTilt"), why);
        allowed
    });
    let kind = geometry_kind(e, at, p.geometry_definition_type.as_deref(), default_kind);
    let comp = compression(e, at, p.geometry_definition_compression_type.as_deref());
    let mut opts = import.clone();
    if !p.initial_rotation_angle_following_import_ccw.is_finite() {
        e.add(
            format!("{at}.InitialRotationAngleFollowingImportCCW"),
            "must be a number of degrees",
        );
    } else {
        opts.initial_rotation_deg = p.initial_rotation_angle_following_import_ccw;
    }
    let Some((path, bytes)) = source(
        e,
        at,
        kind,
        p.base64_encoded_geometry_definition.as_deref(),
        "EncodedPartJson",
        p.encoded_part_json.as_deref(),
        comp,
    ) else {
        return vec![];
    };
    let imported: Result<Imported, String> = match kind {
        GeometryKind::Dxf => import_dxf(&name, &bytes, &opts).map_err(|x| x.to_string()),
        GeometryKind::Json => import_contour_json(&name, &bytes, &opts, Side::Grow).map_err(|x| x.to_string()),
        GeometryKind::Parametric => serde_json::from_slice::<Parametric>(&bytes)
            .map_err(|x| format!("{name}: not a parametric shape ({x}); expected {{\"Shape\": \"Rectangle\" | \"Circle\" | \"Ring\" | \"RoundedRectangle\" | \"Polygon\", ...}}"))
            .and_then(|shape| parametric_part(&name, &shape, &opts).map_err(|x| x.to_string())),
    };
    let imported = match imported {
        Ok(i) => i,
        Err(why) => {
            e.add(path, why);
            return vec![];
        }
    };
    if e.0.len() > before {
        return vec![];
    }
    warnings.extend(imported.warnings);
    let many = imported.parts.len() > 1;
    imported
        .parts
        .into_iter()
        .enumerate()
        .map(|(k, ip)| PartSpec {
            id: if many {
                format!("{id}_{}", k + 1)
            } else {
                id.clone()
            },
            geometry: ip.geometry,
            quantity: p.quantity.max(0) as u32,
            rotations: rotations.clone(),
            allow_mirror: p.allow_mirror,
            priority: p.priority,
            spacing_override,
            nest_as_rectangle: p.nest_as_rectangle,
            filler_quantity: p.filler_part_quantity.max(0) as u32,
            kit: None,
            common_cut: p
                .allow_common_cut_if_enabled
                .then_some(p.common_cut_max_block_size.max(0) as u32),
        })
        .collect()
}

/// CommonCutSettings: `None` unless both a mode and an importance ask for common cutting.
/// The cost figures (MaterialCostPerUnitSqr, CuttingCostPerUnit, RegardingRatio) only need to
/// be numbers: kerf weighs cutting against material by the importance (README).
fn common_cutting(e: &mut Errors, c: &CommonCutSettings, at: &str) -> Option<CommonCutting> {
    let f = |name: &str| format!("{at}.{name}");
    let importance = e.pick(
        &f("CommonCuttingImportance"),
        c.common_cutting_importance.as_deref(),
        None,
        &[
            ("None", None),
            ("Low", Some(CutImportance::Low)),
            ("Medium", Some(CutImportance::Medium)),
            ("High", Some(CutImportance::High)),
        ],
    );
    let mode = e.pick(
        &f("CommonCutMode"),
        c.common_cut_mode.as_deref(),
        None,
        &[
            ("None", None),
            ("Pairs", Some(BlockMode::Pairs)),
            ("Chains", Some(BlockMode::Chains)),
            ("Grid", Some(BlockMode::Grid)),
        ],
    );
    let safety = e.pick(
        &f("CommonCutSafety"),
        c.common_cut_safety.as_deref(),
        CutSafety::Normal,
        &[
            ("Conservative", CutSafety::Conservative),
            ("Normal", CutSafety::Normal),
            ("Aggressive", CutSafety::Aggressive),
        ],
    );
    // every cut kerf makes runs from a block's outside edge to its outside edge, so a lead-in
    // always has the spacing outside the block: the check holds either way
    e.pick(
        &f("CommonCutLeadinCheck"),
        c.common_cut_leadin_check.as_deref(),
        (),
        &[("Enabled", ()), ("Disabled", ())],
    );
    for (name, v) in [
        ("MaterialCostPerUnitSqr", c.material_cost_per_unit_sqr),
        ("CuttingCostPerUnit", c.cutting_cost_per_unit),
        ("RegardingRatio", c.regarding_ratio),
    ] {
        e.non_negative(&f(name), v);
    }
    let gap = e.non_negative(&f("CommonCutGap"), c.common_cut_gap);
    let min_length = e.non_negative(&f("MinLengthOfCommonCut"), c.min_length_of_common_cut);
    let limit =
        |e: &mut Errors, name: &str, v: f64| Some(e.non_negative(&f(name), v)).filter(|v| *v > 0.0);
    let max_part_x = limit(
        e,
        "CommonCutPartsMaximumDimensionX",
        c.common_cut_parts_maximum_dimension_x,
    );
    let max_part_y = limit(
        e,
        "CommonCutPartsMaximumDimensionY",
        c.common_cut_parts_maximum_dimension_y,
    );
    Some(CommonCutting {
        mode: mode?,
        importance: importance?,
        safety,
        gap,
        min_length,
        max_part_x,
        max_part_y,
        only_pairs: c.only_pairs,
        may_enclose: c.can_introduce_holes_from_common_cut,
    })
}

/// An assembly's parts (converted by `convert_part`, which gets each one's index) as kit
/// members: each part's Quantity is its copies per kit, the assembly's Quantity the kits, and
/// all of a kit's parts nest at the highest Priority among them.
fn assembly(
    e: &mut Errors,
    asm: &Assembly,
    index: usize,
    at: &str,
    mut convert_part: impl FnMut(&mut Errors, &Base64Part, usize) -> Vec<PartSpec>,
) -> Vec<PartSpec> {
    let kits = if asm.quantity < 1 {
        e.add(
            format!("{at}.Quantity"),
            format!("must be at least 1 kit (got {})", asm.quantity),
        );
        1
    } else {
        asm.quantity as u32
    };
    let list = asm.parts.as_deref().unwrap_or_default();
    if list.is_empty() {
        e.add(format!("{at}.Parts"), "an assembly needs at least one part");
    }
    let mut members: Vec<PartSpec> = Vec::new();
    for (j, p) in list.iter().enumerate() {
        if p.filler_part_quantity > 0 {
            e.add(
                format!("{at}.Parts[{j}].FillerPartQuantity"),
                "an assembly's part takes no filler copies (they would belong to no kit); leave it 0",
            );
        }
        for mut spec in convert_part(e, p, j) {
            let per_kit = spec.quantity.max(1);
            let Some(quantity) = per_kit.checked_mul(kits) else {
                e.add(
                    format!("{at}.Quantity"),
                    format!(
                        "{kits} kits of {per_kit} copies of '{}' are too many",
                        spec.id
                    ),
                );
                continue;
            };
            spec.kit = Some(KitRole {
                assembly: index as u32,
                per_kit,
            });
            spec.quantity = quantity;
            spec.filler_quantity = 0;
            // a kit's parts are cut alone: a block of copies would tie kits together
            spec.common_cut = None;
            members.push(spec);
        }
    }
    let priority = members.iter().map(|m| m.priority).max().unwrap_or(0);
    for m in &mut members {
        m.priority = priority;
    }
    members
}

fn sheet(
    e: &mut Errors,
    s: &Base64Sheet,
    at: &str,
    index: usize,
    default_kind: GeometryKind,
    import: &ImportOptions,
    warnings: &mut Vec<String>,
) -> Option<SheetSpec> {
    let before = e.0.len();
    let id = s
        .identifier
        .clone()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| format!("Sheet{}", index + 1));
    if s.quantity < 0 {
        e.add(
            format!("{at}.Quantity"),
            "must be 0 (as many as needed) or more",
        );
    }
    let mut spacing =
        |name: &str, v: Option<f64>| e.non_negative(&format!("{at}.{name}"), v.unwrap_or(0.0));
    let (top, left, right, bottom) = (
        spacing("TopSpacing", s.top_spacing),
        spacing("LeftSpacing", s.left_spacing),
        spacing("RightSpacing", s.right_spacing),
        spacing("BottomSpacing", s.bottom_spacing),
    );
    let irregular_spacing = spacing("IrregularSheetSpacing", s.irregular_sheet_spacing);
    let has_geometry = [&s.base64_encoded_geometry_definition, &s.encoded_sheet_json]
        .iter()
        .any(|v| v.as_ref().is_some_and(|t| !t.trim().is_empty()));
    let shape = if has_geometry {
        let kind = geometry_kind(e, at, s.geometry_definition_type.as_deref(), default_kind);
        let comp = compression(e, at, s.geometry_definition_compression_type.as_deref());
        let (path, bytes) = source(
            e,
            at,
            kind,
            s.base64_encoded_geometry_definition.as_deref(),
            "EncodedSheetJson",
            s.encoded_sheet_json.as_deref(),
            comp,
        )?;
        let name = s
            .file_name_with_extension
            .clone()
            .unwrap_or_else(|| id.clone());
        let r = match kind {
            GeometryKind::Json => import_contour_json_sheet(&name, &bytes, import),
            _ => import_dxf_sheet(&name, &bytes, import),
        };
        match r {
            Ok((shape, w)) => {
                warnings.extend(w);
                let b = shape.bbox();
                SheetShape::Outline(shape.translate(-b.min.x, -b.min.y))
            }
            Err(why) => {
                e.add(path, why.to_string());
                return None;
            }
        }
    } else {
        let dim = |e: &mut Errors, name: &str, v: Option<f64>| match v {
            Some(v) if v.is_finite() && v > 0.0 => v,
            _ => {
                e.add(
                    format!("{at}.{name}"),
                    "a rectangular sheet needs a positive size (or give the sheet's geometry)",
                );
                0.0
            }
        };
        let width = dim(e, "RectangularXDimension", s.rectangular_x_dimension);
        let height = dim(e, "RectangularYDimension", s.rectangular_y_dimension);
        SheetShape::Rectangle { width, height }
    };
    if e.0.len() > before {
        return None;
    }
    Some(SheetSpec {
        id,
        shape,
        quantity: (s.quantity > 0).then_some(s.quantity as u32),
        priority: s.priority,
        top,
        left,
        right,
        bottom,
        irregular_spacing,
    })
}

/// A validated 2D submission: the problem, where results go, and whether it starts at once.
#[derive(Debug)]
pub struct Submission {
    pub converted: Converted,
    pub webhook: Option<url::Url>,
    pub start_now: bool,
}

/// Validates a DxfNestingRequest (or its /geometry and /parametric forms): the request itself,
/// and ResultsWebhookUri, an absolute HTTPS URL, required unless AutomaticallyStartNesting is
/// false (then results stream over the hub).
pub fn to_submission(
    req: &DxfNestingRequest,
    default_kind: GeometryKind,
) -> Result<Submission, Vec<FieldError>> {
    let start_now = req.automatically_start_nesting.unwrap_or(true);
    let mut e = Errors::default();
    let webhook = e.webhook(req.results_webhook_uri.as_deref(), start_now);
    let mut errors = e.0;
    let converted = match &req.request {
        Some(r) => {
            let converted = to_problem(r, default_kind, "Request")
                .map_err(|e| errors.extend(e))
                .ok();
            // the export settings are checked now: a bad one is refused with the request,
            // not when an export of an hours-old result is asked for
            if let Err(e) = super::exports::render_options(
                r.render_settings.as_ref(),
                r.report_source_settings.as_ref(),
                "Request",
            ) {
                errors.extend(e);
            }
            if let Err(e) = super::exports::dxf_options(
                r.dxf_export_settings.as_ref(),
                "Request.DXFExportSettings",
            ) {
                errors.extend(e);
            }
            if let Err(e) = super::exports::part_export_options(
                r.part_export_settings.as_ref(),
                "Request.PartExportSettings",
            ) {
                errors.extend(e);
            }
            if let Err(e) = super::exports::remnant_options(
                r.remnant_generation_settings.as_ref(),
                "Request.RemnantGenerationSettings",
            ) {
                errors.extend(e);
            }
            converted
        }
        None => {
            errors.push(FieldError {
                field: "Request".into(),
                message: "missing: parts, sheets and settings are required".into(),
            });
            None
        }
    };
    match converted {
        Some(converted) if errors.is_empty() => Ok(Submission {
            converted,
            webhook,
            start_now,
        }),
        _ => Err(errors),
    }
}
