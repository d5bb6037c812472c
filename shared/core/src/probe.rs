//! One random root-to-leaf walk of a search tree: what a family with the
//! [`crate::Probing`] capability returns, and what [`crate::estimate`]
//! averages into Knuth's estimate of the tree's size.

/// One random root-to-leaf walk: the number of children of each node on the
/// walk, from the root down to the last inner node (the leaf reached, with no
/// children, is not listed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    pub branching: Vec<u32>,
}

impl Probe {
    /// Knuth's estimate of the tree's node count:
    /// `1 + d0 + d0 d1 + ... + d0 d1 ... d(k-1)`.
    pub fn estimate(&self) -> f64 {
        let mut total = 1.0;
        let mut width = 1.0;
        for &d in &self.branching {
            width *= f64::from(d);
            total += width;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_estimate_is_knuths_sum() {
        assert_eq!(Probe::default().estimate(), 1.0);
        let p = Probe {
            branching: vec![2, 3, 1, 4],
        };
        assert_eq!(p.estimate(), 1.0 + 2.0 + 6.0 + 6.0 + 24.0);
    }
}
