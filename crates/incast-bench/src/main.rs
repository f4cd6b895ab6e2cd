//! `incast-bench`: wall time, events/s, packet-hops/s and peak memory of named scenarios.
//!
//! ```text
//! cargo run --release -p incast-bench -- scenarios/leaf_spine_websearch_dctcp.toml [more.toml ...]
//! ```
//!
//! Each scenario runs in a child process of its own so that its peak resident
//! memory (VmHWM) is its own. The simulation runs on one core. Wall time covers
//! building the network and running it; parsing and writing results are excluded.

use incast_core::{Scenario, Simulation};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// A scenario file, or an HPCC simulator config (`.txt`, with its topology
/// and flow files).
fn load(path: &str) -> Result<Scenario, String> {
    if path.ends_with(".txt") {
        let p = Path::new(path);
        let imp = incast_core::hpcc_format::import(p, None, None).map_err(|e| e.to_string())?;
        imp.runnable(p.parent().unwrap_or(Path::new(".")))
            .map_err(|e| e.to_string())
    } else {
        Scenario::from_file(Path::new(path)).map_err(|e| e.to_string())
    }
}

fn run_one(path: &str) -> Result<serde_json::Value, String> {
    let sc = load(path)?;
    let t0 = Instant::now();
    let mut sim = Simulation::new(&sc).map_err(|e| e.to_string())?;
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let res = sim.finish();
    let s = res.stats;
    let summary: serde_json::Value = serde_json::from_str(&res.summary_json).unwrap_or_default();
    Ok(serde_json::json!({
        "scenario": sc.name(),
        "file": path,
        "wall_s": wall,
        "events": s.events,
        "events_per_s": s.events as f64 / wall,
        "packet_hops": s.packet_hops,
        "hops_per_s": s.packet_hops as f64 / wall,
        "sim_time_ms": s.sim_time_ps as f64 / 1e9,
        "flows": summary["flows"]["total"],
        "unfinished": summary["flows"]["unfinished"],
        "peak_packets": s.peak_packets,
        "peak_flows": s.peak_flows,
        "peak_rss_mib": peak_rss_kib() as f64 / 1024.0,
    }))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--summary") && args.len() == 2 {
        // The run's summary JSON (for quick experiments without the Python package).
        let sc = load(&args[1]).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        let mut sim = Simulation::new(&sc).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        sim.run();
        println!("{}", sim.finish().summary_json);
        return;
    }
    if args.first().map(String::as_str) == Some("--one") {
        match run_one(&args[1]) {
            Ok(v) => println!("{v}"),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
        return;
    }
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: incast-bench SCENARIO.toml [SCENARIO.toml ...]\n       incast-bench --summary SCENARIO.toml|HPCC_CONFIG.txt   (print one run's summary JSON)");
        std::process::exit(if args.is_empty() { 2 } else { 0 });
    }
    let exe = std::env::current_exe().expect("own path");
    println!(
        "{:<34} {:>9} {:>12} {:>10} {:>12} {:>10} {:>9} {:>9}",
        "scenario", "wall s", "events", "Mev/s", "pkt-hops", "Mhops/s", "flows", "peak MiB"
    );
    let mut failed = false;
    for path in &args {
        let out = Command::new(&exe)
            .arg("--one")
            .arg(path)
            .output()
            .expect("spawn child");
        if !out.status.success() {
            eprintln!("{path}: {}", String::from_utf8_lossy(&out.stderr).trim());
            failed = true;
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("child JSON");
        println!(
            "{:<34} {:>9.2} {:>12} {:>10.2} {:>12} {:>10.2} {:>9} {:>9.1}",
            v["scenario"].as_str().unwrap_or("?"),
            v["wall_s"].as_f64().unwrap_or(0.0),
            v["events"],
            v["events_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            v["packet_hops"],
            v["hops_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            v["flows"],
            v["peak_rss_mib"].as_f64().unwrap_or(0.0),
        );
        eprintln!("{v}");
    }
    if failed {
        std::process::exit(1);
    }
}
