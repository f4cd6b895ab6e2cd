//! A dumbbell at the transport level: flows of any congestion control, each
//! from its own sender behind its own access link, through one drop-tail
//! bottleneck to one receiver, ACKs back on an uncongested path.
//!
//! The simulator runs one congestion control per scenario and its NIC does
//! not pace TCP yet (issue 20), so the checks that mix algorithms on one
//! bottleneck (CUBIC against NewReno) or need pacing (BBR) drive
//! [`TcpFlow`]s here, through the same public interface a NIC uses: the
//! sender asks [`TcpFlow::send_state`] and takes segments with
//! [`TcpFlow::next_segment_at`]; the receiver's ACKs go back to
//! [`TcpFlow::on_ack`]; retransmission timers follow [`TcpFlow::rtt`].
//! The engine is the simulator's own event queue.

use incast_core::engine::EventQueue;
use incast_core::transport::cc::CcConfig;
use incast_core::transport::{Echo, SendState, TcpFlow, TcpParams};
use incast_core::units::{Ps, SEC};
use std::collections::VecDeque;

/// The path every flow shares.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    /// Bottleneck rate, bits per second (on the wire: headers count).
    pub rate_bps: f64,
    /// Each sender's access link, bits per second.
    pub access_bps: f64,
    /// One-way propagation delay from a sender to the receiver, and back.
    pub one_way: Ps,
    /// Drop-tail limit of the bottleneck queue, bytes.
    pub limit: u64,
}

impl Path {
    /// Bottleneck capacity in payload bytes per second.
    pub fn payload_rate(&self, p: &TcpParams) -> f64 {
        self.rate_bps / 8.0 * p.mss as f64 / (p.mss + p.header as u64) as f64
    }
    /// RTT of a full segment on the empty path: propagation both ways and
    /// the segment's serialization on the access link and the bottleneck
    /// (ACKs cross no queue and take no time on the wire here).
    pub fn base_rtt(&self, p: &TcpParams) -> Ps {
        let bits = ((p.mss + p.header as u64) * 8) as f64;
        2 * self.one_way
            + (bits / self.access_bps * 1e12) as Ps
            + (bits / self.rate_bps * 1e12) as Ps
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The sender's access link is free, or its pacing time has come.
    Nic(usize),
    /// A segment reaches the bottleneck queue.
    Enqueue(usize, u64, u32, Ps),
    /// A segment reaches the receiver.
    Deliver(usize, u64, u32, Ps),
    /// An ACK reaches the sender.
    Ack(usize, u64, Ps),
    /// Retransmission timer of a flow, by generation.
    Rto(usize, u64),
}

/// The engine fills its empty wheel slots with this (never popped).
impl Default for Ev {
    fn default() -> Self {
        Ev::Nic(0)
    }
}

pub struct Dumbbell {
    pub path: Path,
    pub p: TcpParams,
    pub flows: Vec<TcpFlow>,
    q: EventQueue<Ev>,
    nic_free_at: Vec<Ps>,
    nic_wake: Vec<Option<Ps>>,
    rto_gen: Vec<u64>,
    rto_armed: Vec<bool>,
    /// Departure times and sizes of the packets in the bottleneck queue.
    queue: VecDeque<(Ps, u64)>,
    queue_bytes: u64,
    last_departure: Ps,
    pub drops: u64,
    /// Time-weighted queue: (bytes x ps) and the time it covers, from `measure_from`.
    queue_area: f64,
    queue_since: Ps,
    pub max_queue: u64,
    pub measure_from: Ps,
    /// The time the run has reached.
    clock: Ps,
}

impl Dumbbell {
    /// Flows of the given congestion controls (TOML inline tables or names),
    /// all starting at time 0 with unlimited data.
    pub fn new(path: Path, p: TcpParams, ccs: &[&str]) -> Dumbbell {
        let flows: Vec<TcpFlow> = ccs
            .iter()
            .map(|c| {
                let cfg: CcConfig = if c.contains('=') {
                    toml::from_str(c).unwrap()
                } else {
                    CcConfig::by_name(c).unwrap()
                };
                cfg.validate().unwrap();
                TcpFlow::new(u64::MAX / 2, cfg.build(), &p)
            })
            .collect();
        let n = flows.len();
        let mut d = Dumbbell {
            path,
            p,
            flows,
            q: EventQueue::new(),
            nic_free_at: vec![0; n],
            nic_wake: vec![None; n],
            rto_gen: vec![0; n],
            rto_armed: vec![false; n],
            queue: VecDeque::new(),
            queue_bytes: 0,
            last_departure: 0,
            drops: 0,
            queue_area: 0.0,
            queue_since: 0,
            max_queue: 0,
            measure_from: 0,
            clock: 0,
        };
        for i in 0..n {
            // Stagger the starts by a few microseconds, as the simulator's tests do.
            d.q.push(i as Ps * 7_000_000, Ev::Nic(i));
        }
        d
    }

    pub fn now(&self) -> Ps {
        self.clock
    }

    /// Bytes acknowledged so far, per flow.
    pub fn acked(&self) -> Vec<u64> {
        self.flows.iter().map(|f| f.snd_una).collect()
    }

    /// Bytes in the bottleneck queue now.
    pub fn queue_bytes(&mut self) -> u64 {
        let now = self.now();
        self.drain(now);
        self.queue_bytes
    }

