//! Checks of `[workload]`: hosts exist, flows and generators are well formed,
//! CDFs load, loads add up to at most 1 per host; and the listed flows
//! (`workload.flows` and `workload.flow_file`) resolved to host indices.

use super::{check_class, HostRef, IncastConfig, ListedFlow, Scenario, ScenarioError, LONG_LIVED};
use crate::files::{read_input_file, MAX_FLOW_FILE_BYTES};
use crate::transport::cc::CcConfig;
use crate::units::Ps;
use crate::workload::cdf::Cdf;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

impl Scenario {
    /// The host a validated [`HostRef`] names.
    pub(crate) fn host_index(&self, r: &HostRef) -> u32 {
        match r {
            HostRef::Index(i) => *i,
            HostRef::Name(n) => self
                .graph
                .host_names
                .iter()
                .position(|x| x == n)
                .expect("validated") as u32,
        }
    }

    /// The class of transport data (and raw frames) where a group names
    /// none: the RDMA data class, or `transport.class`.
    pub(crate) fn data_class(&self) -> u8 {
        let c = &self.config;
        c.rdma.as_ref().map_or(c.transport.class, |r| r.data_class)
    }

    pub(crate) fn host(&self, r: &HostRef, path: &str) -> Result<u32, ScenarioError> {
        let n = self.graph.host_names.len();
        match r {
            HostRef::Index(i) if (*i as usize) < n => Ok(*i),
            HostRef::Index(i) => Err(ScenarioError::new(
                path,
                format!(
                    "host {i} does not exist; the topology has hosts 0..{} ({} hosts)",
                    n - 1,
                    n
                ),
            )),
            HostRef::Name(s) => self
                .graph
                .host_names
                .iter()
                .position(|h| h == s)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    let sample: Vec<_> = self.graph.host_names.iter().take(4).cloned().collect();
                    ScenarioError::new(
                        path,
                        format!(
                            "unknown host `{s}`; hosts are named like {} (or use an index 0..{})",
                            sample.join(", "),
                            n - 1
                        ),
                    )
                }),
        }
    }

    pub(super) fn host_group(
        &self,
        hosts: &Option<Vec<HostRef>>,
        path: &str,
    ) -> Result<Vec<u32>, ScenarioError> {
        match hosts {
            None if self.graph.n_hosts() < 2 => Err(ScenarioError::new(
                path,
                format!(
                    "the topology has {} host; traffic needs a sender and a receiver: \
                     give the topology at least 2 hosts",
                    self.graph.n_hosts()
                ),
            )),
            None => Ok((0..self.graph.host_names.len() as u32).collect()),
            Some(list) => {
                let mut out = Vec::with_capacity(list.len());
                for (i, h) in list.iter().enumerate() {
                    let id = self.host(h, &format!("{path}[{i}]"))?;
                    if out.contains(&id) {
                        return Err(ScenarioError::new(
                            format!("{path}[{i}]"),
                            format!("host {id} is listed twice"),
                        ));
                    }
                    out.push(id);
                }
                if out.len() < 2 {
                    return Err(ScenarioError::new(
                        path,
                        "a host group needs at least 2 hosts (one to send, one to receive)",
                    ));
                }
                Ok(out)
            }
        }
    }

    /// `[workload]`: listed flows, Poisson groups, incasts and packet
    /// generators; fills `listed`, `poisson_cdfs`, `poisson_hosts`,
    /// `incast_hosts` and `incast_cdfs`.
    pub(super) fn validate_workload(&mut self) -> Result<(), ScenarioError> {
        let w = &self.config.workload;
        let mut ccs = vec![self.config.transport.cc.clone()];
        if let (Some(_), Some(name)) = (&self.config.rdma, ccs[0].pull_transport()) {
            return err(
                "transport.cc",
                format!(
                    "{name} is a transport of its own, and this scenario's flows are RDMA queue \
                     pairs ([rdma]): remove [rdma] to run {name}"
                ),
            );
        }
        let mut listed = vec![];
        for (i, f) in w.flows.iter().enumerate() {
            let p = format!("workload.flows[{i}]");
            let times = (f.start.0, f.stop.map(|s| s.0));
            let size = f.size.map(|s| s.0);
            let mut flow = self.listed_flow(&f.src, &f.dst, size, times, f.class, &p)?;
            flow.cc = self.group_cc(&mut ccs, &f.cc, &p)?;
            if let (None, Some(name)) = (size, ccs[flow.cc as usize].pull_transport()) {
                return err(
                    format!("{p}.size"),
                    format!("an {name} flow has a size ({name} numbers its packets): give `size`"),
                );
            }
            listed.push(flow);
        }
        let mut poisson_cc = vec![];
        for (i, g) in w.poisson.iter().enumerate() {
            poisson_cc.push(self.group_cc(&mut ccs, &g.cc, &format!("workload.poisson[{i}]"))?);
        }
        let mut incast_cc = vec![];
        for (i, g) in w.incast.iter().enumerate() {
            incast_cc.push(self.group_cc(&mut ccs, &g.cc, &format!("workload.incast[{i}]"))?);
        }
        let bulk = self.validate_bulk(&mut ccs)?;
        if let Some(file) = &w.flow_file {
            listed.extend(self.read_flow_file(file)?);
        }
        listed.sort_by_key(|f| f.start);
        let (poisson_cdfs, poisson_hosts) = self.validate_poisson()?;
        let (incast_hosts, incast_cdfs) = self.validate_incast()?;
        self.validate_packets()?;
        self.validate_onoff()?;
        crate::host::generators::validate_registered(self)?;
        let w = &self.config.workload;
        let (no_registered, _) = crate::host::generators::registered_entries(w);
        if listed.is_empty()
            && w.poisson.is_empty()
            && w.incast.is_empty()
            && w.packets.is_empty()
            && w.onoff.is_empty()
            && bulk.is_empty()
            && no_registered
        {
            return err(
                "workload",
                "the workload is empty: add [[workload.flows]], a flow_file, [[workload.poisson]], \
                 [[workload.incast]], [[workload.packets]], [[workload.onoff]] or [[workload.bulk]]",
            );
        }
        self.listed = listed;
        self.bulk = bulk;
        self.ccs = ccs;
        self.poisson_cc = poisson_cc;
        self.incast_cc = incast_cc;
        self.poisson_cdfs = poisson_cdfs;
        self.poisson_hosts = poisson_hosts;
        self.incast_hosts = incast_hosts;
        self.incast_cdfs = incast_cdfs;
        Ok(())
    }

    /// Whether the workload has generators that run until `duration`.
    pub(super) fn has_generators(&self) -> bool {
        let w = &self.config.workload;
        !w.poisson.is_empty()
            || w.incast.iter().any(|i| i.load.is_some())
            || !w.packets.is_empty()
            || crate::host::generators::registered_entries(w).1
    }

    #[allow(clippy::type_complexity)]
    fn validate_poisson(&self) -> Result<(Vec<Cdf>, Vec<Vec<u32>>), ScenarioError> {
        let w = &self.config.workload;
        if w.poisson.len() > u16::MAX as usize {
            return err("workload.poisson", "at most 65535 poisson generators");
        }
        let mut cdfs = vec![];
        let mut poisson_hosts = vec![];
        for (i, p) in w.poisson.iter().enumerate() {
            let path = format!("workload.poisson[{i}]");
            if !(p.load > 0.0 && p.load <= 1.0) {
                return err(
                    format!("{path}.load"),
                    format!(
                        "load must be in (0, 1] (a fraction of host link capacity), got {}",
                        p.load
                    ),
                );
            }
            let cdf = Cdf::load(&p.cdf, &self.base_dir)
                .map_err(|m| ScenarioError::new(format!("{path}.cdf"), m))?;
            cdfs.push(cdf);
            poisson_hosts.push(self.host_group(&p.hosts, &format!("{path}.hosts"))?);
            if let Some(sf) = p.small_flows {
                check_class(sf.class, &format!("{path}.small_flows.class"))?;
                if sf.below.0 == 0 {
                    return err(
                        format!("{path}.small_flows.below"),
                        "must be positive (e.g. \"100KB\")",
                    );
                }
            }
            if let Some(cl) = p.class {
                check_class(cl, &format!("{path}.class"))?;
            }
        }
        // Total offered load per host from all Poisson groups must not exceed 1.
        let mut per_host = vec![0.0; self.graph.host_names.len()];
        for (p, hosts) in w.poisson.iter().zip(&poisson_hosts) {
            for &h in hosts {
                per_host[h as usize] += p.load;
            }
        }
        if let Some((h, l)) = per_host.iter().enumerate().find(|(_, &l)| l > 1.0 + 1e-9) {
            return err(
                "workload.poisson",
                format!("the poisson generators offer host {h} a total load of {l:.3}, above 1"),
            );
        }
        Ok((cdfs, poisson_hosts))
    }

    #[allow(clippy::type_complexity)]
    fn validate_incast(&self) -> Result<(Vec<Vec<u32>>, Vec<Option<Cdf>>), ScenarioError> {
        let mut incast_hosts = vec![];
        let mut incast_cdfs = vec![];
        for (i, inc) in self.config.workload.incast.iter().enumerate() {
            let path = format!("workload.incast[{i}]");
            let group = self.host_group(&inc.hosts, &format!("{path}.hosts"))?;
            let mix = incast_mix(inc, &path)?;
            let max_fan = mix.iter().map(|m| m.0).max().unwrap_or(1);
            let receivers = self.incast_receivers(inc, &path)?;
            // The fewest senders an event can have: the group without its receiver.
            let senders = match &receivers {
                Some(rs) => rs
                    .iter()
                    .map(|r| group.iter().filter(|&h| h != r).count())
                    .min()
                    .unwrap_or(0),
                None => group.len() - 1,
            };
            if max_fan as usize > senders {
                return err(
                    format!("{path}.fan_in"),
                    format!(
                        "fan-in {max_fan} needs {max_fan} senders besides the receiver, but the \
                         group has {} hosts ({senders} besides a receiver)",
                        group.len()
                    ),
                );
            }
            match (inc.load, &inc.times) {
                (Some(l), None) if l > 0.0 && l <= 1.0 => {}
                (Some(l), None) => {
                    return err(
                        format!("{path}.load"),
                        format!("load must be in (0, 1], got {l}"),
                    )
                }
                (None, Some(t)) if t.is_empty() => {
                    return err(
                        format!("{path}.times"),
                        "is empty, so there would be no incast: list the event times, e.g. \
                         times = [\"100us\", \"600us\"], or remove this [[workload.incast]]",
                    )
                }
                (None, Some(_)) => {}
                _ => {
                    return err(
                        path,
                        "give exactly one of `load` (Poisson incast events) or `times` (explicit \
                         event times)",
                    )
                }
            }
            let cdf =
                match (&inc.bytes_per_sender, &inc.cdf) {
                    (Some(b), None) if b.0 == 0 => {
                        return err(format!("{path}.bytes_per_sender"), "must be positive")
                    }
                    (Some(_), None) => None,
                    (None, Some(name)) => Some(
                        Cdf::load(name, &self.base_dir)
                            .map_err(|m| ScenarioError::new(format!("{path}.cdf"), m))?,
                    ),
                    _ => return err(
                        path,
                        "give exactly one of `bytes_per_sender` (every sender sends that much) or \
                         `cdf` (each sender's size drawn from a distribution)",
                    ),
                };
            incast_cdfs.push(cdf);
            if let (Some(r), None) = (&inc.receiver, &receivers) {
                let r = self.host(r, &format!("{path}.receiver"))?;
                if !group.contains(&r) {
                    return err(
                        format!("{path}.receiver"),
                        "the receiver must be in the host group",
                    );
                }
            }
            if let Some(cl) = inc.class {
                check_class(cl, &format!("{path}.class"))?;
            }
            incast_hosts.push(group);
        }
        Ok((incast_hosts, incast_cdfs))
    }

    /// An incast group's `receivers`, checked: hosts, not empty, not beside
    /// `receiver`.
    fn incast_receivers(
        &self,
        inc: &super::config::IncastConfig,
        path: &str,
    ) -> Result<Option<Vec<u32>>, ScenarioError> {
        let Some(list) = &inc.receivers else {
            return Ok(None);
        };
        if inc.receiver.is_some() {
            return err(
                format!("{path}.receivers"),
                "give `receiver` (one fixed receiver) or `receivers` (a random one of a list), not both",
            );
        }
        if list.is_empty() {
            return err(
                format!("{path}.receivers"),
                "is empty: list the hosts that receive, e.g. receivers = [4, 5, 6, 7]",
            );
        }
        let hosts = list
            .iter()
            .enumerate()
            .map(|(k, r)| self.host(r, &format!("{path}.receivers[{k}]")))
            .collect::<Result<Vec<u32>, _>>()?;
        Ok(Some(hosts))
    }

    /// `[[workload.onoff]]`: each generator builds (its own checks name
    /// the key), with the hosts' line rates.
    fn validate_onoff(&self) -> Result<(), ScenarioError> {
        let rates = self.host_rates();
        for (i, g) in self.config.workload.onoff.iter().enumerate() {
            g.build(i, 0, &rates, Ps::MAX).map_err(|e| {
                ScenarioError::new(format!("workload.onoff[{i}].{}", e.field), e.message)
            })?;
        }
        Ok(())
    }

    /// Each host's line rate: its NIC port's, or its PCIe link's if that is
    /// slower (`[nic] pcie_rate`). The hosts of a multi-host NIC share the
    /// port: each has its full rate (a load of 0.5 on four hosts offers
    /// twice the port's rate).
    pub fn host_rates(&self) -> Vec<crate::units::Rate> {
        let cap = self.config.nic.pcie_rate.map_or(u64::MAX, |r| r.0 .0);
        self.graph
            .nic_hosts()
            .iter()
            .map(|&owner| {
                let (l, _) = self.graph.ports(crate::topology::NodeRef::Host(owner))[0];
                crate::units::Rate(self.graph.links[l as usize].rate.0.min(cap))
            })
            .collect()
    }

    fn validate_packets(&self) -> Result<(), ScenarioError> {
        for (i, p) in self.config.workload.packets.iter().enumerate() {
            let path = format!("workload.packets[{i}]");
            let s = self.host(&p.src, &format!("{path}.src"))?;
            let d = self.host(&p.dst, &format!("{path}.dst"))?;
            if s == d {
                return err(
                    format!("{path}.dst"),
                    "source and destination are the same host",
                );
            }
            if p.size.0 < 64 || p.size.0 > 65_535 {
                return err(
                    format!("{path}.size"),
                    "packet size must be in [64, 65535] bytes",
                );
            }
            if let Some(cl) = p.class {
                check_class(cl, &format!("{path}.class"))?;
            }
        }
        Ok(())
    }

    pub(super) fn validate_edge(&mut self) -> Result<(), ScenarioError> {
        let Some(e) = &self.config.edge else {
            return Ok(());
        };
        e.rule
            .validate()
            .map_err(|p| ScenarioError::new(format!("edge.rule.{}", p.field), p.message))?;
        e.clock
            .validate()
            .map_err(|p| ScenarioError::new(format!("edge.clock.{}", p.field), p.message))?;
        if let Some(curve) = &e.drop_curve {
            curve.validate().map_err(|p| {
                ScenarioError::new(format!("edge.drop_curve.{}", p.field), p.message)
            })?;
        }
        self.edge_hosts = match &e.hosts {
            None => (0..self.graph.host_names.len() as u32).collect(),
            Some(list) => {
                let mut out = Vec::with_capacity(list.len());
                for (i, h) in list.iter().enumerate() {
                    out.push(self.host(h, &format!("edge.hosts[{i}]"))?);
                }
                if out.is_empty() {
                    return Err(ScenarioError::new(
                        "edge.hosts",
                        "is empty; list the senders that use the gate, or remove the key for all hosts",
                    ));
                }
                out
            }
        };
        Ok(())
    }

    /// A listed flow of `size` bytes (`None`: long-lived) from `times.0`
    /// until `times.1` (`None`: until its last byte is acknowledged).
    fn listed_flow(
        &self,
        src: &HostRef,
        dst: &HostRef,
        size: Option<u64>,
        times: (Ps, Option<Ps>),
        class: Option<u8>,
        p: &str,
    ) -> Result<ListedFlow, ScenarioError> {
        let (start, stop) = times;
        let s = self.host(src, &format!("{p}.src"))?;
        let d = self.host(dst, &format!("{p}.dst"))?;
        if s == d {
            return Err(ScenarioError::new(
                format!("{p}.dst"),
                format!("source and destination are both host {s}"),
            ));
        }
        let size =
            match (size, stop) {
                (Some(size), _) if size == 0 || size > crate::units::MAX_BYTES => {
                    return Err(ScenarioError::new(
                        format!("{p}.size"),
                        format!("a flow carries 1 byte to 1 TiB (2^40 bytes), not {size}"),
                    ))
                }
                (Some(size), _) => size,
                (None, Some(_)) => LONG_LIVED,
                (None, None) => return Err(ScenarioError::new(
                    p,
                    "the flow has neither `size` nor `stop`, so it would never end: give `size` \
                     (bytes to send, e.g. size = \"1MB\") or `stop` (a long-lived flow that \
                     sends until then, e.g. stop = \"10ms\"), or both",
                )),
            };
        if let Some(stop) = stop {
            self.check_stop(start, stop, &format!("{p}.stop"))?;
        }
        if start > crate::units::MAX_TIME {
            return Err(ScenarioError::new(
                format!("{p}.start"),
                "starts after 2^62 ps (about 53 days), the longest supported time",
            ));
        }
        let class = class.unwrap_or(self.data_class());
        check_class(class, &format!("{p}.class"))?;
        Ok(ListedFlow {
            src: s,
            dst: d,
            size,
            start,
            stop: stop.unwrap_or(Ps::MAX),
            class,
            cc: 0,
        })
    }

    /// The index in `ccs` of a workload group's own congestion control
    /// (`cc` at `path`), adding it when it is new; 0 (`transport.cc`) when it
    /// names none.
    pub(super) fn group_cc(
        &self,
        ccs: &mut Vec<CcConfig>,
        cc: &Option<CcConfig>,
        path: &str,
    ) -> Result<u8, ScenarioError> {
        let Some(cc) = cc else { return Ok(0) };
        if self.config.rdma.is_some() {
            return Err(ScenarioError::new(
                format!("{path}.cc"),
                "a workload group's own `cc` is a TCP congestion control, and this scenario's \
                 flows are RDMA queue pairs ([rdma]); set the rate control in [rdma].cc, or \
                 remove [rdma] to run TCP",
            ));
        }
        cc.validate()
            .map_err(|e| ScenarioError::new(format!("{path}.cc.{}", e.field), e.message))?;
        let key = serde_json::to_value(cc).ok();
        if let Some(i) = ccs.iter().position(|c| serde_json::to_value(c).ok() == key) {
            return Ok(i as u8);
        }
        if ccs.len() == 256 {
            return Err(ScenarioError::new(
                format!("{path}.cc"),
                "more than 256 distinct congestion controls in one run",
            ));
        }
        ccs.push(cc.clone());
        Ok((ccs.len() - 1) as u8)
    }

    fn read_flow_file(&self, file: &str) -> Result<Vec<ListedFlow>, ScenarioError> {
        let path = self.base_dir.join(file);
        let field = "workload.flow_file";
        let text = read_input_file(&path, MAX_FLOW_FILE_BYTES)
            .map_err(|e| ScenarioError::new(field, format!("flow file {e}")))?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let header: Vec<String> = match lines.next() {
            Some((_, h)) => h.split(',').map(|s| s.trim().to_string()).collect(),
            None => {
                return Err(ScenarioError::new(
                    field,
                    format!("{} is empty", path.display()),
                ))
            }
        };
        let expected = ["src", "dst", "size_bytes", "start_ns"];
        if header.len() < 4
            || header[..4] != expected
            || (header.len() == 5 && header[4] != "class")
            || header.len() > 5
        {
            return Err(ScenarioError::new(
                field,
                format!("{}: the header must be `src,dst,size_bytes,start_ns` (optionally `,class`), got `{}`", path.display(), header.join(",")),
            ));
        }
        let mut out = vec![];
        for (ln, line) in lines {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let where_ = format!("{field} ({}:{})", path.display(), ln + 1);
            if cols.len() != header.len() {
                return Err(ScenarioError::new(
                    where_,
                    format!("expected {} columns, got {}", header.len(), cols.len()),
                ));
            }
            let host = |s: &str| -> HostRef {
                s.parse::<u32>()
                    .map(HostRef::Index)
                    .unwrap_or(HostRef::Name(s.to_string()))
            };
            let size: u64 = cols[2].parse().map_err(|_| {
                ScenarioError::new(
                    where_.clone(),
                    format!("size_bytes `{}` is not a whole number", cols[2]),
                )
            })?;
            let start_ns: f64 = cols[3]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    ScenarioError::new(
                        where_.clone(),
                        format!("start_ns `{}` is not a non-negative number", cols[3]),
                    )
                })?;
            let class = match cols.get(4) {
                Some(c) => Some(c.parse::<u8>().map_err(|_| {
                    ScenarioError::new(where_.clone(), format!("class `{c}` is not 0..7"))
                })?),
                None => None,
            };
            out.push(self.listed_flow(
                &host(cols[0]),
                &host(cols[1]),
                Some(size),
                ((start_ns * 1000.0).round() as Ps, None),
                class,
                &where_,
            )?);
        }
        Ok(out)
    }
}

pub(super) fn incast_mix(inc: &IncastConfig, path: &str) -> Result<Vec<(u32, f64)>, ScenarioError> {
    let mix = match (&inc.fan_in, &inc.fan_in_mix) {
        (Some(f), None) => vec![(*f, 1.0)],
        (None, Some(m)) if !m.is_empty() => m.clone(),
        _ => {
            return Err(ScenarioError::new(
                path,
                "give exactly one of `fan_in` (e.g. 8) or `fan_in_mix` (e.g. [[1, 0.5], [2, 0.3], [4, 0.2]])",
            ))
        }
    };
    let total: f64 = mix.iter().map(|m| m.1).sum();
    if mix.iter().any(|m| m.0 == 0 || m.1.is_nan() || m.1 < 0.0) {
        return Err(ScenarioError::new(
            format!("{path}.fan_in_mix"),
            "each fan-in must be at least 1 and each probability non-negative",
        ));
    }
    if (total - 1.0).abs() > 1e-6 {
        return Err(ScenarioError::new(
            format!("{path}.fan_in_mix"),
            format!("the probabilities add up to {total}, not 1"),
        ));
    }
    Ok(mix)
}
