//! One switch-side and one NIC-side type for every scheme, so the wiring
//! calls the same five hooks whatever `[cm] scheme` says (static dispatch,
//! like the congestion-control registries).
//!
//! * Switch, per output queue: [`AnyCp::on_enqueue`] for each admitted frame.
//! * NIC, per flow (source, destination): [`AnyRp`]'s `rate`, `tag`,
//!   `may_send`, `on_feedback`, `on_sent` (may ask for an E2CM probe),
//!   `on_probe_echo`, `next_timer` / `on_timer`.
//!
//! ```
//! use incast_core::cm::{CmConfig, scheme::{CpFrame, Feedback}};
//! let cm = CmConfig::by_name("qcn").unwrap();
//! let mut cp = cm.build_cp(1, 42).unwrap();
//! let mut rp = cm.build_rp(10e9, 42, 0).unwrap();
//! // A standing 100 KB queue: the first sample (after 150 KB) sends a CNM.
//! let fb = (0..200)
//!     .find_map(|_| cp.on_enqueue(100_000, CpFrame { src: 3, dst: 0, bytes: 1500, tag: rp.tag() }))
//!     .unwrap();
//! assert_eq!(fb.to(), 3);
//! rp.on_feedback(0, &fb);
//! assert!(rp.rate() < 10e9);
//! ```

use super::e2cm::{E2cmRp, E2cmShared, ProbeEcho, ProbeRequest};
use super::ecm::{ArrivingFrame, EcmCp, EcmFeedback, EcmGains, EcmRp};
use super::qcn_cp::{Cnm, QcnCp};
use super::qcn_rp::QcnRp;
use super::{CmConfig, CpId};
use crate::rng::Stream;
use crate::units::Ps;
use std::sync::Arc;

/// What a congestion point sees of an admitted frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpFrame {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    /// The ECM rate-limiter tag the frame carries (QCN ignores it).
    pub tag: Option<CpId>,
}

/// A feedback frame from a congestion point to a source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feedback {
    Ecm(EcmFeedback),
    Qcn(Cnm),
}

impl Feedback {
    /// The host the frame goes to (the sampled frame's source).
    pub fn to(&self) -> u32 {
        match self {
            Feedback::Ecm(f) => f.to,
            Feedback::Qcn(c) => c.to,
        }
    }
    /// Which of that host's flows: the sampled frame's destination.
    pub fn flow_dst(&self) -> u32 {
        match self {
            Feedback::Ecm(f) => f.flow_dst,
            Feedback::Qcn(c) => c.flow_dst,
        }
    }
    /// The congestion point that sent it.
    pub fn cp(&self) -> CpId {
        match self {
            Feedback::Ecm(f) => f.cp,
            Feedback::Qcn(c) => c.cp,
        }
    }
}

/// A congestion point of any scheme.
#[derive(Clone, Debug)]
pub enum AnyCp {
    Ecm(EcmCp),
    Qcn(QcnCp),
}

impl AnyCp {
    /// A frame was admitted; the queue now holds `queue` bytes including it.
    #[inline]
    pub fn on_enqueue(&mut self, queue: u64, f: CpFrame) -> Option<Feedback> {
        match self {
            AnyCp::Ecm(cp) => cp
                .on_enqueue(
                    queue,
                    ArrivingFrame {
                        src: f.src,
                        dst: f.dst,
                        tag: f.tag,
                    },
                )
                .map(Feedback::Ecm),
            AnyCp::Qcn(cp) => cp
                .on_enqueue(queue, f.bytes, f.src, f.dst)
                .map(Feedback::Qcn),
        }
    }
}

/// A reaction point (a flow's rate limiter) of any scheme. ECM and E2CM
/// carry the flow's own stream (BCN(0,0) stop lengths, probe draws).
///
/// Laid out (`repr(u8)`: the tag byte, then each variant's fields in
/// order) so that what an E2CM frame reads of its reaction point is the
/// first 64 bytes: the tag, the stream (32 B) and the head of [`E2cmRp`].
/// Kept in a 64-byte-aligned record, that is one cache line per frame
/// where the compiler's layout spread it over three.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum AnyRp {
    Ecm(Stream, EcmRp),
    E2cm(Stream, E2cmRp),
    /// Boxed: a QCN reaction point (its parameters with it) is the largest,
    /// and the enum is as large as its largest variant.
    Qcn(Box<QcnRp>),
}

