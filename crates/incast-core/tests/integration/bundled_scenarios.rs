//! Every scenario file shipped under `scenarios/` parses, validates and builds
//! a network, and so does every run of every experiment file there (the
//! full reproductions are too long to run in the test suite; their small
//! experiments run in `repro_*.rs`).

use crate::common;
use incast_core::{Scenario, Simulation};
use std::path::{Path, PathBuf};

/// Every scenario and experiment file under `dir`; a reproduction's
/// `claims.toml` (its claims, read by scenarios/claims.py) is neither.
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml")
            && p.file_name().is_some_and(|n| n != "claims.toml")
        {
            out.push(p);
        }
    }
}

/// An experiment file has a top-level `base` (a scenario never does).
fn experiment(path: &Path) -> Option<toml::Table> {
    let t: toml::Table = std::fs::read_to_string(path).ok()?.parse().ok()?;
    t.contains_key("base").then_some(t)
}

/// The (point label, variant) pairs an experiment runs, as `incast sweep`
/// expands them (listed points x the product of `[parameters]`).
fn runs_of(exp: &toml::Table) -> Vec<(String, String)> {
    let all_variants: Vec<String> = match exp.get("variants").and_then(|v| v.as_table()) {
        Some(t) => t.keys().cloned().collect(),
        None => vec!["base".into()],
    };
    let mut labels: Vec<(Option<String>, Vec<String>)> = vec![];
    match exp.get("points").and_then(|p| p.as_array()) {
        Some(points) => {
            for p in points {
                let label = p["label"].as_str().unwrap().to_string();
                let vs = p
                    .get("variants")
                    .and_then(|v| v.as_array())
                    .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                    .unwrap_or_else(|| all_variants.clone());
                labels.push((Some(label), vs));
            }
        }
        None => labels.push((None, all_variants.clone())),
    }
    // The product of the parameters, as "key=value" parts.
    let mut combos: Vec<Vec<String>> = vec![vec![]];
    if let Some(params) = exp.get("parameters").and_then(|p| p.as_table()) {
        let mut leaves = vec![];
        fn walk(prefix: &str, t: &toml::Table, out: &mut Vec<(String, Vec<toml::Value>)>) {
            for (k, v) in t {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match v {
                    toml::Value::Table(t) => walk(&path, t, out),
                    toml::Value::Array(a) => out.push((path, a.clone())),
                    _ => panic!("parameters.{path}: not a list"),
                }
            }
        }
        walk("", params, &mut leaves);
        for (path, values) in leaves {
            let short = path.rsplit('.').next().unwrap();
            let mut next = vec![];
            for c in &combos {
                for v in &values {
                    let label = match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let mut c = c.clone();
                    c.push(format!("{short}={label}"));
                    next.push(c);
                }
            }
            combos = next;
        }
    }
    let mut out = vec![];
    for (label, vs) in &labels {
        for combo in &combos {
            let point: Vec<String> = label.iter().cloned().chain(combo.iter().cloned()).collect();
            for v in vs {
                out.push((point.join(","), v.clone()));
            }
        }
    }
    out
}

#[test]
fn every_bundled_scenario_and_experiment_run_is_valid() {
    let root = common::scenarios_dir();
    let mut files = vec![];
    toml_files(&root, &mut files);
    let (mut scenarios, mut runs) = (0, 0);
    for f in &files {
        if let Some(exp) = experiment(f) {
            let rel = f.strip_prefix(&root).unwrap().to_str().unwrap().to_string();
            for (point, variant) in runs_of(&exp) {
                let sc = common::experiment_scenario(&rel, &point, &variant);
                Simulation::new(&sc).unwrap_or_else(|e| panic!("{rel} {point}/{variant}: {e}"));
                runs += 1;
            }
            continue;
        }
        let sc = Scenario::from_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        Simulation::new(&sc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        scenarios += 1;
    }
    // The reproductions' 130 former scenario files are runs of their
    // experiments (68 + 60 Smart-Pause, 49 + 39 On-Ramp, 10 + 30 CI runs,
    // counting seeds; fewer here, where seeds are not expanded).
    assert!(scenarios >= 8, "found only {scenarios} scenario files");
    assert!(runs >= 130, "found only {runs} experiment runs");
}
