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

/// The `scenarios/` directory of the repository.
pub fn scenarios_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// One run of an experiment file under `scenarios/` (e.g.
/// `"smart_pause/small.toml"`), as `incast sweep` builds it: the base
/// scenario (or the point's named base), the point's overrides, the
/// parameter values named in the point label, then the variant's overrides.
///
/// `point` is the run's point label as the sweep writes it: a `[[points]]`
/// label and/or `key=value` parts for `[parameters]` (`"dcqcn_60_2mb"`,
/// `"cdf=webserver"`), joined by commas. See `python/incast/experiment.py`
/// and `python/incast/keypath.py` for the rules this follows.
pub fn experiment_scenario(file: &str, point: &str, variant: &str) -> Scenario {
    let path = scenarios_dir().join(file);
    let dir = path.parent().unwrap().to_path_buf();
    let exp = read_toml(&path);
    let what = format!("{file} {point}/{variant}");
    let mut label = None;
    let mut values = vec![];
    for part in point.split(',') {
        match part.split_once('=') {
            Some((k, v)) => values.push((k, v)),
            None => label = Some(part),
        }
    }
    let pt = match label {
        Some(l) => exp
            .get("points")
            .and_then(|p| p.as_array())
            .and_then(|a| {
                a.iter()
                    .find(|p| p.get("label").and_then(|x| x.as_str()) == Some(l))
            })
            .and_then(|p| p.as_table())
            .cloned()
            .unwrap_or_else(|| panic!("{what}: no [[points]] labelled {l:?}")),
        None => toml::Table::new(),
    };
    let base = match pt.get("base").and_then(|b| b.as_str()) {
        Some(name) => &exp["bases"][name],
        None => &exp["base"],
    };
    let (mut sc, base_dir) = match base {
        toml::Value::String(rel) => {
            let p = dir.join(rel);
            (read_toml(&p), p.parent().unwrap().to_path_buf())
        }
        toml::Value::Table(t) => (t.clone(), dir.clone()),
        other => panic!("{what}: base is {other:?}"),
    };
    apply_overrides(
        &mut sc,
        &pt,
        &["label", "seeds", "variants", "base", "unset"],
    );
    if let Some(params) = exp.get("parameters").and_then(|p| p.as_table()) {
        let mut leaves = vec![];
        flatten("", params, &mut leaves);
        for (key_path, choices) in leaves {
            let short = key_path.rsplit('.').next().unwrap();
            let wanted = values
                .iter()
                .find(|(k, _)| *k == short)
                .unwrap_or_else(|| panic!("{what}: the point label gives no {short}=..."))
                .1;
            let value = choices
                .as_array()
                .and_then(|a| a.iter().find(|v| value_label(v) == wanted))
                .unwrap_or_else(|| panic!("{what}: {key_path} has no value {wanted:?}"));
            set_path(&mut sc, &key_path, value.clone());
        }
    }
    let no_variants = toml::Table::new();
    let var = match exp.get("variants").and_then(|v| v.as_table()) {
        Some(vs) => vs
            .get(variant)
            .and_then(|v| v.as_table())
            .unwrap_or_else(|| panic!("{what}: no variant {variant:?}")),
        None => &no_variants,
    };
    apply_overrides(&mut sc, var, &["unset"]);
    let text = toml::to_string(&sc).unwrap();
    Scenario::from_toml_str(&text, &base_dir).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Runs a scenario with its seed replaced by `seed`.
pub fn run_seed(sc: &Scenario, seed: u64, what: &str) -> Results {
    let mut sc = sc.clone();
    sc.config.seed = seed;
    let mut sim = Simulation::new(&sc).unwrap_or_else(|e| panic!("{what}: {e}"));
    sim.run();
    sim.finish()
}

/// Runs one run of an experiment file (see `experiment_scenario`) on `seed`.
pub fn run_experiment(file: &str, point: &str, variant: &str, seed: u64) -> Results {
    let sc = experiment_scenario(file, point, variant);
    run_seed(&sc, seed, &format!("{file} {point}/{variant} seed {seed}"))
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `str(value)` as Python writes a parameter value into a point label.
fn value_label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        other => other.to_string(),
    }
}

/// Leaves of an override table as (key path, value); an empty table is a leaf.
fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) if !t.is_empty() => flatten(&path, t, out),
            _ => out.push((path, v.clone())),
        }
    }
}

