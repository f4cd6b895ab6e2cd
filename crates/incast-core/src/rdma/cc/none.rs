//! No congestion control: every QP sends at line rate and relies on PFC
//! (the "PFC only" baseline of the DCQCN and HPCC papers).

use super::{CcCtx, ParamError, RateCc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {}

impl Params {
    /// Nothing to check: there are no parameters.
    pub fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct LineRate {
    rate: f64,
}

impl LineRate {
    pub fn new(_p: &Params, ctx: &CcCtx) -> Self {
        LineRate {
            rate: ctx.line_rate,
        }
    }
}

impl RateCc for LineRate {
    fn rate(&self) -> f64 {
        self.rate
    }
    fn ecn_capable(&self) -> bool {
        false
    }
}
