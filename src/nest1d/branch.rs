//! Branch-and-price for classic cutting stock (one stock length): the search that
//! proves what the LP bound cannot (instances whose optimum lies above the LP bound rounded
//! up, Hard28's "non-IRUP" five among them) and finds what dives miss.
//!
//! Pieces are taken one by one (each copy of a piece type is an item of its own), so the
//! problem is bin packing and Ryan and Foster's branching applies: a node says, for chosen
//! pairs of items, that they share a bar ("together") or never do ("apart"). Items branched
//! together form a group; the node's master LP has one covering row per group and columns that
//! are sets of groups. Its pricing is a 0/1 knapsack over groups with the apart pairs as
//! conflicts (`knapsack::best_without_conflicts`). Both children exclude the parent's
//! fractional solution, and each adds a decision, so the tree is finite.
//!
//! The search is depth first, "together" first (it leads to whole plans soonest). A node is
//! pruned when its bound rounded up reaches the incumbent: its LP bound, or earlier Farley's
//! bound during its column generation. Each node also rounds its LP down and packs the rest by
//! first-fit decreasing, for better plans. When the tree is exhausted the incumbent is proven
//! optimal. Columns found anywhere go to one pool; each node starts from the pool's columns
//! that respect its decisions.

use super::heuristic::Bar;
use super::instance::{Instance, MAX_TABLE_BITS};
use super::knapsack;
use super::master::{Column, Master};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The most pieces the search expands (a row each; the master's inverse is dense).
pub const MAX_ITEMS: usize = 600;
/// Nodes of the quick pricing search before the exact one.
const QUICK_NODES: u64 = 2_000;
/// Patterns one exact pricing may add.
const PATTERNS_PER_PRICING: usize = 10;
/// Knapsack tables one exact pricing may build when splitting on conflicts.
const MAX_TABLES: usize = 64;
/// The most copies of one piece whose pairs an apart child sets apart at once (see
/// `Node::apart`).
const MAX_TWINS_APART: usize = 12;
/// Pool columns per row a node's LP starts with (see `Tree::master_of`).
const START_COLUMNS_PER_ROW: usize = 4;
/// Tolerance for reading the LP's values as whole numbers.
/// (Wider than the demands' perturbation, 1e-6 a row, whose sums show in the values.)
const WHOLE: f64 = 1e-4;
/// Slack of a bound before it is rounded up (floating point of the LP).
const BOUND_SLACK: f64 = 1e-6;

/// True when the tree may take `inst` on: classic, at most `MAX_ITEMS` pieces, and a pricing
/// table over single pieces within the size the type-level pricing allows.
pub fn applies(inst: &Instance) -> bool {
    let items: u64 = inst.demand.iter().map(|&d| d as u64).sum();
    inst.is_classic()
        && items <= MAX_ITEMS as u64
        && items * (inst.capacity[0].max(0) as u64 + 64) <= MAX_TABLE_BITS
}

/// Runs the search on `inst` (which must be classic) with an incumbent of `incumbent` bars,
/// starting from the type-level `columns`, until `stop` says so or the tree is exhausted.
pub fn search<'a>(
    inst: &'a Instance,
    incumbent: u64,
    columns: &[Column],
    stop: &dyn Fn() -> bool,
) -> Tree<'a> {
    let mut tree = Tree::new(inst, incumbent, columns);
    tree.run(stop);
    tree
}

/// The pieces one by one, longest first: each item's size and the piece type it is a copy of.
struct Items {
    size: Vec<i64>,
    kind: Vec<usize>,
    /// The first item of each piece type (its copies follow it).
    first: Vec<usize>,
    capacity: i64,
}

