// Writes tests/data/legacy_request.xml: a Base64NestingRequest serialised by .NET's
// XmlSerializer, as an older shop system sends it to POST /v1/nesting/legacy.
// The object model follows shared/spec/interface-spec.md: a "double" the spec does not call
// non-nullable is a double? (XmlSerializer writes xsi:nil="true" when it is null), and so on.
//
//   mcs -r:System.Xml.dll -out:/tmp/make.exe tests/data/legacy/MakeLegacyFixture.cs
//   mono /tmp/make.exe tests/data > tests/data/legacy_request.xml
//
// (Debian's mono-mcs; Mono's XmlSerializer writes what .NET's does.)
using System;
using System.Collections.Generic;
using System.IO;
using System.Xml.Serialization;

public class ImportLayerAssignment { public string ColourHex; public string LayerName; public string LineType; }
public class ImportSettings {
    public List<ImportLayerAssignment> CutLayers; public List<ImportLayerAssignment> AttachLayers; public List<ImportLayerAssignment> IgnoreLayers;
    public bool? UseAllPartsInFile; public bool? CollateMultipleBlockInserts; public bool? AppendPartNamesToIdentities;
    public bool? UsePartNamesAsIdentityOnMultiPartImport; public bool? AutomaticallyAttachUnusedCutAssignedGeometry;
    public string LayerNameForAutomaticallyAttachedGeometry; public string MeasurementUnitsOfImportGeometry;
    public double FromScale; public double ToScale;
}
public class NestSettings {
    public double PartSpacing; public bool ReportIntermediateResults; public double MaxRunTimeSeconds; public double? UtilisationStopTarget;
    public string RepeatPreference; public string NestingDirection; public string NestingOrigin; public string NestingObjective;
    public string InnerLoopFillPreference; public string FillerPartsStrategy; public string DiagnosticDataPath;
    public double? NestingAngleDegrees; public int MaximumCPUCount; public bool AllowEnginePopups; public bool ExportDiagnosticData;
    public bool StrictPartPriorities; public int MaximumDifferentSheetSizes;
}
public class RenderSettings {
    public string RenderFormat; public int xDimension; public int yDimension; public string BackColorARGB;
    public string OutlineLineColorARGB; public string PartFillColorARGB; public bool AutomaticallyChoosePartFillColor;
}
public class DXFExportSettings {
    public string DXFVersion; public string ExportFileType; public string FilePathWithoutExtension; public string ExportFolderPath;
    public string PreferredFileNameInFolderWithoutExtension; public string SheetExportSettings; public string OuterLoopDirection;
    public string InnerLoopDirection; public string ExportedGeometryStructure; public string AllPartsSingleLayerName; public string SheetsLayerName;
    public double? NestOrientationAngleCCW; public double? PartLabelHeight;
    public bool? AddPartLabels; public bool? AddNestStatistics; public bool? ExportSheetBoundaries; public bool? RemoveCommonEdges;
    public bool? ExportPartsAsBlocks; public bool? ExportAllPartsOnSingleLayer; public bool? AppendSheetDimensionsToFileName;
    public bool? AppendQuantityToFileName; public bool? AppendSheetIdentifierToFileName; public bool? SplitCirclesIntoArcPairs;
}
public class CommonCutSettings {
    public string CommonCuttingImportance; public string CommonCutSafety; public string CommonCutLeadinCheck; public string CommonCutMode;
    public double MaterialCostPerUnitSqr; public double CuttingCostPerUnit; public double MinLengthOfCommonCut; public double RegardingRatio;
    public double CommonCutPartsMaximumDimensionX; public double CommonCutPartsMaximumDimensionY; public double CommonCutGap;
    public bool CanIntroduceHolesFromCommonCut; public bool OnlyPairs; public bool AllowCommonCutOnHoles;
}
public class ReportSourceRenderingSettings {
    public RenderSettings NestingRenderSettings; public string RenderPartLabelMode; public double? PartLabelHeight;
    public RenderSettings PartPreviewRenderSettings;
}
public class Base64Part {
    public string Base64EncodedGeometryDefinition; public string GeometryDefinitionCompressionType; public string FileNameWithExtension;
    public string Identifier; public string GeometryDefinitionType; public int Quantity; public string AllowableRotation;
    public double AllowableTilt; public bool AllowMirror; public double? PartSpacingOverride; public int Priority; public string EncodedPartJson;
    public double InitialRotationAngleFollowingImportCCW; public double CustomRotationStepAngle; public bool AllowCommonCutIfEnabled;
    public int FillerPartQuantity; public bool NestAsRectangle; public int CommonCutMaxBlockSize;
}
public class Base64Sheet {
    public string Base64EncodedGeometryDefinition; public string GeometryDefinitionCompressionType; public string FileNameWithExtension;
    public string Identifier; public string GeometryDefinitionType; public double? RectangularXDimension; public double? RectangularYDimension;
    public double? IrregularSheetSpacing; public double? TopSpacing; public double? LeftSpacing; public double? RightSpacing;
    public double? BottomSpacing; public int Quantity; public int Priority; public string EncodedSheetJson;
}
public class Assembly { public List<Base64Part> Parts; public int Quantity; }
public class RemnantGenerationSettings {
    public double MinimumDimensionMM; public double MinimumAreaMM2; public bool GenerateRemnantsOnFinalNestedSheetOnly;
    public bool IncludeRemnantsInExportedNests; public bool AllowRemnantGenerationInsidePartHoles;
    public string ExportFolderPath; public string RemnantsLayerName; public string RemnantGenerationType;
}
public class PartExportSettings {
    public bool? AddPartLabel; public double? PartLabelHeight; public string InnerLoopDirection; public string OuterLoopDirection;
    public string DXFVersion; public string ExportedGeometryStructure;
}
public class Base64NestingRequest {
    public ImportSettings GeometryDefinitionImportSettings; public NestSettings NestSettings; public RenderSettings RenderSettings;
    public DXFExportSettings DXFExportSettings; public CommonCutSettings CommonCutSettings;
    public ReportSourceRenderingSettings ReportSourceSettings; public List<Base64Part> Parts; public List<Base64Sheet> Sheets;
    public List<Assembly> Assemblies; public RemnantGenerationSettings RemnantGenerationSettings;
    public PartExportSettings PartExportSettings; public string Tag;
}

