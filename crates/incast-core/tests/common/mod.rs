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