impl Items {
    fn of(inst: &Instance) -> Items {
        let (mut size, mut kind, mut first) = (Vec::new(), Vec::new(), Vec::new());
        for (t, (&s, &d)) in inst.size.iter().zip(&inst.demand).enumerate() {
            first.push(size.len());
            for _ in 0..d {
                size.push(s);
                kind.push(t);
            }
        }
        Items {
            size,
            kind,
            first,
            capacity: inst.capacity[0],
        }
    }

    /// A type-level pattern as items: the first copies of each type.
    fn set_of(&self, counts: &[u32]) -> Vec<u16> {
        counts
            .iter()
            .enumerate()
            .flat_map(|(t, &c)| (0..c as usize).map(move |k| (self.first[t] + k) as u16))
            .collect()
    }

    /// Bars of items as bars of piece types.
    fn bars_of(&self, bars: &[Vec<usize>], types: usize) -> Vec<Bar> {
        bars.iter()
            .map(|items| {
                let mut counts = vec![0u32; types];
                for &i in items {
                    counts[self.kind[i]] += 1;
                }
                Bar {
                    stock: 0,
                    free: self.capacity - items.iter().map(|&i| self.size[i]).sum::<i64>(),
                    counts,
                }
            })
            .collect()
    }
}

/// Every pattern found so far, as sorted item sets, once each.
#[derive(Default)]
struct Pool {
    sets: Vec<Vec<u16>>,
    seen: HashSet<Vec<u16>>,
}

impl Pool {
    fn insert(&mut self, mut set: Vec<u16>) {
        set.sort_unstable();
        if !set.is_empty() && self.seen.insert(set.clone()) {
            self.sets.push(set);
        }
    }
}

/// A node's decisions: the group of each item (items branched together share one; groups are
/// numbered 0.. densely) and the pairs of items branched apart.
#[derive(Clone)]
struct Node {
    group: Vec<usize>,
    apart: Vec<(usize, usize)>,
    /// The parent LP's duals, spread over each group's items by size (none at the root): the
    /// node's LP starts from the pool columns these price best.
    hint: Option<Rc<Vec<f64>>>,
}

impl Node {
    fn groups(&self) -> usize {
        self.group.iter().max().map_or(0, |g| g + 1)
    }

    /// The child in which groups `a` and `b` share every bar (None when they cannot).
    fn together(&self, a: usize, b: usize, size: &[i64], capacity: i64) -> Option<Node> {
        let (keep, gone) = (a.min(b), a.max(b));
        if size[a] + size[b] > capacity
            || self.apart.iter().any(|&(u, v)| {
                let (gu, gv) = (self.group[u], self.group[v]);
                (gu == a && gv == b) || (gu == b && gv == a)
            })
        {
            return None;
        }
        let group = self
            .group
            .iter()
            .map(|&g| match g {
                g if g == gone => keep,
                g if g > gone => g - 1,
                g => g,
            })
            .collect();
        Some(Node {
            group,
            apart: self.apart.clone(),
            hint: self.hint.clone(),
        })
    }

    /// The child in which groups `a` and `b` never share a bar, and, where one of them is a
    /// piece still untouched by any decision (a group of its own, in no apart pair), neither
    /// does any untouched copy of that piece. Why that is sound: untouched copies of one
    /// piece type are interchangeable, so the "together" sibling stands for every plan in
    /// which the other group shares a bar with some untouched copy (swap the copies), and
    /// this child needs to hold only the plans in which it shares a bar with none. Without
    /// it, each copy would be branched away one at a time, the LP slipping to the next.
    fn apart(&self, a: usize, b: usize, kind: &[usize]) -> Node {
        let members = |g: usize| (0..self.group.len()).filter(move |&i| self.group[i] == g);
        let untouched = |i: usize| {
            members(self.group[i]).count() == 1
                && !self.apart.iter().any(|&(u, v)| u == i || v == i)
        };
        let twins = |i: usize| -> Vec<usize> {
            (0..self.group.len())
                .filter(|&j| kind[j] == kind[i] && untouched(j))
                .collect()
        };
        let (ia, ib) = (
            members(a).next().expect("a member"),
            members(b).next().expect("a member"),
        );
        let mut apart = self.apart.clone();
        if untouched(ib) && kind[ia] != kind[ib] {
            apart.extend(twins(ib).into_iter().map(|t| (ia, t)));
        } else if untouched(ia) && kind[ia] != kind[ib] {
            apart.extend(twins(ia).into_iter().map(|t| (t, ib)));
        } else if untouched(ia) && untouched(ib) && twins(ia).len() <= MAX_TWINS_APART {
            // two copies of one piece: no two untouched copies of it share a bar
            let t = twins(ia);
            for (k, &u) in t.iter().enumerate() {
                apart.extend(t[k + 1..].iter().map(|&v| (u, v)));
            }
        } else {
            apart.push((ia, ib));
        }
        Node {
            group: self.group.clone(),
            apart,
            hint: self.hint.clone(),
        }
    }
}

