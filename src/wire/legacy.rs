//! The legacy XML endpoint (DESIGN 5.7): POST /v1/nesting/legacy carries a Base64NestingRequest
//! written as .NET's XmlSerializer writes it (root `Base64NestingRequest`, an element per
//! property, lists as repeated elements named by their type, `xsi:nil="true"` for null
//! nullable values, booleans `true`/`false`, invariant-culture numbers), and its results are
//! NestingResultData in the same style.
//!
//! Reading: quick-xml's serde deserializer fills mirror types of the object model (the list
//! wrappers XML has and JSON does not, and the settings blocks typed, since XML text carries
//! no types of its own); they become the JSON model's `Base64NestingRequest`, which is then
//! validated exactly as a JSON submission is. Every error names the element by its path
//! (`Base64NestingRequest/Parts/Base64Part[2]/Quantity`, indices from 1 as in XPath).
//! Elements the object model does not have are skipped, as XmlSerializer skips them (a .NET
//! client writes every property of its own version of the model).
//!
//! Writing: the JSON form of a NestingResultData, element by element with quick-xml's writer
//! (`tests/service_legacy.rs` reads it back with XmlSerializer itself, under Mono).

use super::convert::FieldError;
use super::exports::{DxfSettingsBody, RemnantSettingsBody, RenderSettingsBody};
use super::responses::NestingResultData;
use super::types::{
    Assembly, Base64NestingRequest, Base64Part, Base64Sheet, CommonCutSettings, DxfNestingRequest,
    ImportLayerAssignment, ImportSettings, NestSettings,
};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The root element of a legacy request.
pub const ROOT: &str = "Base64NestingRequest";
/// The root element of a legacy result.
pub const RESULT_ROOT: &str = "NestingResultData";
const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";
const XSD: &str = "http://www.w3.org/2001/XMLSchema";

/// POST /v1/nesting/legacy's JSON body.
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(default)]
pub struct LegacyNestingRequest {
    /// The Base64NestingRequest as an XML document (XmlSerializer's form).
    #[serde(rename = "LegacyNestingXML")]
    #[schema(required = true)]
    pub legacy_nesting_xml: Option<String>,
    /// Where the result (an XML document) is POSTed: an absolute HTTPS URL.
    #[serde(rename = "ResultsWebhookUri")]
    #[schema(required = true)]
    pub results_webhook_uri: Option<String>,
}

/// A list property: `<Parts><Base64Part>...</Base64Part>...</Parts>`.
#[derive(Debug, Default, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de> + Named"))]
struct List<T> {
    #[serde(rename = "$value", default = "Vec::new")]
    items: Vec<Item<T>>,
}

/// One child of a list: the item element the list must hold, or any other (a wrong element,
/// reported by name).
#[derive(Debug)]
enum Item<T> {
    Expected(T),
    Other(String),
}

/// The element name the items of a list property must have (XmlSerializer names them by
/// their type).
trait Named {
    const NAME: &'static str;
}
impl Named for Base64Part {
    const NAME: &'static str = "Base64Part";
}
impl Named for Base64Sheet {
    const NAME: &'static str = "Base64Sheet";
}
impl Named for ImportLayerAssignment {
    const NAME: &'static str = "ImportLayerAssignment";
}
impl Named for XmlAssembly {
    const NAME: &'static str = "Assembly";
}

impl<'de, T: Deserialize<'de> + Named> Deserialize<'de> for Item<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Named> serde::de::Visitor<'de> for Visit<T> {
            type Value = Item<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a {} element", T::NAME)
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, a: A) -> Result<Item<T>, A::Error> {
                use serde::de::VariantAccess;
                let (name, v): (String, _) = a.variant()?;
                if name == T::NAME {
                    v.newtype_variant().map(Item::Expected)
                } else {
                    v.newtype_variant::<serde::de::IgnoredAny>()?;
                    Ok(Item::Other(name))
                }
            }
        }
        // the element's name chooses the "variant": quick-xml maps `$value` children to enums
        d.deserialize_enum("Item", &[T::NAME], Visit(std::marker::PhantomData))
    }
}

impl<T> List<T> {
    /// The items, or the name of the first element that is not one.
    fn into_items(self) -> Result<Vec<T>, (usize, String)> {
        self.items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Item::Expected(t) => Ok(t),
                Item::Other(name) => Err((i, name)),
            })
            .collect()
    }
}

