//! Length units of imported geometry. Everything inside kerf is millimetres.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Units {
    /// Use the drawing's $INSUNITS (millimetres when the file does not say).
    #[default]
    FromFile,
    Millimetres,
    Centimetres,
    Metres,
    Inches,
    Feet,
}

impl Units {
    pub const ALL: [Units; 6] = [
        Units::FromFile,
        Units::Millimetres,
        Units::Centimetres,
        Units::Metres,
        Units::Inches,
        Units::Feet,
    ];

    /// Millimetres per unit; `None` for FromFile (decided by the file).
    pub fn to_mm(self) -> Option<f64> {
        match self {
            Units::FromFile => None,
            Units::Millimetres => Some(1.0),
            Units::Centimetres => Some(10.0),
            Units::Metres => Some(1000.0),
            Units::Inches => Some(25.4),
            Units::Feet => Some(304.8),
        }
    }

    /// Lenient parse (DESIGN 5.1): case-insensitive, ignoring `_`, `-` and spaces, British or US
    /// spelling, abbreviations, or the integer index.
    pub fn parse(s: &str) -> Option<Units> {
        let k = crate::lenient::enum_key(s);
        if let Ok(i) = k.parse::<usize>() {
            return Units::ALL.get(i).copied();
        }
        Some(match k.as_str() {
            "fromfile" | "file" | "auto" => Units::FromFile,
            "millimetres" | "millimeters" | "millimetre" | "millimeter" | "mm" => {
                Units::Millimetres
            }
            "centimetres" | "centimeters" | "centimetre" | "centimeter" | "cm" => {
                Units::Centimetres
            }
            "metres" | "meters" | "metre" | "meter" | "m" => Units::Metres,
            "inches" | "inch" | "in" => Units::Inches,
            "feet" | "foot" | "ft" => Units::Feet,
            _ => return None,
        })
    }
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Millimetres per drawing unit for a DXF $INSUNITS code (0 = unitless counts as millimetres).
pub fn insunits_to_mm(code: i32) -> f64 {
    match code {
        1 => 25.4,
        2 => 304.8,
        3 => 1_609_344.0,
        4 => 1.0,
        5 => 10.0,
        6 => 1000.0,
        7 => 1_000_000.0,
        8 => 25.4e-6,
        9 => 0.0254,
        10 => 914.4,
        11 => 1e-7,
        12 => 1e-6,
        13 => 1e-3,
        14 => 100.0,
        15 => 10_000.0,
        16 => 100_000.0,
        21 => 304.800_609_6,
        22 => 25.400_050_8,
        23 => 914.401_828_8,
        _ => 1.0,
    }
}
