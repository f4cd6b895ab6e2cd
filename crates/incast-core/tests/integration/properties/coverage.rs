//! Which features a generated case uses, for the coverage table
//! (`generated_cases_cover_every_feature`).

use super::case::*;

/// The feature labels of a case ("topology=fat_tree", "pfc.watchdog=drop", ...).
pub fn features(c: &Case) -> Vec<String> {
    let mut f: Vec<String> = vec![format!("topology={}", c.topo.kind())];
    if !c.trim_classes().is_empty() {
        f.push("switch.trim".into());
    }
    if let Topo::Dumbbell { middle, .. } = &c.topo {
        f.push(format!(
            "topology.explicit.middle_switches={}",
            middle.len()
        ));
    }
    let n = c.n_hosts();
    f.push(
        match n {
            0..=4 => "hosts=2-4",
            5..=9 => "hosts=5-9",
            _ => "hosts=10+",
        }
        .into(),
    );
    let sw = &c.switch;
    f.push(format!("switch.buffer={}", sw.buffer));
    f.push(ecn_label("switch.ecn", &sw.ecn));
    f.push(match sw.admission {
        Admission::Dynamic(_) => "switch.admission=dynamic".into(),
        Admission::Static(_) => "switch.admission=static".into(),
    });
    if sw.dwrr.is_some() {
        f.push("switch.scheduler=dwrr".into());
    }
    if sw.class0.is_some() {
        f.push("switch.classes override".into());
    }
    f.push(format!("data_class={}", c.data_class));
    transport_features(&c.transport, &mut f);
    if let Some(p) = &c.pfc {
        pfc_features(c, p, &mut f);
    }
    if let Some(ci) = &c.ci {
        ci_features(c, ci, &mut f);
    }
    if let Some(e) = &c.edge {
        edge_features(e, &mut f);
    }
    workload_features(c, &mut f);
    if c.metrics.is_some() {
        f.push("metrics".into());
    }
    f.sort();
    f.dedup();
    f
}

fn transport_features(transport: &Transport, f: &mut Vec<String>) {
    match transport {
        Transport::Tcp(t) => {
            f.push(
                match t.cc {
                    TcpCc::NewReno => "tcp.cc=newreno",
                    TcpCc::Dctcp => "tcp.cc=dctcp",
                    TcpCc::Cubic => "tcp.cc=cubic",
                    TcpCc::Bbr => "tcp.cc=bbr",
                    TcpCc::Swift => "tcp.cc=swift",
                    TcpCc::DctcpWith { .. } => "tcp.cc=dctcp(params)",
                    TcpCc::Strack => "tcp.cc=strack",
                }
                .into(),
            );
            if t.delayed_ack.is_some() {
                f.push("tcp.delayed_ack".into());
            }
            if t.ack_class.is_some() {
                f.push("tcp.ack_class".into());
            }
            if t.mtu != 1500 {
                f.push("tcp.mtu!=1500".into());
            }
        }
        Transport::Rdma(r) => {
            f.push(
                match r.cc {
                    RdmaCc::None => "rdma.cc=none",
                    RdmaCc::Dcqcn { paper: false } => "rdma.cc=dcqcn(mellanox)",
                    RdmaCc::Dcqcn { paper: true } => "rdma.cc=dcqcn(paper)",
                    RdmaCc::Timely => "rdma.cc=timely",
                    RdmaCc::Hpcc { .. } => "rdma.cc=hpcc",
                    RdmaCc::Dctcp => "rdma.cc=dctcp",
                }
                .into(),
            );
            f.push(format!("rdma.window={}", r.window));
            if r.cnp_ack_flag {
                f.push("rdma.cnp_mode=ack_flag".into());
            }
            if r.ack_interval > 1 {
                f.push("rdma.ack_interval>1".into());
            }
            if r.back_to_chunk {
                f.push("rdma.back_to_chunk".into());
            }
            if !r.rate_bound {
                f.push("rdma.rate_bound=false".into());
            }
        }
    }
}

fn pfc_features(c: &Case, p: &PfcCase, f: &mut Vec<String>) {
    f.push("pfc".into());
    f.push(
        match p.threshold {
            PfcThreshold::Dynamic { .. } => "pfc.threshold=dynamic",
            PfcThreshold::Static { .. } => "pfc.threshold=static",
        }
        .into(),
    );
    f.push(
        if p.until_resume {
            "pfc.mode=until_resume"
        } else {
            "pfc.mode=quanta"
        }
        .into(),
    );
    if p.headroom.is_some() {
        f.push("pfc.headroom explicit".into());
    }
    if p.reserve > 0 {
        f.push("pfc.reserve".into());
    }
    if p.response_ns > 0 {
        f.push("pfc.response_time".into());
    }
    if !p.hosts_obey {
        f.push("pfc.hosts_obey=false".into());
    }
    if p.class5 {
        f.push("pfc.classes+5".into());
    }
    match p.watchdog {
        None => {}
        Some(Watchdog::Report { .. }) => f.push("pfc.watchdog=report".into()),
        Some(Watchdog::Drop { .. }) => f.push("pfc.watchdog=drop".into()),
    }
    let g = c.topo.graph();
    f.push(match c.lossless_exception(&g) {
        None => "pfc promises lossless".into(),
        Some(why) => format!("pfc not lossless: {why}"),
    });
    if c.workload_uses_lossless() {
        f.push("pfc with traffic in a lossless class".into());
    }
}