/// ImportSettings as XML: its three layer lists are wrapped.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct XmlImportSettings {
    #[serde(rename = "CutLayers")]
    cut_layers: Option<List<ImportLayerAssignment>>,
    #[serde(rename = "AttachLayers")]
    attach_layers: Option<List<ImportLayerAssignment>>,
    #[serde(rename = "IgnoreLayers")]
    ignore_layers: Option<List<ImportLayerAssignment>>,
    #[serde(rename = "UseAllPartsInFile")]
    use_all_parts_in_file: Option<bool>,
    #[serde(rename = "CollateMultipleBlockInserts")]
    collate_multiple_block_inserts: Option<bool>,
    #[serde(rename = "AppendPartNamesToIdentities")]
    append_part_names_to_identities: Option<bool>,
    #[serde(rename = "UsePartNamesAsIdentityOnMultiPartImport")]
    use_part_names_as_identity_on_multi_part_import: Option<bool>,
    #[serde(rename = "AutomaticallyAttachUnusedCutAssignedGeometry")]
    automatically_attach_unused_cut_assigned_geometry: Option<bool>,
    #[serde(rename = "LayerNameForAutomaticallyAttachedGeometry")]
    layer_name_for_automatically_attached_geometry: Option<String>,
    #[serde(rename = "MeasurementUnitsOfImportGeometry")]
    measurement_units_of_import_geometry: Option<String>,
    #[serde(rename = "FromScale")]
    from_scale: f64,
    #[serde(rename = "ToScale")]
    to_scale: f64,
}

/// ReportSourceRenderingSettings as XML: its two render blocks typed.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct XmlReportSource {
    #[serde(rename = "NestingRenderSettings")]
    nesting_render_settings: Option<RenderSettingsBody>,
    #[serde(rename = "RenderPartLabelMode")]
    render_part_label_mode: Option<String>,
    #[serde(rename = "PartLabelHeight")]
    part_label_height: Option<f64>,
    #[serde(rename = "PartPreviewRenderSettings")]
    part_preview_render_settings: Option<RenderSettingsBody>,
}

/// PartExportSettings as XML (the settings `wire::exports::part_export_options` reads).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct XmlPartExport {
    #[serde(rename = "AddPartLabel")]
    add_part_label: Option<bool>,
    #[serde(rename = "PartLabelHeight")]
    part_label_height: Option<f64>,
    #[serde(rename = "InnerLoopDirection")]
    inner_loop_direction: Option<String>,
    #[serde(rename = "OuterLoopDirection")]
    outer_loop_direction: Option<String>,
    #[serde(rename = "DXFVersion")]
    dxf_version: Option<String>,
    #[serde(rename = "ExportedGeometryStructure")]
    exported_geometry_structure: Option<String>,
}

/// An Assembly as XML.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct XmlAssembly {
    #[serde(rename = "Parts")]
    parts: Option<List<Base64Part>>,
    #[serde(rename = "Quantity")]
    quantity: i32,
}

/// The Base64NestingRequest object model as XmlSerializer writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct XmlRequest {
    #[serde(rename = "GeometryDefinitionImportSettings")]
    import: Option<XmlImportSettings>,
    #[serde(rename = "NestSettings")]
    nest_settings: Option<NestSettings>,
    #[serde(rename = "RenderSettings")]
    render_settings: Option<RenderSettingsBody>,
    #[serde(rename = "DXFExportSettings")]
    dxf_export_settings: Option<DxfSettingsBody>,
    #[serde(rename = "CommonCutSettings")]
    common_cut_settings: Option<CommonCutSettings>,
    #[serde(rename = "ReportSourceSettings")]
    report_source_settings: Option<XmlReportSource>,
    #[serde(rename = "Parts")]
    parts: Option<List<Base64Part>>,
    #[serde(rename = "Sheets")]
    sheets: Option<List<Base64Sheet>>,
    #[serde(rename = "Assemblies")]
    assemblies: Option<List<XmlAssembly>>,
    #[serde(rename = "RemnantGenerationSettings")]
    remnant_generation_settings: Option<RemnantSettingsBody>,
    #[serde(rename = "PartExportSettings")]
    part_export_settings: Option<XmlPartExport>,
    #[serde(rename = "Tag")]
    tag: Option<String>,
}

/// The element path of a serde path (`Parts.$value[1].Quantity`), indices from 1.
fn element_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = ROOT.to_string();
    let mut pending_list: Option<&str> = None;
    for seg in path.iter() {
        match seg {
            Segment::Map { key } if key == "$value" => {}
            Segment::Map { key } => {
                out.push('/');
                out.push_str(key);
                pending_list = list_item(key);
            }
            Segment::Seq { index } => {
                let item = pending_list.take().unwrap_or("item");
                out.push_str(&format!("/{item}[{}]", index + 1));
            }
            Segment::Enum { .. } => {}
            Segment::Unknown => out.push_str("/?"),
        }
    }
    out
}

