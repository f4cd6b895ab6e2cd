//! Example extension (compiled in tests and with the `examples` feature): a
//! switch mechanism in one file plus one line in `switch_mechanisms!`.
//!
//! `[switch.example_beacon]`: every switch port sends `count` beacons to
//! the node at the far end of its link, one every `period` from time
//! `period` on: a timer per port ([`SwitchMechanism::on_timer`]) and a
//! link-local control frame ([`PacketKind::Control`], through
//! [`Packet::control_frame`]) that the receiving port counts
//! ([`SwitchMechanism::on_frame`], at a switch's port or a NIC's). Its
//! state is its own (per port, indexed by global port id), and its summary
//! section `example_beacon` gives the beacons sent and received.
//!
//! It touches no data packet: no hook site runs it (its `wants_*` are the
//! defaults, false).

use super::{Network, SwitchMechanism, TimerKind};
use crate::config_types::TimeValue;
use crate::metrics_table::Table;
use crate::net::switch::queue_link_frame;
use crate::net::{link, Packet, PktId};
use crate::scenario::{Scenario, ScenarioError, SwitchSection};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[switch.example_beacon]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Time between two beacons of a port (and before the first).
    pub period: TimeValue,
    /// Beacons each switch port sends.
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// The beacon timer's kind (the mechanism has one timer per port).
const BEACON: TimerKind = 0;

/// The mechanism's state: per global port id, beacons sent and received.
#[derive(Default)]
pub(crate) struct Beacons {
    /// `[switch.example_beacon]`, when given (else nothing runs).
    cfg: Option<Config>,
    /// The first switch port (NIC ports come first) and the number of ports.
    switch_ports: std::ops::Range<u32>,
    sent: Vec<u64>,
    received: Vec<u64>,
}

/// The mechanism.
pub(crate) struct Beacon;

impl SwitchSection for Config {
    fn validate_section(&self, _sc: &Scenario) -> Result<(), ScenarioError> {
        if self.period.0 == 0 {
            return Err(ScenarioError::new(
                "switch.example_beacon.period",
                "the period must be positive, e.g. period = \"10us\"",
            ));
        }
        if self.count == 0 {
            return Err(ScenarioError::new(
                "switch.example_beacon.count",
                "send at least one beacon (count = 1), or remove [switch.example_beacon]",
            ));
        }
        Ok(())
    }
}

impl SwitchMechanism for Beacon {
    const ID: u8 = 5;
    type Config = Config;
    type State = Beacons;
    type PerSwitch = ();

    fn build(cfg: Option<&Config>, net: &mut Network) -> Beacons {
        let first = net.switches.first().map_or(0, |s| s.ports.start);
        let last = net.switches.last().map_or(0, |s| s.ports.end);
        Beacons {
            cfg: cfg.cloned(),
            switch_ports: first..last,
            sent: vec![0; net.ports.len()],
            received: vec![0; net.ports.len()],
        }
    }

    /// Every switch port's first beacon is due at `period`.
    fn start(w: &mut World) {
        let Some(cfg) = &w.mechs.example_beacon.cfg else {
            return;
        };
        let period = cfg.period.0;
        for gp in w.mechs.example_beacon.switch_ports.clone() {
            w.q.push(period, Ev::timer(Beacon::ID, BEACON, gp));
        }
    }

    fn departs(_w: &World) -> bool {
        false
    }

    /// A beacon reached port `port`: count it and free the frame.
    fn on_frame(w: &mut World, _now: Ps, port: u32, pkt: PktId) {
        w.counters.cons.delivered_bytes += w.arena.get(pkt).size as u64;
        w.arena.free(pkt);
        w.mechs.example_beacon.received[port as usize] += 1;
    }

    /// Port `port` sends its next beacon (numbered in `seq`), and re-arms its
    /// timer until it has sent `count`.
    fn on_timer(w: &mut World, now: Ps, port: u32, kind: TimerKind) {
        debug_assert_eq!(kind, BEACON);
        let state = &mut w.mechs.example_beacon;
        let cfg = state.cfg.as_ref().expect("a timer only when on");
        let (period, count) = (cfg.period.0, cfg.count as u64);
        let n = state.sent[port as usize];
        state.sent[port as usize] = n + 1;
        queue_link_frame(w, port, Packet::control_frame(Beacon::ID, 0, now, 0, n, 0));
        link::kick(w, now, port);
        if n + 1 < count {
            w.q.push(now + period, Ev::timer(Beacon::ID, BEACON, port));
        }
    }

    /// `example_beacon`: beacons sent and received (absent when off).
    fn report(w: &World, _flows: &Table, summary: &mut serde_json::Value) {
        let state = &w.mechs.example_beacon;
        if state.cfg.is_some() {
            summary["example_beacon"] = serde_json::json!({
                "sent": state.sent.iter().sum::<u64>(),
                "received": state.received.iter().sum::<u64>(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Scenario, Simulation};
    use std::path::Path;

    const SCENARIO: &str = r#"
        [topology]
        kind = "single_switch"
        hosts = 3
        link_rate = "10Gbps"
        link_delay = "1us"
        [switch.example_beacon]
        period = "10us"
        count = 4
        [[workload.flows]]
        src = 0
        dst = 1
        size = "200KB"
        "#;

    /// Each of the switch's 3 ports sends 4 beacons, one per 10 us, and
    /// each reaches the NIC at the far end: 12 sent, 12 received, 4 at each
    /// NIC; the flow beside them finishes (the beacons are 64-byte frames
    /// ahead of its packets, so its FCT grows by at most their time on the
    /// wire: 4 x 51.2 ns).
    #[test]
    fn every_switch_port_beacons_its_neighbour() {
        let sc =
            Scenario::from_toml_str(SCENARIO, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(&sc).unwrap();
        sim.run();
        let state = &sim.w.mechs.example_beacon;
        let switch_ports = state.switch_ports.clone();
        assert_eq!(switch_ports.len(), 3);
        for gp in switch_ports {
            assert_eq!(state.sent[gp as usize], 4, "port {gp}");
            let peer = sim.w.ports[gp as usize].peer as usize;
            assert_eq!(
                state.received[peer], 4,
                "the NIC at the far end of port {gp}"
            );
        }
        let r = sim.finish();
        let summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
        assert_eq!(
            summary["example_beacon"],
            serde_json::json!({"sent": 12, "received": 12})
        );
        assert_eq!(r.flows.u8s("finished")[0], 1, "the flow finishes");
    }

    #[test]
    fn a_zero_period_names_its_key() {
        let text = SCENARIO.replace("period = \"10us\"", "period = \"0us\"");
        let e = Scenario::from_toml_str(&text, Path::new(".")).unwrap_err();
        assert!(
            e.to_string().contains("switch.example_beacon.period"),
            "{e}"
        );
    }
}