impl AnyRp {
    /// The limiter's rate, b/s (line rate when not limited).
    #[inline]
    pub fn rate(&self) -> f64 {
        match self {
            AnyRp::Ecm(_, r) => r.rate(),
            AnyRp::E2cm(_, r) => r.rate(),
            AnyRp::Qcn(r) => r.rate(),
        }
    }
    /// Whether a limiter is installed (the NIC paces the flow only then).
    pub fn is_limited(&self) -> bool {
        match self {
            AnyRp::Ecm(_, r) => r.is_limited(),
            AnyRp::E2cm(_, r) => r.is_limited(),
            AnyRp::Qcn(r) => r.is_limited(),
        }
    }
    /// The tag to write on the flow's frames (ECM, E2CM).
    #[inline]
    pub fn tag(&self) -> Option<CpId> {
        match self {
            AnyRp::Ecm(_, r) => r.tag(),
            AnyRp::E2cm(_, r) => r.tag(),
            AnyRp::Qcn(_) => None,
        }
    }
    /// False during an ECM BCN(0,0) stop.
    pub fn may_send(&self, now: Ps) -> bool {
        match self {
            AnyRp::Ecm(_, r) => r.may_send(now),
            AnyRp::E2cm(_, r) => r.may_send(now),
            AnyRp::Qcn(_) => true,
        }
    }
    /// A feedback frame for this flow arrived. A feedback of another scheme
    /// than the flow's is ignored.
    pub fn on_feedback(&mut self, now: Ps, fb: &Feedback) {
        match (self, fb) {
            (AnyRp::Ecm(rng, r), Feedback::Ecm(f)) => {
                r.on_feedback(now, f, rng);
            }
            (AnyRp::E2cm(rng, r), Feedback::Ecm(f)) => {
                r.on_feedback(now, f, rng);
            }
            (AnyRp::Qcn(r), Feedback::Qcn(c)) => {
                r.on_cnm(now, c.qntz_fb);
            }
            _ => {}
        }
    }
    /// The flow sent a data frame of `bytes`; E2CM may want a probe after
    /// it. Also returns how many of the flow's next frames need not be
    /// shown to it (0: all are; see [`E2cmRp::on_sent_ahead`]).
    #[inline]
    pub fn on_sent(&mut self, now: Ps, bytes: u64) -> (Option<ProbeRequest>, u8) {
        match self {
            AnyRp::Ecm(..) => (None, 0),
            AnyRp::E2cm(rng, r) if r.draws_ahead() => r.on_sent_ahead(now, rng),
            AnyRp::E2cm(rng, r) => (r.on_sent(now, bytes, rng), 0),
            AnyRp::Qcn(r) => {
                r.on_sent(now, bytes);
                (None, 0)
            }
        }
    }
    /// Whether sending a frame can move the limiter (its rate, hold or
    /// timer): QCN's byte counter can; an ECM or E2CM limiter moves only on
    /// feedback, echoes and its timer, so the NIC need not re-read it.
    #[inline]
    pub fn sending_moves_limiter(&self) -> bool {
        matches!(self, AnyRp::Qcn(_))
    }
    /// An E2CM probe of this flow came back.
    pub fn on_probe_echo(&mut self, now: Ps, echo: &ProbeEcho) {
        if let AnyRp::E2cm(_, r) = self {
            r.on_probe_echo(now, echo);
        }
    }
    /// When [`AnyRp::on_timer`] must next run.
    #[inline]
    pub fn next_timer(&self) -> Option<Ps> {
        match self {
            AnyRp::Ecm(_, r) => r.next_timer(),
            AnyRp::E2cm(_, r) => r.next_timer(),
            AnyRp::Qcn(r) => r.next_timer(),
        }
    }
    pub fn on_timer(&mut self, now: Ps) {
        match self {
            AnyRp::Ecm(_, r) => {
                r.on_timer(now);
            }
            AnyRp::E2cm(_, r) => {
                r.on_timer(now);
            }
            AnyRp::Qcn(r) => {
                r.on_timer(now);
            }
        }
    }
}

/// What the reaction points of a scheme at one line rate share
/// ([`CmConfig::rp_shared`]).
#[derive(Clone, Debug)]
pub enum RpShared {
    Nothing,
    Ecm(Arc<EcmGains>),
    E2cm(E2cmShared),
}

