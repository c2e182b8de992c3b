//! `kerf nest1d`: a 1D cutting plan from the command line.

use crate::nest1d::{self, Objective, Piece, Problem, Stock};
use anyhow::{anyhow, bail, Result};

pub struct Nest1dArgs {
    /// LEN[:QTY[:COST]] (QTY 0 or absent: unlimited).
    pub stock: Vec<String>,
    /// LEN:QTY[:ID].
    pub parts: Vec<String>,
    pub kerf: f64,
    pub trim: f64,
    pub time: f64,
    pub objective: String,
}

fn number(s: &str, what: &str, arg: &str) -> Result<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| anyhow!("{arg}: {what} '{s}' is not a number of at least 0"))
}

pub fn parse(a: &Nest1dArgs) -> Result<Problem> {
    if a.stock.is_empty() {
        bail!("give at least one --stock LEN[:QTY[:COST]]");
    }
    if a.parts.is_empty() {
        bail!("give at least one --part LEN:QTY[:ID]");
    }
    let stock = a
        .stock
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let arg = format!("--stock {s}");
            let f: Vec<&str> = s.split(':').collect();
            if f.len() > 3 {
                bail!("{arg}: expected LEN[:QTY[:COST]]");
            }
            let length = number(f[0], "length", &arg)?;
            if length <= 0.0 {
                bail!("{arg}: the length must be above 0");
            }
            let quantity = match f.get(1) {
                Some(q) => match number(q, "quantity", &arg)? as u32 {
                    0 => None,
                    n => Some(n),
                },
                None => None,
            };
            let cost = match f.get(2) {
                Some(c) => number(c, "cost", &arg)?,
                None => 0.0,
            };
            Ok(Stock {
                id: format!("S{}", k + 1),
                length,
                quantity,
                cost,
                priority: 0,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let pieces = a
        .parts
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let arg = format!("--part {s}");
            let f: Vec<&str> = s.split(':').collect();
            if !(2..=3).contains(&f.len()) {
                bail!("{arg}: expected LEN:QTY[:ID]");
            }
            let length = number(f[0], "length", &arg)?;
            if length <= 0.0 {
                bail!("{arg}: the length must be above 0");
            }
            let q = number(f[1], "quantity", &arg)?;
            if q.fract() != 0.0 || q < 1.0 {
                bail!("{arg}: the quantity must be a whole number of at least 1");
            }
            Ok(Piece {
                id: f.get(2).map_or(format!("P{}", k + 1), |s| s.to_string()),
                length,
                quantity: q as u32,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let objective = match crate::lenient::enum_key(&a.objective).as_str() {
        "" | "minimisestock" | "minimizestock" | "stock" | "bars" => Objective::MinimiseStock,
        "minimisewaste" | "minimizewaste" | "waste" => Objective::MinimiseWaste,
        "minimisecost" | "minimizecost" | "cost" => Objective::MinimiseCost,
        _ => bail!(
            "--objective '{}': allowed MinimiseStock, MinimiseWaste, MinimiseCost",
            a.objective
        ),
    };
    Ok(Problem {
        stock,
        pieces,
        kerf: a.kerf,
        start_trim: a.trim,
        end_trim: a.trim,
        max_time_s: a.time,
        objective,
    })
}

pub fn run(a: Nest1dArgs) -> Result<()> {
    for (v, what) in [(a.kerf, "--kerf"), (a.trim, "--trim"), (a.time, "--time")] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{what}: must be a number of at least 0 (got {v})");
        }
    }
    let p = parse(&a)?;
    let plan = nest1d::solve(&p);
    println!(
        "{:<4} {:<10} {:>5}  {:<50} {:>10}",
        "#", "stock", "times", "pieces (length x count)", "waste"
    );
    for (k, pat) in plan.patterns.iter().enumerate() {
        let s = &p.stock[pat.stock];
        let pieces: Vec<String> = pat
            .pieces
            .iter()
            .map(|&(i, c)| format!("{}x{}", p.pieces[i].length, c))
            .collect();
        let used = p.used_length(pat);
        println!(
            "{:<4} {:<10} {:>5}  {:<50} {:>10.3}",
            k + 1,
            format!("{}", s.length),
            pat.multiplicity,
            pieces.join(" "),
            s.length - used
        );
    }
    for (i, q, why) in &plan.unplaced {
        println!("unplaced: {} x{} ({why})", p.pieces[*i].id, q);
    }
    println!(
        "bars {}, objective {:.3}, lower bound {:.3}, {}, {:.3} s",
        plan.bars(),
        plan.value,
        plan.lower_bound,
        if plan.proven_optimal {
            "proven optimal".to_string()
        } else {
            format!("not proven (gap {:.3})", plan.value - plan.lower_bound)
        },
        plan.seconds
    );
    if let Some(note) = &plan.note {
        println!("note: {note}");
    }
    Ok(())
}
