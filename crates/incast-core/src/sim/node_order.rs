//! Node order's plain pieces ([`super::partitioned`] runs it): the cell of
//! time at whose end a run that is over ends and its peaks are read, and
//! the order of a log appended as events run.

use crate::metrics_table::{Column, Table};

/// A node-ordered run that is over ends with its cell of 2^20 ps (1.05 us).
pub const CELL_BITS: u32 = 20;

/// The engine's peaks in node order, read at cell boundaries.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NodePeaks {
    /// The cell the clock is in.
    pub cell: u64,
    pub packets: u64,
    pub flows: u64,
}

/// Node order: edge pausing's sampled OWD readings by time, then flow id (a
/// flow's readings all reach its one sender, which took them in this order;
/// the partitions' samples are appended one partition after another).
pub(super) fn owd_in_node_order(owd: Table) -> Table {
    let (Some(Column::U64(time)), Some(Column::U64(flow))) =
        (owd.get("time_ps"), owd.get("flow_id"))
    else {
        return owd;
    };
    let mut order: Vec<usize> = (0..time.len()).collect();
    order.sort_by_key(|&i| (time[i], flow[i]));
    owd.rows_in(&order)
}

/// Node order: a log appended as events run (the PFC log) in the order of
/// its `time_ps`, then its `node` column, each node's rows at one time in
/// the order it logged them (the order within a node, which no partition
/// changes).
pub(super) fn log_in_node_order(log: Table) -> Table {
    let (Some(Column::U64(time)), Some(Column::U32(node))) = (log.get("time_ps"), log.get("node"))
    else {
        return log;
    };
    let mut order: Vec<usize> = (0..time.len()).collect();
    order.sort_by_key(|&i| (time[i], node[i]));
    log.rows_in(&order)
}