/// The item element of a list property.
fn list_item(property: &str) -> Option<&'static str> {
    Some(match property {
        "Parts" => "Base64Part",
        "Sheets" => "Base64Sheet",
        "CutLayers" | "AttachLayers" | "IgnoreLayers" => "ImportLayerAssignment",
        "Assemblies" => "Assembly",
        _ => return None,
    })
}

/// A JSON path of the converted request (`Request.Parts[2].Quantity`) as the element path of
/// the XML it came from (`Base64NestingRequest/Parts/Base64Part[3]/Quantity`).
pub fn element_path_of(json_path: &str) -> String {
    let Some(rest) = json_path.strip_prefix("Request") else {
        return json_path.to_string();
    };
    let mut out = ROOT.to_string();
    for part in rest.split('.').filter(|p| !p.is_empty()) {
        match part.split_once('[') {
            Some((name, index)) => {
                let i: usize = index.trim_end_matches(']').parse().unwrap_or(0);
                let item = list_item(name).unwrap_or("item");
                out.push_str(&format!("/{name}/{item}[{}]", i + 1));
            }
            None => {
                out.push('/');
                out.push_str(part);
            }
        }
    }
    out
}

fn error(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

/// Reads a LegacyNestingXML document into the JSON model's Base64NestingRequest. Errors name
/// the element (the root's name, malformed XML, a value of the wrong type, an element that
/// does not belong in a list).
pub fn parse_request(xml: &str) -> Result<Base64NestingRequest, FieldError> {
    let root = root_name(xml)?;
    if root != ROOT {
        return Err(error(
            root.clone(),
            format!("the document's root element is <{root}>; a legacy request is a <{ROOT}>"),
        ));
    }
    let mut de = quick_xml::de::Deserializer::from_str(xml);
    let x: XmlRequest = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| error(element_path(e.path()), e.into_inner().to_string()))?;
    to_model(x)
}

/// The name of the document's root element (after the declaration and comments).
fn root_name(xml: &str) -> Result<String, FieldError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                return Ok(e.local_name().into_inner().to_string())
            }
            Ok(Event::Eof) => return Err(error(ROOT, "the document has no root element")),
            Ok(Event::Text(t)) if !t.clone().into_inner().trim().is_empty() => {
                return Err(error(
                    ROOT,
                    "the document has text before its root element: not XML",
                ))
            }
            Ok(_) => {}
            Err(e) => {
                return Err(error(
                    ROOT,
                    format!(
                        "not well-formed XML at byte {}: {e}",
                        reader.buffer_position()
                    ),
                ))
            }
        }
    }
}

fn items<T>(list: Option<List<T>>, at: &str) -> Result<Option<Vec<T>>, FieldError>
where
    T: Named,
{
    list.map(|l| {
        l.into_items().map_err(|(i, name)| {
            error(
                format!("{at}/{name}[{}]", i + 1),
                format!(
                    "<{name}> does not belong here: the list holds <{}> elements",
                    T::NAME
                ),
            )
        })
    })
    .transpose()
}

fn to_value<T: Serialize>(t: Option<T>) -> Option<Value> {
    t.map(|t| serde_json::to_value(t).expect("settings blocks serialize"))
}

fn to_model(x: XmlRequest) -> Result<Base64NestingRequest, FieldError> {
    let at = |p: &str| format!("{ROOT}/{p}");
    let import = match x.import {
        None => None,
        Some(i) => Some(ImportSettings {
            cut_layers: items(
                i.cut_layers,
                &at("GeometryDefinitionImportSettings/CutLayers"),
            )?,
            attach_layers: items(
                i.attach_layers,
                &at("GeometryDefinitionImportSettings/AttachLayers"),
            )?,
            ignore_layers: items(
                i.ignore_layers,
                &at("GeometryDefinitionImportSettings/IgnoreLayers"),
            )?,
            use_all_parts_in_file: i.use_all_parts_in_file,
            collate_multiple_block_inserts: i.collate_multiple_block_inserts,
            append_part_names_to_identities: i.append_part_names_to_identities,
            use_part_names_as_identity_on_multi_part_import: i
                .use_part_names_as_identity_on_multi_part_import,
            automatically_attach_unused_cut_assigned_geometry: i
                .automatically_attach_unused_cut_assigned_geometry,
            layer_name_for_automatically_attached_geometry: i
                .layer_name_for_automatically_attached_geometry,
            measurement_units_of_import_geometry: i.measurement_units_of_import_geometry,
            from_scale: i.from_scale,
            to_scale: i.to_scale,
        }),
    };
    let assemblies = match items(x.assemblies, &at("Assemblies"))? {
        None => None,
        Some(list) => Some(
            list.into_iter()
                .enumerate()
                .map(|(k, a)| {
                    Ok(Assembly {
                        parts: items(
                            a.parts,
                            &at(&format!("Assemblies/Assembly[{}]/Parts", k + 1)),
                        )?,
                        quantity: a.quantity,
                    })
                })
                .collect::<Result<Vec<Assembly>, FieldError>>()?,
        ),
    };
    Ok(Base64NestingRequest {
        geometry_definition_import_settings: import,
        nest_settings: x.nest_settings,
        render_settings: to_value(x.render_settings),
        dxf_export_settings: to_value(x.dxf_export_settings),
        common_cut_settings: x.common_cut_settings,
        report_source_settings: to_value(x.report_source_settings),
        parts: items(x.parts, &at("Parts"))?,
        sheets: items(x.sheets, &at("Sheets"))?,
        assemblies,
        remnant_generation_settings: to_value(x.remnant_generation_settings),
        part_export_settings: to_value(x.part_export_settings),
        tag: x.tag,
    })
}

