//! Workloads: flow-size distributions and flow generators.
pub mod cdf;
#[cfg(any(test, feature = "examples"))]
pub mod example_burst;
pub mod generators;
pub mod onoff;
