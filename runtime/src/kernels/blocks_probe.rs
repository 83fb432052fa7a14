//! Whether convolutions on NC1HWC0 blocks ([`super::conv_blocked`]) beat
//! the NCHW kernels on this CPU: measured once per process, the first time
//! a model has a convolution they could take (issue 17: kernels chosen by
//! measuring, not by a threshold tuned on one machine).
//!
//! The blocks kernel was tuned on an Intel Xeon (two 512-bit FMA units,
//! 2 MiB L2), where ResNet-50's 56x56 layers ran 1.2-1.5x faster on blocks
//! than on NCHW. On an AMD EPYC (AVX-512 on 256-bit units, 1 MiB L2) the
//! same layers ran 1.05-1.25x *slower* on blocks (docs/benchmarks.md,
//! "seventeenth session"): no CPUID bit tells the two apart. So the loader
//! times both kernels on layers of the shapes [`super::conv_blocked::pays`]
//! admits — 1x1 filters in and out of 256 channels, a 3x3 filter of 64 —
//! on the loading thread, each way several times, and keeps blocks for a
//! kind of filter only where they won by [`MARGIN`].

use super::conv::Conv;
use super::{Par, Slot};
use ge_ir::DType;
use std::sync::OnceLock;
use std::time::Instant;

/// Blocks are kept for a kind of filter when they took at most this share
/// of the NCHW kernel's time (the measured gains where they pay are
/// 15-50 %; a tie is not worth a layout the rest of the model must follow).
pub const MARGIN: f64 = 0.95;

/// Timed runs of each kernel per layer (after one untimed); the fastest
/// counts.
const RUNS: usize = 3;

/// The probe's rows and columns: half of ResNet-50's 56x56 stage (the
/// plane sizes `pays` admits), to keep the probe to ~10 ms.
const ROWS: usize = 28;
const COLS: usize = 56;

/// Both kernels' fastest time on the probe's layers of one kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub blocks_ns: u64,
    pub nchw_ns: u64,
}

impl Timing {
    /// Whether blocks won by [`MARGIN`].
    pub fn pays(&self) -> bool {
        (self.blocks_ns as f64) <= MARGIN * self.nchw_ns as f64
    }
}

/// What the probe measured: 1x1 filters, and filters of several taps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub pointwise: Timing,
    pub taps: Timing,
}

impl Verdict {
    /// Whether blocks pay for a filter of `taps` taps.
    pub fn pays(&self, taps: usize) -> bool {
        match taps {
            1 => self.pointwise.pays(),
            _ => self.taps.pays(),
        }
    }
}

/// This CPU's verdict (measured on the first call).
pub fn verdict() -> Verdict {
    static ONCE: OnceLock<Verdict> = OnceLock::new();
    *ONCE.get_or_init(measure)
}

fn measure() -> Verdict {
    let pointwise = [(256, 64), (64, 256)]
        .iter()
        .map(|&(c, oc)| Layer::new(c, oc, 1).time())
        .fold(
            Timing {
                blocks_ns: 0,
                nchw_ns: 0,
            },
            |a, t| Timing {
                blocks_ns: a.blocks_ns + t.blocks_ns,
                nchw_ns: a.nchw_ns + t.nchw_ns,
            },
        );
    Verdict {
        pointwise,
        taps: Layer::new(64, 64, 3).time(),
    }
}

/// A 64-byte aligned buffer of floats (as the runtime's arenas give).
struct Floats {
    buf: Vec<f32>,
    at: usize,
    len: usize,
}

impl Floats {
    fn new(len: usize, value: impl Fn(usize) -> f32) -> Floats {
        let mut buf = vec![0f32; len + 16];
        let at = buf.as_ptr().align_offset(64).min(16);
        for (i, v) in buf[at..at + len].iter_mut().enumerate() {
            *v = value(i);
        }
        Floats { buf, at, len }
    }

    fn slot(&mut self, shape: &[usize]) -> Slot {
        debug_assert_eq!(shape.iter().product::<usize>(), self.len);
        Slot {
            ptr: self.buf[self.at..].as_mut_ptr().cast(),
            shape: shape.to_vec(),
            dtype: DType::F32,
        }
    }
}

