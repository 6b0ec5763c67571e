//! The detectors, one module per mechanism, in one ordered registry that also names the
//! finding ids each one emits (their catalogue entries are declared in its module).

pub mod app_limited;
pub mod bufferbloat;
pub mod delayed_ack;
pub mod early_exit;
pub mod idle_close;
pub mod new_connection;
pub mod recovery;
pub mod reordering;
pub mod restart_after_idle;
pub mod server_think_time;
pub mod short_lived;
pub mod sndbuf;
pub mod syn_retransmit;
pub mod windows;

use crate::catalogue::Entry;
use crate::detector::{Connection, Detector, Segment};
use crate::finding::Finding;

/// Generates, from one line per detector (`module::Type { Variant: ENTRY, … }`, ENTRY
/// being the `const` [`Entry`] the module declares for that id):
/// - [`FindingId`], one variant per id in the order written, which is also its `Ord`
///   (the report's tie-breaker between findings of equal cost on one stream), and
///   [`FindingId::entry`], the id's catalogue entry;
/// - [`Detectors`], every detector in the order written.
///
/// An enum rather than a pointer to the entry: ids stay one byte, `match`able, and
/// compare and sort without a lookup.
macro_rules! registry {
    ($($module:ident::$detector:ident { $($variant:ident: $entry:ident),+ $(,)? }),+ $(,)?) => {
        /// Stable finding ids (design.md): new ids may be added, none is ever renamed.
        /// Declared by the detectors' catalogue entries.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FindingId {
            $($($variant,)+)+
        }

        impl FindingId {
            /// Every id, in order.
            pub const ALL: &'static [FindingId] = &[$($(FindingId::$variant,)+)+];

            /// The id's catalogue entry, declared next to its detector.
            pub const fn entry(self) -> &'static Entry {
                match self {
                    $($(FindingId::$variant => &$module::$entry,)+)+
                }
            }
        }

        /// Every detector, in the order written (the order their findings are produced;
        /// the report sorts by cost), as one value the [`Analyzer`](crate::Analyzer)
        /// calls directly: a call through a `dyn Detector` per segment and detector
        /// cannot be inlined, and the detectors that look at a segment only to return
        /// were as costly as the vtable call and their stack frames (callgrind, `analyze`
        /// of the mixed bench capture).
        #[derive(Default)]
        pub struct Detectors {
            $($module: $module::$detector,)+
        }

        impl Detectors {
            /// Every detector's `on_segment`, each inlined here (`#[inline(always)]` in its
            /// module): a call per segment and detector saved and restored the callee's
            /// registers for 15 instructions, more than some detectors spend on most
            /// segments (3,602 M → 3,421 M instructions for `analyze -j 1` of the 1 M-packet
            /// prefix of the mixed bench capture, callgrind). Itself inlined into
            /// `Analyzer::on_segment`: left to `#[inline]`, the compiler made it a call
            /// once the detectors grew (session 13: 930.6 M instructions for the 300 k
            /// prefix against 915.7 M inlined).
            #[inline(always)]
            pub fn on_segment(&mut self, seg: &Segment<'_>) {
                $(self.$module.on_segment(seg);)+
            }

            /// The held segments of a connection that ended without data or a FIN, for
            /// the detectors that judge such connections
            /// ([`Detector::JUDGES_DATALESS`]).
            pub fn on_dataless_segment(&mut self, seg: &Segment<'_>) {
                $(if <$module::$detector as Detector>::JUDGES_DATALESS {
                    self.$module.on_segment(seg);
                })+
            }

            /// A connection that ended without data or a FIN, for the detectors that judge
            /// such connections ([`Detector::JUDGES_DATALESS`]).
            pub fn on_dataless_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
                $(if <$module::$detector as Detector>::JUDGES_DATALESS {
                    self.$module.on_connection(conn, out);
                })+
            }

            pub fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
                $(self.$module.on_connection(conn, out);)+
            }

            pub fn finish(&mut self, out: &mut Vec<Finding>) {
                $(self.$module.finish(out);)+
            }

            /// [`Detector::absorb`] of each detector: `other` holds another shard's.
            pub fn absorb(&mut self, other: Detectors) {
                $(self.$module.absorb(other.$module);)+
            }
        }
    };
}

impl Detectors {
    /// [`Self::finish`], each finding given to `push` with one of `outs` on the thread
    /// that made it: slow_start.new_connection's held first exchanges, the most work
    /// after a pass, judged in parallel parts, part `i` into `outs[i]`; the other
    /// detectors' findings into `outs[0]`. Nothing is judged with no `outs`.
    pub fn finish_into<O: Send>(
        &mut self,
        outs: &mut [O],
        push: &(dyn Fn(&mut O, Finding) + Sync),
    ) {
        // new_connection's first: its `finish` would judge them all on this thread.
        self.new_connection.judge_held(outs, push);
        let Some(first) = outs.first_mut() else {
            return;
        };
        let mut rest = Vec::new();
        self.finish(&mut rest);
        rest.into_iter().for_each(|f| push(first, f));
    }

    /// What a finalised connection's samples prove of its path, measured once before the
    /// detectors judge it (`Connection::bottleneck`).
    pub fn bottlenecks(&mut self, conn: &Connection<'_>) -> [Option<bufferbloat::Bottleneck>; 2] {
        self.bufferbloat.bottlenecks(conn)
    }
}

registry! {
    syn_retransmit::SynRetransmit { HandshakeSynRetransmit: SYN_RETRANSMIT },
    short_lived::ShortLived { ConnectionShortLived: SHORT_LIVED },
    idle_close::IdleClose { ConnectionIdleClose: IDLE_CLOSE },
    new_connection::NewConnection { SlowStartNewConnection: NEW_CONNECTION },
    restart_after_idle::RestartAfterIdle { SlowStartRestartAfterIdle: RESTART_AFTER_IDLE },
    early_exit::EarlyExit { SlowStartEarlyExit: EARLY_EXIT },
    delayed_ack::DelayedAck { DelayedAckNagle: NAGLE, DelayedAckCwnd: CWND },
    windows::Windows {
        RwndNoWindowScaling: NO_WINDOW_SCALING,
        RwndLimited: LIMITED,
        RwndZeroWindow: ZERO_WINDOW,
        RwndNotGrowing: NOT_GROWING,
    },
    sndbuf::SndbufLimited { SndbufLimited: SNDBUF_LIMITED },
    recovery::Recovery {
        LossRto: RTO,
        LossTailLossProbe: TAIL_LOSS_PROBE,
        LossFastRetransmit: FAST_RETRANSMIT,
        RetransmitSpurious: SPURIOUS,
    },
    reordering::Reordering { Reordering: REORDERING },
    bufferbloat::Bufferbloat { NetworkBufferbloat: BUFFERBLOAT },
    server_think_time::ServerThinkTime { AppServerThinkTime: SERVER_THINK_TIME },
    app_limited::AppLimited { AppLimited: APP_LIMITED },
}
