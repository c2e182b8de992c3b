//! The master LP of column generation, by the revised simplex method on a sparse LU
//! factorization of the basis (`lu::Factor`, product-form updates between refactorizations):
//! minimise cost . x subject to A x >= demand, x >= 0, where each column of A is a
//! cutting pattern (pieces of each type on one bar). Rows are piece types, then one row per
//! stock type with a limited number of bars (-bars of that type >= -limit); each row has a
//! surplus variable, and each limit row an overflow variable at a penalty (a bar past the
//! limit). The start basis is one homogeneous pattern per piece row (only that piece, as many
//! as fit) and, per limit row, its surplus or, where the homogeneous patterns already pass the
//! limit, its overflow: so the basis starts triangular and feasible.

use super::lu::Factor;

/// A pattern: one bar of stock type `stock` giving `counts[i]` pieces of type i.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub stock: usize,
    pub counts: Vec<u32>,
    pub cost: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Var {
    Col(usize),
    Surplus(usize),
    /// A dual-optimal inequality as a column (see `Master::add_exchanges`).
    Exchange(usize),
    /// Bars past the limit of limit row `pieces + k`, at `overflow_cost` each (see `new`).
    Overflow(usize),
}

/// Which variables are basic, by kind.
struct Basic {
    col: Vec<bool>,
    surplus: Vec<bool>,
    exchange: Vec<bool>,
    overflow: Vec<bool>,
}

impl Basic {
    fn holds(&self, v: Var) -> bool {
        match v {
            Var::Col(j) => self.col[j],
            Var::Surplus(i) => self.surplus[i],
            Var::Exchange(k) => self.exchange[k],
            Var::Overflow(k) => self.overflow[k],
        }
    }
}

#[derive(Clone)]
pub struct Master {
    /// All rows: the piece rows, then the limit rows.
    m: usize,
    /// The piece rows, the first of the rows.
    pieces: usize,
    /// Each stock type's limit row, None for stock without a limit.
    limit_row: Vec<Option<usize>>,
    /// Right-hand sides: each piece row's demand, each limit row's -limit (perturbed, see `new`).
    demand: Vec<f64>,
    pub cols: Vec<Column>,
    /// The columns' nonzero entries (row, count): pricing and pivoting touch only these.
    sparse: Vec<Vec<(usize, f64)>>,
    basis: Vec<Var>,
    /// The basis, factored: every solve with it (values, duals, entering columns, the dual
    /// simplex's pivot row) goes through this.
    factor: Factor,
    xb: Vec<f64>,
    /// The duals y = c_B B^-1, kept up to date by each pivot (recomputed at each inversion).
    y: Vec<f64>,
    pivots: usize,
    /// Columns that give more pieces than the demand left (see `trim_to`): never entered again.
    retired: Vec<bool>,
    /// The cost of each column as the simplex sees it: its own, less a small amount drawn
    /// from `seed` and its pattern when the costs are perturbed (see `perturb_costs`).
    price: Vec<f64>,
    /// The seed of the cost perturbation; 0 for none.
    seed: u64,
    /// Pivots in a row that did not move the solution; past `BLAND_AFTER`, Bland's rule
    /// (first improving variable, smallest leaving variable) so degenerate steps cannot cycle.
    stalled: usize,
    /// Where the next partial pricing of `improve` starts among the columns.
    scan_from: usize,
    /// (bigger, smaller) piece rows: exchange k takes a piece of `bigger` off a pattern and
    /// gives one of `smaller` in its place (column -1 on bigger, +1 on smaller).
    exchanges: Vec<(usize, usize)>,
    /// What an exchange costs: 0 while they help the LP to its end, a penalty once they are
    /// dropped (so the simplex takes any basic one out).
    exchange_cost: f64,
    /// What a bar past a stock limit costs: a penalty far above any pattern's cost, so the
    /// simplex uses overflow only while it has to (the start basis) or when the limits leave
    /// no other way (then the LP is infeasible without it, and its bound still holds: the LP
    /// with overflow is a relaxation of the LP without).
    overflow_cost: f64,
}

