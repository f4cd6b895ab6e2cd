//! Does the switch buffer leave every class room? Checked before anything
//! runs, on every switch of the graph, with the arithmetic in the message.
//!
//! How a switch divides its `buffer` B (see `net/switch.rs` and `net/pfc.rs`;
//! the numbers are the ones `Simulation::new` sets up):
//!
//! * with PFC, every switch port reserves, for each lossless class, its
//!   headroom `h(port)` (`switch.pfc.headroom`, or [`headroom_formula`](crate::params::pfc::headroom_formula) from
//!   the port's rate and delay, the largest data packet and
//!   `response_time`) and its `reserve`;
//! * the lossless classes share what is left, `B - Σ headroom - Σ reserve`:
//!   the shared pool from which the dynamic XOFF threshold is a fraction. A
//!   pool that cannot hold one packet means a pause for every packet;
//! * the lossy classes (TCP traffic, RDMA ACKs/NACKs/CNPs unless their class
//!   is lossless, packet generators) may use `B - Σ headroom` and never the
//!   headroom. If that cannot hold one of their packets, every such packet is
//!   dropped: an RDMA flow whose ACKs are dropped retries forever (issue 17:
//!   200 KB buffer, 100 KB headroom on a 3-port switch);
//! * a static admission limit below a class's largest packet admits nothing;
//! * without PFC, the whole buffer must hold the largest packet of every class.
//!
//! These are the conditions under which a class can make no progress at all,
//! so they are errors; a buffer that is merely small is the user's experiment.

use super::{AdmissionConfig, Scenario, ScenarioError};
use crate::params::pfc::{Headroom, PfcConfig};
use crate::params::NUM_CLASSES;
use crate::topology::NodeRef;
use crate::units::Bytes;

/// What a class carries at the switches: its largest packet and what it is.
#[derive(Clone, Default)]
struct ClassUse {
    largest: Bytes,
    what: Vec<&'static str>,
}

impl ClassUse {
    fn add(&mut self, size: Bytes, what: &'static str) {
        self.largest = self.largest.max(size);
        if !self.what.contains(&what) {
            self.what.push(what);
        }
    }
    fn describe(&self) -> String {
        format!("{}, up to {} B", self.what.join(", "), self.largest)
    }
}

/// One switch's division of the buffer under PFC.
struct PfcBudget {
    switch: usize,
    ports: usize,
    /// (headroom per lossless class, ports with it), by headroom.
    headroom_groups: Vec<(Bytes, usize)>,
    total_headroom: Bytes,
    total_reserve: Bytes,
}

impl PfcBudget {
    /// "3 ports x 100000 B x 1 lossless class", or with ports of several
    /// headrooms "(16 ports x 27214 B + 4 ports x 102014 B) x 2 lossless classes".
    fn headroom_terms(&self, classes: usize) -> String {
        let terms: Vec<String> = self
            .headroom_groups
            .iter()
            .map(|(h, n)| format!("{n} port{} x {h} B", if *n == 1 { "" } else { "s" }))
            .collect();
        let per_class = if classes == 1 {
            "1 lossless class".to_string()
        } else {
            format!("{classes} lossless classes")
        };
        match terms.len() {
            1 => format!("{} x {per_class}", terms[0]),
            _ => format!("({}) x {per_class}", terms.join(" + ")),
        }
    }
}

