//! `kerf bench bpp DIR`: BPPLIB cutting-stock instances (line 1 the number of lengths, line 2 the
//! capacity, then `length<TAB>demand` lines), solved with a time limit each; with DIR/optima.csv
//! (name, class, file, items, capacity, optimum, proven) a table per class: instances, optimum
//! reached, proven optimal, mean extra bars, mean and max seconds. With `--stock-at-optimum`
//! each instance has exactly its optimum's bars in stock: the plan must place every piece
//! within that limit (where first answers usually need more bars), so the table shows how
//! often limited stock still gets the optimum.

use crate::nest1d::{self, Objective, Piece, Problem, Stock};
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

/// One instance: capacity and (length, demand) lines.
pub struct Instance {
    pub capacity: f64,
    pub items: Vec<(f64, u32)>,
}

pub fn parse(text: &str) -> Result<Instance> {
    let mut nums = text.split_whitespace().map(|t| {
        t.parse::<f64>()
            .map_err(|_| anyhow!("'{t}' is not a number"))
    });
    let m = nums.next().ok_or_else(|| anyhow!("empty file"))?? as usize;
    let capacity = nums.next().ok_or_else(|| anyhow!("no capacity"))??;
    let mut items = Vec::with_capacity(m);
    for k in 0..m {
        let len = nums
            .next()
            .ok_or_else(|| anyhow!("line {}: missing length", k + 3))??;
        let d = nums
            .next()
            .ok_or_else(|| anyhow!("line {}: missing demand", k + 3))??;
        if !(len > 0.0) || d < 0.0 || d.fract() != 0.0 {
            bail!(
                "line {}: length {len} and demand {d} must be positive",
                k + 3
            );
        }
        items.push((len, d as u32));
    }
    Ok(Instance { capacity, items })
}

pub fn problem(inst: &Instance, seconds: f64) -> Problem {
    Problem {
        stock: vec![Stock {
            id: "bar".into(),
            length: inst.capacity,
            quantity: None,
            cost: 0.0,
            priority: 0,
        }],
        pieces: inst
            .items
            .iter()
            .enumerate()
            .map(|(k, &(length, quantity))| Piece {
                id: format!("p{k}"),
                length,
                quantity,
            })
            .collect(),
        kerf: 0.0,
        start_trim: 0.0,
        end_trim: 0.0,
        max_time_s: seconds,
        objective: Objective::MinimiseStock,
    }
}

/// A row of optima.csv.
pub struct Known {
    pub name: String,
    pub class: String,
    pub file: String,
    pub optimum: u32,
}

pub fn optima(dir: &Path) -> Result<Vec<Known>> {
    csv_rows(dir, "optima.csv", 6)?
        .into_iter()
        .map(|f| {
            Ok(Known {
                optimum: f[5]
                    .trim()
                    .parse()
                    .with_context(|| format!("optima.csv: '{}'", f.join(",")))?,
                name: f[0].clone(),
                class: f[1].clone(),
                file: f[2].clone(),
            })
        })
        .collect()
}

/// The data rows of DIR/FILE (its first line is a header), split at commas, each with at
/// least `fields` fields.
fn csv_rows(dir: &Path, file: &str, fields: usize) -> Result<Vec<Vec<String>>> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<String> = l.split(',').map(String::from).collect();
            if f.len() < fields {
                bail!("{file}: '{l}' has fewer than {fields} fields");
            }
            Ok(f)
        })
        .collect()
}

/// Reads instance FILE of DIR, solves it with a limit of `seconds` (and `bars` in stock, if
/// given) and checks the plan: complete where the stock is unlimited, within the limit where
/// it is not.
fn solve_file(
    dir: &Path,
    file: &str,
    name: &str,
    seconds: f64,
    bars: Option<u32>,
) -> Result<(Instance, Problem, nest1d::Plan)> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let inst = parse(&text).with_context(|| format!("{}", path.display()))?;
    let mut problem = problem(&inst, seconds);
    problem.stock[0].quantity = bars;
    let plan = nest1d::solve(&problem);
    let checked = match bars {
        None => check(&inst, &plan),
        Some(limit) if plan.bars() > limit => {
            Err(anyhow!("{} bars cut, {limit} in stock", plan.bars()))
        }
        Some(_) => check_cut(&inst, &plan),
    };
    checked.with_context(|| format!("{name}: the plan is wrong"))?;
    Ok((inst, problem, plan))
}