/// A legacy submission as the standard DxfNestingRequest it stands for (its errors: the
/// element paths of the XML, or the JSON body's own field names).
pub fn to_nesting_request(req: &LegacyNestingRequest) -> Result<DxfNestingRequest, FieldError> {
    let xml = req
        .legacy_nesting_xml
        .as_deref()
        .filter(|x| !x.trim().is_empty())
        .ok_or_else(|| {
            error(
                "LegacyNestingXML",
                "missing: the Base64NestingRequest as an XML document",
            )
        })?;
    Ok(DxfNestingRequest {
        request: Some(parse_request(xml)?),
        results_webhook_uri: req.results_webhook_uri.clone(),
        automatically_start_nesting: None,
    })
}

/// A NestingResultData (interim, final or error) as the XML document the legacy endpoint
/// delivers: XmlSerializer's layout, elements in the types' declaration order, lists wrapped
/// and their items named by type, null strings left out, booleans `true`/`false`, numbers as
/// JSON writes them (invariant: a point, no thousands separators; exponents as XML Schema
/// allows).
pub fn result_xml(data: &NestingResultData) -> String {
    let value = serde_json::to_value(data).expect("wire types serialize");
    let mut w = quick_xml::Writer::new_with_indent(Vec::new(), b' ', 2);
    let write = |w: &mut quick_xml::Writer<Vec<u8>>| -> std::io::Result<()> {
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))?;
        let mut root = BytesStart::new(RESULT_ROOT);
        root.push_attribute(("xmlns:xsi", XSI));
        root.push_attribute(("xmlns:xsd", XSD));
        w.write_event(Event::Start(root))?;
        if let Value::Object(fields) = &value {
            for (name, v) in fields {
                element(w, name, v)?;
            }
        }
        w.write_event(Event::End(BytesEnd::new(RESULT_ROOT)))
    };
    write(&mut w).expect("writing to memory cannot fail");
    String::from_utf8(w.into_inner()).expect("the writer writes UTF-8")
}

/// The element name of a list's items in results (their .NET type names).
fn result_item(list: &str) -> &str {
    match list {
        "NestedSheetsInfo" => "NestedSheetInfo",
        "UnplacedParts" => "UnplacedPart",
        other => other.strip_suffix('s').unwrap_or(other),
    }
}

fn element(w: &mut quick_xml::Writer<Vec<u8>>, name: &str, v: &Value) -> std::io::Result<()> {
    match v {
        // XmlSerializer leaves out a null reference (a string); the result's nullable numbers
        // are left out when null already (they would be xsi:nil="true")
        Value::Null => Ok(()),
        Value::Object(fields) => {
            w.write_event(Event::Start(BytesStart::new(name)))?;
            for (k, v) in fields {
                element(w, k, v)?;
            }
            w.write_event(Event::End(BytesEnd::new(name)))
        }
        Value::Array(items) if items.is_empty() => {
            w.write_event(Event::Empty(BytesStart::new(name)))
        }
        Value::Array(items) => {
            w.write_event(Event::Start(BytesStart::new(name)))?;
            let item = result_item(name);
            for v in items {
                element(w, item, v)?;
            }
            w.write_event(Event::End(BytesEnd::new(name)))
        }
        Value::Bool(b) => text(w, name, if *b { "true" } else { "false" }),
        Value::Number(n) => text(w, name, &n.to_string()),
        Value::String(s) => text(w, name, s),
    }
}