impl CmConfig {
    /// The congestion point of output queue `cp` (`None` for `scheme = "none"`);
    /// its stream is `(seed, "cm-cp", cp)`.
    pub fn build_cp(&self, cp: CpId, seed: u64) -> Option<AnyCp> {
        let rng = Stream::new(seed, "cm-cp", cp as u64);
        match self {
            CmConfig::None(_) => None,
            CmConfig::Ecm(p) => Some(AnyCp::Ecm(EcmCp::new(cp, p, rng))),
            CmConfig::E2cm(p) | CmConfig::E2cmCp(p) => {
                Some(AnyCp::Ecm(EcmCp::new(cp, &p.ecm, rng)))
            }
            CmConfig::Qcn(p) => Some(AnyCp::Qcn(QcnCp::new(cp, &p.cp, rng))),
        }
    }

    /// The reaction point of flow `flow` (a key the wiring makes unique, e.g.
    /// `src << 32 | dst`) at a source of line rate `line` b/s; its stream is
    /// `(seed, "cm-rp", flow)`.
    pub fn build_rp(&self, line: f64, seed: u64, flow: u64) -> Option<AnyRp> {
        self.build_rp_sharing(&self.rp_shared(line), line, seed, flow)
    }

    /// What the reaction points at line rate `line` share (their gains and
    /// setup): made once, then given to [`CmConfig::build_rp_sharing`].
    pub fn rp_shared(&self, line: f64) -> RpShared {
        match self {
            CmConfig::Ecm(p) => RpShared::Ecm(Arc::new(p.resolve(line))),
            CmConfig::E2cm(p) => RpShared::E2cm(E2cmShared::new(&p.resolve(line, false))),
            CmConfig::E2cmCp(p) => RpShared::E2cm(E2cmShared::new(&p.resolve(line, true))),
            CmConfig::None(_) | CmConfig::Qcn(_) => RpShared::Nothing,
        }
    }

