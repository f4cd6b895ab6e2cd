//! Example generator (tests and the `examples` feature): every `period`,
//! from `start`, `src` starts `flows` flows of `size` bytes to `dst`, for
//! `bursts` bursts. It is the generator recipe in full: this file (its
//! `[[workload.example_burst]]` entry, its checks, its state and its
//! arrivals) plus one line in `workload_generators!` (host/generators.rs)
//! and its gated `mod` line in `host/mod.rs`.
//!
//! ```toml
//! [[workload.example_burst]]
//! src = 0
//! dst = 1
//! flows = 4
//! size = "10KB"
//! period = "100us"
//! bursts = 3
//! ```

use crate::config_types::{SizeValue, TimeValue};
use crate::host::generators::Generator;
use crate::host::start_flow;
use crate::scenario::{check_class, HostRef, Scenario, ScenarioError};
use crate::sim::world::World;
use crate::units::Ps;
use crate::workload::generators::FlowRequest;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[[workload.example_burst]]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub src: HostRef,
    pub dst: HostRef,
    /// Flows per burst.
    pub flows: u32,
    /// Bytes per flow.
    pub size: SizeValue,
    /// Time between two bursts' starts (positive).
    pub period: TimeValue,
    /// How many bursts.
    pub bursts: u32,
    /// When the first burst starts.
    #[serde(default)]
    pub start: TimeValue,
    /// Priority class (default: the transport's data class).
    pub class: Option<u8>,
}

/// One entry's generator: the next burst's number.
pub struct Burst {
    src: u32,
    dst: u32,
    flows: u32,
    size: u64,
    period: Ps,
    bursts: u32,
    start: Ps,
    class: u8,
    next: u32,
}

impl Generator for Burst {
    type Config = Config;
    const FLOW_KIND: u8 = 200;

    fn validate(cfg: &Config, sc: &Scenario, path: &str) -> Result<(), ScenarioError> {
        let src = sc.host(&cfg.src, &format!("{path}.src"))?;
        let dst = sc.host(&cfg.dst, &format!("{path}.dst"))?;
        if src == dst {
            let msg = "src and dst are the same host; give two different hosts";
            return Err(ScenarioError::new(format!("{path}.dst"), msg));
        }
        if cfg.period.0 == 0 {
            let msg = "period must be positive (the time between two bursts), e.g. \"100us\"";
            return Err(ScenarioError::new(format!("{path}.period"), msg));
        }
        if cfg.size.0 == 0 {
            let msg = "size must be positive (bytes per flow), e.g. \"10KB\"";
            return Err(ScenarioError::new(format!("{path}.size"), msg));
        }
        check_class(cfg.class.unwrap_or(0), &format!("{path}.class"))
    }

    fn start(cfg: &Config) -> Ps {
        cfg.start.0
    }

    fn build(cfg: &Config, sc: &Scenario) -> Self {
        // Validated: both hosts resolve.
        let host = |r: &HostRef| sc.host(r, "").expect("validated host");
        Burst {
            src: host(&cfg.src),
            dst: host(&cfg.dst),
            flows: cfg.flows,
            size: cfg.size.0,
            period: cfg.period.0,
            bursts: cfg.bursts,
            start: cfg.start.0,
            class: cfg.class.unwrap_or(sc.data_class()),
            next: 0,
        }
    }

    fn first_arrival(&mut self, _member: u32) -> Option<Ps> {
        (self.bursts > 0 && self.flows > 0).then_some(self.start)
    }

    fn on_arrival(&mut self, w: &mut World, now: Ps, _member: u32) -> Option<Ps> {
        for _ in 0..self.flows {
            let req = FlowRequest {
                src: self.src,
                dst: self.dst,
                size: self.size,
                class: self.class,
                cc: 0,
            };
            start_flow(w, now, req, Self::FLOW_KIND, -1);
        }
        self.next += 1;
        (self.next < self.bursts).then(|| self.start + self.next as Ps * self.period)
    }

    fn source_host(&self, _member: u32) -> Option<u32> {
        Some(self.src)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::sim::Simulation;
    use std::path::Path;

    const SCENARIO: &str = r#"
        [topology]
        kind = "single_switch"
        hosts = 3
        link_rate = "100Gbps"
        link_delay = "1us"
        [[workload.example_burst]]
        src = 0
        dst = 2
        flows = 4
        size = "10KB"
        period = "200us"
        bursts = 3
        start = "50us"
    "#;

    #[test]
    fn starts_flows_of_each_burst_at_its_time() {
        let sc =
            Scenario::from_toml_str(SCENARIO, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(&sc).unwrap();
        sim.run();
        let flows = sim.finish().flows;
        assert_eq!(flows.rows(), 12, "3 bursts of 4 flows");
        let mut starts = flows.u64s("start_ps").to_vec();
        starts.sort_unstable();
        starts.dedup();
        let us = 1_000_000;
        assert_eq!(starts, vec![50 * us, 250 * us, 450 * us]);
        for i in 0..flows.rows() {
            let (src, dst) = (flows.u32s("src")[i], flows.u32s("dst")[i]);
            assert_eq!((src, dst, flows.u64s("size_bytes")[i]), (0, 2, 10_000));
            assert_eq!(flows.u8s("kind")[i], 200);
            assert_eq!(
                flows.u8s("finished")[i],
                1,
                "every flow completes on an idle switch"
            );
        }
    }

    #[test]
    fn a_zero_period_is_refused_naming_its_key() {
        let text = SCENARIO.replace("period = \"200us\"", "period = \"0us\"");
        let e = Scenario::from_toml_str(&text, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("workload.example_burst[0].period"), "{e}");
        assert!(e.contains("must be positive"), "{e}");
    }

    #[test]
    fn is_a_flow_kind() {
        assert!(crate::host::generators::flow_kinds().contains(&(200, "example_burst")));
    }
}
