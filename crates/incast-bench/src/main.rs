//! `incast-bench`: wall time, events/s, packet-hops/s and peak memory of named scenarios.
//!
//! ```text
//! cargo run --release -p incast-bench -- scenarios/leaf_spine_websearch_dctcp.toml [more.toml ...]
//! ```
//!
//! Each scenario runs in a child process of its own so that its peak resident
//! memory (VmHWM) is its own. The simulation runs on one core. Wall time covers
//! building the network and running it; parsing and writing results are excluded.
//! `cpu s` is the time the run spent on a CPU (`/proc/self/schedstat`): on a
//! shared machine, wall time well above it means the run waited for a core.
//!
//! `ev/hop` is events per packet-hop and `txd/hop` the ends of transmission
//! among them (a port that had more to send finished a packet): one arrival
//! per hop, plus those, plus timers and generators.
//!
//! On a noisy machine, `--repeat N` runs each scenario N times, one after the
//! other, and reports the fastest and the median run:
//!
//! ```text
//! cargo run --release -p incast-bench -- --repeat 3 scenarios/hpcc/config_fat_web30_10ms_dcqcn.txt
//! ```
//!
//! Speed on a drifting machine is best compared by instructions: with
//! `--instructions`, each scenario runs under valgrind's cachegrind (about
//! 50 times slower) and the table gives its instructions per event and per
//! packet-hop instead of times:
//!
//! ```text
//! cargo run --release -p incast-bench -- --instructions scenarios/htsim_dctcp_permutation.toml
//! ```
//!
//! To compare CPU time with another build, `--against OTHER` runs each
//! scenario in this build and in `OTHER` (another `incast-bench` binary) at
//! the same time, one per core, so that both see the same machine; with
//! `--repeat N`, N such pairs, the order of starting swapped each time:
//!
//! ```text
//! cargo run --release -p incast-bench -- --against ./old-incast-bench --repeat 4 scenarios/hpcc/config_fat_web30_10ms_dcqcn.txt
//! ```
//!
//! (Run it with a build against itself first: the spread of those ratios is
//! what a difference must exceed on that machine.)
//!
//! An HPCC config is imported with the default options; the environment
//! variable `INCAST_HPCC_IMPORT` picks others, as in
//! `INCAST_HPCC_IMPORT=headroom=formula,acks=high_priority` (the import as it
//! was before the HPCC simulator's headroom and ACK class were adopted: a
//! build of that time gives the same results, so instructions compare);
//! `ecmp=hpcc` routes as HPCC-sim does; `clock=ns3` times transmissions on
//! ns-3's whole nanoseconds, as HPCC-sim does.

use incast_core::{Scenario, Simulation};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The simulation's large tables on huge pages, as in the Python package
/// (see `huge_pages`).
#[global_allocator]
static ALLOC: incast_core::huge_pages::HugePages = incast_core::huge_pages::HugePages;

/// Nanoseconds this process has spent on a CPU, user and system, every
/// thread's (those that ended too: a threaded run's), to the microsecond.
fn cpu_ns() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return 0;
        }
        usage
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(usage.ru_utime) + ns(usage.ru_stime)
}

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
        let options = import_options()?;
        let imp = incast_core::hpcc_format::import_with(p, None, None, &options)
            .map_err(|e| e.to_string())?;
        imp.runnable(p.parent().unwrap_or(Path::new(".")))
            .map_err(|e| e.to_string())
    } else {
        Scenario::from_file(Path::new(path)).map_err(|e| e.to_string())
    }
}

/// The HPCC import's options from `INCAST_HPCC_IMPORT` (`key=value`
/// pairs separated by commas; module docs).
fn import_options() -> Result<incast_core::hpcc_format::ImportOptions, String> {
    let text = std::env::var("INCAST_HPCC_IMPORT").unwrap_or_default();
    let (mut headroom, mut acks, mut ecmp, mut clock) = (None, None, None, None);
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        match pair.trim().split_once('=') {
            Some(("headroom", v)) => headroom = Some(v),
            Some(("acks", v)) => acks = Some(v),
            Some(("ecmp", v)) => ecmp = Some(v),
            Some(("clock", v)) => clock = Some(v),
            _ => {
                return Err(format!(
                "INCAST_HPCC_IMPORT: `{pair}` is not headroom=..., acks=..., ecmp=... or clock=..."
            ))
            }
        }
    }
    incast_core::hpcc_format::ImportOptions::from_names(headroom, acks, ecmp, clock)
        .map_err(|e| e.to_string())
}

