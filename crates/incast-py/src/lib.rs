//! `incast._core`: the PyO3 binding of `incast-core`.
//!
//! This is the only crate that sees PyO3. It stays thin: scenarios cross the
//! boundary as text (TOML or JSON), results come back as columnar tables, each
//! a dict `{column: (numpy dtype string, little-endian bytes)}` that the Python
//! side turns into numpy arrays with `np.frombuffer` (no per-row objects).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, TryLockError};

use incast_core::hpcc_format::{self, HpccImport, ImportOptions};
use incast_core::metrics_table::Table;
use incast_core::{Results, Scenario, Simulation, ThreadedRun};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// The simulation's large tables on huge pages (see `huge_pages`): the
/// extension's own allocations only, Python's are untouched.
#[global_allocator]
static ALLOC: incast_core::huge_pages::HugePages = incast_core::huge_pages::HugePages;

pyo3::create_exception!(
    incast._core,
    ScenarioError,
    PyValueError,
    "A scenario could not be parsed or failed validation.\n\n\
     The message is `<path> (line N): <problem>`; the attributes `path`, `line` (None for\n\
     JSON input and keys not written in the text) and `detail` hold the parts."
);

fn scenario_err(py: Python<'_>, e: incast_core::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value(py);
    // Best effort: the message alone is enough if attributes cannot be set.
    let _ = value.setattr("path", e.path.clone());
    let _ = value.setattr("detail", e.message.clone());
    let _ = value.setattr("line", e.line);
    err
}

fn parse_scenario(py: Python<'_>, text: &str, fmt: &str, base_dir: &str) -> PyResult<Scenario> {
    let base = Path::new(base_dir);
    let parsed = match fmt.to_ascii_lowercase().as_str() {
        "toml" => Scenario::from_toml_str(text, base),
        "json" => Scenario::from_json_str(text, base),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario format {other:?}: expected \"toml\" or \"json\""
            )))
        }
    };
    parsed.map_err(|e| scenario_err(py, e))
}

/// Parse and validate a scenario; return its normalized JSON.
///
/// `fmt` is "toml" or "json"; relative paths inside the scenario (e.g. CDF
/// files) resolve against `base_dir`. Raises `ScenarioError` when invalid.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir))]
fn validate(py: Python<'_>, text: &str, fmt: &str, base_dir: &str) -> PyResult<String> {
    let scenario = parse_scenario(py, text, fmt, base_dir)?;
    Ok(scenario.to_json())
}

/// The JSON Schema of a scenario file, as a JSON string.
#[pyfunction]
fn schema() -> String {
    Scenario::json_schema()
}

/// Names of the flow-size CDFs built into the core (e.g. "websearch").
#[pyfunction]
fn bundled_cdfs() -> Vec<String> {
    incast_core::workload::cdf::Cdf::bundled_names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Each bundled CDF as (name, mean bytes, median bytes, share of flows of at
/// most `below` bytes), in the order of `bundled_cdfs`.
#[pyfunction]
#[pyo3(signature = (below = 100_000))]
fn bundled_cdf_stats(below: u64) -> Vec<(String, f64, u64, f64)> {
    use incast_core::workload::cdf::Cdf;
    Cdf::bundled_names()
        .iter()
        .filter_map(|name| {
            let cdf = Cdf::bundled(name)?;
            Some((
                name.to_string(),
                cdf.mean(),
                cdf.sample(0.5),
                cdf.cdf_at(below as f64),
            ))
        })
        .collect()
}

/// Convert a serde_json value into plain Python objects.
fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else {
                n.as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, json_to_py(py, item)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

fn table_to_py<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, col) in &table.columns {
        let bytes = PyBytes::new(py, &col.to_le_bytes());
        dict.set_item(name, (col.dtype(), bytes))?;
    }
    Ok(dict)
}

/// The results of a run as the dict `Simulation.finish()` returns.
fn results_to_py<'py>(py: Python<'py>, results: &Results) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, table) in results.tables() {
        out.set_item(name, table_to_py(py, table)?)?;
    }
    out.set_item("node_names", PyList::new(py, &results.node_names)?)?;
    out.set_item("summary", &results.summary_json)?;
    let stats = serde_json::to_value(results.stats)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialize run stats: {e}")))?;
    out.set_item("stats", json_to_py(py, &stats)?)?;
    Ok(out)
}

