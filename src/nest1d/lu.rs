//! The basis of the master LP as a sparse LU factorization with product-form updates: solves
//! with B (FTRAN) and with its transpose (BTRAN) cost about the nonzeros of the factors, not
//! m^2. Why: a basis of cutting patterns is very sparse (a pattern holds a few piece types),
//! so its factors stay sparse, while its inverse is dense; with hundreds of piece types (a saw
//! shop's order) an explicit inverse made every simplex step O(m^2) and the LP too slow for
//! its time limit.
//!
//! Factorization: left-looking (column by column, sparsest columns first so singletons pivot
//! without fill), each column reduced by the L columns before it, then the pivot chosen among
//! the rows not yet used: the sparsest row among those within `THRESHOLD` of the largest
//! entry (threshold partial pivoting: stable, and it keeps fill low). A basis change adds an
//! eta column (the product form); `Master` refactors after a number of them.

/// A candidate pivot must be at least this fraction of the column's largest entry.
const THRESHOLD: f64 = 0.1;
/// Entries smaller than this are dropped from the factors and etas.
const DROP: f64 = 1e-13;

/// One product-form update: basis position `r` replaced by a column whose FTRAN was `u`
/// (`pivot` = u[r], `rest` the other nonzeros).
#[derive(Clone, Debug)]
struct Eta {
    r: usize,
    pivot: f64,
    rest: Vec<(usize, f64)>,
}

#[derive(Clone, Debug)]
pub struct Factor {
    m: usize,
    /// The basis position factored at each step.
    position: Vec<usize>,
    /// The row pivoted at each step.
    pivot_row: Vec<usize>,
    /// L's column of each step: (row, multiplier) for rows pivoted later.
    lower: Vec<Vec<(usize, f64)>>,
    /// U's column of each step: (earlier step, value); and its diagonal.
    upper: Vec<Vec<(usize, f64)>>,
    diagonal: Vec<f64>,
    etas: Vec<Eta>,
}

/// Why a basis could not be factored.
#[derive(Debug)]
pub struct Singular;

impl Factor {
    /// Factors the basis whose column at position k has the nonzeros `columns[k]` (row, value).
    pub fn new(m: usize, columns: &[Vec<(usize, f64)>]) -> Result<Factor, Singular> {
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by_key(|&k| (columns[k].len(), k));
        // nonzeros per row over the whole basis: the sparsity tie-break of the pivot choice
        let mut row_count = vec![0usize; m];
        for col in columns {
            for &(r, _) in col {
                row_count[r] += 1;
            }
        }
        let mut f = Factor {
            m,
            position: Vec::with_capacity(m),
            pivot_row: Vec::with_capacity(m),
            lower: Vec::with_capacity(m),
            upper: Vec::with_capacity(m),
            diagonal: Vec::with_capacity(m),
            etas: Vec::new(),
        };
        let mut step_of_row = vec![usize::MAX; m];
        let mut x = vec![0.0f64; m];
        // the rows this column reaches (each once: `reached` marks them)
        let mut touched: Vec<usize> = Vec::new();
        let mut reached = vec![false; m];
        for &k in &order {
            for &(r, v) in &columns[k] {
                if !reached[r] {
                    reached[r] = true;
                    touched.push(r);
                }
                x[r] += v;
            }
            // reduce by every earlier L column whose pivot row this column reaches, in order
            let mut u_col = Vec::new();
            for s in 0..f.pivot_row.len() {
                let t = x[f.pivot_row[s]];
                if t == 0.0 {
                    continue;
                }
                u_col.push((s, t));
                x[f.pivot_row[s]] = 0.0;
                for &(i, l) in &f.lower[s] {
                    if !reached[i] {
                        reached[i] = true;
                        touched.push(i);
                    }
                    x[i] -= l * t;
                }
            }
            let largest = touched
                .iter()
                .filter(|&&i| step_of_row[i] == usize::MAX)
                .map(|&i| x[i].abs())
                .fold(0.0, f64::max);
            if largest < 1e-11 {
                return Err(Singular);
            }
            let p = touched
                .iter()
                .copied()
                .filter(|&i| step_of_row[i] == usize::MAX && x[i].abs() >= THRESHOLD * largest)
                .min_by_key(|&i| (row_count[i], i))
                .expect("the largest entry qualifies");
            let d = x[p];
            let lower: Vec<(usize, f64)> = touched
                .iter()
                .copied()
                .filter(|&i| i != p && step_of_row[i] == usize::MAX && x[i].abs() > DROP)
                .map(|i| (i, x[i] / d))
                .collect();
            step_of_row[p] = f.pivot_row.len();
            f.position.push(k);
            f.pivot_row.push(p);
            f.lower.push(lower);
            f.upper.push(u_col);
            f.diagonal.push(d);
            for &i in &touched {
                x[i] = 0.0;
                reached[i] = false;
            }
            touched.clear();
        }
        Ok(f)
    }

    /// The identity (the factor of a basis of unit columns).
    pub fn identity(m: usize) -> Factor {
        Factor {
            m,
            position: (0..m).collect(),
            pivot_row: (0..m).collect(),
            lower: vec![Vec::new(); m],
            upper: vec![Vec::new(); m],
            diagonal: vec![1.0; m],
            etas: Vec::new(),
        }
    }