/// A node's rows: the items of each group, its size, and the apart pairs between groups.
struct Rows {
    members: Vec<Vec<usize>>,
    size: Vec<i64>,
    conflicts: Vec<(usize, usize)>,
}

impl Rows {
    fn of(node: &Node, items: &Items) -> Rows {
        let g = node.groups();
        let mut members = vec![Vec::new(); g];
        for (i, &r) in node.group.iter().enumerate() {
            members[r].push(i);
        }
        let size = members
            .iter()
            .map(|m| m.iter().map(|&i| items.size[i]).sum())
            .collect();
        let mut conflicts: Vec<(usize, usize)> = node
            .apart
            .iter()
            .map(|&(u, v)| {
                let (a, b) = (node.group[u], node.group[v]);
                (a.min(b), a.max(b))
            })
            .collect();
        conflicts.sort_unstable();
        conflicts.dedup();
        Rows {
            members,
            size,
            conflicts,
        }
    }

    fn clash(&self, counts: &[u32]) -> bool {
        self.conflicts
            .iter()
            .any(|&(a, b)| counts[a] > 0 && counts[b] > 0)
    }

    fn column(&self, counts: Vec<u32>) -> Column {
        Column {
            stock: 0,
            counts,
            cost: 1.0,
        }
    }

    fn load(&self, counts: &[u32]) -> i64 {
        counts
            .iter()
            .zip(&self.size)
            .map(|(&a, &s)| a as i64 * s)
            .sum()
    }
}

/// A node interrupted in its column generation, and the least load its LP admits.
struct Pending {
    min_load: i64,
    node: Node,
    rows: Rows,
    master: Master,
    before: usize,
}

/// How a node's LP ended.
enum Lp {
    /// Its bound reaches the incumbent.
    Pruned,
    /// Optimal, with this bound.
    Optimal(f64),
    /// Stopped from outside.
    Stopped,
}

/// The search, resumable: `run` stops when told and goes on where it stopped at the next call,
/// so the solver can share its time between the tree and its dives.
pub struct Tree<'a> {
    inst: &'a Instance,
    items: Items,
    /// The items' total size.
    total: i64,
    pool: Pool,
    /// The nodes still open, the next on top.
    open: Vec<Node>,
    /// The node whose column generation the last stop interrupted.
    pending: Option<Pending>,
    /// The incumbent's number of bars.
    best: u64,
    improved: Option<Vec<Bar>>,
    pub nodes: u64,
    /// Scratch marks for the compatibility test (`stamp` tells this test's from older ones).
    mark: Vec<u32>,
    stamp: u32,
    /// Plans only from whole LPs (see `leaves_only`).
    leaves_only: bool,
    /// Set when a node could be neither closed nor split (rounding error): the tree then
    /// stops for good, open, so it never claims a proof.
    stuck: bool,
}