/// Runs a scenario to its end: on this thread, or on its `[timing] threads`.
fn run_to_end(sc: &incast_core::Scenario) -> Result<incast_core::Results, String> {
    match sc.config.timing.threads() {
        1 => {
            let mut sim = Simulation::new(sc).map_err(|e| e.to_string())?;
            sim.run();
            Ok(sim.finish())
        }
        n => incast_core::run_threaded(sc, n),
    }
}

fn run_one(path: &str) -> Result<serde_json::Value, String> {
    let sc = load(path)?;
    let (t0, c0) = (Instant::now(), cpu_ns());
    let res = run_to_end(&sc)?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_ns().saturating_sub(c0) as f64 / 1e9;
    let s = res.stats;
    let summary: serde_json::Value = serde_json::from_str(&res.summary_json).unwrap_or_default();
    Ok(serde_json::json!({
        "scenario": sc.name(),
        "file": path,
        "wall_s": wall,
        "cpu_s": cpu,
        "events": s.events,
        "events_per_s": s.events as f64 / wall,
        "packet_hops": s.packet_hops,
        "tx_done_events": s.tx_done_events,
        "hops_per_s": s.packet_hops as f64 / wall,
        "sim_time_ms": s.sim_time_ps as f64 / 1e9,
        "flows": summary["flows"]["total"],
        "unfinished": summary["flows"]["unfinished"],
        "peak_packets": s.peak_packets,
        "peak_flows": s.peak_flows,
        "peak_rss_mib": peak_rss_kib() as f64 / 1024.0,
    }))
}

/// FNV-1a over bytes: a fingerprint, not a security hash.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= *b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// One line per scenario: the event count and a fingerprint of every result
/// table and of the summary, so that two builds can be compared exactly
/// (`incast-bench --digest a.toml b.txt > before.txt`, then `diff`).
fn digest(path: &str) -> Result<String, String> {
    let sc = load(path)?;
    Ok(digest_of(path, &run_to_end(&sc)?))
}

/// A run's fingerprint: its events, each table's rows and hash, the summary's hash.
fn digest_of(path: &str, res: &incast_core::Results) -> String {
    let mut parts = vec![format!("{path} events={}", res.stats.events)];
    // Every table of the run (`Results::table_names`: `cm` last, so a digest
    // taken before it was listed differs by that field only).
    let tables = res.tables();
    for (name, t) in tables {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for (col, c) in &t.columns {
            fnv(&mut h, col.as_bytes());
            fnv(&mut h, &c.to_le_bytes());
        }
        parts.push(format!("{name}={}x{:016x}", t.rows(), h));
    }
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    fnv(&mut h, res.summary_json.as_bytes());
    parts.push(format!("summary={h:016x}"));
    parts.join(" ")
}

/// `--partitioned P[,P...]`: each scenario in node order (`[timing] ties =
/// "node"` set here), run plainly and then split into each count of
/// partitions taking turns in windows (`Simulation::run_partitioned`); a
/// digest line each, marked `same` when it equals the plain run's.
fn partitioned(counts: &str, paths: &[String]) -> Result<bool, String> {
    let counts = partition_counts(counts, "--partitioned")?;
    let mut all_same = true;
    for path in paths {
        let mut sc = load(path)?;
        sc.config.timing.ties = incast_core::scenario::Ties::Node;
        let run = |parts: Option<u32>| -> Result<String, String> {
            let mut sim = Simulation::new(&sc).map_err(|e| format!("{path}: {e}"))?;
            match parts {
                None => sim.run(),
                Some(p) => sim
                    .run_partitioned(p, false)
                    .map_err(|e| format!("{path}, {p} partitions: {e}"))?,
            }
            Ok(digest_of(path, &sim.finish()))
        };
        let plain = run(None)?;
        println!("plain  {plain}");
        for &p in &counts {
            let split = run(Some(p))?;
            let same = split == plain;
            all_same &= same;
            println!("P={p:<4} {} {split}", if same { "same" } else { "DIFFERS" });
        }
    }
    Ok(all_same)
}

