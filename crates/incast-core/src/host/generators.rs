//! The traffic generators' element: their events start flows (or send
//! datagrams) and schedule the generator's next arrival.
//!
//! The generators themselves ([`crate::workload::generators`]) know only
//! their next arrival time and what it asks for; this file keeps them and
//! turns their arrivals into flows.
//!
//! Every arrival is one event, [`Ev::Gen`], naming a *source*: a generator,
//! or one member of one (a Poisson generator's host, an on/off source's
//! member), numbered as their first arrivals are scheduled. The
//! `generators!` registry below maps a source's kind to its handler, which
//! does the arrival and returns the source's next arrival time; the kinds
//! that start flows name their flow kind there (the flow table's `kind`
//! column, [`flow_kinds`]). A new kind implements [`Generator`] in its own
//! file and takes one line in [`workload_generators!`] (example:
//! `host/example_burst.rs`).

use super::KIND_POISSON;
use super::{start_flow, start_flow_until, IncastRecord, KIND_BULK, KIND_INCAST, KIND_LISTED};
use crate::net::{Packet, PacketKind};
use crate::nic;
use crate::scenario::{
    BulkGroup, IncastConfig, ListedFlow, Scenario, ScenarioConfig, ScenarioError, WorkloadConfig,
    LONG_LIVED,
};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;
use crate::workload::generators::{FlowRequest, IncastGen, PacketGen, PoissonGen};
use crate::workload::onoff::OnOffGen;

/// Every generator of a run.
#[derive(Default)]
pub(crate) struct Generators {
    pub poisson: Vec<PoissonGen>,
    pub incast: Vec<IncastGen>,
    pub packets: Vec<PacketGen>,
    /// On/off frame sources (each member keeps its next frame:
    /// [`OnOffGen::current`]), and their class.
    pub onoff: Vec<OnOffGen>,
    pub onoff_class: u8,
    /// Listed flows, by start time.
    pub listed: Vec<ListedFlow>,
    listed_next: usize,
    /// Node order: the listed flows and the incasts' flows as one source
    /// per sending host (its host, its flows by start time, the next of
    /// them), so that a host's arrivals are its own events
    /// ([`crate::sim::partitioned`]); empty in push order, where one source
    /// starts the listed flows and each incast generator its events.
    listed_hosts: Vec<(u32, Vec<HostFlow>, usize)>,
    /// On/off bulk schedules (each has at most one on-period pending).
    pub bulk: Vec<BulkGroup>,
    /// The [`Generator`] kinds' generators.
    pub registered: Registered,
    /// Generators with an arrival still pending.
    pub live: u64,
    /// The sources of [`Ev::Gen`] events, by number.
    sources: Vec<Source>,
}

/// Node order: a flow a host starts at a time known before the run (a
/// listed flow, or its share of an incast).
#[derive(Clone, Copy, Debug)]
struct HostFlow {
    flow: ListedFlow,
    kind: u8,
    incast: i64,
}

/// A source of arrivals: one generator of a kind, or one of its members.
#[derive(Clone, Copy, Debug)]
struct Source {
    kind: GenKind,
    gen: u32,
    member: u32,
}

