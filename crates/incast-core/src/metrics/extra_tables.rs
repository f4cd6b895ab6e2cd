//! Result tables of their own: a feature's or a study's table beside the
//! core's, each one file plus one line in `result_tables!` below.
//!
//! A table is a type implementing [`super::result_table::ResultTable`]: its
//! name (its Parquet file's, its attribute of Python's `Results`) and its
//! rows, read from the finished world (after a threaded run's partitions are
//! merged, so it sees the whole network). It must give its typed columns
//! even without rows: every run has every table, with one schema. The
//! registry puts it after the core's tables and the NIC models' series in
//! `Results::table_names()`, which the digest, the Python binding and
//! Python's `results.TABLES` read.
//!
//! ```ignore
//! // metrics/my_table.rs
//! pub(crate) struct MyTable;
//! impl ResultTable for MyTable {
//!     const NAME: &'static str = "my_table";
//!     fn table(w: &World) -> Table { /* columns from w's counters */ }
//! }
//! // here, in `result_tables!`:
//! super::my_table::MyTable,
//! ```
//!
//! Example: `metrics/example_node_load.rs` (packets and bytes each node
//! sent), registered for tests and the `examples` feature.

use crate::metrics_table::Table;
use crate::sim::world::World;

macro_rules! result_tables {
    ($( $(#[cfg($cfg:meta)])? $ty:ty, )*) => {
        /// The registered tables' names, in registry order.
        #[allow(unused_mut, clippy::vec_init_then_push)]
        pub(crate) fn names() -> Vec<&'static str> {
            let mut names = Vec::new();
            $( $(#[cfg($cfg)])? names.push(<$ty as super::result_table::ResultTable>::NAME); )*
            names
        }
        /// The registered tables of a finished run, in [`names`]' order.
        #[allow(unused_mut, unused_variables, clippy::vec_init_then_push)]
        pub(crate) fn tables(w: &World) -> Vec<Table> {
            let mut tables = Vec::new();
            $( $(#[cfg($cfg)])? tables.push(<$ty as super::result_table::ResultTable>::table(w)); )*
            tables
        }
    };
}

// The registry: one line per table.
result_tables! {
    #[cfg(any(test, feature = "examples"))]
    super::example_node_load::NodeLoad,
}