/// `--threads N[,N...]`: each scenario in node order, run plainly and then
/// on each count of threads (`incast_core::run_threaded`); a digest line
/// each, marked `same` when it equals the plain run's, with its wall time.
fn threaded(counts: &str, paths: &[String]) -> Result<bool, String> {
    let counts = partition_counts(counts, "--threads")?;
    let mut all_same = true;
    for path in paths {
        let mut sc = load(path)?;
        sc.config.timing.ties = incast_core::scenario::Ties::Node;
        let started = std::time::Instant::now();
        let mut sim = Simulation::new(&sc).map_err(|e| format!("{path}: {e}"))?;
        sim.run();
        let plain = digest_of(path, &sim.finish());
        println!(
            "plain     {:7.2} s {plain}",
            started.elapsed().as_secs_f64()
        );
        for &n in &counts {
            let started = std::time::Instant::now();
            let run = incast_core::ThreadedRun::start(&sc, n);
            let (res, parts) = run
                .and_then(|run| run.finish_with_stats())
                .map_err(|e| format!("{path}: {e}"))?;
            let wall = started.elapsed().as_secs_f64();
            let split = digest_of(path, &res);
            let same = split == plain;
            all_same &= same;
            let mark = if same { "same" } else { "DIFFERS" };
            println!("N={n:<4} {wall:7.2} s {mark} {split}");
            // Each thread's events and its wait at the windows' barriers.
            let windows = parts.first().map_or(0, |p| p.windows);
            let each: Vec<String> = (parts.iter())
                .map(|p| format!("{} events, waited {:.2} s", p.events, p.waited_s))
                .collect();
            println!("       {windows} windows; {}", each.join("; "));
        }
    }
    Ok(all_same)
}

/// Exits with status 1 when a comparison found a difference, 2 on an error.
fn exit_unless_same(outcome: Result<bool, String>) {
    match outcome {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("incast-bench: {e}");
            std::process::exit(2);
        }
    }
}

/// Partition counts like `2,8,16` (each at least 1).
fn partition_counts(counts: &str, option: &str) -> Result<Vec<u32>, String> {
    counts
        .split(',')
        .map(|c| c.trim().parse::<u32>().ok().filter(|&n| n >= 1))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("{option} takes partition counts like 2,8,16, not {counts:?}"))
}

/// The instruction count in cachegrind's report (`==1== I   refs: 4,359,728,417`).
fn instructions_in(report: &str) -> Option<u64> {
    report.lines().find_map(|line| {
        let (head, count) = line.split_once("refs:")?;
        let head = head.trim_end();
        (head.ends_with(" I") || head == "I")
            .then(|| count.trim().replace(',', "").parse().ok())
            .flatten()
    })
}

/// What a run wrote to its error stream, without valgrind's own lines.
fn own_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("==") && !l.starts_with("--"))
        .collect();
    lines.join("\n").trim().to_string()
}

/// The command that runs scenario `path` in a child process of `exe`
/// (under cachegrind when `instructions`).
fn child_command(exe: &Path, path: &str, instructions: bool) -> Command {
    let mut cmd = if instructions {
        let mut valgrind = Command::new("valgrind");
        valgrind
            .args([
                "--tool=cachegrind",
                "--cache-sim=no",
                "--cachegrind-out-file=/dev/null",
            ])
            .arg(exe);
        valgrind
    } else {
        Command::new(exe)
    };
    cmd.arg("--one").arg(path);
    cmd
}

/// Why a child did not start.
fn start_error(exe: &Path, instructions: bool, e: std::io::Error) -> String {
    if instructions {
        format!(
            "--instructions runs each scenario under valgrind, which did not start \
             ({e}): install valgrind (apt install valgrind) or leave out --instructions"
        )
    } else {
        format!("could not start {}: {e}", exe.display())
    }
}

