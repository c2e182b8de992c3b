fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let name = std::path::Path::new(&path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        for all in [false, true] {
            let tol: f64 = std::env::var("TOL")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.01);
            let opts = kerf::geometry::ImportOptions {
                use_all_parts_in_file: all,
                chain_tolerance: tol,
                ..Default::default()
            };
            match kerf::geometry::import_dxf(&name, &bytes, &opts) {
                Ok(imp) => {
                    let comps: usize = imp
                        .parts
                        .iter()
                        .map(|p| p.geometry.components().len())
                        .sum();
                    let holes: usize = imp.parts.iter().map(|p| p.geometry.hole_count()).sum();
                    let area: f64 = imp.parts.iter().map(|p| p.geometry.area()).sum();
                    let bb = imp.parts[0].geometry.bbox();
                    println!("{name} all={all}: parts={} outlines={comps} holes={holes} area={area:.3} bbox0={:.3}x{:.3} warn={:?}", imp.parts.len(), bb.width(), bb.height(), imp.warnings);
                }
                Err(e) => println!("{name} all={all}: ERROR {e}"),
            }
        }
    }
}
