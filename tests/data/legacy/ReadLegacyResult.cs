// Reads a legacy result (NestingResultData as XML) with .NET's XmlSerializer, as an older shop
// system does, and prints what it read as one line of key=value pairs for the test to compare
// (tests/service_legacy.rs compiles and runs it under Mono when mcs and mono are installed).
//
//   mcs -r:System.Xml.dll -out:read.exe tests/data/legacy/ReadLegacyResult.cs
//   mono read.exe result.xml
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Xml.Serialization;

public class NestedSheetInfo {
    public string SheetIdentifier; public int Multiplicity; public double XDimension; public double YDimension;
    public double Utilisation; public double UsedLength; public int PartCount;
}
public class UnplacedPart { public string PartIdentifier; public int UnplacedQuantity; public string Reason; }
public class NestingStatusMessage {
    public int NestingStatus; public string ResultIdentity; public string ErrorReport; public string ErrorCode;
    public double? Utilisation; public int? SheetsUsed; public int? PartsRequested; public int? PartsPlaced;
    public int? PartsUnplaced; public double? ElapsedSeconds; public string Units;
    public List<NestedSheetInfo> NestedSheetsInfo; public List<UnplacedPart> UnplacedParts;
}
public class NestingResultData { public string RequestId; public string NestIdentifier; public NestingStatusMessage Status; }

public static class ReadLegacyResult {
    public static int Main(string[] args) {
        var serializer = new XmlSerializer(typeof(NestingResultData));
        // unknown elements would be skipped silently: count them, the test wants none
        int unknown = 0;
        serializer.UnknownElement += (s, e) => unknown++;
        serializer.UnknownAttribute += (s, e) => unknown++;
        NestingResultData r;
        using (var reader = new StreamReader(args[0])) { r = (NestingResultData)serializer.Deserialize(reader); }
        var s1 = r.Status.NestedSheetsInfo.Count > 0 ? r.Status.NestedSheetsInfo[0] : null;
        Console.WriteLine(string.Join(";", new[] {
            "RequestId=" + r.RequestId,
            "NestingStatus=" + r.Status.NestingStatus,
            "ResultIdentity=" + r.Status.ResultIdentity,
            "ErrorReport=" + (r.Status.ErrorReport == null ? "(null)" : r.Status.ErrorReport),
            "PartsPlaced=" + r.Status.PartsPlaced,
            "Utilisation=" + r.Status.Utilisation.Value.ToString("G17", CultureInfo.InvariantCulture),
            "Sheets=" + r.Status.NestedSheetsInfo.Count,
            "FirstSheet=" + (s1 == null ? "" : s1.SheetIdentifier + "@" + s1.XDimension.ToString(CultureInfo.InvariantCulture)),
            "Unplaced=" + r.Status.UnplacedParts.Count,
            "Unknown=" + unknown,
        }));
        return 0;
    }
}