/// A finished child's JSON line, with `instructions` added from
/// cachegrind's report when it ran under it.
fn child_result(
    out: std::process::Output,
    instructions: bool,
) -> Result<serde_json::Value, String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(own_lines(&stderr));
    }
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("the run printed no result ({e})"))?;
    if instructions {
        let n = instructions_in(&stderr)
            .ok_or_else(|| format!("no instruction count in valgrind's report:\n{stderr}"))?;
        v["instructions"] = n.into();
    }
    Ok(v)
}

/// Runs scenario `path` in a child process of `exe` (under cachegrind when
/// `instructions`): its JSON line, with `instructions` added.
fn run_child(exe: &Path, path: &str, instructions: bool) -> Result<serde_json::Value, String> {
    let out = child_command(exe, path, instructions)
        .output()
        .map_err(|e| start_error(exe, instructions, e))?;
    child_result(out, instructions)
}

/// Runs scenario `path` in `this` and in `other` at the same time (`this`
/// started first when `this_first`): their JSON lines.
fn run_pair(
    this: &Path,
    other: &Path,
    path: &str,
    this_first: bool,
) -> Result<(serde_json::Value, serde_json::Value), String> {
    let spawn = |exe: &Path| {
        child_command(exe, path, false)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| start_error(exe, false, e))
    };
    let (first, second) = if this_first {
        (this, other)
    } else {
        (other, this)
    };
    let (a, b) = (spawn(first)?, spawn(second)?);
    let result = |child: std::process::Child, exe: &Path| {
        child
            .wait_with_output()
            .map_err(|e| e.to_string())
            .and_then(|out| child_result(out, false))
            .map_err(|e| format!("{}: {e}", exe.display()))
    };
    let (a, b) = (result(a, first)?, result(b, second)?);
    Ok(if this_first { (a, b) } else { (b, a) })
}

/// `--against`: each scenario `repeat` times in this build and in `other`
/// at once; the CPU times and their ratios. Returns whether all ran.
fn compare_against(this: &Path, other: &Path, paths: &[String], repeat: usize) -> bool {
    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>8}",
        "scenario", "pair", "this cpu s", "other", "ratio"
    );
    let mut ok = true;
    for path in paths {
        let mut ratios = Vec::new();
        for round in 0..repeat {
            match run_pair(this, other, path, round % 2 == 0) {
                Ok((a, b)) => {
                    if a["events"] != b["events"] {
                        eprintln!(
                            "{path}: the builds ran {} and {} events: they simulate different things",
                            a["events"], b["events"]
                        );
                    }
                    let cpu = |v: &serde_json::Value| v["cpu_s"].as_f64().unwrap_or(0.0);
                    let ratio = cpu(&a) / cpu(&b).max(1e-9);
                    ratios.push(ratio);
                    println!(
                        "{:<34} {:>6} {:>10.3} {:>10.3} {:>8.3}",
                        a["scenario"].as_str().unwrap_or("?"),
                        round + 1,
                        cpu(&a),
                        cpu(&b),
                        ratio
                    );
                }
                Err(e) => {
                    eprintln!("{path}: {e}");
                    ok = false;
                    break;
                }
            }
        }
        if ratios.len() > 1 {
            ratios.sort_by(f64::total_cmp);
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            println!(
                "{:<34} this / other: mean {mean:.3}, from {:.3} to {:.3}",
                "",
                ratios[0],
                ratios[ratios.len() - 1]
            );
        }
    }
    ok
}

/// `--instructions`: each scenario once under cachegrind; its events,
/// packet-hops and instructions. Returns whether all ran.
fn count_instructions(exe: &Path, paths: &[String]) -> bool {
    println!(
        "{:<34} {:>12} {:>12} {:>16} {:>12} {:>12}",
        "scenario", "events", "pkt-hops", "instructions", "per event", "per hop"
    );
    let mut ok = true;
    for path in paths {
        match run_child(exe, path, true) {
            Ok(v) => {
                eprintln!("{v}");
                print_instructions(&v);
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                ok = false;
            }
        }
    }
    ok
}

