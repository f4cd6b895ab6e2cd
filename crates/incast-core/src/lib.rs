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

// A feature with sections of its own in the scenario (outside `[switch]`,
// whose sections `mech/mod.rs` registers) is declared here and takes one
// line per section in `feature_sections!` below.
pub mod cm;
pub mod config_types;
pub mod edge;
pub mod engine;
pub mod files;
pub mod host;
pub mod hpcc_format;
pub mod huge_pages;
pub mod mech;
pub mod metrics;
pub mod metrics_table;
pub mod net;
pub mod nic;
pub mod params;
pub mod rdma;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod transport;
pub mod units;
pub mod workload;

/// The features' scenario sections (scenario/sections.rs), handed to the
/// macro `$callback` (after the tokens `$args`, in brackets): under
/// `scenario { }` the top-level sections, under `workload { }` the
/// `[[workload.KEY]]` lists, one line each, `key: path::from::crate::Type`
/// after its description (its schema entry); an `#[cfg]` applies to what
/// the line generates. The order is the order of their fields in a
/// normalized scenario (the top-level ones after `edge`, the lists after
/// `onoff`) and of their checks.
macro_rules! feature_sections {
    ($callback:ident; $($args:tt)*) => {
        $callback! { [$($args)*]
            scenario {
                /// Congestion management of the IEEE 802.1Qau era (`cm = "ecm"`, or a
                /// table `[cm] scheme = "e2cm" ...`): congestion points at every switch
                /// output queue, reaction points (rate limiters) in the sources' NICs.
                /// Needs `[nic] model = "adapter"`. Decisions and sources: docs/ecm-qcn.md.
                cm: cm::CmConfig,
                /// Example: a line of text kept with the run (tests and the `examples` feature).
                #[cfg(any(test, feature = "examples"))]
                example_note: scenario::example_section::Note,
            }
            workload {
                /// Hosts whose receive side drains slower than their link for a while
                /// (an output-generated hotspot). Needs `[nic] model = "adapter"`.
                hotspot: cm::scenario::HotspotConfig,
                /// Example: named instants of the run (tests and the `examples` feature).
                #[cfg(any(test, feature = "examples"))]
                example_mark: scenario::example_section::Mark,
            }
        }
    };
}
pub(crate) use feature_sections;

pub use host::generators::flow_kinds;
pub use scenario::{Scenario, ScenarioError};
pub use sim::parallelism::ParallelismProfile;
pub use sim::threaded::{run_threaded, PartStats, ThreadedRun};
pub use sim::{Progress, Results, RunStats, Simulation};
pub use sim::{KIND_BULK, KIND_INCAST, KIND_LISTED, KIND_POISSON};