impl<'a> Tree<'a> {
    /// The tree of `inst` (which must be classic), its root open, with an incumbent of
    /// `incumbent` bars and the type-level `columns` (the root LP's) in its pool.
    pub fn new(inst: &'a Instance, incumbent: u64, columns: &[Column]) -> Tree<'a> {
        let items = Items::of(inst);
        let n = items.size.len();
        let mut pool = Pool::default();
        for col in columns {
            pool.insert(items.set_of(&col.counts));
        }
        Tree {
            inst,
            total: items.size.iter().sum(),
            pool,
            open: vec![Node {
                group: (0..n).collect(),
                apart: Vec::new(),
                hint: None,
            }],
            pending: None,
            best: incumbent,
            improved: None,
            nodes: 0,
            mark: vec![0; n],
            stamp: 0,
            stuck: false,
            leaves_only: false,
            items,
        }
    }

    /// The tree without its rounding: plans come only from nodes whose LP is whole. For
    /// checking the branching itself: every better plan must still be reachable that way.
    pub fn leaves_only(mut self) -> Self {
        self.leaves_only = true;
        self
    }

    /// True when every node is closed: the best plan (the incumbent or `improved`) is optimal.
    pub fn exhausted(&self) -> bool {
        self.open.is_empty() && self.pending.is_none() && !self.stuck
    }

    /// A better plan found elsewhere: the tree prunes against it from now on.
    pub fn lower_incumbent(&mut self, bars: u64) {
        self.best = self.best.min(bars);
    }

    /// The plan the tree found that beats every incumbent it was given, if any (once).
    pub fn take_improved(&mut self) -> Option<Vec<Bar>> {
        self.improved.take()
    }

    /// Depth first over the open nodes until the tree is exhausted (true) or `stop` (false).
    pub fn run(&mut self, stop: &dyn Fn() -> bool) -> bool {
        if self.stuck {
            return false;
        }
        loop {
            if self.min_load() > self.items.capacity {
                // the material alone needs the incumbent's bars
                self.open.clear();
                self.pending = None;
                return true;
            }
            if stop() {
                return false;
            }
            // the node whose LP a stop interrupted goes on where it was, unless the incumbent
            // has changed since (its LP then admits fewer patterns: it starts again)
            let (node, rows, mut master, before) = match self.pending.take() {
                Some(p) if p.min_load == self.min_load() => (p.node, p.rows, p.master, p.before),
                Some(p) => {
                    self.keep_new_columns(&p.master, p.before, &p.rows);
                    self.start(p.node)
                }
                None => match self.open.pop() {
                    Some(node) => self.start(node),
                    None => return true,
                },
            };
            let lp = self.column_generation(&mut master, &rows, stop);
            let bound = match lp {
                Lp::Stopped => {
                    self.pending = Some(Pending {
                        min_load: self.min_load(),
                        node,
                        rows,
                        master,
                        before,
                    });
                    return false;
                }
                Lp::Pruned => {
                    self.keep_new_columns(&master, before, &rows);
                    continue;
                }
                Lp::Optimal(bound) => bound,
            };
            self.keep_new_columns(&master, before, &rows);
            let solution = master.solution();
            self.round(&master, &solution, &rows);
            if self.prunes(bound) {
                continue;
            }
            let Some((a, b)) = branching_pair(&master, &solution, &rows) else {
                // whole: the rounding took it, and it reached the bound
                if !is_whole(&solution) {
                    // only by rounding error; the tree can no longer prove anything
                    tracing::debug!("branch-and-price: a fractional node without a pair");
                    self.open.push(node);
                    self.stuck = true;
                    return false;
                }
                continue;
            };
            let y = master.duals();
            let mut hint = vec![0.0; self.items.size.len()];
            for (r, members) in rows.members.iter().enumerate() {
                for &i in members {
                    hint[i] = y[r].max(0.0) * self.items.size[i] as f64 / rows.size[r] as f64;
                }
            }
            let node = Node {
                hint: Some(Rc::new(hint)),
                ..node
            };
            // depth first, together first: pushed last, popped next
            self.open.push(node.apart(a, b, &self.items.kind));
            if let Some(child) = node.together(a, b, &rows.size, self.items.capacity) {
                self.open.push(child);
            }
        }
    }

    /// The least load of a bar in a plan better than the incumbent: such a plan has at most
    /// best - 1 bars, so all its bars together waste at most (best - 1) C - total, and no one
    /// bar more. Why it matters: the tree looks only for better plans, so it may leave every
    /// other pattern out of its LPs. Where the incumbent is one bar above the LP bound and
    /// the material nearly fills the bars the bound counts (Hard28's hard five, Waescher's,
    /// the ANI instances, which need perfect packings), only nearly full bars remain, and the
    /// LPs of such patterns prove in a few nodes what the full LPs cannot.
    fn min_load(&self) -> i64 {
        let waste = (self.best as i64 - 1) * self.items.capacity - self.total;
        self.items.capacity - waste
    }

    /// A node's rows and master, ready for its column generation.
    fn start(&mut self, node: Node) -> (Node, Rows, Master, usize) {
        self.nodes += 1;
        let rows = Rows::of(&node, &self.items);
        if self.nodes.is_multiple_of(100) {
            tracing::trace!(
                nodes = self.nodes,
                open = self.open.len(),
                groups = rows.members.len(),
                apart = node.apart.len(),
                pool = self.pool.sets.len(),
                min_load = self.min_load(),
                "branch-and-price"
            );
        }
        let master = self.master_of(&node, &rows);
        let before = master.cols.len();
        (node, rows, master, before)
    }

    /// True when a bound rounded up leaves no room below the incumbent.
    fn prunes(&self, bound: f64) -> bool {
        (bound - BOUND_SLACK).ceil() >= self.best as f64
    }

    /// The node's master: one row per group, its start basis the groups alone, and the pool's
    /// columns that respect the node's decisions and load a bar to `min_load`. A group alone
    /// below that load is no pattern of a better plan: it is in the start basis (the LP needs
    /// a feasible start) at the cost of a whole plan, so the LP keeps it only where nothing
    /// else covers its group. The bounds are read from the duals, and pricing checks them
    /// against the true patterns only, so these start columns never make a bound invalid.
    fn master_of(&mut self, node: &Node, rows: &Rows) -> Master {
        let g = rows.members.len();
        let min_load = self.min_load();
        let artificial = self.best as f64 + 1.0;
        let unit = |r: usize| {
            let mut counts = vec![0u32; g];
            counts[r] = 1;
            Column {
                cost: if rows.size[r] < min_load {
                    artificial
                } else {
                    1.0
                },
                ..rows.column(counts)
            }
        };
        let homogeneous = (0..g).map(unit).collect();
        let mut extra = Vec::new();
        let mut group_count = vec![0usize; g];
        'sets: for set in &self.pool.sets {
            self.stamp = self.stamp.wrapping_add(1).max(1);
            let mut touched = Vec::new();
            for &i in set {
                let i = i as usize;
                self.mark[i] = self.stamp;
                let r = node.group[i];
                if group_count[r] == 0 {
                    touched.push(r);
                }
                group_count[r] += 1;
            }
            let whole_groups = touched
                .iter()
                .all(|&r| group_count[r] == rows.members[r].len());
            let respects_apart = node
                .apart
                .iter()
                .all(|&(u, v)| !(self.mark[u] == self.stamp && self.mark[v] == self.stamp));
            let load: i64 = touched.iter().map(|&r| rows.size[r]).sum();
            let fits = whole_groups && respects_apart && touched.len() > 1 && load >= min_load;
            for &r in &touched {
                group_count[r] = 0;
            }
            if !fits {
                continue 'sets;
            }
            let mut counts = vec![0u32; g];
            for &r in &touched {
                counts[r] = 1;
            }
            let worth = node
                .hint
                .as_ref()
                .map_or(0.0, |h| set.iter().map(|&i| h[i as usize]).sum());
            extra.push((worth, rows.column(counts)));
        }
        // the columns the parent's duals price best: the LP needs few of the pool's columns,
        // and each simplex step prices every column it holds
        if node.hint.is_some() && extra.len() > START_COLUMNS_PER_ROW * g {
            extra.sort_by(|a, b| b.0.total_cmp(&a.0));
            extra.truncate(START_COLUMNS_PER_ROW * g);
        }
        let extra = extra.into_iter().map(|(_, c)| c).collect();
        Master::new(&vec![1; g], homogeneous, extra)
    }

