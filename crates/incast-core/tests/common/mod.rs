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