    /// Updates made since the factorization.
    pub fn updates(&self) -> usize {
        self.etas.len()
    }

    /// a := B^-1 a (a by rows in, by basis positions out).
    pub fn ftran(&self, a: &mut [f64]) {
        let m = self.m;
        // L w = a, in step order
        let mut w = vec![0.0; m];
        for s in 0..m {
            let t = a[self.pivot_row[s]];
            if t == 0.0 {
                continue;
            }
            w[s] = t;
            for &(i, l) in &self.lower[s] {
                a[i] -= l * t;
            }
        }
        // U v = w, from the last step back
        for s in (0..m).rev() {
            if w[s] == 0.0 {
                continue;
            }
            let v = w[s] / self.diagonal[s];
            w[s] = v;
            for &(k, u) in &self.upper[s] {
                w[k] -= u * v;
            }
        }
        a.iter_mut().for_each(|x| *x = 0.0);
        for s in 0..m {
            a[self.position[s]] = w[s];
        }
        for e in &self.etas {
            let t = a[e.r] / e.pivot;
            if t != 0.0 {
                for &(i, u) in &e.rest {
                    a[i] -= u * t;
                }
            }
            a[e.r] = t;
        }
    }

    /// c := c B^-1 (c by basis positions in, by rows out): the duals of costs c.
    pub fn btran(&self, c: &mut [f64]) {
        let m = self.m;
        for e in self.etas.iter().rev() {
            let dot: f64 = e.rest.iter().map(|&(i, u)| c[i] * u).sum();
            c[e.r] = (c[e.r] - dot) / e.pivot;
        }
        // U^T h = g (g_s = c at the position of step s), in step order
        let mut h = vec![0.0; m];
        for s in 0..m {
            let dot: f64 = self.upper[s].iter().map(|&(k, u)| u * h[k]).sum();
            h[s] = (c[self.position[s]] - dot) / self.diagonal[s];
        }
        // L^T y = h, from the last step back
        for s in (0..m).rev() {
            let dot: f64 = self.lower[s].iter().map(|&(i, l)| l * c[i]).sum();
            c[self.pivot_row[s]] = h[s] - dot;
        }
    }

    /// Basis position `r` now holds the column whose FTRAN (before this change) was `u`.
    pub fn update(&mut self, r: usize, u: &[f64]) {
        self.etas.push(Eta {
            r,
            pivot: u[r],
            rest: u
                .iter()
                .enumerate()
                .filter(|&(i, &v)| i != r && v.abs() > DROP)
                .map(|(i, &v)| (i, v))
                .collect(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn multiply(m: usize, cols: &[Vec<(usize, f64)>], x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; m];
        for (k, col) in cols.iter().enumerate() {
            for &(r, v) in col {
                out[r] += v * x[k];
            }
        }
        out
    }

    /// FTRAN and BTRAN invert B (and B after column replacements) on random sparse bases of
    /// pattern-like columns (small whole counts) mixed with surplus columns (-1).
    #[test]
    fn solves_match_the_basis_before_and_after_updates() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for trial in 0..200 {
            let m = 1 + (random(&mut seed) % 40) as usize;
            // start diagonal-dominant so the basis is nonsingular, then perturb
            let mut cols: Vec<Vec<(usize, f64)>> = (0..m)
                .map(|k| {
                    let mut c = vec![(k, 2.0 + (random(&mut seed) % 3) as f64)];
                    for _ in 0..random(&mut seed) % 3 {
                        let r = (random(&mut seed) % m as u64) as usize;
                        if r != k && !c.iter().any(|&(x, _)| x == r) {
                            c.push((r, (random(&mut seed) % 2) as f64));
                        }
                    }
                    if trial % 3 == 0 && k % 4 == 0 {
                        c = vec![(k, -1.0)];
                    }
                    c
                })
                .collect();
            let mut f = Factor::new(m, &cols).expect("nonsingular");
            for round in 0..4 {
                let b: Vec<f64> = (0..m).map(|_| (random(&mut seed) % 7) as f64).collect();
                let mut x = b.clone();
                f.ftran(&mut x);
                let back = multiply(m, &cols, &x);
                for i in 0..m {
                    assert!(
                        (back[i] - b[i]).abs() < 1e-8,
                        "ftran row {i}, round {round}"
                    );
                }
                let c: Vec<f64> = (0..m).map(|_| (random(&mut seed) % 5) as f64).collect();
                let mut y = c.clone();
                f.btran(&mut y);
                for (k, col) in cols.iter().enumerate() {
                    let v: f64 = col.iter().map(|&(r, a)| a * y[r]).sum();
                    assert!((v - c[k]).abs() < 1e-8, "btran position {k}, round {round}");
                }
                // replace a position with a new column where its pivot is safely nonzero
                let r = (random(&mut seed) % m as u64) as usize;
                let new: Vec<(usize, f64)> = vec![(r, 3.0), ((r + 1) % m, 1.0)];
                let mut u = vec![0.0; m];
                for &(i, v) in &new {
                    u[i] += v;
                }
                f.ftran(&mut u);
                if u[r].abs() < 1e-3 {
                    continue;
                }
                f.update(r, &u);
                cols[r] = new;
            }
        }
    }
}