/// Removes each key path of the table's `unset`, then sets every leaf that is
/// not one of `reserved` (tables merge, other values replace).
fn apply_overrides(sc: &mut toml::Table, overrides: &toml::Table, reserved: &[&str]) {
    if let Some(unset) = overrides.get("unset").and_then(|u| u.as_array()) {
        for p in unset {
            let p = p.as_str().unwrap();
            let (parent, last) = match p.rsplit_once('.') {
                Some((a, b)) => (Some(a), b),
                None => (None, p),
            };
            // Numbers index arrays (`workload.onoff.0.mean_burst`).
            let node = match parent {
                Some(a) => {
                    let mut keys = a.split('.');
                    let first = keys.next().unwrap();
                    let mut v = sc.get_mut(first).unwrap_or_else(|| panic!("unset {p}"));
                    for k in keys {
                        v = match k.parse::<usize>() {
                            Ok(i) => v.as_array_mut().and_then(|arr| arr.get_mut(i)),
                            Err(_) => v.as_table_mut().and_then(|t| t.get_mut(k)),
                        }
                        .unwrap_or_else(|| panic!("unset {p}"));
                    }
                    // The last key may index an array (`workload.incast.3`).
                    if let (Some(arr), Ok(i)) = (v.as_array_mut(), last.parse::<usize>()) {
                        assert!(i < arr.len(), "unset {p}: no such element");
                        arr.remove(i);
                        continue;
                    }
                    v.as_table_mut().unwrap_or_else(|| panic!("unset {p}"))
                }
                None => &mut *sc,
            };
            assert!(node.remove(last).is_some(), "unset {p}: no such key");
        }
    }
    let body: toml::Table = overrides
        .iter()
        .filter(|(k, _)| !reserved.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut leaves = vec![];
    flatten("", &body, &mut leaves);
    for (path, value) in leaves {
        set_path(sc, &path, value);
    }
}

/// Sets a key path (numbers index arrays, `*` means every element).
fn set_path(sc: &mut toml::Table, path: &str, value: toml::Value) {
    fn set(node: &mut toml::Value, keys: &[&str], value: &toml::Value) {
        let (key, rest) = (keys[0], &keys[1..]);
        if key == "*" {
            for el in node.as_array_mut().expect("* needs an array") {
                set(el, rest, value);
            }
            return;
        }
        let child = match node {
            toml::Value::Array(a) => &mut a[key.parse::<usize>().expect("an array index")],
            toml::Value::Table(t) => t
                .entry(key.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
            other => panic!("{key} inside {other:?}"),
        };
        if rest.is_empty() {
            match (child, value) {
                (toml::Value::Table(old), toml::Value::Table(new)) => {
                    let mut leaves = vec![];
                    flatten("", new, &mut leaves);
                    for (p, v) in leaves {
                        set_path(old, &p, v);
                    }
                }
                (slot, v) => *slot = v.clone(),
            }
        } else {
            set(child, rest, value);
        }
    }
    let keys: Vec<&str> = path.split('.').collect();
    let mut root = toml::Value::Table(std::mem::take(sc));
    set(&mut root, &keys, &value);
    *sc = match root {
        toml::Value::Table(t) => t,
        _ => unreachable!(),
    };
}

/// The FCTs (us), sorted, of the finished flows whose (source, destination)
/// pass `keep`.
pub fn finished_fcts_us(r: &Results, keep: impl Fn(u32, u32) -> bool) -> Vec<f64> {
    let (src, dst) = (r.flows.u32s("src"), r.flows.u32s("dst"));
    let (fct, fin) = (r.flows.u64s("fct_ps"), r.flows.u8s("finished"));
    let mut v: Vec<f64> = (0..src.len())
        .filter(|&i| fin[i] == 1 && keep(src[i], dst[i]))
        .map(|i| fct[i] as f64 / 1e6)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Every byte sent was delivered, dropped, cut by trimming or is still in
/// the network.
pub fn assert_bytes_conserved(r: &Results, what: &str) {
    let c = r.conservation;
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes + c.in_network_bytes,
        "{what}: bytes not conserved ({c:?})"
    );
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
        c.delivered_bytes + c.dropped_bytes + c.trimmed_bytes,
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

/// A digest of a whole run: its result tables and its summary.
pub fn digest(r: &Results) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    // These eight tables and the summary (the `cm` table left out), so that
    // the property tests' digest stays comparable with older builds'.
    for t in [
        &r.flows,
        &r.pfc,
        &r.incasts,
        &r.counters,
        &r.ports,
        &r.queues,
        &r.owd,
        &r.hosts,
    ] {
        for (name, col) in &t.columns {
            eat(name.as_bytes());
            eat(&col.to_le_bytes());
        }
    }
    eat(r.summary_json.as_bytes());
    h
}