    /// The node's column generation, pruned as soon as Farley's bound reaches the incumbent.
    fn column_generation(&self, master: &mut Master, rows: &Rows, stop: &dyn Fn() -> bool) -> Lp {
        let g = rows.members.len();
        let ones = vec![1u32; g];
        let cap = self.items.capacity;
        let min_load = self.min_load();
        let mut farley = 0.0f64;
        loop {
            if stop() {
                return Lp::Stopped;
            }
            if master.improve() {
                continue;
            }
            let y = master.duals();
            let values: Vec<f64> = y.iter().map(|v| v.max(0.0)).collect();
            let reduced = |counts: &[u32]| {
                1.0 - counts
                    .iter()
                    .zip(&y)
                    .map(|(&a, &v)| a as f64 * v)
                    .sum::<f64>()
            };
            let counts =
                knapsack::bounded_search(&values, &rows.size, &ones, cap, QUICK_NODES, &|| false)
                    .counts;
            if reduced(&counts) < -1e-9 && !rows.clash(&counts) && rows.load(&counts) >= min_load {
                master.add_and_enter(rows.column(counts));
                continue;
            }
            // the exact pricing; a search that ran out of tables before it could prove that
            // nothing prices out is run again with twice as many (the LP is not optimal
            // until it is done, and only an optimal LP may close a node)
            let mut tables = MAX_TABLES;
            let priced = loop {
                let priced = knapsack::best_loaded(
                    &values,
                    &rows.size,
                    min_load,
                    cap,
                    &rows.conflicts,
                    PATTERNS_PER_PRICING,
                    tables,
                    stop,
                );
                farley = farley.max(master.value_of_duals(&y) / priced.upper.max(1.0));
                if self.prunes(farley) {
                    return Lp::Pruned;
                }
                let prices_out = priced.patterns.iter().any(|(_, c)| reduced(c) < -1e-9);
                if priced.complete || prices_out {
                    break priced;
                }
                if stop() {
                    return Lp::Stopped;
                }
                tables *= 2;
            };
            let mut entering = priced
                .patterns
                .into_iter()
                .filter(|(_, c)| reduced(c) < -1e-9)
                .map(|(_, c)| rows.column(c));
            let Some(first) = entering.next() else {
                let bound = master.dual_bound().max(farley);
                return if self.prunes(bound) {
                    Lp::Pruned
                } else {
                    Lp::Optimal(bound)
                };
            };
            entering.for_each(|c| master.add(c));
            master.add_and_enter(first);
        }
    }

