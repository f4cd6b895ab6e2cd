//! Fuzz target: any bytes as a TOML scenario, and as a JSON one.
//!
//! Properties (a failed assertion or a panic is a finding):
//! * parsing and validation never panic, and never allocate more than the
//!   process's memory limit (libFuzzer's `-rss_limit_mb`, 2 GB by default);
//! * every rejection names a key path or, for a syntax error, a line;
//! * an accepted scenario that is small (at most 64 hosts) runs, with the
//!   simulated clock stopped at 200 us and at most 2 million events, and
//!   conserves bytes: sent = delivered + dropped + still in the network.
#![no_main]

use incast_core::{Scenario, Simulation};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fn check(result: Result<Scenario, incast_core::ScenarioError>) {
    let mut sc = match result {
        Ok(sc) => sc,
        Err(e) => {
            assert!(
                !e.path.is_empty() || e.line.is_some() || e.message.contains("JSON text"),
                "an error without a key path or line: {e}"
            );
            assert!(e.message.chars().count() <= 2_100, "an overlong message: {e}");
            return;
        }
    };
    if sc.graph.n_hosts() > 64 || sc.graph.links.len() > 256 {
        return;
    }
    let stop = sc.config.stop.map_or(200_000_000, |s| s.0.min(200_000_000));
    sc.config.stop = Some(incast_core::config_types::TimeValue(stop));
    let Ok(mut sim) = Simulation::new(&sc) else {
        return;
    };
    for _ in 0..20 {
        if sim.advance(100_000) {
            break;
        }
    }
    let r = sim.finish();
    let c = r.conservation;
    assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.in_network_bytes,
        "bytes not conserved: {c:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    check(Scenario::from_toml_str(text, &base));
    check(Scenario::from_json_str(text, &base));
});
