//! Property tests over the scenario parser and validator: mutations of the
//! bundled scenario files and arbitrary TOML values at arbitrary key paths.
//!
//! Properties, for every input:
//! * no panic;
//! * bounded allocation: validating one input never holds more than
//!   [`VALIDATION_BYTES`] at once (counted by this binary's allocator, per
//!   thread), so a topology of 10^9 hosts or a CDF of a billion points is an
//!   error before anything is allocated for it;
//! * rejected with a key path (or, for a syntax error, a line), with a
//!   message of bounded length; or accepted;
//! * accepted inputs that are small enough (at most 64 hosts) run, the
//!   simulated clock stopped at 200 us and at most 2 M events, with bytes
//!   conserved (`Results::conservation`: sent = delivered + dropped + in the
//!   network).
//!
//! CI runs a few hundred cases; `INCAST_FUZZ_CASES=20000 cargo test --release
//! -p incast-core --test integration fuzz_scenarios` runs a long search.
//! The long-running libFuzzer target is `fuzz/` (README there).

use incast_core::config_types::TimeValue;
use incast_core::{Scenario, Simulation};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

/// The most one validation may hold at once.
const VALIDATION_BYTES: usize = 256 << 20;

/// The system allocator, counting the live and peak bytes of each thread
/// while [`measure`] runs on it (a thread-local flag: other tests of this
/// binary pay one thread-local read per allocation).
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = ON.try_with(|on| {
        if on.get() {
            LIVE.with(|l| {
                let v = l.get() + delta;
                l.set(v);
                PEAK.with(|p| p.set(p.get().max(v)));
            });
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result with the peak bytes it held.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    ON.with(|o| o.set(true));
    let out = f();
    ON.with(|o| o.set(false));
    (out, PEAK.with(|p| p.get()).max(0) as usize)
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Every bundled scenario file, and a few small ones that run quickly.
fn corpus() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let mut files = vec![];
    walk(&scenarios_dir(), &mut files);
    // The small ones first: `pick` draws them half of the time.
    let mut texts: Vec<String> = SMALL.iter().map(|s| s.to_string()).collect();
    texts.extend(files.iter().map(|f| std::fs::read_to_string(f).unwrap()));
    texts
}

/// An index into [`corpus`]: one of the small scenarios half of the time.
fn pick(corpus_len: usize) -> impl Strategy<Value = usize> {
    prop_oneof![0..SMALL.len(), 0..corpus_len]
}

/// Small scenarios (a few hosts, microseconds) whose mutations run to the end.
const SMALL: &[&str] = &[
    r#"
name = "tcp"
duration = "50us"
[topology]
kind = "single_switch"
hosts = 4
link_rate = "10Gbps"
[switch]
buffer = "200KB"
ecn = { kind = "step", k = "20KB" }
[transport]
cc = "dctcp"
rto_min = "100us"
[[workload.flows]]
src = 0
dst = 1
size = "30KB"
[[workload.incast]]
fan_in = 2
bytes_per_sender = "8KB"
times = ["5us", "20us"]
[[workload.poisson]]
load = 0.3
cdf = "google_search_rpc"
[metrics]
queue_sample_interval = "5us"
"#,
    r#"
name = "rdma"
seed = 3
duration = "40us"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[switch]
buffer = "1MB"
ecn = { kind = "red", kmin = "5KB", kmax = "20KB", pmax = 0.2 }
pfc = { classes = [3] }
[rdma]
cc = "dcqcn"
[[workload.flows]]
src = 0
dst = 3
size = "20KB"
[[workload.packets]]
src = 1
dst = 2
size = 1000
rate = "1Gbps"
"#,
    r#"
name = "explicit"
[topology]
kind = "explicit"
hosts = ["a", "b", "c"]
switches = ["s", { name = "t", tier = 2 }]
links = [
    { a = "a", b = "s", rate = "10Gbps" },
    { a = "b", b = "s", rate = "10Gbps" },
    { a = "s", b = "t", rate = "40Gbps", delay = "2us" },
    { a = "c", b = "t", rate = "10Gbps" },
]
[switch]
scheduler = "dwrr"
classes = [{ class = 1, weight = 2 }]
[[workload.flows]]
src = "a"
dst = "c"
size = "5KB"
class = 1
[[workload.flows]]
src = "b"
dst = "c"
size = 3000
start = "1us"
"#,
];

/// Values that have broken parsers and validators before, and plain ones.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "8",
    "255",
    "65536",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "-9223372036854775808",
    "0.0",
    "0.5",
    "1.0",
    "1.5",
    "-0.5",
    "1e308",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"\"",
    "\"0ps\"",
    "\"1ps\"",
    "\"0.4ps\"",
    "\"1e-9ps\"",
    "\"-2us\"",
    "\"1e30s\"",
    "\"10us\"",
    "\"1ms\"",
    "\"100Gbps\"",
    "\"10Gbs\"",
    "\"1e-9bps\"",
    "\"0Gbps\"",
    "\"64KB\"",
    "\"1e30B\"",
    "\"1B\"",
    "\"12MB\"",
    "\"websearch\"",
    "\"/dev/zero\"",
    "\"/dev/urandom\"",
    "\"/\"",
    "\"dcqcn\"",
    "\"dctcp\"",
    "\"newreno\"",
    "\"hpcc\"",
    "\"off\"",
    "\"step\"",
    "\"static\"",
    "\"dynamic\"",
    "\"leaf_spine\"",
    "\"explicit\"",
    "\"h0\"",
    "\"h9999\"",
    "[]",
    "[0]",
    "[3, 3]",
    "[\"5us\"]",
    "[[1, 0.5], [2, 0.5]]",
    "{}",
    "{ kind = \"off\" }",
    "{ kind = \"off\", k = 5 }",
    "{ kind = \"step\", k = \"10KB\" }",
    "{ kind = \"dynamic\", alpha = 0 }",
    "{ kind = \"static\", limit = 1 }",
    "{ classes = [3], headroom = 0 }",
    "{ classes = [3], headroom = \"100KB\" }",
    "{ algorithm = \"dctcp\", g = 2 }",
    "1979-05-27T07:32:00Z",
];

/// Keys of the format (and a few that are not), to insert anywhere.
const KEYS: &[&str] = &[
    "name",
    "seed",
    "duration",
    "stop",
    "kind",
    "hosts",
    "link_rate",
    "link_delay",
    "leaves",
    "spines",
    "hosts_per_leaf",
    "host_rate",
    "fabric_rate",
    "k",
    "buffer",
    "admission",
    "ecn",
    "pfc",
    "headroom",
    "classes",
    "reserve",
    "cc",
    "mtu",
    "header",
    "ack_size",
    "ack_class",
    "class",
    "rto_min",
    "load",
    "cdf",
    "fan_in",
    "times",
    "bytes_per_sender",
    "src",
    "dst",
    "size",
    "start",
    "rate",
    "warmup",
    "cooldown",
    "queue_sample_interval",
    "size_buckets",
    "payload",
    "ctrl_class",
    "data_class",
    "bogus",
];

/// One edit of a scenario's text.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the value on line `n` (of those with `=`) by `VALUES[v]`.
    SetValue(usize, usize),
    /// Insert `KEYS[k] = VALUES[v]` after line `n`.
    Insert(usize, usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    /// Cut the text at this fraction of its length.
    Truncate(u16),
    /// Overwrite one byte.
    Byte(usize, u8),
    /// Multiply the first number on line `n` (of those with `=` and a
    /// digit) by `SCALES[f]`, keeping its unit: valid-looking extremes.
    Scale(usize, usize),
}

const SCALES: &[f64] = &[0.0, 0.001, 0.1, 0.5, 2.0, 10.0, 1000.0, 1e6];

/// `line` with its first number multiplied by `f` (integers stay integers).
fn scale_line(line: &str, f: f64) -> String {
    let Some(eq) = line.find('=') else {
        return line.to_string();
    };
    let value = &line[eq..];
    let Some(start) = value.find(|c: char| c.is_ascii_digit()) else {
        return line.to_string();
    };
    let len = value[start..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len() - start);
    let number = &value[start..start + len];
    let Ok(x) = number.parse::<f64>() else {
        return line.to_string();
    };
    let y = x * f;
    let new = if number.contains('.') || y.fract() != 0.0 {
        format!("{y}")
    } else {
        format!("{}", y as u64)
    };
    format!(
        "{}{}{new}{}",
        &line[..eq],
        &value[..start],
        &value[start + len..]
    )
}

fn apply(text: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let n = lines.len();
    match *edit {
        Edit::SetValue(i, v) => {
            let with_eq: Vec<usize> = (0..n).filter(|&j| lines[j].contains('=')).collect();
            if let Some(&j) = with_eq.get(i % with_eq.len().max(1)) {
                let key = lines[j].split('=').next().unwrap_or("").to_string();
                lines[j] = format!("{key}= {}", VALUES[v % VALUES.len()]);
            }
        }
        Edit::Insert(i, k, v) => {
            let line = format!("{} = {}", KEYS[k % KEYS.len()], VALUES[v % VALUES.len()]);
            lines.insert((i % n) + 1, line);
        }
        Edit::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Edit::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Edit::Truncate(f) => {
            let all = lines.join("\n");
            let mut cut = all.len() * f as usize / u16::MAX as usize;
            while !all.is_char_boundary(cut) {
                cut -= 1;
            }
            return all[..cut].to_string();
        }
        Edit::Scale(i, f) => {
            let with_number: Vec<usize> = (0..n)
                .filter(|&j| {
                    let l = &lines[j];
                    l.contains('=')
                        && l.split('=')
                            .nth(1)
                            .is_some_and(|v| v.contains(|c: char| c.is_ascii_digit()))
                })
                .collect();
            if let Some(&j) = with_number.get(i % with_number.len().max(1)) {
                lines[j] = scale_line(&lines[j], SCALES[f % SCALES.len()]);
            }
        }
        Edit::Byte(i, b) => {
            let mut bytes = lines.join("\n").into_bytes();
            let at = i % bytes.len().max(1);
            if let Some(x) = bytes.get_mut(at) {
                *x = b;
            }
            return String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    lines.join("\n") + "\n"
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>()).prop_map(|(i, v)| Edit::SetValue(i, v)),
        3 => (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(i, k, v)| Edit::Insert(i, k, v)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        1 => any::<usize>().prop_map(Edit::DuplicateLine),
        1 => any::<u16>().prop_map(Edit::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Byte(i, b)),
        6 => (any::<usize>(), any::<usize>()).prop_map(|(i, f)| Edit::Scale(i, f)),
    ]
}

/// An arbitrary TOML value, a few levels deep.
fn toml_value() -> impl Strategy<Value = toml::Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(toml::Value::Integer),
        prop_oneof![Just(0i64), Just(1), Just(-1), Just(3), Just(1 << 40)]
            .prop_map(toml::Value::Integer),
        any::<f64>().prop_map(toml::Value::Float),
        any::<bool>().prop_map(toml::Value::Boolean),
        "[a-z0-9.\\-]{0,12}".prop_map(toml::Value::String),
        (0..VALUES.len()).prop_filter_map("a scalar", |i| {
            let v: toml::Table = format!("v = {}", VALUES[i]).parse().ok()?;
            v.get("v").cloned()
        }),
        (
            prop_oneof![Just(0.0f64), Just(0.5), Just(1.0), Just(1e6), Just(1e-9)],
            prop_oneof![
                Just("ps"),
                Just("ns"),
                Just("us"),
                Just("ms"),
                Just("s"),
                Just("B"),
                Just("KB"),
                Just("Gbps"),
                Just("")
            ]
        )
            .prop_map(|(n, u)| toml::Value::String(format!("{n}{u}"))),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(toml::Value::Array),
            prop::collection::vec((0..KEYS.len(), inner), 0..6).prop_map(|kv| {
                toml::Value::Table(
                    kv.into_iter()
                        .map(|(k, v)| (KEYS[k].to_string(), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// Sets `value` at a path chosen by `picks` in `doc`: down existing tables
/// and arrays, then at an existing or a new key.
fn set_at(doc: &mut toml::Value, picks: &[usize], key: usize, value: toml::Value) {
    // The path, chosen on a shared borrow ...
    enum Step {
        Key(String),
        Index(usize),
    }
    let mut steps = vec![];
    let mut node: &toml::Value = doc;
    for &p in picks {
        let (step, next) = match node {
            toml::Value::Table(t) if !t.is_empty() => {
                let k = t.keys().nth(p % t.len()).cloned().expect("in range");
                let next = &t[&k];
                (Step::Key(k), next)
            }
            toml::Value::Array(a) if !a.is_empty() => (Step::Index(p % a.len()), &a[p % a.len()]),
            _ => break,
        };
        if !(next.is_table() || next.is_array()) {
            break;
        }
        steps.push(step);
        node = next;
    }
    // ... then followed on a mutable one.
    let mut node = doc;
    for step in &steps {
        node = match step {
            Step::Key(k) => &mut node[k.as_str()],
            Step::Index(i) => &mut node[*i],
        };
    }
    match node {
        toml::Value::Table(t) => {
            let existing: Vec<String> = t.keys().cloned().collect();
            let k = if key % 3 == 0 || existing.is_empty() {
                KEYS[key % KEYS.len()].to_string()
            } else {
                existing[key % existing.len()].clone()
            };
            t.insert(k, value);
        }
        toml::Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            a[key % n] = value;
        }
        _ => {}
    }
}

/// What one input did.
#[derive(Default, Debug)]
struct Tally {
    inputs: usize,
    rejected: usize,
    accepted: usize,
    ran: usize,
}

fn check_one(text: &str, tally: &mut Tally) -> Result<(), TestCaseError> {
    tally.inputs += 1;
    let base = scenarios_dir();
    let (parsed, peak) = measure(|| {
        std::panic::catch_unwind(|| Scenario::from_toml_str(text, &base))
            .map_err(|_| "panicked".to_string())
    });
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => return Err(TestCaseError::fail(format!("{e} on:\n{text}"))),
    };
    prop_assert!(
        peak <= VALIDATION_BYTES,
        "validation held {peak} bytes on:\n{text}"
    );
    let mut sc = match parsed {
        Err(e) => {
            tally.rejected += 1;
            if std::env::var_os("INCAST_FUZZ_SHOW").is_some() {
                eprintln!("{e}");
            }
            prop_assert!(
                !e.path.is_empty() || e.line.is_some(),
                "an error without a key path or line: {e}\non:\n{text}"
            );
            prop_assert!(e.message.chars().count() <= 2_100, "overlong: {e}");
            return Ok(());
        }
        Ok(sc) => sc,
    };
    tally.accepted += 1;
    // The same scenario as JSON (what the Python API sends) is accepted too.
    let json = sc.to_json();
    prop_assert!(
        Scenario::from_json_str(&json, &base).is_ok(),
        "the normalized JSON of an accepted scenario is rejected:\n{json}"
    );
    if sc.graph.n_hosts() > 64 || sc.graph.links.len() > 256 {
        return Ok(());
    }
    let stop = sc.config.stop.map_or(200_000_000, |s| s.0.min(200_000_000));
    sc.config.stop = Some(TimeValue(stop));
    let run = std::panic::catch_unwind(move || {
        let mut sim = Simulation::new(&sc).map_err(|e| e.to_string())?;
        for _ in 0..20 {
            if sim.advance(100_000) {
                break;
            }
        }
        Ok::<_, String>(sim.finish())
    });
    let results = match run {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Err(TestCaseError::fail(format!(
                "Simulation::new: {e} on:\n{text}"
            )))
        }
        Err(_) => return Err(TestCaseError::fail(format!("the run panicked on:\n{text}"))),
    };
    tally.ran += 1;
    let c = results.conservation;
    prop_assert_eq!(
        c.sent_bytes,
        c.delivered_bytes + c.dropped_bytes + c.in_network_bytes,
        "bytes not conserved on:\n{}",
        text
    );
    Ok(())
}

fn cases() -> u32 {
    std::env::var("INCAST_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(160)
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    })
}

#[test]
fn scaling_a_number_keeps_its_unit() {
    assert_eq!(scale_line("load = 0.5", 2.0), "load = 1");
    assert_eq!(scale_line("size = \"30KB\"", 10.0), "size = \"300KB\"");
    assert_eq!(scale_line("k = \"1.5us\"", 0.5), "k = \"0.75us\"");
    assert_eq!(scale_line("[topology]", 2.0), "[topology]");
}

#[test]
fn mutated_bundled_scenarios() {
    let corpus = corpus();
    let tally = RefCell::new(Tally::default());
    let strategy = (pick(corpus.len()), prop::collection::vec(edit(), 1..3));
    let result = runner(cases()).run(&strategy, |(i, edits)| {
        let text = edits.iter().fold(corpus[i].clone(), |t, e| apply(&t, e));
        check_one(&text, &mut tally.borrow_mut())
    });
    let tally = tally.into_inner();
    eprintln!("mutated scenarios: {tally:?}");
    result.unwrap();
    assert!(tally.rejected > 0 && tally.accepted > 0, "{tally:?}");
}

#[test]
fn arbitrary_values_at_arbitrary_paths() {
    let corpus: Vec<toml::Value> = corpus()
        .iter()
        .map(|t| toml::Value::Table(t.parse().unwrap()))
        .collect();
    let tally = RefCell::new(Tally::default());
    let strategy = (
        pick(corpus.len()),
        prop::collection::vec(any::<usize>(), 0..4),
        any::<usize>(),
        toml_value(),
    );
    let result = runner(cases()).run(&strategy, |(i, picks, key, value)| {
        let mut doc = corpus[i].clone();
        set_at(&mut doc, &picks, key, value);
        let Ok(text) = toml::to_string(&doc) else {
            return Ok(()); // not expressible as TOML (e.g. an array of mixed tables)
        };
        check_one(&text, &mut tally.borrow_mut())
    });
    let tally = tally.into_inner();
    eprintln!("arbitrary values: {tally:?}");
    result.unwrap();
    assert!(tally.rejected > 0, "{tally:?}");
}

/// Inputs that must be errors before anything is allocated for them.
#[test]
fn huge_inputs_are_refused_before_allocating() {
    let cases = [
        (
            "[topology]\nkind = \"leaf_spine\"\nleaves = 1000000\nspines = 1000\n\
             hosts_per_leaf = 1000\nhost_rate = \"1G\"\nfabric_rate = \"1G\"\n\
             [[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1\n",
            "topology.hosts_per_leaf",
        ),
        (
            "[topology]\nkind = \"fat_tree\"\nk = 2000\nhost_rate = \"1G\"\nfabric_rate = \"1G\"\n\
             [[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1\n",
            "topology.k",
        ),
        (
            "[topology]\nkind = \"single_switch\"\nhosts = 1000000000\nlink_rate = \"1G\"\n\
             [[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1\n",
            "topology.hosts",
        ),
    ];
    for (text, key) in cases {
        let (r, peak) = measure(|| Scenario::from_toml_str(text, Path::new(".")));
        let e = r.expect_err(text);
        assert_eq!(e.path, key, "{e}");
        assert!(peak < 1 << 20, "{key}: {peak} bytes");
    }
    // A CDF file of more points than any table has: refused while reading,
    // holding at most the capped file.
    let dir = std::env::temp_dir().join(format!("incast-fuzz-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1.2 M points of 4 bytes each (a valid table: a point mass at 1 B).
    let big = "1 0\n".repeat(1_200_000) + "1 1\n";
    assert!(big.len() < 16 << 20);
    std::fs::write(dir.join("big.cdf"), &big).unwrap();
    drop(big);
    let text = format!(
        "duration = \"1ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\nlink_rate = \"1G\"\n\
         [[workload.poisson]]\nload = 0.5\ncdf = \"{}\"\n",
        dir.join("big.cdf").display()
    );
    let (r, peak) = measure(|| Scenario::from_toml_str(&text, Path::new(".")));
    let e = r.expect_err("a CDF of 1.2 M points");
    assert_eq!(e.path, "workload.poisson[0].cdf", "{e}");
    assert!(e.message.contains("more than 1048576 points"), "{e}");
    assert!(peak < 64 << 20, "{peak} bytes");
    std::fs::remove_dir_all(&dir).unwrap();
}