fn text(w: &mut quick_xml::Writer<Vec<u8>>, name: &str, content: &str) -> std::io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(name)))?;
    // characters XML 1.0 cannot carry at all (control characters) are left out
    let clean: String = content
        .chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || *c >= ' ')
        .collect();
    w.write_event(Event::Text(BytesText::new(&clean)))?;
    w.write_event(Event::End(BytesEnd::new(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"<?xml version="1.0" encoding="utf-16"?>
<Base64NestingRequest xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <NestSettings>
    <PartSpacing>2.5</PartSpacing>
    <ReportIntermediateResults>false</ReportIntermediateResults>
    <MaxRunTimeSeconds>1</MaxRunTimeSeconds>
    <UtilisationStopTarget xsi:nil="true" />
    <MaximumCPUCount>1</MaximumCPUCount>
  </NestSettings>
  <Parts>
    <Base64Part>
      <Identifier>P1</Identifier>
      <Quantity>3</Quantity>
      <AllowableTilt>0</AllowableTilt>
      <AllowMirror>true</AllowMirror>
      <PartSpacingOverride xsi:nil="true" />
      <Priority>0</Priority>
    </Base64Part>
    <Base64Part>
      <Identifier>P2</Identifier>
      <Quantity>1</Quantity>
    </Base64Part>
  </Parts>
  <Sheets />
  <Assemblies />
</Base64NestingRequest>"#;

    #[test]
    fn reads_xml_serializer_output_with_nils_lists_and_booleans() {
        let r = parse_request(MINIMAL).unwrap();
        let ns = r.nest_settings.unwrap();
        assert_eq!(ns.part_spacing, 2.5);
        assert_eq!(ns.utilisation_stop_target, None);
        let parts = r.parts.unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].identifier.as_deref(), Some("P1"));
        assert!(parts[0].allow_mirror);
        assert_eq!(parts[0].part_spacing_override, None);
        assert_eq!(parts[1].quantity, 1);
        assert!(r.sheets.is_some_and(|s| s.is_empty()));
        assert!(r.assemblies.is_some_and(|a| a.is_empty()));
    }

    #[test]
    fn reads_assemblies_with_their_parts() {
        let xml = MINIMAL.replace(
            "<Assemblies />",
            "<Assemblies><Assembly><Parts><Base64Part><Identifier>K1</Identifier>\
             <Quantity>2</Quantity></Base64Part></Parts><Quantity>5</Quantity></Assembly>\
             </Assemblies>",
        );
        let a = parse_request(&xml).unwrap().assemblies.unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].quantity, 5);
        let parts = a[0].parts.as_ref().unwrap();
        assert_eq!(
            (parts[0].identifier.as_deref(), parts[0].quantity),
            (Some("K1"), 2)
        );
        // the wrong element in an assembly's parts is named by its path
        let wrong = MINIMAL.replace(
            "<Assemblies />",
            "<Assemblies><Assembly><Parts><Base64Sheet /></Parts></Assembly></Assemblies>",
        );
        let e = parse_request(&wrong).unwrap_err();
        assert_eq!(
            e.field,
            "Base64NestingRequest/Assemblies/Assembly[1]/Parts/Base64Sheet[1]"
        );
    }

    #[test]
    fn errors_name_the_element() {
        let bad = MINIMAL.replace("<Quantity>1</Quantity>", "<Quantity>one</Quantity>");
        let e = parse_request(&bad).unwrap_err();
        assert_eq!(
            e.field, "Base64NestingRequest/Parts/Base64Part[2]/Quantity",
            "{e:?}"
        );
        let wrong = MINIMAL.replace("<Sheets />", "<Sheets><Base64Part /></Sheets>");
        let e = parse_request(&wrong).unwrap_err();
        assert_eq!(
            e.field, "Base64NestingRequest/Sheets/Base64Part[1]",
            "{e:?}"
        );
        let root = MINIMAL.replace("Base64NestingRequest", "NestingRequest");
        let e = parse_request(&root).unwrap_err();
        assert!(e.message.contains("<NestingRequest>"), "{e:?}");
        let broken = MINIMAL.replace("</Parts>", "</Part>");
        let e = parse_request(&broken).unwrap_err();
        assert!(e.field.starts_with("Base64NestingRequest"), "{e:?}");
        assert_eq!(
            element_path_of("Request.Parts[2].Identifier"),
            "Base64NestingRequest/Parts/Base64Part[3]/Identifier"
        );
        assert_eq!(element_path_of("ResultsWebhookUri"), "ResultsWebhookUri");
    }
}
