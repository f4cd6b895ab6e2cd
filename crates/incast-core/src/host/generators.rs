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
//! column, [`FLOW_KINDS`]).

use super::KIND_POISSON;
use super::{start_flow, start_flow_until, IncastRecord, KIND_BULK, KIND_INCAST, KIND_LISTED};
use crate::net::{Packet, PacketKind};
use crate::nic;
use crate::scenario::{BulkGroup, ListedFlow, ScenarioConfig, LONG_LIVED};
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
    /// On/off bulk schedules (each has at most one on-period pending).
    pub bulk: Vec<BulkGroup>,
    /// Generators with an arrival still pending.
    pub live: u64,
    /// The sources of [`Ev::Gen`] events, by number.
    sources: Vec<Source>,
}

/// A source of arrivals: one generator of a kind, or one of its members.
#[derive(Clone, Copy, Debug)]
struct Source {
    kind: GenKind,
    gen: u32,
    member: u32,
}

/// The registry of generator kinds: each kind's arrival handler (a
/// `Generators` method `fn(&mut self, &mut World, now, gen, member) ->
/// Option<Ps>`, the source's next arrival) and, for a kind that starts
/// flows, its flow kind's code and name.
macro_rules! generators {
    ($( $kind:ident => $handler:ident $(, $code:path = $name:literal)? ;)*) => {
        /// A kind of generator (the source of an [`Ev::Gen`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum GenKind {
            $( $kind, )*
        }

        /// The flow table's `kind` codes and their names, one per generator
        /// kind that starts flows (Python's `FLOW_KINDS` is checked against it).
        pub const FLOW_KINDS: &[(u8, &str)] = &[$( $(($code, $name),)? )*];

        impl Generators {
            /// Source `source`'s arrival now; its next one is scheduled.
            pub fn on_arrival(&mut self, w: &mut World, now: Ps, source: u32) {
                self.live -= 1;
                let Source { kind, gen, member } = self.sources[source as usize];
                let next = match kind {
                    $( GenKind::$kind => self.$handler(w, now, gen, member), )*
                };
                if let Some(t) = next {
                    w.q.push(t, Ev::Gen(source));
                    self.live += 1;
                }
            }
        }
    };
}

// One line per generator kind, in the order their first arrivals are
// scheduled ([`Generators::schedule`]).
generators! {
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
            bulk: vec![],
            live: 0,
            sources: vec![],
        }
    }

    /// The host whose arrivals source `source` makes, when it is one host's
    /// (a Poisson generator's member); `None` for a generator of many.
    pub fn source_host(&self, source: u32) -> Option<u32> {
        let Source { kind, gen, member } = *self.sources.get(source as usize)?;
        (kind == GenKind::Poisson).then(|| self.poisson[gen as usize].hosts[member as usize])
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
        if let Some(t) = self.listed.first().map(|f| f.start) {
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
    }

    /// On/off generator `g`'s member `i`: its frame now (no transport, to
    /// its NIC's FIFO), the next one later.
    fn on_onoff(&mut self, w: &mut World, now: Ps, g: u32, i: u32) -> Option<Ps> {
        let (g, i) = (g as usize, i as usize);
        // The frame `next_frame` returned when this event was scheduled.
        let f = self.onoff[g].current(i);
        let size = f.bytes as u32;
        if w.cm.is_some() {
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
        self.onoff[g].next_frame(i).map(|f| f.at.max(now))
    }

    /// Poisson generator `g`'s host `i`: a flow now, the next one later.
    fn on_poisson(&mut self, w: &mut World, now: Ps, g: u32, i: u32) -> Option<Ps> {
        let req = self.poisson[g as usize].flow(i as usize);
        start_flow(w, now, req, KIND_POISSON, -1);
        self.poisson[g as usize].next_time(i as usize, now)
    }

    /// Incast generator `g`: its senders' flows start now.
    fn on_incast(&mut self, w: &mut World, now: Ps, g: u32, _: u32) -> Option<Ps> {
        let gen = &mut self.incast[g as usize];
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
        self.incast[g as usize].next_time(now).map(|t| t.max(now))
    }

    /// The listed flows that start now.
    fn on_listed(&mut self, w: &mut World, now: Ps, _: u32, _: u32) -> Option<Ps> {
        while let Some(f) = self.listed.get(self.listed_next).copied() {
            if f.start > now {
                return Some(f.start);
            }
            self.listed_next += 1;
            let req = FlowRequest {
                src: f.src,
                dst: f.dst,
                size: f.size,
                class: f.class,
                cc: f.cc,
            };
            start_flow_until(w, now, req, KIND_LISTED, -1, f.stop);
        }
        None
    }

    /// Bulk schedule `g`: an on-period starts now, a long-lived flow that
    /// stops `on` later (or at the schedule's stop); the next one `on + off`
    /// from now, if that is before the schedule's stop.
    fn on_bulk(&mut self, w: &mut World, now: Ps, g: u32, _: u32) -> Option<Ps> {
        let b = self.bulk[g as usize];
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

    /// Packet generator `g`: a datagram now (no transport), the next later.
    fn on_packets(&mut self, w: &mut World, now: Ps, g: u32, _: u32) -> Option<Ps> {
        let pg = &self.packets[g as usize];
        let pkt = Packet {
            seq: 0,
            ts: now,
            enq_at: now,
            hash: pg.hash,
            flow: g,
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
        self.packets[g as usize].next_time(now)
    }
}