/// A running simulation.
///
/// `Simulation(text, fmt, base_dir, seed=None)` parses the scenario (raising
/// `ScenarioError` when invalid), overrides its seed when `seed` is given, and
/// builds the network. Drive it with `advance(max_events)` until it returns
/// True, then call `finish()` once for the results.
#[pyclass(name = "Simulation", module = "incast._core", frozen)]
struct PySimulation {
    inner: Mutex<Option<Run>>,
    name: String,
    seed: u64,
}

/// A run on this thread, advanced in slices, or on `threads` threads in the
/// background (`incast_core::ThreadedRun`).
enum Run {
    One(Box<Simulation>),
    Threads(ThreadedRun),
}

/// Lock a simulation slot without ever blocking while holding the GIL
/// (another thread may be inside `advance` with the GIL released).
fn lock_sim<T>(m: &Mutex<Option<T>>) -> PyResult<MutexGuard<'_, Option<T>>> {
    match m.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
            "the simulation is busy in another thread",
        )),
        Err(TryLockError::Poisoned(_)) => Err(PyRuntimeError::new_err(
            "the simulation panicked earlier and cannot be used any more",
        )),
    }
}

/// A simulation's progress as a dict: now_ps, horizon_ps, fraction,
/// active_flows, finished_flows.
fn progress_dict<'py>(py: Python<'py>, p: incast_core::Progress) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("now_ps", p.now_ps)?;
    dict.set_item("horizon_ps", p.horizon_ps)?;
    dict.set_item("fraction", p.fraction)?;
    dict.set_item("active_flows", p.active_flows)?;
    dict.set_item("finished_flows", p.finished_flows)?;
    Ok(dict)
}

fn finished_err() -> PyErr {
    PyRuntimeError::new_err("finish() was already called on this simulation")
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (text, fmt, base_dir, seed=None, threads=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        fmt: &str,
        base_dir: &str,
        seed: Option<u64>,
        threads: Option<u32>,
    ) -> PyResult<Self> {
        let mut scenario = parse_scenario(py, text, fmt, base_dir)?;
        if let Some(seed) = seed {
            scenario.set_seed(seed);
        }
        // `threads` overrides the scenario's `[timing] threads`.
        let threads = threads.or(match scenario.config.timing.threads() {
            1 => None,
            n => Some(n),
        });
        let run = match threads {
            None => Run::One(Box::new(
                Simulation::new(&scenario).map_err(|e| scenario_err(py, e))?,
            )),
            Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
            Some(n) => Run::Threads(
                py.allow_threads(|| ThreadedRun::start(&scenario, n))
                    .map_err(PyValueError::new_err)?,
            ),
        };
        Ok(PySimulation {
            inner: Mutex::new(Some(run)),
            name: scenario.name().to_string(),
            seed: scenario.seed(),
        })
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The seed in use (the scenario's, or the override).
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// Process up to `max_events` events with the GIL released; True when
    /// finished. A run on threads runs by itself: this waits for its end at
    /// most a fifth of a second.
    fn advance(&self, py: Python<'_>, max_events: u64) -> PyResult<bool> {
        let mut guard = lock_sim(&self.inner)?;
        let run = guard.as_mut().ok_or_else(finished_err)?;
        Ok(py.allow_threads(|| match run {
            Run::One(sim) => sim.advance(max_events),
            Run::Threads(run) => run.wait(std::time::Duration::from_millis(200)),
        }))
    }

    /// A dict: now_ps, horizon_ps, fraction, active_flows, finished_flows.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let guard = lock_sim(&self.inner)?;
        let progress = match guard.as_ref().ok_or_else(finished_err)? {
            Run::One(sim) => sim.progress(),
            Run::Threads(run) => run.progress(),
        };
        progress_dict(py, progress)
    }

    /// Whether `finish()` has been called.
    #[getter]
    fn consumed(&self) -> PyResult<bool> {
        Ok(lock_sim(&self.inner)?.is_none())
    }

    /// Consume the simulation and return its results (callable once).
    ///
    /// Returns {"flows", "incasts", "counters", "ports", "queues": tables,
    /// "node_names": list[str], "summary": str (JSON), "stats": dict}.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let run = lock_sim(&self.inner)?.take().ok_or_else(finished_err)?;
        let results = py.allow_threads(move || match run {
            Run::One(sim) => Ok(sim.finish()),
            Run::Threads(run) => run.finish(),
        });
        results_to_py(py, &results.map_err(PyRuntimeError::new_err)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "<incast._core.Simulation {:?} seed={}>",
            self.name, self.seed
        )
    }
}