/// A generator kind that owns its configuration, checks, state and arrivals
/// (the recipe: one file in `workload/` and one line in
/// [`workload_generators!`]). Each `[[workload.KEY]]` entry is one generator;
/// a generator has one or more *members*, each an independent source of
/// arrivals (one [`Ev::Gen`] pending at a time).
// Implemented by the registered kinds only; a build without the `examples`
// feature registers none yet.
#[cfg_attr(not(any(test, feature = "examples")), allow(dead_code))]
pub(crate) trait Generator: Sized {
    /// One `[[workload.KEY]]` entry (serde + schemars).
    type Config;
    /// The flow table's `kind` code of the flows it starts (its name is in
    /// its registry line).
    const FLOW_KIND: u8;
    /// Checks one entry against the scenario; `path` is its key path
    /// (`workload.KEY[i]`), which errors name.
    fn validate(cfg: &Self::Config, sc: &Scenario, path: &str) -> Result<(), ScenarioError>;
    /// When the entry starts offering traffic (the run's traffic start).
    fn start(cfg: &Self::Config) -> Ps;
    /// Whether the entry keeps generating until the run's `duration` (which
    /// the scenario must then give).
    fn open_ended(_cfg: &Self::Config) -> bool {
        false
    }
    /// The generator of one checked entry.
    fn build(cfg: &Self::Config, sc: &Scenario) -> Self;
    /// How many members it has.
    fn members(&self) -> u32 {
        1
    }
    /// Member `member`'s first arrival, if it has one.
    fn first_arrival(&mut self, member: u32) -> Option<Ps>;
    /// Member `member`'s arrival now; returns its next arrival.
    fn on_arrival(&mut self, w: &mut World, now: Ps, member: u32) -> Option<Ps>;
    /// The one host whose arrivals `member` makes, if it is one host's
    /// (for the parallelism profile).
    fn source_host(&self, _member: u32) -> Option<u32> {
        None
    }
}

/// The generator kinds that implement [`Generator`], one line each:
/// `module::Type = key "doc" flows "flow kind name"`, `module` in
/// `crate::host`. The line generates the `[[workload.KEY]]` field of
/// `WorkloadConfig` (and its schema), the checks, the construction, the
/// state (a `Vec` in [`Generators`]), the first arrivals (after the
/// built-in kinds'), the dispatch of its [`Ev::Gen`] events and its entry
/// in [`flow_kinds`].
macro_rules! workload_generators {
    ($callback:ident; $($args:tt)*) => {
        $callback! { [$($args)*]
            #[cfg(any(test, feature = "examples"))]
            example_burst::Burst = example_burst "Example: periodic bursts of equal flows from one host to another (tests and the `examples` feature)." flows "example_burst",
        }
    };
}
pub(crate) use workload_generators;