/// One convolution (`c -> oc`, a `k x k` filter, stride 1, same padding,
/// bias and relu) on the probe's plane, with its operands both ways.
struct Layer {
    c: usize,
    oc: usize,
    k: usize,
    x: Floats,
    w: Floats,
    b: Floats,
    y: Floats,
}

impl Layer {
    fn new(c: usize, oc: usize, k: usize) -> Layer {
        let plane = ROWS * COLS;
        // Small values of both signs: no denormals, relu keeps about half.
        let wave = |i: usize| ((i * 7919) % 251) as f32 / 251.0 - 0.5;
        Layer {
            c,
            oc,
            k,
            x: Floats::new(c * plane, wave),
            w: Floats::new(oc * c * k * k, |i| wave(i + 3) * 0.1),
            b: Floats::new(oc, |i| wave(i + 5)),
            y: Floats::new(oc * plane, |_| 0.0),
        }
    }

    fn conv(&self, blocks: bool) -> Conv {
        let p = self.k / 2;
        Conv {
            strides: [1, 1],
            pads: [p; 4],
            dilations: [1, 1],
            group: 1,
            act: "relu".into(),
            alpha: 0.0,
            blocked_out: None,
            plain_type: None,
            winograd: None,
            packed: Default::default(),
            residual: None,
            out_plane: Some(ROWS * COLS),
            reads_blocks: blocks,
            blocks: Default::default(),
        }
    }

    /// Both kernels' fastest of [`RUNS`] runs, alternating.
    fn time(mut self) -> Timing {
        let c0 = super::conv_blocked::C0;
        let (c, oc, k) = (self.c, self.oc, self.k);
        let w = self.w.slot(&[oc, c, k, k]);
        let b = self.b.slot(&[oc]);
        // The same floats serve as either layout: the kernels' speed does
        // not depend on the values.
        let (x_nchw, y_nchw) = (
            self.x.slot(&[1, c, ROWS, COLS]),
            self.y.slot(&[1, oc, ROWS, COLS]),
        );
        let (x_blocks, y_blocks) = (
            self.x.slot(&[1, c / c0, ROWS, COLS, c0]),
            self.y.slot(&[1, oc / c0, ROWS, COLS, c0]),
        );
        let (nchw, blocks) = (self.conv(false), self.conv(true));
        nchw.prepare(&w, usize::MAX);
        blocks.prepare_blocks(&w, usize::MAX);
        let once = |conv: &Conv, x: &Slot, y: &Slot| -> u64 {
            let t = Instant::now();
            match conv.run(&[x, &w, &b], y, &Par::NONE) {
                Ok(()) => u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX),
                // A kernel that cannot run here never wins.
                Err(_) => u64::MAX,
            }
        };
        let mut best = Timing {
            blocks_ns: u64::MAX,
            nchw_ns: u64::MAX,
        };
        for i in 0..=RUNS {
            let (n, bl) = (
                once(&nchw, &x_nchw, &y_nchw),
                once(&blocks, &x_blocks, &y_blocks),
            );
            if i > 0 {
                best.nchw_ns = best.nchw_ns.min(n);
                best.blocks_ns = best.blocks_ns.min(bl);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_pay_only_by_the_margin() {
        let t = |blocks_ns, nchw_ns| Timing { blocks_ns, nchw_ns };
        assert!(t(90, 100).pays());
        assert!(t(95, 100).pays());
        assert!(!t(96, 100).pays());
        assert!(!t(120, 100).pays());
        let v = Verdict {
            pointwise: t(80, 100),
            taps: t(110, 100),
        };
        assert!(v.pays(1));
        assert!(!v.pays(9));
    }

    #[test]
    fn the_probe_times_both_kernels() {
        if !super::super::sgemm_packed::wide() {
            return;
        }
        let v = verdict();
        for t in [v.pointwise, v.taps] {
            assert!(t.blocks_ns > 0 && t.blocks_ns < u64::MAX, "{v:?}");
            assert!(t.nchw_ns > 0 && t.nchw_ns < u64::MAX, "{v:?}");
        }
        assert_eq!(verdict(), v, "measured once");
    }
}