impl Scenario {
    /// The largest packet of each class at the switches, and what it carries
    /// (`moves`: a mechanism's `(from, to, what)`, class `from`'s packets
    /// may join class `to`'s queues as `what`).
    fn class_uses(&self, moves: &[(u8, u8, &'static str)]) -> Vec<ClassUse> {
        let c = &self.config;
        let mut uses = vec![ClassUse::default(); NUM_CLASSES];
        let w = &c.workload;
        let (data_class, data, acks): (u8, Bytes, Vec<(u8, Bytes, &'static str)>) = match &c.rdma {
            Some(r) => (
                r.data_class,
                r.data_wire(r.payload) as Bytes,
                vec![(
                    r.ctrl_class,
                    r.ack_size.max(r.cnp_size) as Bytes,
                    "RDMA ACKs, NACKs and CNPs",
                )],
            ),
            None => (c.transport.class, c.transport.mtu as Bytes, vec![]),
        };
        let tcp_ack = c.transport.ack_size as Bytes;
        let flow_class = |class: u8, uses: &mut [ClassUse]| {
            uses[class as usize].add(data, "data packets");
            if c.rdma.is_none() {
                let ack = c.transport.ack_class.unwrap_or(class);
                uses[ack as usize].add(tcp_ack, "TCP ACKs");
            }
        };
        let has_flows = !self.listed.is_empty()
            || !self.bulk.is_empty()
            || !w.poisson.is_empty()
            || !w.incast.is_empty();
        if has_flows {
            for class in self.listed.iter().map(|f| f.class) {
                flow_class(class, &mut uses);
            }
            for class in self.bulk.iter().map(|b| b.class) {
                flow_class(class, &mut uses);
            }
            for p in &w.poisson {
                flow_class(p.class.unwrap_or(data_class), &mut uses);
                if let Some(sf) = p.small_flows {
                    flow_class(sf.class, &mut uses);
                }
            }
            for i in &w.incast {
                flow_class(i.class.unwrap_or(data_class), &mut uses);
            }
            for (class, size, what) in acks {
                uses[class as usize].add(size, what);
            }
        }
        for p in &w.packets {
            uses[p.class.unwrap_or(data_class) as usize].add(p.size.0, "generated packets");
        }
        // A mechanism may move a class's packets into other classes
        // (congestion isolation: into its congested-flow queues).
        for &(from, to, what) in moves {
            let largest = uses[from as usize].largest;
            if largest > 0 {
                uses[to as usize].add(largest, what);
            }
        }
        uses
    }

    /// The PFC division of switch `switch`'s buffer, as `Simulation::new` sets it up.
    fn pfc_budget(&self, pc: &PfcConfig, switch: usize, lossless: usize) -> PfcBudget {
        let c = &self.config;
        let mtu = match &c.rdma {
            Some(r) => r.data_wire(r.payload),
            None => c.transport.mtu,
        };
        let ports = self.graph.ports(NodeRef::Switch(switch as u32));
        let mut groups: Vec<(Bytes, usize)> = vec![];
        let mut total_headroom: Bytes = 0;
        for &(link, _) in ports {
            let l = &self.graph.links[link as usize];
            let h = pc.port_headroom(l.rate, l.delay, mtu);
            total_headroom = total_headroom.saturating_add(h.saturating_mul(lossless as Bytes));
            match groups.iter_mut().find(|g| g.0 == h) {
                Some(g) => g.1 += 1,
                None => groups.push((h, 1)),
            }
        }
        groups.sort_unstable();
        PfcBudget {
            switch,
            ports: ports.len(),
            headroom_groups: groups,
            total_headroom,
            total_reserve: pc
                .reserve
                .0
                .saturating_mul(ports.len() as Bytes * lossless as Bytes),
        }
    }

    /// Every class in use has room in every switch's buffer (module docs).
    /// `moves`: the mechanisms' moves of packets between classes
    /// ([`SwitchConfig::class_moves`](super::SwitchConfig::class_moves)).
    pub(super) fn validate_buffer(
        &self,
        moves: &[(u8, u8, &'static str)],
    ) -> Result<(), ScenarioError> {
        let sw = &self.config.switch;
        let buffer = sw.buffer.0;
        let uses = self.class_uses(moves);
        self.check_static_limits(&uses)?;
        let Some(pc) = &sw.pfc else {
            if let Some((c, u)) = uses.iter().enumerate().find(|(_, u)| u.largest > buffer) {
                return Err(ScenarioError::new(
                    "switch.buffer",
                    format!(
                        "the buffer of {buffer} B is smaller than one packet of class {c} ({}): \
                         every such packet would be dropped; make the buffer at least {} B",
                        u.describe(),
                        u.largest
                    ),
                ));
            }
            return Ok(());
        };
        let lossless: Vec<u8> = (0..NUM_CLASSES as u8)
            .filter(|c| pc.classes.contains(c))
            .collect();
        let key = if pc.headroom.is_some() {
            "switch.pfc.headroom"
        } else {
            "switch.buffer"
        };
        // The switch that leaves the least room decides.
        let Some(worst) = (0..self.graph.n_switches())
            .map(|s| self.pfc_budget(pc, s, lossless.len()))
            .max_by_key(|b| (b.total_headroom.saturating_add(b.total_reserve), b.ports))
        else {
            return Ok(());
        };
        let name = &self.graph.switch_names[worst.switch];
        let reserved = worst.total_headroom.saturating_add(worst.total_reserve);
        let pool = buffer.saturating_sub(reserved);
        let lossy_room = buffer.saturating_sub(worst.total_headroom);
        let reserve = if worst.total_reserve > 0 {
            format!(
                " and reserve {} ports x {} x {} B = {} B",
                worst.ports,
                lossless.len(),
                pc.reserve.0,
                worst.total_reserve
            )
        } else {
            String::new()
        };
        let arithmetic = format!(
            "on switch `{name}`, PFC headroom takes {} = {} B{reserve} of the {buffer} B buffer",
            worst.headroom_terms(lossless.len()),
            worst.total_headroom,
        );
        let fix = |need: Bytes, per_port: Bytes| {
            let headroom_fix = match pc.headroom {
                Some(Headroom::Fixed(h)) if worst.ports > 0 && !lossless.is_empty() => {
                    let most = per_port / (worst.ports * lossless.len()) as Bytes;
                    format!(
                        ", or lower switch.pfc.headroom from {} B to at most {most} B (omit it \
                         to size each port's headroom from its rate and delay)",
                        h.0
                    )
                }
                _ => String::new(),
            };
            format!(
                "raise switch.buffer to at least {} B{headroom_fix}",
                reserved.saturating_add(need)
            )
        };
        for &c in &lossless {
            let u = &uses[c as usize];
            if u.largest > 0 && pool < u.largest {
                let allowed = buffer.saturating_sub(worst.total_reserve.saturating_add(u.largest));
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "{arithmetic}, leaving a shared pool of {pool} B for lossless class {c} \
                         ({}), less than one packet, so every packet would pause its sender \
                         (lossy classes may use buffer - headroom = {lossy_room} B): {}",
                        u.describe(),
                        fix(u.largest, allowed)
                    ),
                ));
            }
        }
        for (c, u) in uses.iter().enumerate() {
            if u.largest > 0 && !lossless.contains(&(c as u8)) && lossy_room < u.largest {
                let allowed = buffer.saturating_sub(u.largest);
                let need = u.largest.saturating_sub(worst.total_reserve);
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "{arithmetic}, leaving lossy class {c} ({}) buffer - headroom = \
                         {lossy_room} B, less than one packet, so all of it would be dropped \
                         (an RDMA flow whose ACKs are dropped never finishes): {}",
                        u.describe(),
                        fix(need, allowed)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A static admission limit below a class's largest packet admits nothing.
    fn check_static_limits(&self, uses: &[ClassUse]) -> Result<(), ScenarioError> {
        let sw = &self.config.switch;
        let lossless = sw.pfc.as_ref().map_or(vec![], |p| p.classes.clone());
        for (c, u) in uses.iter().enumerate() {
            if u.largest == 0 || lossless.contains(&(c as u8)) {
                continue; // PFC classes have no egress admission limit
            }
            let (key, adm) = match sw.classes.iter().position(|x| x.class as usize == c) {
                Some(i) if sw.classes[i].admission.is_some() => (
                    format!("switch.classes[{i}].admission.limit"),
                    sw.classes[i].admission.expect("checked"),
                ),
                _ => ("switch.admission.limit".to_string(), sw.admission),
            };
            if let AdmissionConfig::Static { limit } = adm {
                if limit.0 < u.largest {
                    return Err(ScenarioError::new(
                        key,
                        format!(
                            "a queue limit of {} B cannot hold one packet of class {c} ({}): \
                             every such packet would be dropped; make it at least {} B",
                            limit.0,
                            u.describe(),
                            u.largest
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