fn ci_features(c: &Case, ci: &CiCase, f: &mut Vec<String>) {
    f.push("ci".into());
    f.push(format!("ci.cfq={:?}", c.cfqs()));
    f.push(format!("ci.order={}", ci.order));
    f.push(format!("ci.cip.reliability={}", ci.reliability));
    f.push(
        match ci.detect {
            Detect::Arriving => "ci.detect=arriving",
            Detect::Sampled { .. } => "ci.detect=sampled",
            Detect::Top { .. } => "ci.detect=top",
        }
        .into(),
    );
    if ci.loss > 0.0 {
        f.push("ci.cip.loss>0".into());
    }
    if c.pfc.is_some() {
        f.push("ci with pfc".into());
    }
}

fn edge_features(e: &EdgeCase, f: &mut Vec<String>) {
    f.push(match &e.rule {
        EdgeRule::Named(n) => format!("edge.rule={n}"),
        EdgeRule::SmartPauseFixed { .. } => "edge.rule=smart_pause_fixed(params)".into(),
        EdgeRule::OnRamp { .. } => "edge.rule=on_ramp(params)".into(),
        EdgeRule::DynamicByHops => "edge.rule=smart_pause_dynamic(by_switch_hops)".into(),
    });
    f.push(format!("edge.clock={}", e.clock));
    if e.hosts.is_some() {
        f.push("edge.hosts subset".into());
    }
}

fn workload_features(c: &Case, f: &mut Vec<String>) {
    let w = &c.workload;
    if w.burst.is_some() {
        f.push("workload burst in class 3".into());
    }
    if !w.flows.is_empty() {
        f.push("workload.flows".into());
        if w.flows.iter().any(|x| (x.size as u64) < c.segment().0) {
            f.push("workload.flows smaller than a segment".into());
        }
    }
    for p in &w.poisson {
        f.push(format!(
            "workload.poisson cdf={}",
            cdf_names()[p.cdf % cdf_names().len()]
        ));
        if p.cc.is_some() && matches!(c.transport, Transport::Tcp(_)) {
            f.push("poisson group with its own tcp cc".into());
        }
        if p.cc == Some(NDP) && matches!(c.transport, Transport::Tcp(_)) {
            f.push("poisson group running ndp".into());
        }
        if p.cc == Some(EQDS) && matches!(c.transport, Transport::Tcp(_)) {
            f.push("poisson group running eqds".into());
        }
        if p.small_flows.is_some() {
            f.push("workload.poisson.small_flows".into());
        }
        if p.hosts.is_some() {
            f.push("workload.poisson.hosts".into());
        }
    }
    if !w.poisson.is_empty() {
        f.push("workload.poisson".into());
    }
    for i in &w.incasts {
        f.push("workload.incast".into());
        f.push(
            match (&i.when, &i.size, &i.fan_in) {
                (IncastWhen::Times(_), _, _) => "workload.incast times",
                (IncastWhen::Load(_), _, _) => "workload.incast load",
            }
            .into(),
        );
        if i.size.is_err() {
            f.push("workload.incast cdf".into());
        }
        if matches!(i.fan_in, FanIn::Mix) {
            f.push("workload.incast fan_in_mix".into());
        }
    }
    if !w.packets.is_empty() {
        f.push("workload.packets".into());
    }
}

fn ecn_label(key: &str, e: &Ecn) -> String {
    match e {
        Ecn::Off => format!("{key}=off"),
        Ecn::Step { dequeue, .. } => {
            format!("{key}=step{}", if *dequeue { "(dequeue)" } else { "" })
        }
        Ecn::Red { dequeue, .. } => format!("{key}=red{}", if *dequeue { "(dequeue)" } else { "" }),
        Ecn::RedByRate { .. } => format!("{key}=red_by_rate"),
    }
}

/// Features every default-sized sample must contain (one label per
/// generator choice that matters), so that a generator change that drops
/// one is noticed.
pub const REQUIRED: &[&str] = &[
    "topology=single_switch",
    "topology=leaf_spine",
    "topology=fat_tree",
    "topology=explicit",
    "tcp.cc=newreno",
    "tcp.cc=dctcp",
    "tcp.cc=dctcp(params)",
    "tcp.cc=cubic",
    "tcp.cc=bbr",
    "tcp.cc=swift",
    "tcp.cc=strack",
    "poisson group with its own tcp cc",
    "poisson group running ndp",
    "poisson group running eqds",
    "switch.trim",
    "tcp.delayed_ack",
    "rdma.cc=none",
    "rdma.cc=dcqcn(mellanox)",
    "rdma.cc=dcqcn(paper)",
    "rdma.cc=timely",
    "rdma.cc=hpcc",
    "rdma.cc=dctcp",
    "rdma.window=none",
    "rdma.window=fixed",
    "rdma.window=variable",
    "pfc",
    "pfc.threshold=dynamic",
    "pfc.threshold=static",
    "pfc.mode=until_resume",
    "pfc.mode=quanta",
    "pfc.headroom explicit",
    "pfc.watchdog=report",
    "pfc.watchdog=drop",
    "pfc promises lossless",
    "pfc with traffic in a lossless class",
    "ci",
    "ci with pfc",
    "ci.order=marker",
    "ci.order=counter",
    "ci.order=none",
    "ci.detect=arriving",
    "ci.detect=sampled",
    "ci.detect=top",
    "edge.rule=on_ramp",
    "edge.rule=smart_pause_fixed(params)",
    "edge.rule=on_ramp(params)",
    "switch.ecn=off",
    "switch.ecn=step",
    "switch.ecn=red",
    "switch.ecn=red_by_rate",
    "switch.scheduler=dwrr",
    "switch.admission=static",
    "workload.flows",
    "workload burst in class 3",
    "workload.flows smaller than a segment",
    "workload.poisson",
    "workload.incast times",
    "workload.incast load",
    "workload.incast cdf",
    "workload.packets",
];