    /// Adds the columns the node's pricing found to the pool (as item sets).
    fn keep_new_columns(&mut self, master: &Master, before: usize, rows: &Rows) {
        for col in &master.cols[before..] {
            let set = col
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &a)| a > 0)
                .flat_map(|(r, _)| rows.members[r].iter().map(|&i| i as u16))
                .collect();
            self.pool.insert(set);
        }
    }

    /// A plan from the node's LP: its columns taken as many times as they are used whole,
    /// the rest by first-fit decreasing; kept when it beats the incumbent.
    fn round(&mut self, master: &Master, solution: &[(usize, f64)], rows: &Rows) {
        if self.leaves_only && !is_whole(solution) {
            return;
        }
        let n = self.items.size.len();
        let mut placed = vec![false; n];
        let mut bars: Vec<Vec<usize>> = Vec::new();
        for &(j, x) in solution {
            for _ in 0..(x + WHOLE).floor() as u32 {
                let bar: Vec<usize> = master.cols[j]
                    .counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &a)| a > 0)
                    .flat_map(|(r, _)| rows.members[r].iter().copied())
                    .filter(|&i| !placed[i])
                    .collect();
                if bar.is_empty() {
                    break;
                }
                for &i in &bar {
                    placed[i] = true;
                }
                bars.push(bar);
            }
        }
        // the rest first fit, longest first (items are already longest first)
        let mut free: Vec<i64> = bars
            .iter()
            .map(|b| self.items.capacity - b.iter().map(|&i| self.items.size[i]).sum::<i64>())
            .collect();
        for i in (0..n).filter(|&i| !placed[i]) {
            let s = self.items.size[i];
            match free.iter().position(|&f| f >= s) {
                Some(k) => {
                    free[k] -= s;
                    bars[k].push(i);
                }
                None => {
                    free.push(self.items.capacity - s);
                    bars.push(vec![i]);
                }
            }
        }
        if (bars.len() as u64) < self.best {
            tracing::debug!(
                bars = bars.len(),
                nodes = self.nodes,
                "branch-and-price: better plan"
            );
            self.best = bars.len() as u64;
            self.improved = Some(self.items.bars_of(&bars, self.inst.types()));
        }
    }
}