/// One row of the `--instructions` table.
fn print_instructions(v: &serde_json::Value) {
    let count = |key: &str| v[key].as_u64().unwrap_or(0);
    let n = count("instructions");
    let per = |key: &str| n as f64 / count(key).max(1) as f64;
    println!(
        "{:<34} {:>12} {:>12} {:>16} {:>12.1} {:>12.1}",
        v["scenario"].as_str().unwrap_or("?"),
        count("events"),
        count("packet_hops"),
        n,
        per("events"),
        per("packet_hops"),
    );
}

/// `--parallelism P[,P...]`: one run of each scenario, profiled for every
/// partition count (`Simulation::profile_parallelism`); a row per count.
fn parallelism(counts: &str, paths: &[String]) -> Result<(), String> {
    let counts = partition_counts(counts, "--parallelism")?;
    println!(
        "{:<34} {:>4} {:>6} {:>11} {:>10} {:>9} {:>13} {:>9} {:>9} {:>8} {:>12} {:>9}",
        "scenario",
        "P",
        "groups",
        "hosts/part",
        "window ns",
        "windows",
        "events",
        "global %",
        "available",
        "/ P",
        "cross frames",
        "per window"
    );
    for path in paths {
        let sc = load(path)?;
        let mut sim = Simulation::new(&sc).map_err(|e| format!("{path}: {e}"))?;
        for profile in sim.profile_parallelism(&counts) {
            let hosts = format!(
                "{}-{}",
                profile.hosts.iter().min().unwrap_or(&0),
                profile.hosts.iter().max().unwrap_or(&0)
            );
            let window = if profile.lookahead == u64::MAX {
                "-".to_string()
            } else {
                format!("{:.1}", profile.lookahead as f64 / 1e3)
            };
            let total = profile.total_events();
            let available = profile.available();
            println!(
                "{:<34} {:>4} {:>6} {:>11} {:>10} {:>9} {:>13} {:>9.2} {:>9.2} {:>8.2} {:>9.2} {:>12} {:>9.1}",
                path,
                profile.partitions,
                profile.groups,
                hosts,
                window,
                profile.windows,
                total,
                100.0 * profile.global_events as f64 / total.max(1) as f64,
                available,
                available / profile.partitions as f64,
                profile.available_adaptive(),
                profile.cross_frames,
                profile.cross_frames as f64 / profile.windows.max(1) as f64,
            );
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--parallelism") && args.len() >= 3 {
        if let Err(e) = parallelism(&args[1], &args[2..]) {
            eprintln!("incast-bench: {e}");
            std::process::exit(2);
        }
        return;
    }
    if args.first().map(String::as_str) == Some("--threads") && args.len() >= 3 {
        return exit_unless_same(threaded(&args[1], &args[2..]));
    }
    if args.first().map(String::as_str) == Some("--partitioned") && args.len() >= 3 {
        return exit_unless_same(partitioned(&args[1], &args[2..]));
    }
    if args.first().map(String::as_str) == Some("--digest") && args.len() >= 2 {
        for path in &args[1..] {
            match digest(path) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("{path}: {e}");
                    std::process::exit(2);
                }
            }
        }
        return;
    }
    if args.first().map(String::as_str) == Some("--summary") && args.len() == 2 {
        // The run's summary JSON (for quick experiments without the Python package).
        let sc = load(&args[1]).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        // On its `[timing] threads`, as `incast run` does.
        let results = run_to_end(&sc).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        println!("{}", results.summary_json);
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
    let instructions = args.iter().any(|a| a == "--instructions");
    let args: Vec<String> = args.into_iter().filter(|a| a != "--instructions").collect();
    let (against, args) = match split_against(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("incast-bench: {e}");
            std::process::exit(2);
        }
    };
    let (repeat, paths) = match parse_repeat(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("incast-bench: {e}");
            std::process::exit(2);
        }
    };
    if paths.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: incast-bench [--repeat N] [--instructions | --against OTHER_BENCH] SCENARIO.toml|HPCC_CONFIG.txt [...]\n       incast-bench --summary SCENARIO.toml|HPCC_CONFIG.txt   (print one run's summary JSON)\n       incast-bench --digest SCENARIO.toml|HPCC_CONFIG.txt [...]   (fingerprint every result table)\n       incast-bench --parallelism P[,P...] SCENARIO.toml|HPCC_CONFIG.txt [...]   (available parallelism over P partitions)\n       incast-bench --partitioned P[,P...] SCENARIO.toml [...]   (node order: digests of a plain run and of runs in P partitions taking turns; exit 1 if any differs)\n       incast-bench --threads N[,N...] SCENARIO.toml [...]   (node order: digests and wall times of a plain run and of runs on N threads; exit 1 if any differs)\n\n--repeat N runs each scenario N times and reports the fastest and the median run.\n--instructions runs each under valgrind's cachegrind and reports instructions per event and per packet-hop.\n--against OTHER_BENCH runs each in this build and in another incast-bench at the same time, one per core, and compares CPU times.");
        std::process::exit(if paths.is_empty() { 2 } else { 0 });
    }
    let exe = std::env::current_exe().expect("own path");
    if let Some(other) = against {
        if instructions {
            eprintln!("incast-bench: --against compares times; --instructions counts: use one");
            std::process::exit(2);
        }
        let ok = compare_against(&exe, Path::new(&other), &paths, repeat);
        std::process::exit(i32::from(!ok));
    }
    if instructions {
        if repeat > 1 {
            eprintln!("incast-bench: --instructions counts are exact; leave out --repeat");
            std::process::exit(2);
        }
        let ok = count_instructions(&exe, &paths);
        std::process::exit(i32::from(!ok));
    }
    println!(
        "{:<34} {:>9} {:>9} {:>12} {:>10} {:>12} {:>10} {:>7} {:>8} {:>9} {:>9}",
        "scenario",
        "wall s",
        "cpu s",
        "events",
        "Mev/s",
        "pkt-hops",
        "Mhops/s",
        "ev/hop",
        "txd/hop",
        "flows",
        "peak MiB"
    );
    let mut failed = false;
    for path in &paths {
        let mut runs = Vec::new();
        for _ in 0..repeat {
            match run_child(&exe, path, false) {
                Ok(v) => {
                    eprintln!("{v}");
                    runs.push(v);
                }
                Err(e) => {
                    eprintln!("{path}: {e}");
                    failed = true;
                    break;
                }
            }
        }
        if runs.len() < repeat {
            continue;
        }
        let wall = |v: &serde_json::Value| v["wall_s"].as_f64().unwrap_or(f64::INFINITY);
        runs.sort_by(|a, b| wall(a).total_cmp(&wall(b)));
        let best = &runs[0];
        println!(
            "{:<34} {:>9.2} {:>9.2} {:>12} {:>10.2} {:>12} {:>10.2} {:>7.3} {:>8.3} {:>9} {:>9.1}",
            best["scenario"].as_str().unwrap_or("?"),
            wall(best),
            best["cpu_s"].as_f64().unwrap_or(0.0),
            best["events"].as_u64().unwrap_or(0),
            best["events_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            best["packet_hops"].as_u64().unwrap_or(0),
            best["hops_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            per_hop(best, "events"),
            per_hop(best, "tx_done_events"),
            best["flows"].as_u64().unwrap_or(0),
            best["peak_rss_mib"].as_f64().unwrap_or(0.0),
        );
        if repeat > 1 {
            let walls: Vec<String> = runs.iter().map(|v| format!("{:.2}", wall(v))).collect();
            println!(
                "{:<34} fastest of {repeat}; median {:.2} s; all: {}",
                "",
                (wall(&runs[(repeat - 1) / 2]) + wall(&runs[repeat / 2])) / 2.0,
                walls.join(", ")
            );
        }
    }
    if failed {
        std::process::exit(1);
    }
}

/// `key` (a count in a run's JSON) per packet-hop: events per hop, and the
/// ends of transmission among them (issue 21's measure of how many events a
/// hop costs; arrivals are one per hop).
fn per_hop(run: &serde_json::Value, key: &str) -> f64 {
    let hops = run["packet_hops"].as_u64().unwrap_or(0).max(1) as f64;
    run[key].as_u64().unwrap_or(0) as f64 / hops
}

/// Splits `--against OTHER` (anywhere among the arguments) from the rest.
fn split_against(args: &[String]) -> Result<(Option<String>, Vec<String>), String> {
    let mut other = None;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--against" {
            let path = it.next().ok_or(
                "--against needs another incast-bench binary, as in --against ./old-incast-bench",
            )?;
            other = Some(path.clone());
        } else {
            rest.push(a.clone());
        }
    }
    Ok((other, rest))
}