const BLAND_AFTER: usize = 50;
/// Columns priced together in a step of `improve` (see there).
const PRICING_BLOCK: usize = 1 << 40;

const EPS: f64 = 1e-9;
/// Cost factor of a retired column (see `Master::trim_to`).
const RETIRED_COST: f64 = 1000.0;
/// Tolerance of the dual ratio test (see `restore_feasibility`).
const HARRIS: f64 = 1e-9;
/// The largest perturbation of a demand (see `Master::new`).
const PERTURBATION: f64 = 1e-6;
/// The largest relative cost perturbation (see `Master::perturb_costs`).
const COST_NOISE: f64 = 1e-5;
/// Updates between two fresh factorizations: each update lengthens every solve by an eta
/// column, and a fresh factor also ends the drift of the updates.
const REFACTOR_EVERY: usize = 64;

impl Master {
    /// `homogeneous[i]` is a column holding only pieces of type i (it becomes basic for row i).
    /// Every stock type is unlimited.
    pub fn new(demand: &[u32], homogeneous: Vec<Column>, extra: Vec<Column>) -> Master {
        Master::with_limits(demand, &[], homogeneous, extra)
    }

    /// As `new`, with `limits[t]` bars of stock type t at most (None, or no entry: as many as
    /// needed).
    pub fn with_limits(
        demand: &[u32],
        limits: &[Option<u32>],
        homogeneous: Vec<Column>,
        extra: Vec<Column>,
    ) -> Master {
        let pieces = demand.len();
        let mut limit_row = Vec::with_capacity(limits.len());
        let mut rhs: Vec<f64> = demand.iter().map(|&d| d as f64).collect();
        for limit in limits {
            limit_row.push(limit.map(|l| {
                rhs.push(-(l as f64));
                rhs.len() - 1
            }));
        }
        let m = rhs.len();
        let mut cols = homogeneous;
        cols.extend(extra);
        let dearest = cols.iter().map(|c| c.cost).fold(1.0, f64::max);
        let retired = vec![false; cols.len()];
        let price = cols.iter().map(|c| c.cost).collect();
        // right-hand sides perturbed by distinct small amounts: the master of cutting stock is
        // very degenerate (many rows exactly covered), and without this the simplex takes long
        // runs of steps that move nothing; bounds are read at the unperturbed right-hand
        // sides (`dual_bound`), so the perturbation never weakens them. A limit is loosened
        // (its row's -limit lowered) by more than all the demands' perturbations together
        // could need (each at most one bar per row), so a plan that keeps the limit exactly
        // stays a solution of the LP
        let limit_slack = -2.0 * PERTURBATION * (pieces + 1) as f64;
        let mut master = Master {
            m,
            pieces,
            demand: rhs
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    let size = if i < pieces {
                        PERTURBATION
                    } else {
                        limit_slack
                    };
                    d + size * perturbation(i)
                })
                .collect(),
            basis: (0..pieces)
                .map(Var::Col)
                .chain((pieces..m).map(Var::Surplus))
                .collect(),
            factor: Factor::identity(m),
            xb: vec![0.0; m],
            y: vec![0.0; m],
            sparse: Vec::new(),
            cols,
            pivots: 0,
            retired,
            price,
            seed: 0,
            stalled: 0,
            scan_from: 0,
            exchanges: Vec::new(),
            exchange_cost: 0.0,
            limit_row,
            overflow_cost: RETIRED_COST * dearest,
        };
        master.sparse = master.cols.iter().map(|c| master.sparse_of(c)).collect();
        master.refactor();
        // a limit row whose surplus came out negative: the homogeneous patterns pass the limit,
        // and its overflow takes the surplus's place (the basis is triangular, so only that
        // row's value changes, and only in sign)
        let over: Vec<usize> = (pieces..m).filter(|&r| master.xb[r] < 0.0).collect();
        if !over.is_empty() {
            for r in over {
                master.basis[r] = Var::Overflow(r - pieces);
            }
            master.refactor();
        }
        master
    }

    /// A column's nonzero entries: its pieces, and -1 on its stock type's limit row.
    fn sparse_of(&self, c: &Column) -> Vec<(usize, f64)> {
        let mut entries: Vec<(usize, f64)> = c
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &a)| a > 0)
            .map(|(r, &a)| (r, a as f64))
            .collect();
        if let Some(r) = self.limit_row.get(c.stock).copied().flatten() {
            entries.push((r, -1.0));
        }
        entries
    }

    /// The cost the simplex works with: a retired column's is `RETIRED_COST` times its own.
    fn cost(&self, v: Var) -> f64 {
        match v {
            Var::Col(j) if self.retired[j] => self.price[j] * RETIRED_COST,
            Var::Col(j) => self.price[j],
            Var::Surplus(_) => 0.0,
            Var::Exchange(_) => self.exchange_cost,
            Var::Overflow(_) => self.overflow_cost,
        }
    }

    /// Adds the dual-optimal inequalities of cutting stock as columns: a bigger piece's dual is
    /// never below a smaller one's (some optimal duals have that order: a pattern stays a
    /// pattern when a piece in it is swapped for a smaller one), one exchange column per two
    /// pieces next in size. Why: they cut off the many duals that swing between optimal
    /// vertices of the degenerate master, and column generation ends in far fewer rounds
    /// (Ben Amor, Desrosiers and Valerio de Carvalho, 2006). The LP's value is the same with
    /// them; its solution may use them, so `drop_exchanges` comes before plans are read from it.
    /// `size[i]` is row i's piece size.
    pub fn add_exchanges(&mut self, size: &[i64]) {
        let mut order: Vec<usize> = (0..self.pieces).collect();
        order.sort_by(|&a, &b| size[b].cmp(&size[a]).then(a.cmp(&b)));
        self.exchanges = order.windows(2).map(|w| (w[0], w[1])).collect();
        self.exchange_cost = 0.0;
        self.y = self.compute_duals();
    }

    /// Whether exchange columns take part (see `add_exchanges`).
    pub fn has_exchanges(&self) -> bool {
        !self.exchanges.is_empty() && self.exchange_cost == 0.0
    }

    /// Prices the exchanges out of the LP: they never enter again, and the simplex steps that
    /// follow take out any still basic, so the LP's solution is one of patterns alone again.
    pub fn drop_exchanges(&mut self) {
        let dearest = self.price.iter().copied().fold(0.0, f64::max);
        self.exchange_cost = RETIRED_COST * dearest.max(1.0);
        self.y = self.compute_duals();
    }

    /// Factors the basis afresh and recomputes the values and duals. A basis reached by
    /// valid pivots is never singular; should rounding make it look so, the factor with its
    /// updates is kept (it still solves with this basis).
    fn refactor(&mut self) {
        let columns: Vec<Vec<(usize, f64)>> = self.basis.iter().map(|&v| self.entries(v)).collect();
        match Factor::new(self.m, &columns) {
            Ok(f) => self.factor = f,
            Err(_) => tracing::warn!("master LP: the basis looks singular; refactoring later"),
        }
        self.recompute_values();
        self.y = self.compute_duals();
        self.pivots = 0;
    }

    /// x_B = B^-1 demand.
    fn recompute_values(&mut self) {
        let mut x = self.demand.clone();
        self.factor.ftran(&mut x);
        self.xb = x;
    }

    /// The dual values y = c_B B^-1 of the piece rows (one per piece type).
    pub fn duals(&self) -> Vec<f64> {
        self.y[..self.pieces].to_vec()
    }

    /// The dual value of each stock type's limit (0 for unlimited stock): what one more bar of
    /// it would save. A pattern on stock type t prices out when its pieces are worth more
    /// than its cost plus this.
    pub fn stock_duals(&self) -> Vec<f64> {
        self.limit_row
            .iter()
            .map(|r| r.map_or(0.0, |r| self.y[r].max(0.0)))
            .collect()
    }

    /// True when stock type `t` has no bar left (its limit, less the bars fixed, is 0).
    pub fn exhausted(&self, t: usize) -> bool {
        self.limit_row
            .get(t)
            .copied()
            .flatten()
            .is_some_and(|r| self.unperturbed(r) >= 0.0)
    }

    /// Bars past the stock limits in the current solution (0 once the LP keeps them).
    pub fn overflow(&self) -> f64 {
        self.basis
            .iter()
            .zip(&self.xb)
            .filter(|(v, _)| matches!(v, Var::Overflow(_)))
            .map(|(_, &x)| x.max(0.0))
            .sum()
    }

    fn compute_duals(&self) -> Vec<f64> {
        let mut y: Vec<f64> = self.basis.iter().map(|&v| self.cost(v)).collect();
        self.factor.btran(&mut y);
        y
    }

    /// The value of the current duals at the right-hand sides without their perturbation
    /// (the limits' duals count against it): once no column prices out, a lower bound on the
    /// LP of the true demand and limits (the duals are feasible), whatever the size of the
    /// perturbation.
    pub fn dual_bound(&self) -> f64 {
        self.value_of_duals(&self.y[..self.pieces])
            + (self.pieces..self.m)
                .map(|r| self.y[r].max(0.0) * self.unperturbed(r))
                .sum::<f64>()
    }

    /// Row `r`'s right-hand side without its perturbation (a demand is raised by less than
    /// one, a limit row's -limit lowered by less than one).
    fn unperturbed(&self, r: usize) -> f64 {
        if r < self.pieces {
            self.demand[r].floor()
        } else {
            self.demand[r].ceil()
        }
    }

    /// What the demand without its perturbation is worth at piece duals `y` (negative duals
    /// count as 0, as in pricing): for any `y`, divided by the most a pattern is worth at `y`
    /// (per unit of cost), a lower bound on the LP without stock limits (Farley's), so on the
    /// LP with them too.
    pub fn value_of_duals(&self, y: &[f64]) -> f64 {
        y.iter()
            .zip(&self.demand[..self.pieces])
            .map(|(&y, &d)| y.max(0.0) * d.floor())
            .sum()
    }

    /// The LP's value at the patterns' own costs (a retired column left in the basis at a
    /// rounding-sized value must not inflate the bound by its penalty).
    pub fn objective(&self) -> f64 {
        self.basis
            .iter()
            .zip(&self.xb)
            .map(|(&v, &x)| match v {
                Var::Col(j) => self.cols[j].cost * x,
                Var::Surplus(_) | Var::Exchange(_) | Var::Overflow(_) => 0.0,
            })
            .sum()
    }

    /// The columns with a positive value in the current solution.
    pub fn solution(&self) -> Vec<(usize, f64)> {
        self.basis
            .iter()
            .zip(&self.xb)
            .filter_map(|(&v, &x)| match v {
                Var::Col(j) if x > EPS => Some((j, x)),
                _ => None,
            })
            .collect()
    }

    fn reduced(&self, v: Var, y: &[f64]) -> f64 {
        match v {
            Var::Col(j) => {
                self.cost(v) - self.sparse[j].iter().map(|&(r, a)| a * y[r]).sum::<f64>()
            }
            Var::Surplus(i) => y[i],
            Var::Exchange(k) => {
                let (bigger, smaller) = self.exchanges[k];
                self.cost(v) - (y[smaller] - y[bigger])
            }
            Var::Overflow(k) => self.cost(v) - y[self.pieces + k],
        }
    }

    /// The nonzero entries of a variable's column.
    fn entries(&self, v: Var) -> Vec<(usize, f64)> {
        match v {
            Var::Col(j) => self.sparse[j].clone(),
            Var::Surplus(i) => vec![(i, -1.0)],
            Var::Exchange(k) => {
                let (bigger, smaller) = self.exchanges[k];
                vec![(bigger, -1.0), (smaller, 1.0)]
            }
            Var::Overflow(k) => vec![(self.pieces + k, 1.0)],
        }
    }

    /// Takes one simplex step with a variable that prices out, among the columns held and the
    /// surpluses. False when none does (the LP over these columns is optimal).
    ///
    /// Partial pricing: the columns are priced in blocks of `PRICING_BLOCK`, from where the
    /// last step stopped, and the best of the first block that holds a candidate enters (the
    /// surpluses are priced every time). Why: with thousands of columns, pricing them all at
    /// every step cost more than the step itself, and the best of a block enters almost as
    /// well. Only a pass over every column that finds nothing ends the LP. When the steps
    /// stall, Bland's rule instead: the first improving variable in index order.
    pub fn improve(&mut self) -> bool {
        let y = self.y.clone();
        self.improve_at(&y)
    }

    fn improve_at(&mut self, y: &[f64]) -> bool {
        let basic = self.basic_flags();
        let n = self.cols.len();
        let bland = self.stalled > BLAND_AFTER;
        let exchanges = if self.has_exchanges() {
            self.exchanges.len()
        } else {
            0
        };
        let prices_out = |master: &Master, v: Var| {
            let rc = if basic.holds(v) || matches!(v, Var::Col(j) if master.retired[j]) {
                0.0
            } else {
                master.reduced(v, y)
            };
            (rc < -EPS).then_some(rc)
        };
        let limits = self.m - self.pieces;
        let mut best: Option<(f64, Var)> = None;
        if bland {
            best = (0..n)
                .map(Var::Col)
                .chain((0..self.m).map(Var::Surplus))
                .chain((0..exchanges).map(Var::Exchange))
                .chain((0..limits).map(Var::Overflow))
                .find_map(|v| prices_out(self, v).map(|rc| (rc, v)));
        } else {
            let rows = (0..self.m).map(Var::Surplus);
            let others = (0..exchanges)
                .map(Var::Exchange)
                .chain((0..limits).map(Var::Overflow));
            for v in rows.chain(others) {
                if let Some(rc) = prices_out(self, v) {
                    if best.is_none_or(|(b, _)| rc < b) {
                        best = Some((rc, v));
                    }
                }
            }
            let start = self.scan_from.min(n);
            let mut scanned = 0;
            let mut found_in_columns = false;
            while scanned < n {
                let j = (start + scanned) % n;
                scanned += 1;
                if let Some(rc) = prices_out(self, Var::Col(j)) {
                    found_in_columns = true;
                    if best.is_none_or(|(b, _)| rc < b) {
                        best = Some((rc, Var::Col(j)));
                    }
                }
                if found_in_columns && scanned % PRICING_BLOCK == 0 {
                    break;
                }
            }
            self.scan_from = (start + scanned) % n.max(1);
        }
        match best {
            Some((_, v)) => {
                self.enter(v);
                true
            }
            None => false,
        }
    }

    /// Which variables are basic.
    fn basic_flags(&self) -> Basic {
        let mut basic = Basic {
            col: vec![false; self.cols.len()],
            surplus: vec![false; self.m],
            exchange: vec![false; self.exchanges.len()],
            overflow: vec![false; self.m - self.pieces],
        };
        for v in &self.basis {
            match *v {
                Var::Col(j) => basic.col[j] = true,
                Var::Surplus(i) => basic.surplus[i] = true,
                Var::Exchange(k) => basic.exchange[k] = true,
                Var::Overflow(k) => basic.overflow[k] = true,
            }
        }
        basic
    }

    /// Adds a column (out of the basis).
    pub fn add(&mut self, col: Column) {
        self.sparse.push(self.sparse_of(&col));
        self.price.push(price_of(&col, self.seed));
        self.cols.push(col);
        self.retired.push(false);
    }

    /// Lowers each column's cost by a fraction (at most `COST_NOISE`) drawn from `seed` and
    /// its pattern, and updates the duals; the basis stays feasible, the caller optimises it
    /// again. Why: the master has many optimal vertices (its degeneracy), and a dive follows
    /// the one the simplex happened to reach; perturbed costs pick another, so dives started
    /// from them take other bars first. Costs only go down, so the duals stay feasible for
    /// the true costs and every bound read from them still holds (weaker by at most
    /// `COST_NOISE` of the LP's value); `objective` reads the true costs.
    pub fn perturb_costs(&mut self, seed: u64) {
        self.seed = seed;
        self.price = self.cols.iter().map(|c| price_of(c, seed)).collect();
        self.y = self.compute_duals();
    }

    /// Adds a column and brings it into the basis.
    pub fn add_and_enter(&mut self, col: Column) {
        self.add(col);
        self.enter(Var::Col(self.cols.len() - 1));
    }

    fn enter(&mut self, v: Var) {
        let u = self.column_in_basis(v);
        // ratio test; ties go to the smallest variable (Bland), which also keeps ordinary
        // degenerate steps from cycling often
        let order = |v: Var| match v {
            Var::Col(j) => (0, j),
            Var::Surplus(i) => (1, i),
            Var::Exchange(k) => (2, k),
            Var::Overflow(k) => (3, k),
        };
        let mut leave: Option<(f64, usize)> = None;
        for k in 0..self.m {
            if u[k] > EPS {
                let t = self.xb[k].max(0.0) / u[k];
                let better = match leave {
                    None => true,
                    Some((b, r)) => {
                        t < b - 1e-12
                            || (t <= b + 1e-12 && order(self.basis[k]) < order(self.basis[r]))
                    }
                };
                if better {
                    leave = Some((t, k));
                }
            }
        }
        let Some((step, r)) = leave else {
            return; // unbounded direction: impossible with non-negative costs
        };
        if step <= 1e-12 {
            self.stalled += 1;
        } else {
            self.stalled = 0;
        }
        self.pivot(v, &u, r);
    }

    /// B^-1 times the column of `v`.
    fn column_in_basis(&self, v: Var) -> Vec<f64> {
        let mut u = vec![0.0; self.m];
        for (r, x) in self.entries(v) {
            u[r] += x;
        }
        self.factor.ftran(&mut u);
        u
    }

    /// Brings `v` (whose column in the basis is `u`) in at basis position `r`.
    fn pivot(&mut self, v: Var, u: &[f64], r: usize) {
        let step = self.xb[r] / u[r];
        for (k, x) in self.xb.iter_mut().enumerate() {
            if k != r && u[k] != 0.0 {
                *x -= u[k] * step;
            }
        }
        self.xb[r] = step;
        self.basis[r] = v;
        self.factor.update(r, u);
        self.pivots += 1;
        if self.pivots >= REFACTOR_EVERY {
            self.refactor();
        } else {
            self.y = self.compute_duals();
        }
    }

    /// Lowers the demand by the bars taken, (column, copies) each, and the limits by the bars
    /// (rows never past zero), and restores an optimal basis of the lower demand by dual
    /// simplex steps: the duals stay feasible when only the right-hand sides change, so this
    /// takes a few pivots where solving afresh takes many.
    pub fn fix(&mut self, taken: &[(usize, u32)]) {
        for &(j, copies) in taken {
            for &(r, a) in &self.sparse[j] {
                let whole = self.unperturbed(r);
                let perturbation = self.demand[r] - whole;
                let left = whole - copies as f64 * a;
                // a piece row's demand stays >= 0, a limit row's -limit <= 0
                let left = if r < self.pieces {
                    left.max(0.0)
                } else {
                    left.min(0.0)
                };
                self.demand[r] = left + perturbation;
            }
        }
        self.recompute_values();
        self.restore_feasibility();
    }

    /// Retires every column that gives more of some piece than `residual` asks for, and adds
    /// its copy trimmed to the residual. Why: a bar of such a column, once cut, gives fewer
    /// pieces than the LP counted (the rest would be waste), so a dive that follows the LP
    /// into it leaves gaps; where plans must waste nothing (perfect packings) that alone makes
    /// it fail. A retired column never enters again, and one still in the basis costs
    /// `RETIRED_COST` times more, so the next simplex steps take it out.
    pub fn trim_to(&mut self, residual: &[u32]) {
        let over = |j: usize| {
            self.sparse[j]
                .iter()
                .any(|&(r, a)| r < self.pieces && a > residual[r] as f64)
        };
        let retiring: Vec<usize> = (0..self.cols.len())
            .filter(|&j| !self.retired[j] && over(j))
            .collect();
        if retiring.is_empty() {
            return;
        }
        for &j in &retiring {
            self.retired[j] = true;
        }
        // the columns kept, by a hash of their pattern (compared in full on a match): the
        // trimmed copies must not repeat them
        let key = |stock: usize, counts: &[u32]| {
            counts
                .iter()
                .enumerate()
                .filter(|(_, &a)| a > 0)
                .fold(stock as u64 ^ 0x9E37_79B9_7F4A_7C15, |h, (r, &a)| {
                    (h ^ ((r as u64) << 32 | a as u64)).wrapping_mul(0x100_0000_01B3)
                })
        };
        let mut kept: std::collections::HashMap<u64, Vec<usize>> = Default::default();
        for j in (0..self.cols.len()).filter(|&j| !self.retired[j]) {
            let c = &self.cols[j];
            kept.entry(key(c.stock, &c.counts)).or_default().push(j);
        }
        for j in retiring {
            let col = &self.cols[j];
            let counts: Vec<u32> = col
                .counts
                .iter()
                .zip(residual)
                .map(|(&a, &r)| a.min(r))
                .collect();
            if counts.iter().all(|&a| a == 0) {
                continue;
            }
            let k = key(col.stock, &counts);
            let same =
                |i: &usize| self.cols[*i].stock == col.stock && self.cols[*i].counts == counts;
            if kept.get(&k).is_some_and(|list| list.iter().any(same)) {
                continue;
            }
            let trimmed = Column {
                stock: col.stock,
                counts,
                cost: col.cost,
            };
            kept.entry(k).or_default().push(self.cols.len());
            self.add(trimmed);
        }
        self.y = self.compute_duals();
    }

    /// Retires every column `unwanted` says no plan sought may use (as `trim_to` does, without
    /// trimmed copies): it never enters again, and the next simplex steps take it out.
    pub fn retire_if(&mut self, unwanted: impl Fn(&Column) -> bool) {
        let mut any = false;
        for (j, col) in self.cols.iter().enumerate() {
            if !self.retired[j] && unwanted(col) {
                self.retired[j] = true;
                any = true;
            }
        }
        if any {
            self.y = self.compute_duals();
        }
    }

    /// Dual simplex: while a basic variable is negative, it leaves, and the variable that
    /// keeps every reduced cost non-negative enters.
    fn restore_feasibility(&mut self) {
        let m = self.m;
        for _ in 0..50 * m {
            let Some(r) = (0..m)
                .filter(|&k| self.xb[k] < -1e-9)
                .min_by(|&a, &b| self.xb[a].total_cmp(&self.xb[b]))
            else {
                return;
            };
            // row r of B^-1
            let mut row = vec![0.0; m];
            row[r] = 1.0;
            self.factor.btran(&mut row);
            // (exchanges never enter here: dives and fixings come after `drop_exchanges`)
            let basic = self.basic_flags();
            // Harris's ratio test: the cutting stock master is highly dual degenerate (many
            // reduced costs are zero), and the plain minimum ratio then often picks a tiny
            // pivot that blows the values up; among the near-minimum ratios, the largest pivot
            let mut candidates: Vec<(Var, f64, f64)> = Vec::new();
            for j in 0..self.cols.len() {
                if !basic.col[j] && !self.retired[j] {
                    let alpha: f64 = self.sparse[j].iter().map(|&(i, a)| row[i] * a).sum();
                    if alpha < -1e-9 {
                        candidates.push((Var::Col(j), alpha, self.reduced(Var::Col(j), &self.y)));
                    }
                }
            }
            for i in 0..m {
                if !basic.surplus[i] && -row[i] < -1e-9 {
                    candidates.push((Var::Surplus(i), -row[i], self.y[i]));
                }
            }
            for (k, &held) in basic.overflow.iter().enumerate() {
                let v = Var::Overflow(k);
                if !held && row[self.pieces + k] < -1e-9 {
                    candidates.push((v, row[self.pieces + k], self.reduced(v, &self.y)));
                }
            }
            let bound = candidates
                .iter()
                .map(|&(_, alpha, rc)| (rc.max(0.0) + HARRIS) / -alpha)
                .fold(f64::INFINITY, f64::min);
            let best = candidates
                .iter()
                .filter(|&&(_, alpha, rc)| rc.max(0.0) / -alpha <= bound)
                .max_by(|a, b| (-a.1).total_cmp(&-b.1))
                .map(|&(v, alpha, _)| (alpha, v));
            let Some((_, v)) = best else {
                return; // infeasible: cannot happen, every row has a column that covers it
            };
            let u = self.column_in_basis(v);
            self.pivot(v, &u, r);
        }
    }
}

