//! The bundled Smart-Pause reproduction (scenarios/smart_pause, README there):
//! the points of the SMALL experiment `scenarios/smart_pause/small.toml` (k = 4
//! fat-tree, 16 hosts at 40G, 3 ms of IMC10 Poisson arrivals, or of IMC10
//! fan-in arrivals for the fan-in mixes) run end to end, and the direction of
//! the talk's claims is checked only where our measurements over seeds 1-3
//! show it (see the README's "small variants" tables).
//!
//! `measure` (ignored) prints the numbers of the README's tables for any runs
//! of the experiment files: `SP_RUNS=experiment.toml:dcqcn_60_2mb:nopfc,...
//! SP_SEEDS=1 cargo test --release -p incast-core -- --ignored --nocapture
//! repro_smart_pause::measure` (the README's tables themselves come from
//! `incast sweep` and `scenarios/tables.py`).

use crate::common;
use incast_core::Results;

/// Runs `variant` of `point` of the small experiment on `seed`.
fn run(point: &str, variant: &str, seed: u64) -> Results {
    common::run_experiment("smart_pause/small.toml", point, variant, seed)
}

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// What the README reports for one run.
struct Measured {
    /// Per size bucket (the scenario's `size_buckets`): label, count, mean and p99 slowdown.
    buckets: Vec<(String, u64, f64, f64)>,
    overall_mean: f64,
    overall_p99: f64,
    drops: u64,
    /// Data packets the senders put on the wire: sum over flows of
    /// ceil(size / payload) plus retransmitted packets (exact for RDMA
    /// flows, which are all measured to completion here).
    data_pkts: u64,
    pauses: u64,
    pfc_pauses: u64,
    unfinished: usize,
}

impl Measured {
    fn drop_ratio(&self) -> f64 {
        self.drops as f64 / self.data_pkts as f64
    }
}

fn measure_run(r: &Results, payload: u64) -> Measured {
    let s = summary(r);
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let buckets = s["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["label"].as_str().unwrap().to_string(),
                b["count"].as_u64().unwrap(),
                f(&b["slowdown"]["mean"]),
                f(&b["slowdown"]["p99"]),
            )
        })
        .collect();
    let sizes = r.flows.u64s("size_bytes");
    let retx: u64 = r.flows.u32s("retransmits").iter().map(|&x| x as u64).sum();
    let data_pkts = sizes.iter().map(|&b| b.div_ceil(payload)).sum::<u64>() + retx;
    Measured {
        buckets,
        overall_mean: f(&s["overall"]["slowdown"]["mean"]),
        overall_p99: f(&s["overall"]["slowdown"]["p99"]),
        drops: s["drops"]["packets"].as_u64().unwrap(),
        data_pkts,
        pauses: s["edge"]["pauses"].as_u64().unwrap_or(0),
        pfc_pauses: s["pfc"]["pause_frames"].as_u64().unwrap_or(0),
        unfinished: r.flows.u8s("finished").iter().filter(|&&x| x != 1).count(),
    }
}

/// Every flow finished and every byte sent was delivered or dropped.
fn check_sound(file: &str, seed: u64, r: &Results) {
    common::assert_finished_and_conserved(r, &format!("{file} seed {seed}"));
    assert!(
        r.flows.rows() > 100,
        "{file} seed {seed}: only {} flows",
        r.flows.rows()
    );
}

