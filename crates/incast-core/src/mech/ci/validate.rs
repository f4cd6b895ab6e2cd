//! `[switch.ci]`'s checks against the rest of the scenario (IEEE 802.1Qcz
//! congestion isolation): the CI classes and their congested-flow queues,
//! their order under strict priority, PFC on both, the control classes,
//! and the table's and CIPs' options.

use crate::scenario::config::EcmpRule;
use crate::scenario::{check_class, Scenario, ScenarioError, SchedulerKind};

/// `[switch.ci]`: classes, queue order and the CIP options.
pub(crate) fn validate(ci: &super::CiConfig, sc: &Scenario) -> Result<(), ScenarioError> {
    if ci.queues.is_empty() {
        return Err(ScenarioError::new(
            "switch.ci.queues",
            "list at least one CI class, e.g. queues = [{ class = 3, cfq = [2] }]",
        ));
    }
    let lossless: Vec<u8> = sc
        .config
        .switch
        .pfc
        .as_ref()
        .map_or(vec![], |p| p.classes.clone());
    let strict = sc.config.switch.scheduler == SchedulerKind::Strict;
    let mut used = 0u8;
    for (i, q) in ci.queues.iter().enumerate() {
        let path = format!("switch.ci.queues[{i}]");
        check_class(q.class, &format!("{path}.class"))?;
        if used & (1 << q.class) != 0 {
            return Err(ScenarioError::new(
                format!("{path}.class"),
                format!(
                    "class {} is already a CI class or a congested-flow queue",
                    q.class
                ),
            ));
        }
        used |= 1 << q.class;
        if q.cfq.is_empty() {
            return Err(ScenarioError::new(
                format!("{path}.cfq"),
                "give at least one congested-flow queue, e.g. cfq = [2]",
            ));
        }
        for (j, &c) in q.cfq.iter().enumerate() {
            let p = format!("{path}.cfq[{j}]");
            check_class(c, &p)?;
            if used & (1 << c) != 0 {
                return Err(ScenarioError::new(
                    p,
                    format!("class {c} is already a CI class or a congested-flow queue"),
                ));
            }
            used |= 1 << c;
            if strict && c >= q.class {
                return Err(ScenarioError::new(
                    p,
                    format!(
                        "a congested-flow queue is scheduled below its non-congested \
                         queue: under strict priority use a class below {}",
                        q.class
                    ),
                ));
            }
            if lossless.contains(&q.class) && !lossless.contains(&c) {
                return Err(ScenarioError::new(
                    p,
                    format!(
                        "class {c} isolates flows of lossless class {}: add {c} to \
                         switch.pfc.classes so it is paused on its own",
                        q.class
                    ),
                ));
            }
        }
    }
    let t = &sc.config.transport;
    let mut ctrl = vec![("transport.ack_class", t.ack_class)];
    if let Some(r) = &sc.config.rdma {
        ctrl.push(("rdma.ctrl_class", Some(r.ctrl_class)));
    }
    for (path, c) in ctrl {
        if let Some(c) = c {
            if ci.cfq_mask() & (1 << c) != 0 {
                return Err(ScenarioError::new(
                    path,
                    format!("class {c} is a congested-flow queue of switch.ci; use another"),
                ));
            }
        }
    }
    if ci.threshold.0 == 0 {
        return Err(ScenarioError::new(
            "switch.ci.threshold",
            "must be positive (bytes in the non-congested queue)",
        ));
    }
    if ci.age.0 == 0 {
        return Err(ScenarioError::new("switch.ci.age", "must be positive"));
    }
    if ci.max_flows == 0 {
        return Err(ScenarioError::new(
            "switch.ci.max_flows",
            "must be at least 1",
        ));
    }
    match ci.detect {
        super::Detect::Sampled { every } | super::Detect::Top { every, .. } if every.0 == 0 => {
            return Err(ScenarioError::new(
                "switch.ci.detect.every",
                "must be positive (bytes between samples)",
            ));
        }
        super::Detect::Top { k: 0, .. } => {
            return Err(ScenarioError::new(
                "switch.ci.detect.k",
                "must be at least 1",
            ));
        }
        _ => {}
    }
    let cip = &ci.cip;
    if !(0.0..1.0).contains(&cip.loss) {
        return Err(ScenarioError::new(
            "switch.ci.cip.loss",
            format!("a probability in [0, 1), got {}", cip.loss),
        ));
    }
    if cip.copies == 0 {
        return Err(ScenarioError::new(
            "switch.ci.cip.copies",
            "must be at least 1",
        ));
    }
    if cip.interval.0 == 0 {
        return Err(ScenarioError::new(
            "switch.ci.cip.interval",
            "must be positive",
        ));
    }
    validate_combinations(sc)
}

/// What congestion isolation cannot work with: packet spraying, the
/// input-partitioned buffer, trimming. Each error names the key of the
/// other feature, which is what these checks had before they moved here.
fn validate_combinations(sc: &Scenario) -> Result<(), ScenarioError> {
    let c = &sc.config;
    if c.routing
        .as_ref()
        .is_some_and(|r| r.ecmp == EcmpRule::Spray)
    {
        return Err(ScenarioError::new(
            "routing.ecmp",
            "\"spray\" gives each packet its own hash, and congestion isolation ([switch.ci]) \
             knows a flow by its packets' hash; use ecmp = \"flow\" (the default) with it",
        ));
    }
    if c.switch.input_buffer.is_some() {
        return Err(ScenarioError::new(
            "switch.input_buffer",
            "congestion isolation needs the shared buffer's PFC; remove [switch.ci] or [switch.input_buffer]",
        ));
    }
    if c.switch.trim.is_some() {
        return Err(ScenarioError::new(
            "switch.trim.classes",
            "trimming with congestion isolation is not modelled: remove [switch.ci] or [switch.trim]",
        ));
    }
    Ok(())
}