public static class MakeLegacyFixture {
    static Base64Part Part(string dir, string file, string id, int quantity) {
        return new Base64Part {
            Base64EncodedGeometryDefinition = Convert.ToBase64String(File.ReadAllBytes(Path.Combine(dir, file))),
            FileNameWithExtension = file, Identifier = id, GeometryDefinitionType = "DXF", Quantity = quantity,
            AllowableRotation = "Rotate90", AllowCommonCutIfEnabled = true,
        };
    }
    public static void Main(string[] args) {
        string dir = args.Length > 0 ? args[0] : "tests/data";
        var request = new Base64NestingRequest {
            GeometryDefinitionImportSettings = new ImportSettings {
                CutLayers = new List<ImportLayerAssignment>(),
                AttachLayers = new List<ImportLayerAssignment> { new ImportLayerAssignment { LayerName = "ENGRAVE" } },
                MeasurementUnitsOfImportGeometry = "Millimetres", FromScale = 1, ToScale = 1,
            },
            NestSettings = new NestSettings {
                PartSpacing = 2.5, MaxRunTimeSeconds = 2, NestingObjective = "MaximiseUtilisation",
                MaximumCPUCount = 1, ReportIntermediateResults = false,
            },
            RenderSettings = new RenderSettings { RenderFormat = "Png", xDimension = 800, yDimension = 600, AutomaticallyChoosePartFillColor = true },
            ReportSourceSettings = new ReportSourceRenderingSettings {
                RenderPartLabelMode = "ID",
                NestingRenderSettings = new RenderSettings { RenderFormat = "Svg", xDimension = 400 },
            },
            Parts = new List<Base64Part> {
                Part(dir, "donut_r12.dxf", "donut", 3),
                Part(dir, "frame_with_hole_r12.dxf", "frame", 2),
                Part(dir, "square_polyline_r12.dxf", "square <small> & \"plain\"", 5),
            },
            Sheets = new List<Base64Sheet> {
                new Base64Sheet { Identifier = "S1", RectangularXDimension = 600, RectangularYDimension = 400, Quantity = 0 },
            },
            Assemblies = new List<Assembly>(),
            Tag = "legacy fixture",
        };
        var writer = new StringWriter();
        new XmlSerializer(typeof(Base64NestingRequest)).Serialize(writer, request);
        Console.Write(writer.ToString());
    }
}