/// Convert an HPCC simulator experiment (config, topology and flow files).
///
/// Returns `(toml_text, csv_text)`: the scenario, whose `workload.flow_file` is
/// `flow_file` (default `<config stem>_flows.csv`), and the flows CSV to write
/// next to it. `topology` / `flows` override the files the configuration names.
/// `headroom` ("hpcc" or "formula") and `acks` ("hpcc" or "high_priority")
/// choose between HPCC's behaviour (the default) and the alternative;
/// `ecmp` ("flow", the default, or "hpcc") incast's seeded flow hash or
/// HPCC-sim's ECMP rule; `clock` ("exact", the default, or "ns3") exact
/// transmission times or ns-3's whole nanoseconds (docs/hpcc-interop.md). Raises `ScenarioError` naming the configuration
/// key or option at fault.
#[pyfunction]
#[pyo3(signature = (config, topology=None, flows=None, flow_file=None, headroom=None, acks=None, ecmp=None, clock=None))]
#[allow(clippy::too_many_arguments)] // one parameter per Python keyword argument
fn import_hpcc(
    py: Python<'_>,
    config: PathBuf,
    topology: Option<PathBuf>,
    flows: Option<PathBuf>,
    flow_file: Option<String>,
    headroom: Option<String>,
    acks: Option<String>,
    ecmp: Option<String>,
    clock: Option<String>,
) -> PyResult<(String, String)> {
    let options = [headroom, acks, ecmp, clock];
    let mut imp = import_with_options(py, &config, topology, flows, options)?;
    if let Some(name) = flow_file {
        imp.set_flow_file(&name);
    }
    let toml = imp.to_toml().map_err(|e| scenario_err(py, e))?;
    Ok((toml, std::mem::take(&mut imp.flows_csv)))
}

/// Imports an HPCC experiment with the import options by name (`headroom`,
/// `acks`, `ecmp`, `clock`; `None`: the default), outside the GIL; a bad
/// name or input raises `ScenarioError`.
fn import_with_options(
    py: Python<'_>,
    config: &Path,
    topology: Option<PathBuf>,
    flows: Option<PathBuf>,
    [headroom, acks, ecmp, clock]: [Option<String>; 4],
) -> PyResult<HpccImport> {
    let options = ImportOptions::from_names(
        headroom.as_deref(),
        acks.as_deref(),
        ecmp.as_deref(),
        clock.as_deref(),
    )
    .map_err(|e| scenario_err(py, e))?;
    py.allow_threads(|| {
        hpcc_format::import_with(config, topology.as_deref(), flows.as_deref(), &options)
    })
    .map_err(|e| scenario_err(py, e))
}

/// A running simulation of an HPCC simulator experiment.
///
/// `HpccRun(config, topology=None, flows=None, seed=None, headroom=None,
/// acks=None, ecmp=None, clock=None)` imports the experiment (raising `ScenarioError`) and
/// builds the network; `headroom`, `acks`, `ecmp` and `clock` are the import options of
/// `import_hpcc`. Drive it like a
/// `Simulation`; `finish()` returns the same dict plus `"hpcc_fct"` and
/// `"hpcc_pfc"`: the texts of HPCC's fct.txt and pfc.txt.
#[pyclass(name = "HpccRun", module = "incast._core", frozen)]
struct PyHpccRun {
    inner: Mutex<Option<Simulation>>,
    import: HpccImport,
    name: String,
    seed: u64,
}

