//! Example extension (compiled in tests and with the `examples` feature):
//! a NIC model in one file plus one line in `nic_models!`.
//!
//! `[nic] model = "example_fifo"` serves one flow at a time, the one that
//! became ready first, until it may send no more (its window closes): a
//! host stack that writes each flow's window to the wire in one go. It asks
//! flows for packets through [`offer_tcp`], which does congestion
//! isolation's ageing, the wait at the sender and the PCIe charge for it;
//! its checks ([`NicModel::validate`]) refuse RDMA. It keeps its flows on
//! the NIC's ready list ([`super::Nic::ready`]).

use super::sender::{offer_tcp, TcpOffer};
use super::NicModel;
use crate::net::PktId;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::world::World;
use crate::units::Ps;

/// The first-come, first-served NIC model.
pub struct ExampleFifo;

impl NicModel for ExampleFifo {
    type State = ();
    /// Its flows wait on the NICs' own ready lists: a threaded run takes
    /// each NIC's from its owner, so it runs threaded as it is.
    const THREADS: bool = true;

    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
        let paused = w.ports[w.nics[nic as usize].port as usize].paused;
        // Flows on a PAUSEd priority go to the back; each is tried once.
        for _ in 0..w.nics[nic as usize].ready.len() {
            let slot = w.nics[nic as usize].ready.pop_front()?;
            match offer_tcp(w, now, slot, paused, true) {
                TcpOffer::Gone | TcpOffer::Idle => {}
                TcpOffer::Paused => w.nics[nic as usize].ready.push_back(slot),
                TcpOffer::Sent { pkt, again } => {
                    if again {
                        // It keeps the wire until its window closes.
                        w.nics[nic as usize].ready.push_front(slot);
                    }
                    return Some(pkt);
                }
            }
        }
        None
    }

    fn flow_ready(w: &mut World, nic: u32, slot: u32) {
        w.nics[nic as usize].ready.push_back(slot);
    }

    fn flow_done(w: &mut World, nic: u32, slot: u32) {
        w.nics[nic as usize].ready.retain(|&x| x != slot);
    }

    fn has_work(w: &World, nic: u32) -> bool {
        !w.nics[nic as usize].ready.is_empty()
    }

    fn validate(sc: &Scenario) -> Result<(), ScenarioError> {
        if sc.config.rdma.is_some() {
            return Err(ScenarioError::new(
                "nic.model",
                "\"example_fifo\" serves TCP flows only: use \"round_robin\"",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::sim::Simulation;
    use crate::units::Rate;
    use std::path::Path;

    /// Two 1 MB flows from host 0 to host 1 start together on a 10 Gb/s
    /// link with a window far above the path's BDP (so the window never
    /// closes and neither flow waits for ACKs).
    fn two_flows(model: &str) -> Vec<u64> {
        let text = format!(
            r#"
            [topology]
            kind = "single_switch"
            hosts = 2
            link_rate = "10Gbps"
            link_delay = "1us"
            [transport]
            cc = "newreno"
            init_cwnd = 2000
            [nic]
            model = "{model}"
            [[workload.flows]]
            src = 0
            dst = 1
            size = "1MB"
            [[workload.flows]]
            src = 0
            dst = 1
            size = "1MB"
            "#
        );
        let sc = Scenario::from_toml_str(&text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(&sc).unwrap();
        sim.run();
        let r = sim.finish();
        r.flows.u64s("fct_ps").to_vec()
    }

    /// Closed form: served one after the other, the first flow finishes
    /// after its own bytes' time on the wire and the second after both
    /// flows' (round robin: both after both). The bytes on the wire are
    /// 1 MB plus headers, so the second flow's FCT is about twice the
    /// first's: within 2 % (one RTT of a few us and the ACK's way back,
    /// against 2 x 0.8 ms).
    #[test]
    fn serves_one_flow_at_a_time() {
        let fifo = two_flows("example_fifo");
        let rr = two_flows("round_robin");
        let wire = Rate::gbps(10).tx_time(1_000_000) as f64;
        let ratio = fifo[1] as f64 / fifo[0] as f64;
        assert!((ratio - 2.0).abs() < 0.04, "FIFO: {fifo:?}, ratio {ratio}");
        assert!(fifo[0] as f64 > wire && (fifo[0] as f64) < 1.1 * wire);
        // The round robin interleaves: both finish within a packet or two.
        let rr_ratio = rr[1] as f64 / rr[0] as f64;
        assert!((rr_ratio - 1.0).abs() < 0.01, "round robin: {rr:?}");
    }

    #[test]
    fn refuses_rdma() {
        let text = r#"
            [topology]
            kind = "single_switch"
            hosts = 2
            link_rate = "10Gbps"
            [rdma]
            [nic]
            model = "example_fifo"
            [[workload.flows]]
            src = 0
            dst = 1
            size = "1MB"
            "#;
        let e = Scenario::from_toml_str(text, Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("nic.model"), "{e}");
    }
}
