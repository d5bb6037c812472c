//! What a simulated worker's slot does when its unit's exploration ends:
//! how the unit's report travels and how the slot gets its next unit. The
//! real worker's protocol is [`SlotPolicy::ReportAndLease`] with
//! lease-ahead (see `worker/src/slot.rs`); the other policies are there so
//! that what each step of that protocol gives can be measured
//! (docs/notes/scale.md), and [`SlotPolicy::Prefetch`] is what the real
//! worker does not do. One enum, so that a run has exactly one policy and
//! the end of a unit is one `match` over it.

/// How a slot reports its unit and gets its next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotPolicy {
    /// The unit's report asks for the slot's next unit (`want_units`,
    /// report-and-lease: one call a unit); the slot waits for the report's
    /// commit and the lease, and the lease loop asks with `Lease` only when
    /// the answer brought nothing. With `lease_ahead`, each report also
    /// asks for one unit to hold queued (`queue_units`), which starts on
    /// the slot as soon as its unit ends, while the report commits.
    ReportAndLease { lease_ahead: bool },
    /// The slot is free once a report slot is had (at most one report a
    /// slot in flight); the report travels in the background while the
    /// lease loop asks with `Lease`.
    BackgroundReport,
    /// The slot waits for its report's acknowledgement, then the lease loop
    /// leases in a call of its own.
    BlockingReport,
    /// `units` units leased ahead of the free slots; the slot is free as
    /// soon as the exploration is, and the report travels while the next
    /// unit runs, so that lease round trips overlap work.
    Prefetch { units: u32 },
}

impl SlotPolicy {
    /// The policy the command line's switches select: prefetching wins over
    /// blocking reports, which win over report-and-lease.
    pub fn from_switches(
        prefetch: u32,
        blocking_reports: bool,
        report_lease: bool,
        lease_ahead: bool,
    ) -> SlotPolicy {
        if prefetch > 0 {
            SlotPolicy::Prefetch { units: prefetch }
        } else if blocking_reports {
            SlotPolicy::BlockingReport
        } else if report_lease {
            SlotPolicy::ReportAndLease { lease_ahead }
        } else {
            SlotPolicy::BackgroundReport
        }
    }

    /// Units a worker holds leased beyond its slots.
    pub fn prefetch(self) -> u32 {
        match self {
            SlotPolicy::Prefetch { units } => units,
            _ => 0,
        }
    }

    /// Whether a unit's report asks for the slot's next unit.
    pub fn report_lease(self) -> bool {
        matches!(self, SlotPolicy::ReportAndLease { .. })
    }

    /// Whether a unit's report also asks for one to hold queued.
    pub fn lease_ahead(self) -> bool {
        self == SlotPolicy::ReportAndLease { lease_ahead: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switches_select_one_policy_in_order_of_precedence() {
        let p = SlotPolicy::from_switches;
        assert_eq!(
            p(0, false, true, true),
            SlotPolicy::ReportAndLease { lease_ahead: true }
        );
        assert_eq!(
            p(0, false, true, false),
            SlotPolicy::ReportAndLease { lease_ahead: false }
        );
        assert_eq!(p(0, false, false, true), SlotPolicy::BackgroundReport);
        assert_eq!(p(0, true, true, true), SlotPolicy::BlockingReport);
        assert_eq!(p(16, true, true, true), SlotPolicy::Prefetch { units: 16 });
        assert!(p(0, false, true, true).lease_ahead());
        assert!(!p(16, false, true, true).lease_ahead());
        assert!(!p(0, true, true, true).report_lease());
        assert_eq!(p(16, false, true, true).prefetch(), 16);
        assert_eq!(p(0, false, true, true).prefetch(), 0);
    }
}
