//! The trait of a result table of its own ([`super::extra_tables`]), apart
//! from the registry so that a table's file and the registry that names it
//! do not import each other.

use crate::metrics_table::Table;
use crate::sim::world::World;

/// A result table of its own ([`super::extra_tables`] says how to add one). Only the example implements it
/// so far, which builds without the `examples` feature leave out.
#[cfg_attr(not(any(test, feature = "examples")), allow(dead_code))]
pub(crate) trait ResultTable {
    /// Its name: its Parquet file's and its attribute in Python's `Results`.
    const NAME: &'static str;
    /// Its rows from the finished world, with its typed columns even
    /// without rows.
    fn table(w: &World) -> Table;
}