/// One solved instance.
pub struct Outcome {
    pub class: String,
    pub name: String,
    pub bars: u32,
    pub optimum: u32,
    pub proven: bool,
    pub seconds: f64,
    /// Pieces the plan left unplaced (only with a stock limit: not enough bars).
    pub left: u32,
}

impl Outcome {
    /// Every piece placed on at most the optimum's bars.
    pub fn optimal(&self) -> bool {
        self.left == 0 && self.bars <= self.optimum
    }
}

/// Solves instance `k` within `seconds`; with `at_optimum`, with exactly its optimum's bars in
/// stock.
pub fn run_one(dir: &Path, k: &Known, seconds: f64, at_optimum: bool) -> Result<Outcome> {
    let bars = at_optimum.then_some(k.optimum);
    let (_, _, plan) = solve_file(dir, &k.file, &k.name, seconds, bars)?;
    Ok(Outcome {
        class: k.class.clone(),
        name: k.name.clone(),
        bars: plan.bars(),
        optimum: k.optimum,
        proven: plan.proven_optimal,
        seconds: plan.seconds,
        left: plan.unplaced.iter().map(|u| u.1).sum(),
    })
}

/// The plan covers every demand exactly and no bar is overfull.
pub fn check(inst: &Instance, plan: &nest1d::Plan) -> Result<()> {
    check_cut(inst, plan)?;
    if !plan.unplaced.is_empty() {
        bail!("pieces left unplaced");
    }
    Ok(())
}

/// No bar is overfull, and every demand is cut exactly or reported unplaced.
fn check_cut(inst: &Instance, plan: &nest1d::Plan) -> Result<()> {
    let mut got = vec![0u64; inst.items.len()];
    for p in &plan.patterns {
        let load: f64 = p
            .pieces
            .iter()
            .map(|&(i, c)| inst.items[i].0 * c as f64)
            .sum();
        if load > inst.capacity + 1e-9 {
            bail!("a pattern holds {load} on a bar of {}", inst.capacity);
        }
        for &(i, c) in &p.pieces {
            got[i] += c as u64 * p.multiplicity as u64;
        }
    }
    for &(i, q, _) in &plan.unplaced {
        got[i] += q as u64;
    }
    for (i, (&(_, d), g)) in inst.items.iter().zip(&got).enumerate() {
        if *g != d as u64 {
            bail!("piece {i}: {g} cut or unplaced, {d} wanted");
        }
    }
    Ok(())
}

/// A row of instances.csv, the list `kerf bench bpp-generate` writes (name, family, file,
/// items, capacity, lengths, optimum; the optimum empty where it is not known).
pub struct Listed {
    pub name: String,
    pub family: String,
    pub file: String,
    pub optimum: Option<u32>,
}

pub const LIST_HEADER: &str = "name,family,file,items,capacity,lengths,optimum";

pub fn listed(dir: &Path) -> Result<Vec<Listed>> {
    csv_rows(dir, "instances.csv", 7)?
        .into_iter()
        .map(|f| {
            let optimum = match f[6].trim() {
                "" => None,
                o => Some(
                    o.parse()
                        .with_context(|| format!("instances.csv: '{}'", f.join(",")))?,
                ),
            };
            Ok(Listed {
                name: f[0].clone(),
                family: f[1].clone(),
                file: f[2].clone(),
                optimum,
            })
        })
        .collect()
}

/// One solved generated instance, beside first-fit decreasing on the same pieces.
pub struct LargeOutcome {
    pub family: String,
    pub name: String,
    pub pieces: u64,
    pub bars: u32,
    /// The solver's proven lower bound (the LP bound rounded up once column generation ends).
    pub bound: u32,
    pub optimum: Option<u32>,
    pub ffd_bars: u32,
    pub seconds: f64,
    pub note: Option<String>,
}

pub fn run_listed(dir: &Path, l: &Listed, seconds: f64) -> Result<LargeOutcome> {
    let (inst, problem, plan) = solve_file(dir, &l.file, &l.name, seconds, None)?;
    let (ffd, _) = nest1d::heuristic::decreasing(&nest1d::instance::Instance::of(&problem), false);
    Ok(LargeOutcome {
        family: l.family.clone(),
        name: l.name.clone(),
        pieces: inst.items.iter().map(|&(_, d)| d as u64).sum(),
        bars: plan.bars(),
        bound: plan.lower_bound.round() as u32,
        optimum: l.optimum,
        ffd_bars: ffd.len() as u32,
        seconds: plan.seconds,
        note: plan.note.clone(),
    })
}
