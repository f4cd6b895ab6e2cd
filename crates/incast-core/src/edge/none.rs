//! No pausing: OWD is still measured, echoed and sampled (the baseline of
//! every edge-pausing comparison, and the gate's transparency check).

use super::{GateView, OwdSample, PauseRule, Threshold};
use crate::rdma::cc::ParamError;
use crate::units::Ps;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }
    pub fn threshold(&self) -> Option<&Threshold> {
        None
    }
}

#[derive(Clone, Debug)]
pub struct Never;

impl Never {
    pub fn new(_p: &Params) -> Self {
        Never
    }
}

impl PauseRule for Never {
    fn on_owd(&mut self, _s: &OwdSample, _g: &GateView) -> Option<Ps> {
        None
    }
}
