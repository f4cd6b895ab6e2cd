//! # incast-core
//!
//! A deterministic, packet-level discrete-event simulator for congestion
//! management in data-center networks. See `ARCHITECTURE.md` at the repository
//! root for the ten-minute tour.
//!
//! The usual entry point is a [`Scenario`] (parsed and validated once from a
//! TOML or JSON scenario file) run by a [`Simulation`]:
//!
//! ```
//! use incast_core::{Scenario, Simulation};
//! let text = r#"
//!     name = "two hosts"
//!     seed = 1
//!     [topology]
//!     kind = "single_switch"
//!     hosts = 2
//!     link_rate = "10Gbps"
//!     link_delay = "1us"
//!     [[workload.flows]]
//!     src = 0
//!     dst = 1
//!     size = "100KB"
//!     start = "0us"
//! "#;
//! let scenario = Scenario::from_toml_str(text, std::path::Path::new(".")).unwrap();
//! let mut sim = Simulation::new(&scenario).unwrap();
//! while !sim.advance(100_000) {}
//! let results = sim.finish();
//! assert_eq!(results.flows.rows(), 1);
//! assert!(results.flows.f64s("slowdown")[0] >= 1.0);
//! ```

pub mod cm;
pub mod config_types;
pub mod edge;
pub mod engine;
pub mod host;
pub mod hpcc_format;
pub mod huge_pages;
pub mod mech;
pub mod metrics;
pub mod metrics_table;
pub mod net;
pub mod nic;
pub mod rdma;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod transport;
pub mod units;
pub mod workload;

pub use host::generators::flow_kinds;
pub use scenario::{Scenario, ScenarioError};
pub use sim::parallelism::ParallelismProfile;
pub use sim::threaded::{run_threaded, PartStats, ThreadedRun};
pub use sim::{Progress, Results, RunStats, Simulation};
pub use sim::{KIND_BULK, KIND_INCAST, KIND_LISTED, KIND_POISSON};
