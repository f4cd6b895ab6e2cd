//! Example result table (one file plus its line in `result_tables!`): per
//! node, host or switch, the packets and bytes its ports sent.
//!
//! Registered for tests and the `examples` feature; the model to copy for a
//! table of one's own ([`super::extra_tables`]).

use super::result_table::ResultTable;
use crate::metrics_table::{Column, Table};
use crate::sim::world::World;

/// The `example_node_load` table: `node`, `ports`, `tx_pkts`, `tx_bytes`.
pub(crate) struct NodeLoad;

impl ResultTable for NodeLoad {
    const NAME: &'static str = "example_node_load";

    fn table(w: &World) -> Table {
        let nodes = w.host_nic.len() + w.switches.len();
        let (mut ports, mut packets, mut bytes) =
            (vec![0u32; nodes], vec![0u64; nodes], vec![0u64; nodes]);
        for port in &w.ports {
            let node = w.node_of(port.owner()) as usize;
            ports[node] += 1;
            packets[node] += port.tx_pkts;
            bytes[node] += port.tx_bytes;
        }
        let mut table = Table::default();
        table.push("node", Column::U32((0..nodes as u32).collect()));
        table.push("ports", Column::U32(ports));
        table.push("tx_pkts", Column::U64(packets));
        table.push("tx_bytes", Column::U64(bytes));
        table
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics_table::Column;
    use crate::{Scenario, Simulation};

    /// A 2-host single switch: the table is in the run's results, after the
    /// core's, and each node's bytes are what its ports' rows in the
    /// `ports` table sum to (the switch forwarded what the sender sent).
    #[test]
    fn the_example_table_sums_the_ports_table_by_node() {
        let text = "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                    link_rate = \"10Gbps\"\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 100000\n";
        let sc = Scenario::from_toml_str(text, std::path::Path::new(".")).expect("valid");
        let mut sim = Simulation::new(&sc).expect("builds");
        sim.run();
        let results = sim.finish();
        assert_eq!(
            crate::Results::table_names().last(),
            Some(&"example_node_load")
        );
        let (_, table) = *results.tables().last().expect("tables");
        let (node, bytes) = (table.u32s("node"), table.u64s("tx_bytes"));
        assert_eq!(node, &[0, 1, 2]);
        let mut by_node = [0u64; 3];
        let ports = &results.ports;
        for (n, b) in ports.u32s("node").iter().zip(ports.u64s("tx_bytes")) {
            by_node[*n as usize] += b;
        }
        assert_eq!(bytes, &by_node);
        // Sender (host 0) and switch (node 2) carried the flow's bytes.
        assert!(bytes[0] >= 100_000 && bytes[2] >= 100_000, "{bytes:?}");
        assert!(matches!(table.columns[1].1, Column::U32(_)));
    }
}