/// Splits `--repeat N` (anywhere among the arguments) from the scenario paths.
fn parse_repeat(args: &[String]) -> Result<(usize, Vec<String>), String> {
    let mut repeat = 1;
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--repeat" {
            let n = it
                .next()
                .ok_or("--repeat needs a count, as in --repeat 3")?;
            repeat = match n.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(format!(
                        "--repeat {n}: give a whole number of runs, 1 or more"
                    ))
                }
            };
        } else if a != "-h" && a != "--help" {
            paths.push(a.clone());
        }
    }
    Ok((repeat, paths))
}

#[cfg(test)]
mod tests {
    use super::{instructions_in, own_lines, parallelism, parse_repeat, per_hop, split_against};

    #[test]
    fn parallelism_takes_positive_partition_counts() {
        for bad in ["0", "2,x", "", "-1"] {
            let err = parallelism(bad, &[]).unwrap_err();
            assert!(err.contains("partition counts like 2,8,16"), "{err}");
        }
        assert!(parallelism("1,2,16", &[]).is_ok());
        let missing = parallelism("2", &args(&["no/such/file.toml"])).unwrap_err();
        assert!(missing.contains("no/such/file.toml"), "{missing}");
    }

    #[test]
    fn counts_per_hop_are_read_from_a_run() {
        let run = serde_json::json!({"events": 125, "packet_hops": 100, "tx_done_events": 20});
        assert_eq!(per_hop(&run, "events"), 1.25);
        assert_eq!(per_hop(&run, "tx_done_events"), 0.2);
        // A run without hops (nothing sent) reads as per one hop, not a NaN.
        let idle = serde_json::json!({"events": 3, "packet_hops": 0});
        assert_eq!(per_hop(&idle, "events"), 3.0);
    }

