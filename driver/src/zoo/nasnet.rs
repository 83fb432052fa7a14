//! NASNet-A (Mobile, 4 @ 1056) from Zoph et al., "Learning Transferable
//! Architectures for Scalable Image Recognition" (2018), Fig. 4, with the
//! normal and reduction cells wired as in the reference PyTorch port
//! (Cadene's `pretrainedmodels`).
//!
//! Simplifications (the cell structure is exact):
//! - the two stem cells are ordinary reduction cells (the reference's
//!   `CellStem0/1` differ only in their input adjustment);
//! - when the previous cell's output is twice the spatial size (after a
//!   reduction), it is adjusted by ReLU → strided 1x1 conv → BN instead of the
//!   two-path "factorized reduction";
//! - no auxiliary head, no drop-path (inference).

use super::net::{Net, Win};
use super::Size;
use ge_dialects::es::{EsResult, Tensor};

struct Cells<'n, 'g> {
    net: &'n mut Net<'g>,
}

impl<'g> Cells<'_, 'g> {
    /// ReLU → depthwise k×k (stride s) → pointwise 1x1 → BN, twice (the
    /// second depthwise has stride 1): NASNet's separable conv branch.
    fn sep(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        c: usize,
        k: usize,
        stride: i64,
    ) -> EsResult<Tensor<'g>> {
        let mut y = x;
        for (i, s) in [(1, stride), (2, 1)] {
            y = self.net.b.relu(y)?;
            y = self.net.conv(
                &format!("{name}.separable_{i}.depthwise"),
                y,
                c,
                c,
                Win::same(k, s),
                c,
                false,
            )?;
            y = self.net.conv(
                &format!("{name}.separable_{i}.pointwise"),
                y,
                c,
                c,
                Win::one(),
                1,
                false,
            )?;
            y = self.net.bn(&format!("{name}.bn_sep_{i}"), y, c, 1e-3)?;
        }
        Ok(y)
    }

    /// ReLU → 1x1 conv (strided when the input is twice the size) → BN: bring
    /// a cell input to `c` channels.
    fn adjust(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        c: usize,
        stride: i64,
    ) -> EsResult<Tensor<'g>> {
        let y = self.net.b.relu(x)?;
        let y = self.net.conv(
            &format!("{name}.conv"),
            y,
            cin,
            c,
            Win::valid(1, stride),
            1,
            false,
        )?;
        self.net.bn(&format!("{name}.bn"), y, c, 1e-3)
    }

    fn avg(&mut self, x: Tensor<'g>, stride: i64) -> EsResult<Tensor<'g>> {
        self.net.avg_pool(x, Win::same(3, stride), false)
    }

    fn max(&mut self, x: Tensor<'g>, stride: i64) -> EsResult<Tensor<'g>> {
        self.net.max_pool(x, Win::same(3, stride), false)
    }

    /// The normal cell: 5 blocks over the adjusted inputs `p` (previous cell)
    /// and `h` (this cell's input); the output concatenates `p` and all
    /// blocks (6·c channels).
    #[allow(clippy::too_many_arguments)]
    fn normal(
        &mut self,
        n: &str,
        prev: (Tensor<'g>, usize),
        cur: (Tensor<'g>, usize),
        prev_stride: i64,
        c: usize,
    ) -> EsResult<(Tensor<'g>, usize)> {
        let p = self.adjust(
            &format!("{n}.conv_prev_1x1"),
            prev.0,
            prev.1,
            c,
            prev_stride,
        )?;
        let h = self.adjust(&format!("{n}.conv_1x1"), cur.0, cur.1, c, 1)?;
        let c0 = (self.sep(&format!("{n}.comb_iter_0_left"), h, c, 5, 1)?
            + self.sep(&format!("{n}.comb_iter_0_right"), p, c, 3, 1)?)?;
        let c1 = (self.sep(&format!("{n}.comb_iter_1_left"), p, c, 5, 1)?
            + self.sep(&format!("{n}.comb_iter_1_right"), p, c, 3, 1)?)?;
        let c2 = (self.avg(h, 1)? + p)?;
        let c3 = (self.avg(p, 1)? + self.avg(p, 1)?)?;
        let c4 = (self.sep(&format!("{n}.comb_iter_4_left"), h, c, 3, 1)? + h)?;
        Ok((self.net.b.concat(&[p, c0, c1, c2, c3, c4], 1)?, 6 * c))
    }

    /// The reduction cell: stride-2 blocks; the output concatenates blocks
    /// 1–4 (4·c channels, half the spatial size).
    fn reduction(
        &mut self,
        n: &str,
        prev: (Tensor<'g>, usize),
        cur: (Tensor<'g>, usize),
        prev_stride: i64,
        c: usize,
    ) -> EsResult<(Tensor<'g>, usize)> {
        let p = self.adjust(
            &format!("{n}.conv_prev_1x1"),
            prev.0,
            prev.1,
            c,
            prev_stride,
        )?;
        let h = self.adjust(&format!("{n}.conv_1x1"), cur.0, cur.1, c, 1)?;
        let c0 = (self.sep(&format!("{n}.comb_iter_0_left"), h, c, 5, 2)?
            + self.sep(&format!("{n}.comb_iter_0_right"), p, c, 7, 2)?)?;
        let c1 = (self.max(h, 2)? + self.sep(&format!("{n}.comb_iter_1_right"), p, c, 7, 2)?)?;
        let c2 = (self.avg(h, 2)? + self.sep(&format!("{n}.comb_iter_2_right"), p, c, 5, 2)?)?;
        let c3 = (self.avg(c0, 1)? + c1)?;
        let c4 = (self.sep(&format!("{n}.comb_iter_4_left"), c0, c, 3, 1)? + self.max(h, 2)?)?;
        Ok((self.net.b.concat(&[c1, c2, c3, c4], 1)?, 4 * c))
    }
}

/// NASNet-A Mobile: 3x3 stem conv, two stem reduction cells, then three
/// stacks of N = 4 normal cells separated by reduction cells, filters
/// doubling at each reduction; ReLU, global average pooling, classifier.
/// Tiny: 4 filters in the first stack (44 in the full model), 8 stem
/// filters (32), 32x32 input (224), 10 classes (1000).
pub fn nasnet_a<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (stem_c, f, side, classes) = match size {
        Size::Tiny => (8, 4, 32, 10),
        Size::Full => (32, 44, 224, 1000),
    };
    const N: usize = 4;
    let x = net
        .b
        .input("x", format!("tensor<Bx3x{side}x{side}xf32>").as_str())?;
    let y = net.conv("conv0.conv", x, 3, stem_c, Win::valid(3, 2), 1, false)?;
    let y = net.bn("conv0.bn", y, stem_c, 1e-3)?;
    let mut m = Cells { net };
    let stem = (y, stem_c);
    let s0 = m.reduction("cell_stem_0", stem, stem, 1, (f / 4).max(1))?;
    let s1 = m.reduction("cell_stem_1", stem, s0, 2, (f / 2).max(1))?;
    // (prev, cur) and whether prev is twice cur's size.
    let (mut prev, mut cur, mut prev_stride) = (s0, s1, 2);
    let mut cell = 0;
    for stack in 0..3 {
        let c = f << stack;
        if stack > 0 {
            let r = m.reduction(
                &format!("reduction_cell_{}", stack - 1),
                prev,
                cur,
                prev_stride,
                c,
            )?;
            (prev, cur, prev_stride) = (cur, r, 2);
        }
        for _ in 0..N {
            let out = m.normal(&format!("cell_{cell}"), prev, cur, prev_stride, c)?;
            (prev, cur, prev_stride) = (cur, out, 1);
            cell += 1;
        }
    }
    let y = m.net.b.relu(cur.0)?;
    let y = m.net.b.global_avg_pool(y)?;
    let y = m.net.flatten(y)?;
    Ok(vec![m.net.fc("last_linear", y, cur.1, classes)?])
}
