//! The CLI as a user runs it: real DXF parts, a layout file, a summary, clear errors.

use std::process::Command;

fn kerf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kerf"))
}
/// The command's standard output, once it has succeeded (its output and errors shown if not).
fn succeeded(o: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}
fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn nest_real_dxf_parts_writes_a_layout() {
    let dir = std::env::temp_dir().join(format!("kerf-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("layout.json");
    let svg = dir.join("layout.svg");
    let o = kerf()
        .args([
            "nest",
            "--part",
            &format!("{}:4", data("part_1.dxf")),
            "--part",
            &format!("{}:3", data("part_6.dxf")),
            "--part",
            &data("donut_r12.dxf"),
        ])
        .args([
            "--sheet",
            "500x300",
            "--spacing",
            "2",
            "--time",
            "2",
            "--out",
        ])
        .arg(&out)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    let stdout = succeeded(&o);
    assert!(stdout.contains("parts placed 8/8"), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["Statistics"]["PartsPlaced"], 8);
    assert_eq!(v["Sheets"][0]["Placements"].as_array().unwrap().len(), 8);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

#[test]
fn bad_input_gives_a_clear_message_and_non_zero_exit() {
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--part".into(),
                "/nonexistent.dxf".into(),
                "--sheet".into(),
                "100x100".into(),
            ],
            "cannot read",
        ),
        (
            vec![
                "--part".into(),
                data("part_1.dxf"),
                "--sheet".into(),
                "100by100".into(),
            ],
            "WIDTHxHEIGHT",
        ),
        (
            vec![
                "--part".into(),
                format!("{}:0", data("part_1.dxf")),
                "--sheet".into(),
                "100x100".into(),
            ],
            "quantity",
        ),
        (
            vec![
                "--part".into(),
                data("closed_loop_lines_arcs.dxf"),
                "--sheet".into(),
                "100x100".into(),
            ],
            "self-crossing",
        ),
        (vec!["--part".into(), data("part_1.dxf")], "--sheet"),
        (
            vec![
                "--part".into(),
                data("part_1.dxf"),
                "--sheet".into(),
                "100x100".into(),
                "--rotation".into(),
                "sideways".into(),
            ],
            "--rotation",
        ),
        (
            vec![
                "--part".into(),
                data("part_1.dxf"),
                "--sheet".into(),
                "100x100".into(),
                "--tilt".into(),
                "50".into(),
            ],
            "--tilt must be between 0 and 45",
        ),
    ];
    for (args, expect) in cases {
        let o = kerf()
            .arg("nest")
            .args(&args)
            .args(["--out", "/tmp/kerf-never.json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn bench_esicup_writes_checkable_layouts() {
    let dir = std::env::temp_dir().join(format!("kerf-bench-{}", std::process::id()));
    let inst = format!("{}/benches/data/nest2d/fu.json", env!("CARGO_MANIFEST_DIR"));
    let o = kerf()
        .args(["bench", "esicup", &inst, "--time", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = succeeded(&o);
    assert!(
        stdout.contains("fu") && stdout.contains("verified"),
        "{stdout}"
    );
    let sol: kerf::bench::esicup::Solution =
        serde_json::from_slice(&std::fs::read(dir.join("fu.json")).unwrap()).unwrap();
    let instance = kerf::bench::esicup::load(std::path::Path::new(&inst)).unwrap();
    kerf::bench::esicup::check_solution(&instance, &sol).unwrap();
    assert!(sol.density > 0.6 && sol.density <= 1.0, "{}", sol.density);
}

#[test]
fn bench_sheets_with_strip_prints_the_strip_density_and_the_bar() {
    let dir = std::env::temp_dir().join(format!("kerf-bench-sheets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // twelve 2 x 1 rectangles (area 24) on 4 x 3 sheets (area 12): an area bound of 2 sheets
    let inst = dir.join("rects.json");
    std::fs::write(
        &inst,
        r#"{"name": "rects", "items": [{"id": 0, "demand": 12, "allowed_orientations": [0, 90],
            "shape": {"type": "simple_polygon", "data": [[0, 0], [2, 0], [2, 1], [0, 1]]}}],
            "sheets": [{"id": "S", "width": 4, "height": 3, "quantity": 0}]}"#,
    )
    .unwrap();
    let o = kerf()
        .args(["bench", "sheets"])
        .arg(&inst)
        .args(["--time", "1", "--strip", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = succeeded(&o);
    assert!(stdout.contains("strip%"), "{stdout}");
    let row: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("rects"))
        .expect("a row for the instance")
        .split_whitespace()
        .collect();
    // instance parts sheets bound sheet_eq layouts seconds strip% bar gap ...
    let (sheets, bound): (u32, f64) = (row[2].parse().unwrap(), row[3].parse().unwrap());
    let (strip, bar): (f64, u32) = (row[7].parse().unwrap(), row[8].parse().unwrap());
    assert!((bound - 2.0).abs() < 1e-9, "{stdout}");
    assert!(strip > 50.0 && strip <= 100.0, "{stdout}");
    // the bar is the area bound at the strip's density, rounded up (strip% is printed rounded)
    let bar_at = |d: f64| (bound / (d / 100.0) - 1e-9).ceil() as u32;
    assert!(
        bar_at(strip + 0.005) <= bar && bar <= bar_at(strip - 0.005),
        "{stdout}"
    );
    assert!(sheets >= 2, "{stdout}");
    assert!(row.last() == Some(&"verified"), "{stdout}");
}