/// `[workload]`'s configuration struct: the fixed fields given, then a
/// `Vec` field per registered generator kind.
macro_rules! workload_config {
    ([$(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }]
     $( $(#[$attr:meta])* $module:ident :: $ty:ident = $key:ident $doc:literal flows $fname:literal ),* $(,)?) => {
        $(#[$meta])*
        pub struct $name {
            $($fields)*
            $(
                $(#[$attr])*
                #[doc = $doc]
                #[serde(skip_serializing_if = "Vec::is_empty")]
                pub $key: Vec<$crate::host::$module::Config>,
            )*
        }
    };
}
pub(crate) use workload_config;

/// The registry of generator kinds: the built-in kinds, each with its
/// arrival handler (a `Generators` method `fn(&mut self, &mut World, now,
/// gen, member) -> Option<Ps>`, the source's next arrival) and, for a kind
/// that starts flows, its flow kind's code and name; then the
/// [`Generator`] kinds of [`workload_generators!`].
macro_rules! generators {
    ([$( $kind:ident => $handler:ident $(, $code:path = $name:literal)? ;)*]
     $( $(#[$attr:meta])* $module:ident :: $ty:ident = $key:ident $doc:literal flows $fname:literal ),* $(,)?) => {
        $( $(#[$attr])* use crate::host::$module::$ty; )*

        /// A kind of generator (the source of an [`Ev::Gen`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum GenKind {
            $( $kind, )*
            $( $(#[$attr])* $ty, )*
        }

        /// The [`Generator`] kinds' generators, one `Vec` per kind.
        #[derive(Default)]
        pub(crate) struct Registered {
            $( $(#[$attr])* $key: Vec<$ty>, )*
        }

        /// The flow table's `kind` codes and their names, one per generator
        /// kind that starts flows (Python's `FLOW_KINDS` is checked against it).
        pub fn flow_kinds() -> Vec<(u8, &'static str)> {
            #[allow(unused_mut)]
            let mut kinds = vec![$( $(($code, $name),)? )*];
            $( $(#[$attr])* kinds.push((<$ty as Generator>::FLOW_KIND, $fname)); )*
            kinds
        }

        /// Checks every [`Generator`] kind's entries.
        pub(crate) fn validate_registered(sc: &Scenario) -> Result<(), ScenarioError> {
            let _ = sc;
            $( $(#[$attr])* for (i, cfg) in sc.config.workload.$key.iter().enumerate() {
                <$ty>::validate(cfg, sc, &format!("workload.{}[{i}]", stringify!($key)))?;
            } )*
            Ok(())
        }

        /// Whether the [`Generator`] kinds have no entry, and whether one of
        /// them runs until the run's `duration`.
        pub(crate) fn registered_entries(w: &WorkloadConfig) -> (bool, bool) {
            let _ = w;
            #[allow(unused_mut)]
            let (mut empty, mut open) = (true, false);
            $( $(#[$attr])* {
                empty &= w.$key.is_empty();
                open |= w.$key.iter().any(<$ty>::open_ended);
            } )*
            (empty, open)
        }

        /// The earliest start of a [`Generator`] kind's entry.
        pub(crate) fn registered_start(w: &WorkloadConfig) -> Option<Ps> {
            let _ = w;
            #[allow(unused_mut)]
            let mut first: Option<Ps> = None;
            $( $(#[$attr])* for cfg in &w.$key {
                let t = <$ty>::start(cfg);
                first = Some(first.map_or(t, |f| f.min(t)));
            } )*
            first
        }

        impl Registered {
            /// Every [`Generator`] kind's generators for this run.
            pub(crate) fn build(sc: &Scenario) -> Self {
                let _ = sc;
                Registered {
                    $( $(#[$attr])* $key: sc.config.workload.$key.iter().map(|c| <$ty>::build(c, sc)).collect(), )*
                }
            }
        }

        impl Generators {
            /// Source `source`'s arrival now; its next one is scheduled.
            pub fn on_arrival(&mut self, w: &mut World, now: Ps, source: u32) {
                self.live -= 1;
                let Source { kind, gen, member } = self.sources[source as usize];
                let next = match kind {
                    $( GenKind::$kind => self.$handler(w, now, gen, member), )*
                    $( $(#[$attr])* GenKind::$ty => self.registered.$key[gen as usize].on_arrival(w, now, member), )*
                };
                if let Some(t) = next {
                    w.q.push(t, Ev::Gen(source));
                    self.live += 1;
                }
            }

            /// The one host of a [`Generator`] kind's source, if it is one host's.
            fn registered_source_host(&self, kind: GenKind, gen: u32, member: u32) -> Option<u32> {
                let _ = (gen, member);
                match kind {
                    $( $(#[$attr])* GenKind::$ty => self.registered.$key[gen as usize].source_host(member), )*
                    _ => None,
                }
            }

            /// Schedules the [`Generator`] kinds' first arrivals, in registry order.
            fn schedule_registered(&mut self, w: &mut World) {
                let _ = &w;
                $( $(#[$attr])* for g in 0..self.registered.$key.len() {
                    for member in 0..self.registered.$key[g].members() {
                        if let Some(t) = self.registered.$key[g].first_arrival(member) {
                            self.first_arrival(w, t, GenKind::$ty, g, member as usize);
                        }
                    }
                } )*
            }
        }
    };
}

// The built-in kinds, one line each, in the order their first arrivals are
// scheduled ([`Generators::schedule`]); the registered kinds follow.
workload_generators! { generators;
    Poisson => on_poisson, KIND_POISSON = "poisson";
    Incast => on_incast, KIND_INCAST = "incast";
    Packets => on_packets;
    Listed => on_listed, KIND_LISTED = "listed";
    Bulk => on_bulk, KIND_BULK = "bulk";
    OnOff => on_onoff;
}

impl Generators {
    pub fn new(
        poisson: Vec<PoissonGen>,
        incast: Vec<IncastGen>,
        packets: Vec<PacketGen>,
        listed: Vec<ListedFlow>,
    ) -> Self {
        Generators {
            poisson,
            incast,
            packets,
            onoff: vec![],
            onoff_class: 0,
            listed,
            listed_next: 0,
            listed_hosts: vec![],
            bulk: vec![],
            registered: Registered::default(),
            live: 0,
            sources: vec![],
        }
    }

    /// Why these generators cannot run threaded yet ([`crate::sim::threaded`]),
    /// or `None`: a source that is not one host's ([`Generators::source_host`];
    /// every built-in kind's is), whose partition is not known.
    pub fn threads_refusal(&self) -> Option<String> {
        let many = (0..self.sources.len() as u32).find(|&s| self.source_host(s).is_none())?;
        let kind = self.sources[many as usize].kind;
        Some(format!("a {kind:?} generator's source is not one host's"))
    }

    /// The host whose arrivals source `source` makes, when it is one host's
    /// (a Poisson generator's member); `None` for a generator of many.
    pub fn source_host(&self, source: u32) -> Option<u32> {
        let Source { kind, gen, member } = *self.sources.get(source as usize)?;
        match kind {
            GenKind::Poisson => Some(self.poisson[gen as usize].hosts[member as usize]),
            GenKind::Listed => self.listed_hosts.get(member as usize).map(|m| m.0),
            GenKind::Packets => Some(self.packets[gen as usize].src),
            GenKind::OnOff => Some(self.onoff[gen as usize].hosts[member as usize]),
            GenKind::Bulk => Some(self.bulk[gen as usize].src),
            _ => self.registered_source_host(kind, gen, member),
        }
    }

    /// A source's first arrival at `t`: numbers it and schedules the event.
    fn first_arrival(&mut self, w: &mut World, t: Ps, kind: GenKind, gen: usize, member: usize) {
        let source = self.sources.len() as u32;
        self.sources.push(Source {
            kind,
            gen: gen as u32,
            member: member as u32,
        });
        w.q.push(t, Ev::Gen(source));
        self.live += 1;
    }

    /// Schedules every generator's first arrival.
    pub fn schedule(&mut self, w: &mut World, c: &ScenarioConfig) {
        for (g, cfg) in c.workload.poisson.iter().enumerate() {
            for i in 0..self.poisson[g].hosts.len() {
                if let Some(t) = self.poisson[g].next_time(i, cfg.start.0) {
                    self.first_arrival(w, t, GenKind::Poisson, g, i);
                }
            }
        }
        for (g, cfg) in c.workload.incast.iter().enumerate() {
            if !self.listed_hosts.is_empty() {
                break; // node order: drawn at the build, started by their hosts
            }
            let first = if cfg.load.is_some() {
                self.incast[g].next_time(cfg.start.0)
            } else {
                self.incast[g].next_time(0)
            };
            if let Some(t) = first {
                self.first_arrival(w, t, GenKind::Incast, g, 0);
            }
        }
        for (g, cfg) in c.workload.packets.iter().enumerate() {
            if let Some(t) = self.packets[g].next_time(cfg.start.0) {
                self.first_arrival(w, t, GenKind::Packets, g, 0);
            }
        }
        if !self.listed_hosts.is_empty() {
            for member in 0..self.listed_hosts.len() {
                let t = self.listed_hosts[member].1[0].flow.start;
                self.first_arrival(w, t, GenKind::Listed, 0, member);
            }
        } else if let Some(t) = self.listed.first().map(|f| f.start) {
            self.first_arrival(w, t, GenKind::Listed, 0, 0);
        }
        for g in 0..self.bulk.len() {
            // Validated: every schedule starts before its stop.
            self.first_arrival(w, self.bulk[g].start, GenKind::Bulk, g, 0);
        }
        for g in 0..self.onoff.len() {
            for i in 0..self.onoff[g].hosts.len() {
                if let Some(f) = self.onoff[g].next_frame(i) {
                    self.first_arrival(w, f.at, GenKind::OnOff, g, i);
                }
            }
        }
        self.schedule_registered(w);
    }

    /// On/off generator `generator`'s member `member`: its frame now (no transport, to
    /// its NIC's FIFO), the next one later.
    fn on_onoff(&mut self, w: &mut World, now: Ps, generator: u32, member: u32) -> Option<Ps> {
        let (generator, member) = (generator as usize, member as usize);
        // The frame `next_frame` returned when this event was scheduled.
        let f = self.onoff[generator].current(member);
        let size = f.bytes as u32;
        if nic::adapter::active(w) {
            // The adapter model: into the destination's VOQ, or quenched.
            nic::adapter::offer(w, now, f.src, f.dst, size, f.burst);
        } else {
            w.counters.cons.sent_bytes += size as u64;
            let pkt = Packet::raw_frame(f.src, f.dst, size, f.burst, now, self.onoff_class);
            let id = w.arena.alloc(pkt);
            nic::push_ctrl(w, f.src, id);
            let n = w.host_nic[f.src as usize];
            nic::kick(w, now, n);
        }
        self.onoff[generator]
            .next_frame(member)
            .map(|f| f.at.max(now))
    }

    /// Poisson generator `generator`'s host `member`: a flow now, the next one later.
    fn on_poisson(&mut self, w: &mut World, now: Ps, generator: u32, member: u32) -> Option<Ps> {
        let req = self.poisson[generator as usize].flow(member as usize);
        start_flow(w, now, req, KIND_POISSON, -1);
        self.poisson[generator as usize].next_time(member as usize, now)
    }

    /// Incast generator `generator`: its senders' flows start now.
    fn on_incast(&mut self, w: &mut World, now: Ps, generator: u32, _: u32) -> Option<Ps> {
        let gen = &mut self.incast[generator as usize];
        let ev = gen.event();
        // Bytes per sender: exact for fixed sizes, the event's average for a CDF.
        let bytes = ev.sizes.iter().sum::<u64>() / ev.sizes.len().max(1) as u64;
        let (class, cc) = (gen.class, gen.cc);
        let id = w.flows.incasts.len() as i64;
        w.flows.incasts.push(IncastRecord {
            receiver: ev.receiver,
            fan_in: ev.senders.len() as u32,
            bytes,
            start: now,
            remaining: ev.senders.len() as u32,
            finish: None,
            last_done: 0,
        });
        for (src, size) in ev.senders.into_iter().zip(ev.sizes) {
            let req = FlowRequest {
                src,
                dst: ev.receiver,
                size,
                class,
                cc,
            };
            start_flow(w, now, req, KIND_INCAST, id);
        }
        self.incast[generator as usize]
            .next_time(now)
            .map(|t| t.max(now))
    }

    /// Node order: one source per sending host for the listed flows and
    /// the incasts' flows, in the order of each host's first flow (call
    /// before [`Generators::schedule`]). The incast generators draw their
    /// events here, each as it would at its time (the same draws in the
    /// same order), and their records are made now, numbered by time, then
    /// generator; `configs` are the generators' `[[workload.incast]]` entries.
    pub fn list_by_host(&mut self, w: &mut World, configs: &[IncastConfig]) {
        let mut flows: Vec<HostFlow> = (self.listed.iter())
            .map(|&flow| HostFlow {
                flow,
                kind: KIND_LISTED,
                incast: -1,
            })
            .collect();
        let mut events = Vec::new();
        for (g, (gen, cfg)) in self.incast.iter_mut().zip(configs).enumerate() {
            let mut next = gen.next_time(if cfg.load.is_some() { cfg.start.0 } else { 0 });
            while let Some(t) = next {
                events.push((t, g, gen.event(), gen.class, gen.cc));
                next = gen.next_time(t).map(|n| n.max(t));
            }
        }
        events.sort_by_key(|&(t, g, ..)| (t, g));
        for (t, _, ev, class, cc) in events {
            let incast = w.flows.incasts.len() as i64;
            w.flows.incasts.push(IncastRecord {
                receiver: ev.receiver,
                fan_in: ev.senders.len() as u32,
                bytes: ev.sizes.iter().sum::<u64>() / ev.sizes.len().max(1) as u64,
                start: t,
                remaining: ev.senders.len() as u32,
                finish: None,
                last_done: 0,
            });
            for (src, size) in ev.senders.into_iter().zip(ev.sizes) {
                let flow = ListedFlow {
                    src,
                    dst: ev.receiver,
                    size,
                    start: t,
                    stop: Ps::MAX,
                    class,
                    cc,
                };
                flows.push(HostFlow {
                    flow,
                    kind: KIND_INCAST,
                    incast,
                });
            }
        }
        // Each host's flows by start time (listed ones first at a tie).
        flows.sort_by_key(|f| f.flow.start);
        let mut member_of: std::collections::BTreeMap<u32, usize> = Default::default();
        for f in flows {
            let member = *member_of.entry(f.flow.src).or_insert_with(|| {
                self.listed_hosts.push((f.flow.src, Vec::new(), 0));
                self.listed_hosts.len() - 1
            });
            self.listed_hosts[member].1.push(f);
        }
    }

    /// The listed flows that start now (of host `member`'s, in node order).
    fn on_listed(&mut self, w: &mut World, now: Ps, _: u32, member: u32) -> Option<Ps> {
        loop {
            let (f, kind, incast) = match self.listed_hosts.get_mut(member as usize) {
                Some((_, flows, next)) => {
                    let f = *flows.get(*next)?;
                    if f.flow.start <= now {
                        *next += 1;
                    }
                    (f.flow, f.kind, f.incast)
                }
                None => {
                    let f = *self.listed.get(self.listed_next)?;
                    if f.start <= now {
                        self.listed_next += 1;
                    }
                    (f, KIND_LISTED, -1)
                }
            };
            if f.start > now {
                return Some(f.start);
            }
            let req = FlowRequest {
                src: f.src,
                dst: f.dst,
                size: f.size,
                class: f.class,
                cc: f.cc,
            };
            start_flow_until(w, now, req, kind, incast, f.stop);
        }
    }

    /// Bulk schedule `generator`: an on-period starts now, a long-lived flow that
    /// stops `on` later (or at the schedule's stop); the next one `on + off`
    /// from now, if that is before the schedule's stop.
    fn on_bulk(&mut self, w: &mut World, now: Ps, generator: u32, _: u32) -> Option<Ps> {
        let b = self.bulk[generator as usize];
        let req = FlowRequest {
            src: b.src,
            dst: b.dst,
            size: LONG_LIVED,
            class: b.class,
            cc: b.cc,
        };
        let stop = now.saturating_add(b.on).min(b.stop);
        start_flow_until(w, now, req, KIND_BULK, -1, stop);
        let next = now.saturating_add(b.on).saturating_add(b.off);
        (next < b.stop).then_some(next)
    }

    /// Packet generator `generator`: a datagram now (no transport), the next later.
    fn on_packets(&mut self, w: &mut World, now: Ps, generator: u32, _: u32) -> Option<Ps> {
        let pg = &self.packets[generator as usize];
        let pkt = Packet {
            seq: 0,
            ts: now,
            enq_at: now,
            hash: pg.hash,
            flow: generator,
            flow_uid: 0,
            dst: pg.dst,
            size: pg.size,
            payload: pg.size,
            kind: PacketKind::Raw,
            class: pg.class,
            prio: pg.class,
            flags: 0,
            in_port: 0,
            to_port: 0,
            tag: 0,
        };
        let src = pg.src;
        w.counters.cons.sent_bytes += pg.size as u64;
        let id = w.arena.alloc(pkt);
        nic::push_ctrl(w, src, id);
        let n = w.host_nic[src as usize];
        nic::kick(w, now, n);
        self.packets[generator as usize].next_time(now)
    }
}