    /// Time-average of the bottleneck queue since `measure_from`, bytes.
    pub fn mean_queue(&mut self) -> f64 {
        let now = self.now();
        self.drain(now);
        self.queue_area / now.saturating_sub(self.measure_from).max(1) as f64
    }

    /// Runs until `t`.
    pub fn run_until(&mut self, t: Ps) {
        while let Some(next) = self.q.peek_time() {
            if next > t {
                break;
            }
            let (now, ev) = self.q.pop().unwrap();
            self.clock = now;
            self.dispatch(now, ev);
        }
        self.clock = t;
        self.drain(t);
    }

    fn dispatch(&mut self, now: Ps, ev: Ev) {
        match ev {
            Ev::Nic(i) => {
                if self.nic_wake[i] == Some(now) {
                    self.nic_wake[i] = None;
                }
                self.kick(now, i);
            }
            Ev::Enqueue(i, seq, len, ts) => self.enqueue(now, i, seq, len, ts),
            Ev::Deliver(i, seq, len, ts) => {
                let out = self.flows[i].on_data(now, seq, len, false, Echo::at(ts), &self.p);
                for a in out.acks.into_iter().flatten() {
                    self.q
                        .push(now + self.path.one_way, Ev::Ack(i, a.ack, a.ts));
                }
            }
            Ev::Ack(i, ack, ts) => {
                let r = self.flows[i].on_ack(now, ack, false, ts, &self.p);
                // Every ACK of new data restarts the timer here (RFC 6582 §4's
                // Slow-but-Steady variant; the simulator is Impatient): the CUBIC
                // curve and CUBIC-against-NewReno checks at RTTs of 0.1-100 ms
                // measure the window between losses, not the timer variant.
                if r.advanced {
                    if self.flows[i].outstanding() {
                        self.arm_rto(now, i);
                    } else {
                        self.rto_armed[i] = false;
                        self.rto_gen[i] += 1;
                    }
                }
                self.kick(now, i);
            }
            Ev::Rto(i, gen) => {
                if gen == self.rto_gen[i] && self.rto_armed[i] {
                    self.flows[i].on_timeout(&self.p);
                    self.arm_rto(now, i);
                    self.kick(now, i);
                }
            }
        }
    }

    fn arm_rto(&mut self, now: Ps, i: usize) {
        self.rto_gen[i] += 1;
        self.rto_armed[i] = true;
        let rto = self.flows[i].rtt.current(&self.p);
        self.q.push(now + rto, Ev::Rto(i, self.rto_gen[i]));
    }

    /// The sender's NIC: send a segment if the link is free and the flow may.
    fn kick(&mut self, now: Ps, i: usize) {
        if self.nic_free_at[i] > now {
            self.wake(i, self.nic_free_at[i]);
            return;
        }
        match self.flows[i].send_state(now, &self.p) {
            SendState::Blocked => {}
            SendState::WaitUntil(t) => self.wake(i, t),
            SendState::Ready => {
                let seg = self.flows[i].next_segment_at(now, &self.p).expect("ready");
                let bits = ((seg.len + self.p.header) * 8) as f64;
                let done = now + (bits / self.path.access_bps * 1e12) as Ps;
                self.nic_free_at[i] = done;
                self.q.push(done, Ev::Enqueue(i, seg.seq, seg.len, now));
                if !self.rto_armed[i] {
                    self.arm_rto(now, i);
                }
                self.wake(i, done);
            }
        }
    }

    fn wake(&mut self, i: usize, t: Ps) {
        if self.nic_wake[i].is_none_or(|w| w > t) {
            self.nic_wake[i] = Some(t);
            self.q.push(t, Ev::Nic(i));
        }
    }

    /// Removes the packets that left the bottleneck by `now`, integrating the queue.
    fn drain(&mut self, now: Ps) {
        loop {
            let next = match self.queue.front() {
                Some(&(dep, size)) if dep <= now => Some((dep, size)),
                _ => None,
            };
            let until = next.map_or(now, |(dep, _)| dep);
            if until > self.queue_since {
                let from = self.queue_since.max(self.measure_from);
                if until > from {
                    self.queue_area += self.queue_bytes as f64 * (until - from) as f64;
                }
                self.queue_since = until;
            }
            match next {
                Some((_, size)) => {
                    self.queue.pop_front();
                    self.queue_bytes -= size;
                }
                None => break,
            }
        }
    }

    fn enqueue(&mut self, now: Ps, i: usize, seq: u64, len: u32, ts: Ps) {
        self.drain(now);
        let size = len as u64 + self.p.header as u64;
        if self.queue_bytes + size > self.path.limit {
            self.drops += 1;
            return;
        }
        let start = self.last_departure.max(now);
        let dep = start + (size as f64 * 8.0 / self.path.rate_bps * 1e12) as Ps;
        self.last_departure = dep;
        self.queue.push_back((dep, size));
        self.queue_bytes += size;
        if now >= self.measure_from {
            self.max_queue = self.max_queue.max(self.queue_bytes);
        }
        self.q
            .push(dep + self.path.one_way, Ev::Deliver(i, seq, len, ts));
    }
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// Seconds, for messages.
pub fn secs(t: Ps) -> f64 {
    t as f64 / SEC as f64
}
