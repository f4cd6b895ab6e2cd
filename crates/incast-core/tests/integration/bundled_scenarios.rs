//! Every scenario file shipped under `scenarios/` parses, validates and builds
//! a network (the full reproductions are too long to run in the test suite;
//! their small variants run in `repro_*.rs`).

use incast_core::{Scenario, Simulation};
use std::path::{Path, PathBuf};

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn every_bundled_scenario_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = vec![];
    toml_files(&root, &mut files);
    assert!(
        files.len() >= 60,
        "found only {} scenario files",
        files.len()
    );
    for f in &files {
        let sc = Scenario::from_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        Simulation::new(&sc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
}
