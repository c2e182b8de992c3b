//! AutoCAD Colour Index (ACI) to RGB, for matching layer assignments given as ColourHex.

/// RGB of an ACI index (1..=255); 0 (BYBLOCK) and 256 (BYLAYER) are resolved by the caller.
pub fn aci_to_rgb(i: u8) -> u32 {
    match i {
        1 => 0xFF0000,
        2 => 0xFFFF00,
        3 => 0x00FF00,
        4 => 0x00FFFF,
        5 => 0x0000FF,
        6 => 0xFF00FF,
        7 | 0 => 0xFFFFFF,
        8 => 0x808080,
        9 => 0xC0C0C0,
        250 => 0x333333,
        251 => 0x505050,
        252 => 0x696969,
        253 => 0x828282,
        254 => 0xBEBEBE,
        255 => 0xFFFFFF,
        10..=249 => {
            // 24 hues 15 degrees apart; within each, 5 brightness levels, each full and half saturated
            let hue = ((i as u32 / 10) - 1) as f64 * 15.0;
            let level = (i % 10) / 2;
            let v = [255.0, 165.0, 127.0, 76.0, 38.0][level as usize];
            let s = if i.is_multiple_of(2) { 1.0 } else { 0.5 };
            hsv(hue, s, v)
        }
    }
}

/// RGB (0xRRGGBB) of a hue in degrees, a saturation in 0..=1 and a value in 0..=255.
pub fn hsv(h: f64, s: f64, v: f64) -> u32 {
    let c = v * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let q = |t: f64| ((t + m).floor() as u32).min(255);
    (q(r) << 16) | (q(g) << 8) | q(b)
}

/// Parses a ColourHex value: `#RRGGBB`, `RRGGBB`, `0xRRGGBB`, `AARRGGBB`, or a decimal ACI index.
pub fn parse_colour(s: &str) -> Option<u32> {
    let t = s.trim();
    if let Ok(i) = t.parse::<u16>() {
        if (1..=255).contains(&i) {
            return Some(aci_to_rgb(i as u8));
        }
    }
    let h = t
        .trim_start_matches('#')
        .trim_start_matches("0x")
        .trim_start_matches("0X");
    match h.len() {
        6 => u32::from_str_radix(h, 16).ok(),
        8 => u32::from_str_radix(h, 16).ok().map(|v| v & 0xFFFFFF),
        _ => None,
    }
}
