//! `incast._core`: the PyO3 binding of `incast-core`.
//!
//! This is the only crate that sees PyO3. It stays thin: scenarios cross the
//! boundary as text (TOML or JSON), results come back as columnar tables, each
//! a dict `{column: (numpy dtype string, little-endian bytes)}` that the Python
//! side turns into numpy arrays with `np.frombuffer` (no per-row objects).

use std::path::Path;
use std::sync::{Mutex, MutexGuard, TryLockError};

use incast_core::metrics_table::Table;
use incast_core::{Scenario, Simulation};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

pyo3::create_exception!(
    incast._core,
    ScenarioError,
    PyValueError,
    "A scenario could not be parsed or failed validation.\n\n\
     The message is `<path>: <problem>`; the attributes `path` and `detail` hold the two parts."
);

fn scenario_err(py: Python<'_>, e: incast_core::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value(py);
    // Best effort: the message alone is enough if attributes cannot be set.
    let _ = value.setattr("path", e.path.clone());
    let _ = value.setattr("detail", e.message.clone());
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

/// A running simulation.
///
/// `Simulation(text, fmt, base_dir, seed=None)` parses the scenario (raising
/// `ScenarioError` when invalid), overrides its seed when `seed` is given, and
/// builds the network. Drive it with `advance(max_events)` until it returns
/// True, then call `finish()` once for the results.
#[pyclass(name = "Simulation", module = "incast._core", frozen)]
struct PySimulation {
    inner: Mutex<Option<Simulation>>,
    name: String,
    seed: u64,
}

impl PySimulation {
    /// Lock the inner simulation without ever blocking while holding the GIL
    /// (another thread may be inside `advance` with the GIL released).
    fn lock(&self) -> PyResult<MutexGuard<'_, Option<Simulation>>> {
        match self.inner.try_lock() {
            Ok(guard) => Ok(guard),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "the simulation is busy in another thread",
            )),
            Err(TryLockError::Poisoned(_)) => Err(PyRuntimeError::new_err(
                "the simulation panicked earlier and cannot be used any more",
            )),
        }
    }
}

fn finished_err() -> PyErr {
    PyRuntimeError::new_err("finish() was already called on this simulation")
}

#[pymethods]
impl PySimulation {
    #[new]
    #[pyo3(signature = (text, fmt, base_dir, seed=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        fmt: &str,
        base_dir: &str,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let mut scenario = parse_scenario(py, text, fmt, base_dir)?;
        if let Some(seed) = seed {
            scenario.set_seed(seed);
        }
        let sim = Simulation::new(&scenario).map_err(|e| scenario_err(py, e))?;
        Ok(PySimulation {
            inner: Mutex::new(Some(sim)),
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

    /// Process up to `max_events` events with the GIL released; True when finished.
    fn advance(&self, py: Python<'_>, max_events: u64) -> PyResult<bool> {
        let mut guard = self.lock()?;
        let sim = guard.as_mut().ok_or_else(finished_err)?;
        Ok(py.allow_threads(|| sim.advance(max_events)))
    }

    /// A dict: now_ps, horizon_ps, fraction, active_flows, finished_flows.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let guard = self.lock()?;
        let sim = guard.as_ref().ok_or_else(finished_err)?;
        let p = sim.progress();
        let dict = PyDict::new(py);
        dict.set_item("now_ps", p.now_ps)?;
        dict.set_item("horizon_ps", p.horizon_ps)?;
        dict.set_item("fraction", p.fraction)?;
        dict.set_item("active_flows", p.active_flows)?;
        dict.set_item("finished_flows", p.finished_flows)?;
        Ok(dict)
    }

    /// Whether `finish()` has been called.
    #[getter]
    fn consumed(&self) -> PyResult<bool> {
        Ok(self.lock()?.is_none())
    }

    /// Consume the simulation and return its results (callable once).
    ///
    /// Returns {"flows", "incasts", "counters", "ports", "queues": tables,
    /// "node_names": list[str], "summary": str (JSON), "stats": dict}.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.lock()?.take().ok_or_else(finished_err)?;
        let results = py.allow_threads(move || sim.finish());
        let out = PyDict::new(py);
        out.set_item("flows", table_to_py(py, &results.flows)?)?;
        out.set_item("incasts", table_to_py(py, &results.incasts)?)?;
        out.set_item("counters", table_to_py(py, &results.counters)?)?;
        out.set_item("ports", table_to_py(py, &results.ports)?)?;
        out.set_item("queues", table_to_py(py, &results.queues)?)?;
        out.set_item("node_names", PyList::new(py, &results.node_names)?)?;
        out.set_item("summary", &results.summary_json)?;
        let stats = serde_json::to_value(results.stats)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot serialize run stats: {e}")))?;
        out.set_item("stats", json_to_py(py, &stats)?)?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "<incast._core.Simulation {:?} seed={}>",
            self.name, self.seed
        )
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_cdfs, m)?)?;
    m.add_class::<PySimulation>()?;
    Ok(())
}
