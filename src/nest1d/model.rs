//! The 1D problem and its plan, in millimetres (DESIGN 3, 5.5).

/// A stock length (bar) kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Stock {
    pub id: String,
    pub length: f64,
    /// None: as many bars as needed.
    pub quantity: Option<u32>,
    pub cost: f64,
    /// Higher is used first among equally good plans (used to order the heuristic's choices).
    pub priority: i32,
}

/// Pieces of one length to cut.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub id: String,
    pub length: f64,
    pub quantity: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Objective {
    /// Fewest bars.
    #[default]
    MinimiseStock,
    /// Least stock length used (so least waste).
    MinimiseWaste,
    /// Least stock cost.
    MinimiseCost,
}

#[derive(Clone, Debug)]
pub struct Problem {
    pub stock: Vec<Stock>,
    pub pieces: Vec<Piece>,
    /// Material lost at each cut between two pieces.
    pub kerf: f64,
    pub start_trim: f64,
    pub end_trim: f64,
    pub max_time_s: f64,
    pub objective: Objective,
}

impl Problem {
    /// How many pieces are asked for: the size of the plan.
    pub fn pieces_asked(&self) -> u64 {
        self.pieces.iter().map(|p| u64::from(p.quantity)).sum()
    }

    /// The length of a bar that `pattern` uses: its pieces, a kerf between two pieces (none
    /// after the last) and both trims. The rest of the bar is waste.
    pub fn used_length(&self, pattern: &Pattern) -> f64 {
        let pieces: u32 = pattern.pieces.iter().map(|&(_, c)| c).sum();
        pattern
            .pieces
            .iter()
            .map(|&(i, c)| self.pieces[i].length * c as f64)
            .sum::<f64>()
            + self.kerf * pieces.saturating_sub(1) as f64
            + self.start_trim
            + self.end_trim
    }
}

/// One cutting pattern: which pieces one bar of `stock` gives, cut `multiplicity` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub stock: usize,
    pub multiplicity: u32,
    /// (piece index, count), longest pieces first.
    pub pieces: Vec<(usize, u32)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub patterns: Vec<Pattern>,
    /// Pieces no bar can hold: (piece index, quantity, reason).
    pub unplaced: Vec<(usize, u32, String)>,
    /// The plan's objective value (bars, stock length or cost).
    pub value: f64,
    /// The best lower bound on the objective that was proven.
    pub lower_bound: f64,
    /// True when `value` equals the lower bound: no plan is better.
    pub proven_optimal: bool,
    pub seconds: f64,
    /// How the time limit shaped the plan, when it cut the method short (for example: only
    /// the first answers had time); None when the method ran as far as it needed or the
    /// limit allowed it to improve on them.
    pub note: Option<String>,
}

impl Plan {
    pub fn bars(&self) -> u32 {
        self.patterns.iter().map(|p| p.multiplicity).sum()
    }
}