    #[test]
    fn against_is_split_from_the_rest() {
        assert_eq!(
            split_against(&args(&["--against", "old", "--repeat", "2", "a.toml"])).unwrap(),
            (Some("old".to_string()), args(&["--repeat", "2", "a.toml"]))
        );
        assert_eq!(
            split_against(&args(&["a.toml"])).unwrap(),
            (None, args(&["a.toml"]))
        );
        let e = split_against(&args(&["a.toml", "--against"])).unwrap_err();
        assert!(e.contains("--against"), "{e}");
    }

    #[test]
    fn the_instruction_count_is_read_from_cachegrind() {
        let report = "==12242== Cachegrind, a high-precision tracing profiler\n\
                      ==12242== \n\
                      ==12242== I   refs:      4,379,233,316\n\
                      ==12242== I1  misses:          162,114\n";
        assert_eq!(instructions_in(report), Some(4_379_233_316));
        // The data references of a cache simulation are not instructions.
        assert_eq!(
            instructions_in("==1== D   refs:  1,000 (700 rd + 300 wr)"),
            None
        );
        assert_eq!(instructions_in("no report here"), None);
        assert_eq!(
            own_lines("==7== Cachegrind\nscenario error: no file\n--7-- warning\n"),
            "scenario error: no file"
        );
    }

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn repeat_is_split_from_paths() {
        assert_eq!(
            parse_repeat(&args(&["a.toml"])).unwrap(),
            (1, args(&["a.toml"]))
        );
        assert_eq!(
            parse_repeat(&args(&["--repeat", "3", "a.toml", "b.txt"])).unwrap(),
            (3, args(&["a.toml", "b.txt"]))
        );
        assert_eq!(
            parse_repeat(&args(&["a.toml", "--repeat", "2"])).unwrap(),
            (2, args(&["a.toml"]))
        );
    }

    #[test]
    fn bad_repeat_is_an_error_naming_the_fix() {
        for bad in [
            &["--repeat"][..],
            &["--repeat", "0", "a.toml"],
            &["--repeat", "x"],
        ] {
            let e = parse_repeat(&args(bad)).unwrap_err();
            assert!(e.contains("--repeat"), "{e}");
        }
    }
}