/// A distinct factor in (0.5, 1] for each row (a fixed hash of the row: no two rows alike, the
/// same on every run).
fn perturbation(row: usize) -> f64 {
    let mut h = (row as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    0.5 + 0.5 * ((h >> 11) as f64 / (1u64 << 53) as f64)
}

/// A column's cost, lowered by a fraction in [0, COST_NOISE) drawn from `seed` and its
/// pattern (the same pattern, the same cost, wherever it is added); its own cost for seed 0.
fn price_of(c: &Column, seed: u64) -> f64 {
    if seed == 0 {
        return c.cost;
    }
    let mut h = (seed ^ c.stock as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (r, &a) in c.counts.iter().enumerate().filter(|(_, &a)| a > 0) {
        h = (h ^ ((r as u64) << 32 | a as u64)).wrapping_mul(0x100_0000_01B3);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    c.cost * (1.0 - COST_NOISE * ((h >> 11) as f64 / (1u64 << 53) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(counts: &[u32]) -> Column {
        Column {
            stock: 0,
            counts: counts.to_vec(),
            cost: 1.0,
        }
    }

    /// Pieces 6, 4 and 3 on bars of 10; every maximal pattern held.
    fn master() -> Master {
        let homogeneous = vec![col(&[1, 0, 0]), col(&[0, 2, 0]), col(&[0, 0, 3])];
        let patterns = vec![col(&[1, 1, 0]), col(&[1, 0, 1]), col(&[0, 1, 2])];
        Master::new(&[7, 9, 11], homogeneous, patterns)
    }

    fn optimise(m: &mut Master) {
        while m.improve() {}
    }

    /// What the solution's patterns give of each piece.
    fn covered(m: &Master) -> Vec<f64> {
        let mut got = vec![0.0; 3];
        for (j, x) in m.solution() {
            for (r, &a) in m.cols[j].counts.iter().enumerate() {
                got[r] += a as f64 * x;
            }
        }
        got
    }

    #[test]
    fn exchanges_keep_the_lps_value_and_leave_a_solution_of_patterns_alone() {
        let mut plain = master();
        optimise(&mut plain);
        let mut with = master();
        with.add_exchanges(&[6, 4, 3]);
        assert!(with.has_exchanges());
        optimise(&mut with);
        assert!((with.objective() - plain.objective()).abs() < 1e-6);
        // the duals are ordered as the sizes are
        let y = with.duals();
        assert!(y[0] >= y[1] - 1e-9 && y[1] >= y[2] - 1e-9, "{y:?}");
        with.drop_exchanges();
        assert!(!with.has_exchanges());
        optimise(&mut with);
        assert!((with.objective() - plain.objective()).abs() < 1e-6);
        for (got, want) in covered(&with).iter().zip([7.0, 9.0, 11.0]) {
            assert!(*got >= want - 1e-5, "{got} of {want}");
        }
    }
}