#[pymethods]
impl PyHpccRun {
    #[new]
    #[pyo3(signature = (config, topology=None, flows=None, seed=None, headroom=None, acks=None, ecmp=None, clock=None))]
    #[allow(clippy::too_many_arguments)] // one parameter per Python keyword argument
    fn new(
        py: Python<'_>,
        config: PathBuf,
        topology: Option<PathBuf>,
        flows: Option<PathBuf>,
        seed: Option<u64>,
        headroom: Option<String>,
        acks: Option<String>,
        ecmp: Option<String>,
        clock: Option<String>,
    ) -> PyResult<Self> {
        let options = [headroom, acks, ecmp, clock];
        let imp = import_with_options(py, &config, topology, flows, options)?;
        let base = config
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let mut scenario = imp.runnable(&base).map_err(|e| scenario_err(py, e))?;
        if let Some(seed) = seed {
            scenario.set_seed(seed);
        }
        let sim = Simulation::new(&scenario).map_err(|e| scenario_err(py, e))?;
        Ok(PyHpccRun {
            inner: Mutex::new(Some(sim)),
            import: imp,
            name: scenario.name().to_string(),
            seed: scenario.seed(),
        })
    }

    /// The experiment's name (the configuration file's stem).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The seed in use.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of flows in the flow file.
    #[getter]
    fn n_flows(&self) -> usize {
        self.import.flows.len()
    }

    /// The imported scenario as TOML (its flow_file names `<stem>_flows.csv`).
    fn scenario_toml(&self, py: Python<'_>) -> PyResult<String> {
        self.import.to_toml().map_err(|e| scenario_err(py, e))
    }

    /// The flows CSV of the imported scenario.
    fn flows_csv(&self) -> &str {
        &self.import.flows_csv
    }

    /// Process up to `max_events` events with the GIL released; True when finished.
    fn advance(&self, py: Python<'_>, max_events: u64) -> PyResult<bool> {
        let mut guard = lock_sim(&self.inner)?;
        let sim = guard.as_mut().ok_or_else(finished_err)?;
        Ok(py.allow_threads(|| sim.advance(max_events)))
    }

    /// A dict: now_ps, horizon_ps, fraction, active_flows, finished_flows.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let guard = lock_sim(&self.inner)?;
        let sim = guard.as_ref().ok_or_else(finished_err)?;
        progress_dict(py, sim.progress())
    }

    /// Whether `finish()` has been called.
    #[getter]
    fn consumed(&self) -> PyResult<bool> {
        Ok(lock_sim(&self.inner)?.is_none())
    }

    /// Consume the run; return the results dict of `Simulation.finish()` plus
    /// "hpcc_fct" and "hpcc_pfc" (the texts of fct.txt and pfc.txt).
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = lock_sim(&self.inner)?.take().ok_or_else(finished_err)?;
        let imp = &self.import;
        let (results, written) = py.allow_threads(move || {
            let results = sim.finish();
            let mut fct = Vec::new();
            let mut pfc = Vec::new();
            let r = hpcc_format::write_fct(imp, &results, &mut fct)
                .and_then(|_| hpcc_format::write_pfc(&results, &mut pfc))
                .map(|_| (fct, pfc));
            (results, r)
        });
        let (fct, pfc) = written
            .map_err(|e| PyRuntimeError::new_err(format!("cannot write fct.txt / pfc.txt: {e}")))?;
        let out = results_to_py(py, &results)?;
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        out.set_item("hpcc_fct", text(fct))?;
        out.set_item("hpcc_pfc", text(pfc))?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "<incast._core.HpccRun {:?} flows={} seed={}>",
            self.name,
            self.import.flows.len(),
            self.seed
        )
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    // The result tables' names (`Results::table_names`): `incast.results.TABLES` is checked against it.
    m.add("RESULT_TABLES", Results::table_names())?;
    // The flow table's kind codes (`generators!` in the core's host/generators.rs):
    // `incast.results.FLOW_KINDS` is checked against it.
    let flow_kinds: std::collections::BTreeMap<u8, &str> =
        incast_core::flow_kinds().into_iter().collect();
    m.add("FLOW_KINDS", flow_kinds)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_cdfs, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_cdf_stats, m)?)?;
    m.add_class::<PySimulation>()?;
    m.add_class::<PyHpccRun>()?;
    m.add_function(wrap_pyfunction!(import_hpcc, m)?)?;
    Ok(())
}
