#![allow(dead_code)]
//! Helpers shared by the integration tests.

use incast_core::{Results, Scenario, ScenarioError, Simulation};
use std::path::Path;

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml, Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn scenario_err(toml: &str) -> ScenarioError {
    match Scenario::from_toml_str(toml, Path::new(env!("CARGO_MANIFEST_DIR"))) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

pub fn run(toml: &str) -> Results {
    let sc = scenario(toml);
    let mut sim = Simulation::new(&sc).unwrap();
    sim.run();
    sim.finish()
}

/// A scenario file shipped under `scenarios/<dir>/`.
pub fn bundled(dir: &str, file: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(dir)
        .join(file);
    Scenario::from_file(&path).unwrap_or_else(|e| panic!("{dir}/{file}: {e}"))
}

/// Runs a bundled scenario file with its seed replaced by `seed`.
pub fn run_bundled(dir: &str, file: &str, seed: u64) -> Results {
    let mut sc = bundled(dir, file);
    sc.config.seed = seed;
    let mut sim = Simulation::new(&sc).unwrap_or_else(|e| panic!("{dir}/{file}: {e}"));
    sim.run();
    sim.finish()
}

/// Every flow finished, and every byte sent was delivered or dropped, with
/// nothing left in the network.
pub fn assert_finished_and_conserved(r: &Results, what: &str) {
    let fin = r.flows.u8s("finished");
    let unfinished = fin.iter().filter(|&&x| x != 1).count();
    assert_eq!(
        unfinished,
        0,
        "{what}: {unfinished} of {} flows unfinished",
        fin.len()
    );
    let c = r.conservation;
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes,
        "{what}: bytes not conserved ({c:?})"
    );
    assert_eq!(c.in_network_bytes, 0, "{what}: bytes left in the network");
}

/// The head-of-line-blocking topology of `congestion_spreading.rs` and
/// `congestion_isolation.rs`: v and h1..h4 on s0, r1 and r2 on s1, host
/// links 100G, s0-s1 at `fabric`, every link 1 us. v sends one long flow to
/// r2 in `victim_class`; h1..hk send long flows to r1 in class 3; no
/// congestion control (PFC alone). `extra` is appended to the switch tables
/// (e.g. `[switch.ci]`).
pub fn hol_scenario(
    k: usize,
    victim_class: u8,
    pfc_classes: &str,
    fabric: &str,
    extra: &str,
) -> String {
    let mut flows = format!(
        "[[workload.flows]]\nsrc = \"v\"\ndst = \"r2\"\nsize = \"1GB\"\nclass = {victim_class}\n"
    );
    for h in ["h1", "h2", "h3", "h4"].iter().take(k) {
        flows += &format!(
            "[[workload.flows]]\nsrc = \"{h}\"\ndst = \"r1\"\nsize = \"1GB\"\nclass = 3\n"
        );
    }
    format!(
        r#"
        seed = 11
        stop = "2500us"
        [topology]
        kind = "explicit"
        hosts = ["v", "h1", "h2", "h3", "h4", "r1", "r2"]
        switches = ["s0", "s1"]
        links = [
            {{ a = "v", b = "s0", rate = "100Gbps" }},
            {{ a = "h1", b = "s0", rate = "100Gbps" }},
            {{ a = "h2", b = "s0", rate = "100Gbps" }},
            {{ a = "h3", b = "s0", rate = "100Gbps" }},
            {{ a = "h4", b = "s0", rate = "100Gbps" }},
            {{ a = "s0", b = "s1", rate = "{fabric}" }},
            {{ a = "r1", b = "s1", rate = "100Gbps" }},
            {{ a = "r2", b = "s1", rate = "100Gbps" }},
        ]
        [switch]
        buffer = "8MB"
        [switch.pfc]
        classes = {pfc_classes}
        {extra}
        [rdma]
        cc = "none"
        {flows}
        "#
    )
}
