//! The plain parameters the scenario resolves and the network elements read:
//! data with its defaults and the arithmetic on it, no state and no events.
//!
//! They live below both ([`crate::scenario`] checks and builds them,
//! [`crate::net`], [`crate::nic`] and [`crate::mech`] run with them), so that
//! the scenario layer does not import the elements that hold the world's
//! state (issue 46). The elements re-export them where they were declared
//! before.

/// Number of priority classes per egress port (IEEE 802.1p).
pub const NUM_CLASSES: usize = 8;

pub mod nic;
pub mod pfc;
pub mod queue_series;
pub mod switch;