fn is_whole(solution: &[(usize, f64)]) -> bool {
    solution
        .iter()
        .all(|&(_, x)| (x - x.round()).abs() <= WHOLE)
}

/// The pair of groups to branch on: among pairs that share a column of the solution, the one
/// whose share of bars together is fractional and nearest one half (ties: the larger pair).
/// Failing that (possible because rows are covered, not partitioned), a pair that shares one
/// used column while another used column holds only one of them, so that both children
/// exclude part of the solution. None when every used column is whole.
fn branching_pair(
    master: &Master,
    solution: &[(usize, f64)],
    rows: &Rows,
) -> Option<(usize, usize)> {
    if is_whole(solution) {
        return None;
    }
    let mut together: HashMap<(usize, usize), f64> = HashMap::new();
    let mut uses = vec![0.0f64; rows.members.len()];
    for &(j, x) in solution {
        let groups: Vec<usize> = master.cols[j]
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &a)| a > 0)
            .map(|(r, _)| r)
            .collect();
        for (k, &a) in groups.iter().enumerate() {
            uses[a] += x;
            for &b in &groups[k + 1..] {
                *together.entry((a, b)).or_default() += x;
            }
        }
    }
    let mut pairs: Vec<((usize, usize), f64)> = together.into_iter().collect();
    pairs.sort_by_key(|&((a, b), _)| (a, b));
    let fractional = pairs
        .iter()
        .filter(|(_, w)| (w - w.round()).abs() > WHOLE)
        .min_by(|(p, w), (q, v)| {
            (w - 0.5)
                .abs()
                .total_cmp(&(v - 0.5).abs())
                .then((rows.size[q.0] + rows.size[q.1]).cmp(&(rows.size[p.0] + rows.size[p.1])))
        });
    if let Some(&(pair, _)) = fractional {
        return Some(pair);
    }
    // a pair together less often than one of them is used at all
    pairs
        .iter()
        .find(|&&((a, b), w)| uses[a].max(uses[b]) > w + WHOLE)
        .map(|&(pair, _)| pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way to cut the items into bars: the bar of each item, bars numbered in order of
    /// their first item.
    fn plans(size: &[i64], capacity: i64) -> Vec<Vec<usize>> {
        fn go(
            k: usize,
            size: &[i64],
            cap: i64,
            bar: &mut Vec<usize>,
            loads: &mut Vec<i64>,
            out: &mut Vec<Vec<usize>>,
        ) {
            if k == size.len() {
                out.push(bar.clone());
                return;
            }
            for b in 0..=loads.len() {
                if b == loads.len() {
                    loads.push(0);
                }
                if loads[b] + size[k] <= cap {
                    loads[b] += size[k];
                    bar.push(b);
                    go(k + 1, size, cap, bar, loads, out);
                    bar.pop();
                    loads[b] -= size[k];
                }
                if loads[b] == 0 {
                    loads.pop();
                }
            }
        }
        let mut out = Vec::new();
        go(
            0,
            size,
            capacity,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut out,
        );
        out
    }

    fn satisfies(node: &Node, plan: &[usize]) -> bool {
        let n = plan.len();
        (0..n).all(|i| (0..n).all(|j| node.group[i] != node.group[j] || plan[i] == plan[j]))
            && node.apart.iter().all(|&(u, v)| plan[u] != plan[v])
    }

    /// The plan with the copies of each piece swapped every possible way.
    fn relabelings(kind: &[usize], plan: &[usize]) -> Vec<Vec<usize>> {
        let mut out = vec![plan.to_vec()];
        let kinds = kind.iter().max().map_or(0, |k| k + 1);
        for t in 0..kinds {
            let copies: Vec<usize> = (0..kind.len()).filter(|&i| kind[i] == t).collect();
            let mut next = Vec::new();
            for p in &out {
                let mut perm = copies.clone();
                // every permutation of the copies (Heap's algorithm)
                let mut c = vec![0; perm.len()];
                let apply = |perm: &[usize]| {
                    let mut q = p.clone();
                    for (&from, &to) in copies.iter().zip(perm) {
                        q[to] = p[from];
                    }
                    q
                };
                next.push(apply(&perm));
                let mut i = 0;
                while i < perm.len() {
                    if c[i] < i {
                        perm.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                        next.push(apply(&perm));
                        c[i] += 1;
                        i = 0;
                    } else {
                        c[i] = 0;
                        i += 1;
                    }
                }
            }
            out = next;
        }
        out
    }

    /// The branching loses no plan: along random paths of decisions, every plan a node holds
    /// is, up to swapping copies of a piece, a plan of one of its two children.
    #[test]
    fn every_plan_of_a_node_lives_on_in_a_child() {
        let size = [5i64, 5, 5, 4, 4, 3, 3, 2];
        let kind = [0usize, 0, 0, 1, 1, 2, 2, 3];
        let capacity = 10;
        let all = plans(&size, capacity);
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut random = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let items = Items {
            size: size.to_vec(),
            kind: kind.to_vec(),
            first: vec![0, 3, 5, 7],
            capacity,
        };
        let mut checked = 0;
        for _ in 0..40 {
            let mut node = Node {
                group: (0..size.len()).collect(),
                apart: Vec::new(),
                hint: None,
            };
            for _ in 0..5 {
                let g = node.groups();
                if g < 2 {
                    break;
                }
                let a = random(g);
                let b = (a + 1 + random(g - 1)) % g;
                let rows = Rows::of(&node, &items);
                let together = node.together(a, b, &rows.size, capacity);
                let apart = node.apart(a, b, &kind);
                for plan in all.iter().filter(|p| satisfies(&node, p)) {
                    let kept = relabelings(&kind, plan).iter().any(|q| {
                        together.as_ref().is_some_and(|t| satisfies(t, q)) || satisfies(&apart, q)
                    });
                    assert!(
                        kept,
                        "plan {plan:?} lost below {:?} / {:?} on ({a}, {b})",
                        node.group, node.apart
                    );
                    checked += 1;
                }
                node = match together {
                    Some(t) if random(2) == 0 => t,
                    _ => apart,
                };
            }
        }
        assert!(checked > 1000, "{checked} plans checked");
    }
}