    /// [`CmConfig::build_rp`] with the shared part made once (`shared`:
    /// [`CmConfig::rp_shared`] of this scheme at the same `line`, which also
    /// says which scheme's reaction point to build).
    pub fn build_rp_sharing(
        &self,
        shared: &RpShared,
        line: f64,
        seed: u64,
        flow: u64,
    ) -> Option<AnyRp> {
        let rng = Stream::new(seed, "cm-rp", flow);
        match (shared, self) {
            (RpShared::Ecm(g), _) => Some(AnyRp::Ecm(rng, EcmRp::sharing(g.clone()))),
            (RpShared::E2cm(s), _) => Some(AnyRp::E2cm(rng, E2cmRp::sharing(s))),
            (RpShared::Nothing, CmConfig::Qcn(p)) => {
                Some(AnyRp::Qcn(Box::new(QcnRp::new(&p.rp, line, rng))))
            }
            (RpShared::Nothing, _) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::ecm::EcmParams;

    #[test]
    fn dispatch_matches_the_direct_state_machines() {
        // ECM through AnyCp/AnyRp gives the same feedback and rates as direct calls.
        let cm = CmConfig::by_name("ecm").unwrap();
        let mut any_cp = cm.build_cp(4, 9).unwrap();
        let mut any_rp = cm.build_rp(10e9, 9, 77).unwrap();
        let p = EcmParams::default();
        let mut cp = EcmCp::new(4, &p, Stream::new(9, "cm-cp", 4));
        let mut rp = EcmRp::new(&p.resolve(10e9));
        let mut rng = Stream::new(9, "cm-rp", 77);
        for k in 0..20_000u64 {
            let q = 50_000 + (k * 7919) % 200_000;
            let a = any_cp.on_enqueue(
                q,
                CpFrame {
                    src: 1,
                    dst: 2,
                    bytes: 1500,
                    tag: any_rp.tag(),
                },
            );
            let b = cp.on_enqueue(
                q,
                ArrivingFrame {
                    src: 1,
                    dst: 2,
                    tag: rp.tag(),
                },
            );
            assert_eq!(a, b.map(Feedback::Ecm));
            if let (Some(a), Some(b)) = (a, b) {
                any_rp.on_feedback(k, &a);
                rp.on_feedback(k, &b, &mut rng);
            }
            assert_eq!(any_rp.rate(), rp.rate());
        }
        assert!(rp.stats.c.decreases > 10 && rp.stats.c.increases > 10);
    }

    #[test]
    fn every_scheme_builds_and_none_builds_nothing() {
        for name in CmConfig::NAMES {
            let cm = CmConfig::by_name(name).unwrap();
            assert_eq!(cm.build_cp(1, 1).is_some(), *name != "none");
            let rp = cm.build_rp(10e9, 1, 1);
            assert_eq!(rp.is_some(), *name != "none");
            if let Some(mut rp) = rp {
                assert_eq!(rp.rate(), 10e9);
                assert!(!rp.is_limited() && rp.may_send(0));
                // Only E2CM-CP probes an unlimited flow.
                let mut probes = 0;
                let mut passing = 0;
                for t in 0..1000 {
                    if passing > 0 {
                        passing -= 1;
                        continue;
                    }
                    let (probe, pass) = rp.on_sent(t, 1500);
                    probes += probe.is_some() as u32;
                    passing = pass;
                }
                assert_eq!(probes > 0, *name == "e2cm_cp", "{name}");
            }
        }
    }

    #[test]
    fn per_flow_state_sizes() {
        // What a flow costs the NIC (65 280 flows at N = 256): reported, and kept bounded.
        let sizes = [
            std::mem::size_of::<EcmRp>(),
            std::mem::size_of::<E2cmRp>(),
            std::mem::size_of::<QcnRp>(),
            std::mem::size_of::<AnyRp>(),
        ];
        // The gains and setup are shared (`RpShared`), not copied per flow;
        // the counters exist only in test builds (`TestCounters`).
        assert!(sizes[3] <= 320, "{sizes:?}");
    }

    #[test]
    fn an_e2cm_frame_sent_reads_one_cache_line() {
        // The layout `AnyRp`'s docs promise: the tag, the stream, then the
        // head of the E2CM state, within the first 64 bytes.
        let cm = CmConfig::by_name("e2cm_cp").unwrap();
        let rp = cm.build_rp(10e9, 5, 9).unwrap();
        let AnyRp::E2cm(stream, e2cm) = &rp else {
            panic!("an E2CM reaction point")
        };
        let at = |p: usize| p - &rp as *const AnyRp as usize;
        assert_eq!(at(stream as *const Stream as usize), 8);
        let head = at(e2cm as *const E2cmRp as usize) + E2cmRp::FRAME_BYTES;
        assert!(head <= 64, "a frame reads {head} bytes");
    }

    #[test]
    fn a_shared_setup_gives_the_same_reaction_point() {
        // Flows built from one `rp_shared` behave as flows built alone, bit
        // for bit: same probes, same rates, same tags.
        let fb = |k: u64| {
            Feedback::Ecm(EcmFeedback {
                cp: 3,
                to: 0,
                flow_dst: 1,
                kind: crate::cm::ecm::FeedbackKind::Normal,
                qoff: 0,
                qdelta: 0,
                fb: if k % 3 == 0 { 20_000.0 } else { -60_000.0 },
            })
        };
        for name in ["ecm", "e2cm", "e2cm_cp"] {
            let cm = CmConfig::by_name(name).unwrap();
            let shared = cm.rp_shared(10e9);
            let mut alone = cm.build_rp(10e9, 5, 9).unwrap();
            let mut sharing = cm.build_rp_sharing(&shared, 10e9, 5, 9).unwrap();
            let _other = cm.build_rp_sharing(&shared, 10e9, 5, 10).unwrap();
            for k in 0..5_000u64 {
                let t = k * 1_200_000;
                assert_eq!(alone.on_sent(t, 1500), sharing.on_sent(t, 1500), "{name}");
                if k % 50 == 0 {
                    alone.on_feedback(t, &fb(k));
                    sharing.on_feedback(t, &fb(k));
                }
                assert_eq!(alone.rate(), sharing.rate(), "{name}");
                assert_eq!(alone.tag(), sharing.tag(), "{name}");
            }
            assert!(
                alone.is_limited() || name != "ecm",
                "{name}: the feedback limits it"
            );
        }
    }

    #[test]
    fn feedback_of_another_scheme_is_ignored() {
        let mut rp = CmConfig::by_name("qcn")
            .unwrap()
            .build_rp(10e9, 1, 1)
            .unwrap();
        let fb = Feedback::Ecm(EcmFeedback {
            cp: 1,
            to: 0,
            flow_dst: 1,
            kind: crate::cm::ecm::FeedbackKind::Max,
            qoff: 0,
            qdelta: 0,
            fb: -375_000.0,
        });
        rp.on_feedback(0, &fb);
        assert_eq!(rp.rate(), 10e9);
    }
}