/// Prints the README's numbers for the runs in SP_RUNS (comma separated
/// `file:point:variant`, the file under scenarios/smart_pause) and seeds in
/// SP_SEEDS (default 1).
#[test]
#[ignore]
fn measure() {
    let files = std::env::var("SP_RUNS").unwrap_or_default();
    let seeds: Vec<u64> = std::env::var("SP_SEEDS")
        .unwrap_or_else(|_| "1".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    for file in files.split(',').filter(|f| !f.is_empty()) {
        for &seed in &seeds {
            let t = std::time::Instant::now();
            let mut parts = file.split(':');
            let (f, point, variant) = (
                parts.next().unwrap(),
                parts.next().expect("file:point:variant"),
                parts.next().expect("file:point:variant"),
            );
            let r = common::run_experiment(&format!("smart_pause/{f}"), point, variant, seed);
            let m = measure_run(&r, 1460);
            let b: Vec<String> = m
                .buckets
                .iter()
                .map(|(l, n, mean, p99)| format!("{l}:{n}:{mean:.3}:{p99:.3}"))
                .collect();
            println!(
                "MEASURE {file} seed={seed} wall={:.1}s flows={} unfinished={} mean={:.3} p99={:.3} drops={} data_pkts={} drop_ratio={:.6} pauses={} pfc_pauses={} buckets={}",
                t.elapsed().as_secs_f64(),
                r.flows.rows(),
                m.unfinished,
                m.overall_mean,
                m.overall_p99,
                m.drops,
                m.data_pkts,
                m.drop_ratio(),
                m.pauses,
                m.pfc_pauses,
                b.join(" ")
            );
        }
    }
}

/// The four variants of one congestion control at 60 % load, fan-in 1, the
/// talk's 256 KB of buffer per port, on seed `seed`.
fn four(cc: &str, seed: u64) -> [Measured; 4] {
    four_of(&format!("{cc}_60_2mb"), seed)
}

/// The four variants (nopfc, pfc, fixed, dynamic) of the small experiment's
/// point `stem` on seed `seed`.
fn four_of(stem: &str, seed: u64) -> [Measured; 4] {
    ["nopfc", "pfc", "fixed", "dynamic"].map(|v| {
        let file = format!("{stem}/{v}");
        let r = run(stem, v, seed);
        check_sound(&file, seed, &r);
        let m = measure_run(&r, 1460);
        println!(
            "{file} seed {seed}: mean {:.2} p99 {:.2} drops {} ({:.4} of data packets) edge pauses {} PFC pauses {}",
            m.overall_mean,
            m.overall_p99,
            m.drops,
            m.drop_ratio(),
            m.pauses,
            m.pfc_pauses
        );
        m
    })
}

/// Checks shared by both congestion controls: the mechanisms did act, PFC
/// kept the fabric lossless, and against the same CC without PFC both
/// Smart-Pause rules keep at most `drop_share` of its drops and cut the mean
/// and p99 slowdown of all flows by at least 10 % (the fixed rule's p99 only
/// when `fixed_p99`). Also used by the fan-in mixes, with `tag` naming the run.
///
/// Measured on seeds 1-3 (`hold = "once"`, RED 160/640 KB at 20 %): drops
/// fall 8-14x with DCQCN (to 0-4 for the dynamic rule) and 9-49x with TIMELY
/// (to 0 for the dynamic rule); the mean falls by 33-69 % and the p99 by
/// 52-92 %. The 2x and 10 % margins are well inside those, so a seed-to-seed
/// wobble does not fail the test, but a Smart-Pause that stopped pausing, or
/// paused without effect, would.
fn check_common(tag: &str, m: &[Measured; 4], fixed_p99: bool, drop_share: f64) {
    let [nopfc, pfc, fixed, dynamic] = m;
    assert!(pfc.pfc_pauses > 0, "{tag}: PFC never paused");
    assert_eq!(pfc.drops, 0, "{tag}: drops with PFC");
    assert_eq!(nopfc.pauses + pfc.pauses, 0);
    for (name, sp) in [("fixed", fixed), ("dynamic", dynamic)] {
        let tag = format!("{tag} {name}");
        assert!(sp.pauses > 0, "{tag}: Smart-Pause never paused");
        assert_eq!(sp.pfc_pauses, 0);
        assert!(
            sp.drops as f64 <= drop_share * nopfc.drops as f64,
            "{tag}: drops {} vs {} without Smart-Pause (at most {drop_share} of them)",
            sp.drops,
            nopfc.drops
        );
        below(
            &tag,
            "mean vs no PFC",
            sp.overall_mean,
            nopfc.overall_mean,
            0.9,
        );
        if name == "dynamic" || fixed_p99 {
            below(
                &tag,
                "p99 vs no PFC",
                sp.overall_p99,
                nopfc.overall_p99,
                0.9,
            );
        }
    }
}

/// Asserts `got < factor x base`.
fn below(tag: &str, what: &str, got: f64, base: f64, factor: f64) {
    assert!(
        got < factor * base,
        "{tag}: {what}: {got:.3}, required below {factor} x {base:.3}"
    );
}

/// DCQCN (talk slide "DCQCN, 60% load, fan-in = 1, 2MB buffer"). Against
/// DCQCN + PFC, both rules lower the mean slowdown (measured by 34-45 % for
/// the fixed rule, 45-58 % for the dynamic one: required 10 %) and the dynamic
/// rule lowers the p99 (measured by 49-65 %: required 10 %). The fixed rule's
/// p99 against PFC (32-37 % lower on seeds 1-3) is not checked: with the
/// former marking it was worse on seed 3.
#[test]
fn dcqcn_smart_pause_beats_no_pfc_and_pfc() {
    for seed in 1..=3 {
        let m = four("dcqcn", seed);
        let tag = format!("dcqcn seed {seed}");
        check_common(&tag, &m, true, 0.5);
        let [_, pfc, fixed, dynamic] = &m;
        for (name, sp) in [("fixed", fixed), ("dynamic", dynamic)] {
            below(
                &tag,
                &format!("{name} mean vs PFC"),
                sp.overall_mean,
                pfc.overall_mean,
                0.9,
            );
        }
        below(
            &tag,
            "dynamic p99 vs PFC",
            dynamic.overall_p99,
            pfc.overall_p99,
            0.9,
        );
    }
}

/// TIMELY (talk slide "TIMELY + smart pause", 60 % load, 2 MB). Against
/// TIMELY + PFC only the mean slowdown is checked, and only for being lower:
/// measured 15-22 % lower (fixed) and 23-37 % (dynamic) over seeds 1-3, the
/// fixed rule too close to a 10 % margin to require one. The p99 against PFC
/// is within a few per cent on some seeds and is not checked.
#[test]
fn timely_smart_pause_beats_no_pfc() {
    for seed in 1..=3 {
        let m = four("timely", seed);
        let tag = format!("timely seed {seed}");
        check_common(&tag, &m, true, 0.5);
        let [_, pfc, fixed, dynamic] = &m;
        for (name, sp) in [("fixed", fixed), ("dynamic", dynamic)] {
            below(
                &tag,
                &format!("{name} mean vs PFC"),
                sp.overall_mean,
                pfc.overall_mean,
                1.0,
            );
        }
    }
}

/// DCQCN with fan-in arrivals (talk slide "DCQCN (2MB buffer, 60% load) +
/// smart pause: various incast fan-in"): each Poisson event sends k IMC10
/// flows from k random hosts to one random host, k from the mix 1/2/4 at
/// 50/30/20 % (`fan124`) or 1/4/10 at 30/40/30 % (`fan1410`); 60 % load.
///
/// Measured on seeds 1-3 (`hold = "once"`, RED 160/640 KB at 20 %), as
/// Smart-Pause / baseline: mean vs no PFC 0.38-0.80 (fixed) and 0.33-0.49
/// (dynamic), vs PFC 0.44-0.88 (fixed) and 0.41-0.70 (dynamic); drops vs no
/// PFC at most 0.56 of the baseline's (1/4/10, dynamic, seed 2; the others at
/// most 0.41); dynamic p99 vs no PFC 0.11-0.40, vs PFC 0.34-0.54 (1/2/4);
/// fixed p99 vs no PFC 0.12-0.82 (1/4/10). Required: both rules keep at most
/// 0.6 of the drops and cut the mean by 10 % against no PFC and beat PFC's
/// mean (dynamic by 10 %); the dynamic rule cuts the p99 by 10 % against no
/// PFC, and against PFC for the 1/2/4 mix; the fixed rule cuts the p99 by
/// 10 % against no PFC for the 1/4/10 mix only. Not checked: the fixed rule's
/// p99 for the 1/2/4 mix (equal to no PFC's on seed 3: one go-back-N timeout
/// sets the p99 of ~700 flows), and the dynamic p99 against PFC for 1/4/10
/// (0.46 and 0.54 on seeds 1 and 3, 1.46 on seed 2).
///
/// The talk's trend, that the gain grows with fan-in, is checked where it is
/// robust: the dynamic rule's all-flows mean factor against no PFC at 1/4/10
/// is above its factor at fan-in 1 (same fan-in generator, point
/// `dcqcn_60_2mb_fan1`). Measured 3.02/2.03/2.20 against 1.74/1.66/2.04 on
/// seeds 1/2/3 (with the former marking, 5/200 KB at 1 %, 2.21/2.11/2.46
/// against 1.19/1.41/1.64, and a 1.1x margin held). 1/2/4 lies between on
/// some seeds only: not checked.
#[test]
fn dcqcn_smart_pause_fan_in_mixes() {
    let factor = |nopfc: &Measured, dynamic: &Measured| nopfc.overall_mean / dynamic.overall_mean;
    let mut fan1 = Vec::new();
    for seed in 1..=3 {
        let [nopfc, dynamic] = ["nopfc", "dynamic"].map(|v| {
            let file = format!("dcqcn_60_2mb_fan1/{v}");
            let r = run("dcqcn_60_2mb_fan1", v, seed);
            check_sound(&file, seed, &r);
            measure_run(&r, 1460)
        });
        fan1.push(factor(&nopfc, &dynamic));
    }
    for (mix, check_fixed_p99) in [("fan124", false), ("fan1410", true)] {
        let stem = format!("dcqcn_60_2mb_{mix}");
        for seed in 1..=3 {
            let m = four_of(&stem, seed);
            let [nopfc, pfc, fixed, dynamic] = &m;
            if mix == "fan1410" {
                let (f1, f10) = (fan1[seed as usize - 1], factor(nopfc, dynamic));
                assert!(
                    f10 > f1,
                    "seed {seed}: dynamic mean factor vs no PFC {f10:.3} at 1/4/10, {f1:.3} at fan-in 1"
                );
            }
            let tag = format!("{mix} seed {seed}");
            check_common(&tag, &m, check_fixed_p99, 0.6);
            for (name, sp) in [("fixed", fixed), ("dynamic", dynamic)] {
                let margin = if name == "dynamic" { 0.9 } else { 1.0 };
                let what = format!("{name} mean vs PFC");
                below(&tag, &what, sp.overall_mean, pfc.overall_mean, margin);
            }
            if mix == "fan124" {
                below(
                    &tag,
                    "dynamic p99 vs PFC",
                    dynamic.overall_p99,
                    pfc.overall_p99,
                    0.9,
                );
            }
        }
    }
}
