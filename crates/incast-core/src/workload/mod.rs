//! Workloads: flow-size distributions and flow generators.
pub mod cdf;
pub mod generators;
pub mod onoff;
