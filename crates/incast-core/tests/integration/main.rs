//! The core's integration tests, one module per concern, linked into one
//! test binary (`cargo test --release` links it once).

mod common;

mod bulk_flows;
mod bundled_scenarios;
mod closed_forms;
mod cm_network;
mod congestion_isolation;
mod congestion_spreading;
mod cubic_bbr;
mod dctcp_and_incast;
mod edge_pausing;
mod fuzz_scenarios;
mod hpcc_differences;
mod hpcc_end_to_end;
mod invariants;
mod lossless_pfc;
mod multi_cc;
mod multi_host;
mod ndp;
mod nic_mechanisms;
mod nic_queues;
mod nic_receive;
mod ns3_dumbbell;
mod onoff_sources;
mod partitioned;
mod properties;
mod queue_stats;
mod rack_tlp;
mod rdma_cc;
mod repro_congestion_isolation;
mod repro_netronome;
mod repro_on_ramp;
mod repro_smart_pause;
mod sack_recovery;
mod scenario_errors;
mod spraying;
mod swift;
mod threaded;
mod trimming;
