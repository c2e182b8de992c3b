//! Serde types of the interface, named exactly as `shared/spec/interface-spec.md` names them.
//! Nothing else in the crate speaks PascalCase JSON. Settings blocks that later issues consume
//! (renders, DXF export, reports, remnants, part export) are kept as raw JSON here and parsed
//! by the exports that use them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct DxfNestingRequest {
    /// Required (it may instead come as the Request query parameter).
    #[serde(rename = "Request")]
    #[schema(required = true)]
    pub request: Option<Base64NestingRequest>,
    #[serde(rename = "ResultsWebhookUri")]
    pub results_webhook_uri: Option<String>,
    #[serde(rename = "AutomaticallyStartNesting")]
    pub automatically_start_nesting: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Base64NestingRequest {
    #[serde(rename = "GeometryDefinitionImportSettings")]
    pub geometry_definition_import_settings: Option<ImportSettings>,
    #[serde(rename = "NestSettings")]
    pub nest_settings: Option<NestSettings>,
    #[serde(rename = "RenderSettings")]
    #[schema(value_type = Option<Object>)]
    pub render_settings: Option<serde_json::Value>,
    #[serde(rename = "DXFExportSettings")]
    #[schema(value_type = Option<Object>)]
    pub dxf_export_settings: Option<serde_json::Value>,
    #[serde(rename = "CommonCutSettings")]
    pub common_cut_settings: Option<CommonCutSettings>,
    #[serde(rename = "ReportSourceSettings")]
    #[schema(value_type = Option<Object>)]
    pub report_source_settings: Option<serde_json::Value>,
    #[serde(rename = "Parts")]
    pub parts: Option<Vec<Base64Part>>,
    #[serde(rename = "Sheets")]
    pub sheets: Option<Vec<Base64Sheet>>,
    #[serde(rename = "Assemblies")]
    pub assemblies: Option<Vec<Assembly>>,
    #[serde(rename = "RemnantGenerationSettings")]
    #[schema(value_type = Option<Object>)]
    pub remnant_generation_settings: Option<serde_json::Value>,
    #[serde(rename = "PartExportSettings")]
    #[schema(value_type = Option<Object>)]
    pub part_export_settings: Option<serde_json::Value>,
    #[serde(rename = "Tag")]
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Base64Part {
    #[serde(rename = "Base64EncodedGeometryDefinition")]
    pub base64_encoded_geometry_definition: Option<String>,
    #[serde(rename = "GeometryDefinitionCompressionType")]
    pub geometry_definition_compression_type: Option<String>,
    #[serde(rename = "FileNameWithExtension")]
    pub file_name_with_extension: Option<String>,
    #[serde(rename = "Identifier")]
    pub identifier: Option<String>,
    #[serde(rename = "GeometryDefinitionType")]
    pub geometry_definition_type: Option<String>,
    #[serde(rename = "Quantity")]
    pub quantity: i32,
    #[serde(rename = "AllowableRotation")]
    pub allowable_rotation: Option<String>,
    #[serde(rename = "AllowableTilt")]
    pub allowable_tilt: f64,
    #[serde(rename = "AllowMirror")]
    pub allow_mirror: bool,
    #[serde(rename = "PartSpacingOverride")]
    pub part_spacing_override: Option<f64>,
    #[serde(rename = "Priority")]
    pub priority: i32,
    #[serde(rename = "EncodedPartJson")]
    pub encoded_part_json: Option<String>,
    #[serde(rename = "InitialRotationAngleFollowingImportCCW")]
    pub initial_rotation_angle_following_import_ccw: f64,
    #[serde(rename = "CustomRotationStepAngle")]
    pub custom_rotation_step_angle: f64,
    #[serde(rename = "AllowCommonCutIfEnabled")]
    pub allow_common_cut_if_enabled: bool,
    #[serde(rename = "FillerPartQuantity")]
    pub filler_part_quantity: i32,
    #[serde(rename = "NestAsRectangle")]
    pub nest_as_rectangle: bool,
    #[serde(rename = "CommonCutMaxBlockSize")]
    pub common_cut_max_block_size: i32,
}

/// A kit: its parts (each Quantity is per kit) always nest together on one sheet, Quantity
/// kits in all.
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Assembly {
    #[serde(rename = "Parts")]
    pub parts: Option<Vec<Base64Part>>,
    #[serde(rename = "Quantity")]
    pub quantity: i32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct Base64Sheet {
    #[serde(rename = "Base64EncodedGeometryDefinition")]
    pub base64_encoded_geometry_definition: Option<String>,
    #[serde(rename = "GeometryDefinitionCompressionType")]
    pub geometry_definition_compression_type: Option<String>,
    #[serde(rename = "FileNameWithExtension")]
    pub file_name_with_extension: Option<String>,
    #[serde(rename = "Identifier")]
    pub identifier: Option<String>,
    #[serde(rename = "GeometryDefinitionType")]
    pub geometry_definition_type: Option<String>,
    #[serde(rename = "RectangularXDimension")]
    pub rectangular_x_dimension: Option<f64>,
    #[serde(rename = "RectangularYDimension")]
    pub rectangular_y_dimension: Option<f64>,
    #[serde(rename = "IrregularSheetSpacing")]
    pub irregular_sheet_spacing: Option<f64>,
    #[serde(rename = "TopSpacing")]
    pub top_spacing: Option<f64>,
    #[serde(rename = "LeftSpacing")]
    pub left_spacing: Option<f64>,
    #[serde(rename = "RightSpacing")]
    pub right_spacing: Option<f64>,
    #[serde(rename = "BottomSpacing")]
    pub bottom_spacing: Option<f64>,
    #[serde(rename = "Quantity")]
    pub quantity: i32,
    #[serde(rename = "Priority")]
    pub priority: i32,
    #[serde(rename = "EncodedSheetJson")]
    pub encoded_sheet_json: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct ImportLayerAssignment {
    #[serde(rename = "ColourHex")]
    pub colour_hex: Option<String>,
    #[serde(rename = "LayerName")]
    pub layer_name: Option<String>,
    #[serde(rename = "LineType")]
    pub line_type: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct ImportSettings {
    #[serde(rename = "CutLayers")]
    pub cut_layers: Option<Vec<ImportLayerAssignment>>,
    #[serde(rename = "AttachLayers")]
    pub attach_layers: Option<Vec<ImportLayerAssignment>>,
    #[serde(rename = "IgnoreLayers")]
    pub ignore_layers: Option<Vec<ImportLayerAssignment>>,
    #[serde(rename = "UseAllPartsInFile")]
    pub use_all_parts_in_file: Option<bool>,
    #[serde(rename = "CollateMultipleBlockInserts")]
    pub collate_multiple_block_inserts: Option<bool>,
    #[serde(rename = "AppendPartNamesToIdentities")]
    pub append_part_names_to_identities: Option<bool>,
    #[serde(rename = "UsePartNamesAsIdentityOnMultiPartImport")]
    pub use_part_names_as_identity_on_multi_part_import: Option<bool>,
    #[serde(rename = "AutomaticallyAttachUnusedCutAssignedGeometry")]
    pub automatically_attach_unused_cut_assigned_geometry: Option<bool>,
    #[serde(rename = "LayerNameForAutomaticallyAttachedGeometry")]
    pub layer_name_for_automatically_attached_geometry: Option<String>,
    #[serde(rename = "MeasurementUnitsOfImportGeometry")]
    pub measurement_units_of_import_geometry: Option<String>,
    #[serde(rename = "FromScale")]
    pub from_scale: f64,
    #[serde(rename = "ToScale")]
    pub to_scale: f64,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct NestSettings {
    #[serde(rename = "PartSpacing")]
    pub part_spacing: f64,
    #[serde(rename = "ReportIntermediateResults")]
    pub report_intermediate_results: bool,
    #[serde(rename = "MaxRunTimeSeconds")]
    pub max_run_time_seconds: f64,
    #[serde(rename = "UtilisationStopTarget")]
    pub utilisation_stop_target: Option<f64>,
    #[serde(rename = "RepeatPreference")]
    pub repeat_preference: Option<String>,
    #[serde(rename = "NestingDirection")]
    pub nesting_direction: Option<String>,
    #[serde(rename = "NestingOrigin")]
    pub nesting_origin: Option<String>,
    #[serde(rename = "NestingObjective")]
    pub nesting_objective: Option<String>,
    #[serde(rename = "InnerLoopFillPreference")]
    pub inner_loop_fill_preference: Option<String>,
    #[serde(rename = "FillerPartsStrategy")]
    pub filler_parts_strategy: Option<String>,
    #[serde(rename = "DiagnosticDataPath")]
    pub diagnostic_data_path: Option<String>,
    #[serde(rename = "NestingAngleDegrees")]
    pub nesting_angle_degrees: Option<f64>,
    #[serde(rename = "MaximumCPUCount")]
    pub maximum_cpu_count: i32,
    #[serde(rename = "AllowEnginePopups")]
    pub allow_engine_popups: bool,
    #[serde(rename = "ExportDiagnosticData")]
    pub export_diagnostic_data: bool,
    #[serde(rename = "StrictPartPriorities")]
    pub strict_part_priorities: bool,
    #[serde(rename = "MaximumDifferentSheetSizes")]
    pub maximum_different_sheet_sizes: i32,
}

/// Common-line cutting (DESIGN 5.1 gives the enumerations and their defaults).
#[derive(Clone, Debug, Default, Deserialize, Serialize, ToSchema)]
#[serde(default)]
pub struct CommonCutSettings {
    #[serde(rename = "CommonCuttingImportance")]
    pub common_cutting_importance: Option<String>,
    #[serde(rename = "CommonCutSafety")]
    pub common_cut_safety: Option<String>,
    #[serde(rename = "CommonCutLeadinCheck")]
    pub common_cut_leadin_check: Option<String>,
    #[serde(rename = "CommonCutMode")]
    pub common_cut_mode: Option<String>,
    #[serde(rename = "MaterialCostPerUnitSqr")]
    pub material_cost_per_unit_sqr: f64,
    #[serde(rename = "CuttingCostPerUnit")]
    pub cutting_cost_per_unit: f64,
    #[serde(rename = "MinLengthOfCommonCut")]
    pub min_length_of_common_cut: f64,
    #[serde(rename = "RegardingRatio")]
    pub regarding_ratio: f64,
    #[serde(rename = "CommonCutPartsMaximumDimensionX")]
    pub common_cut_parts_maximum_dimension_x: f64,
    #[serde(rename = "CommonCutPartsMaximumDimensionY")]
    pub common_cut_parts_maximum_dimension_y: f64,
    #[serde(rename = "CommonCutGap")]
    pub common_cut_gap: f64,
    #[serde(rename = "CanIntroduceHolesFromCommonCut")]
    pub can_introduce_holes_from_common_cut: bool,
    #[serde(rename = "OnlyPairs")]
    pub only_pairs: bool,
    #[serde(rename = "AllowCommonCutOnHoles")]
    pub allow_common_cut_on_holes: bool,
}
