//! Inception-v3 as torchvision builds it (without the auxiliary classifier):
//! the stem, 3 × InceptionA, InceptionB, 4 × InceptionC, InceptionD and
//! 2 × InceptionE, every conv a conv → batch norm (ε = 0.001) → ReLU, parallel
//! branches joined by `data.concat` on the channel axis.

use super::net::{Net, Win};
use super::Size;
use ge_dialects::es::{EsResult, Tensor};

struct Inc<'n, 'g> {
    net: &'n mut Net<'g>,
    /// Channel divisor (1 for the full model).
    div: usize,
}

impl<'g> Inc<'_, 'g> {
    fn c(&self, n: usize) -> usize {
        (n / self.div).max(1)
    }

    /// BasicConv2d: conv (no bias) → BN(ε = 0.001) → ReLU; `cout` is the
    /// full-size channel count.
    fn conv(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        cout: usize,
        w: Win,
    ) -> EsResult<(Tensor<'g>, usize)> {
        let cout = self.c(cout);
        let y = self
            .net
            .conv(&format!("{name}.conv"), x, cin, cout, w, 1, false)?;
        let y = self.net.bn(&format!("{name}.bn"), y, cout, 1e-3)?;
        Ok((self.net.b.relu(y)?, cout))
    }

    fn avg3(&mut self, x: Tensor<'g>) -> EsResult<Tensor<'g>> {
        // F.avg_pool2d(x, 3, 1, 1): padding counts (count_include_pad = True).
        self.net.avg_pool(x, Win::same(3, 1), true)
    }

    fn concat(&mut self, parts: &[(Tensor<'g>, usize)]) -> EsResult<(Tensor<'g>, usize)> {
        let ts: Vec<Tensor<'g>> = parts.iter().map(|p| p.0).collect();
        let c = parts.iter().map(|p| p.1).sum();
        Ok((self.net.b.concat(&ts, 1)?, c))
    }

    fn block_a(
        &mut self,
        n: &str,
        x: Tensor<'g>,
        cin: usize,
        pool_features: usize,
    ) -> EsResult<(Tensor<'g>, usize)> {
        let b1 = self.conv(&format!("{n}.branch1x1"), x, cin, 64, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch5x5_1"), x, cin, 48, Win::one())?;
        let b5 = self.conv(&format!("{n}.branch5x5_2"), t, c, 64, Win::same(5, 1))?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_1"), x, cin, 64, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_2"), t, c, 96, Win::same(3, 1))?;
        let b3 = self.conv(&format!("{n}.branch3x3dbl_3"), t, c, 96, Win::same(3, 1))?;
        let p = self.avg3(x)?;
        let bp = self.conv(
            &format!("{n}.branch_pool"),
            p,
            cin,
            pool_features,
            Win::one(),
        )?;
        self.concat(&[b1, b5, b3, bp])
    }

    fn block_b(&mut self, n: &str, x: Tensor<'g>, cin: usize) -> EsResult<(Tensor<'g>, usize)> {
        let b3 = self.conv(&format!("{n}.branch3x3"), x, cin, 384, Win::valid(3, 2))?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_1"), x, cin, 64, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_2"), t, c, 96, Win::same(3, 1))?;
        let bd = self.conv(&format!("{n}.branch3x3dbl_3"), t, c, 96, Win::valid(3, 2))?;
        let p = self.net.max_pool(x, Win::valid(3, 2), false)?;
        self.concat(&[b3, bd, (p, cin)])
    }

    fn block_c(
        &mut self,
        n: &str,
        x: Tensor<'g>,
        cin: usize,
        c7: usize,
    ) -> EsResult<(Tensor<'g>, usize)> {
        let b1 = self.conv(&format!("{n}.branch1x1"), x, cin, 192, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch7x7_1"), x, cin, c7, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch7x7_2"), t, c, c7, Win::rect(1, 7))?;
        let b7 = self.conv(&format!("{n}.branch7x7_3"), t, c, 192, Win::rect(7, 1))?;
        let (t, c) = self.conv(&format!("{n}.branch7x7dbl_1"), x, cin, c7, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch7x7dbl_2"), t, c, c7, Win::rect(7, 1))?;
        let (t, c) = self.conv(&format!("{n}.branch7x7dbl_3"), t, c, c7, Win::rect(1, 7))?;
        let (t, c) = self.conv(&format!("{n}.branch7x7dbl_4"), t, c, c7, Win::rect(7, 1))?;
        let bd = self.conv(&format!("{n}.branch7x7dbl_5"), t, c, 192, Win::rect(1, 7))?;
        let p = self.avg3(x)?;
        let bp = self.conv(&format!("{n}.branch_pool"), p, cin, 192, Win::one())?;
        self.concat(&[b1, b7, bd, bp])
    }

    fn block_d(&mut self, n: &str, x: Tensor<'g>, cin: usize) -> EsResult<(Tensor<'g>, usize)> {
        let (t, c) = self.conv(&format!("{n}.branch3x3_1"), x, cin, 192, Win::one())?;
        let b3 = self.conv(&format!("{n}.branch3x3_2"), t, c, 320, Win::valid(3, 2))?;
        let (t, c) = self.conv(&format!("{n}.branch7x7x3_1"), x, cin, 192, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch7x7x3_2"), t, c, 192, Win::rect(1, 7))?;
        let (t, c) = self.conv(&format!("{n}.branch7x7x3_3"), t, c, 192, Win::rect(7, 1))?;
        let b7 = self.conv(&format!("{n}.branch7x7x3_4"), t, c, 192, Win::valid(3, 2))?;
        let p = self.net.max_pool(x, Win::valid(3, 2), false)?;
        self.concat(&[b3, b7, (p, cin)])
    }

    fn block_e(&mut self, n: &str, x: Tensor<'g>, cin: usize) -> EsResult<(Tensor<'g>, usize)> {
        let b1 = self.conv(&format!("{n}.branch1x1"), x, cin, 320, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch3x3_1"), x, cin, 384, Win::one())?;
        let a = self.conv(&format!("{n}.branch3x3_2a"), t, c, 384, Win::rect(1, 3))?;
        let b = self.conv(&format!("{n}.branch3x3_2b"), t, c, 384, Win::rect(3, 1))?;
        let b3 = self.concat(&[a, b])?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_1"), x, cin, 448, Win::one())?;
        let (t, c) = self.conv(&format!("{n}.branch3x3dbl_2"), t, c, 384, Win::same(3, 1))?;
        let a = self.conv(&format!("{n}.branch3x3dbl_3a"), t, c, 384, Win::rect(1, 3))?;
        let b = self.conv(&format!("{n}.branch3x3dbl_3b"), t, c, 384, Win::rect(3, 1))?;
        let bd = self.concat(&[a, b])?;
        let p = self.avg3(x)?;
        let bp = self.conv(&format!("{n}.branch_pool"), p, cin, 192, Win::one())?;
        self.concat(&[b1, b3, bd, bp])
    }
}

/// Inception-v3. Tiny: channels / 16, 75x75 input (the smallest the stem and
/// reductions allow), 10 classes; full: 299x299, 1000 classes.
pub fn inception_v3<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (div, side, classes) = match size {
        Size::Tiny => (16, 75, 10),
        Size::Full => (1, 299, 1000),
    };
    let x = net
        .b
        .input("x", format!("tensor<Bx3x{side}x{side}xf32>").as_str())?;
    let mut m = Inc { net, div };
    let (y, c) = m.conv("Conv2d_1a_3x3", x, 3, 32, Win::valid(3, 2))?;
    let (y, c) = m.conv("Conv2d_2a_3x3", y, c, 32, Win::valid(3, 1))?;
    let (y, c) = m.conv("Conv2d_2b_3x3", y, c, 64, Win::same(3, 1))?;
    let y = m.net.max_pool(y, Win::valid(3, 2), false)?;
    let (y, c) = m.conv("Conv2d_3b_1x1", y, c, 80, Win::one())?;
    let (y, c) = m.conv("Conv2d_4a_3x3", y, c, 192, Win::valid(3, 1))?;
    let y = m.net.max_pool(y, Win::valid(3, 2), false)?;
    let (y, c) = m.block_a("Mixed_5b", y, c, 32)?;
    let (y, c) = m.block_a("Mixed_5c", y, c, 64)?;
    let (y, c) = m.block_a("Mixed_5d", y, c, 64)?;
    let (y, c) = m.block_b("Mixed_6a", y, c)?;
    let (y, c) = m.block_c("Mixed_6b", y, c, 128)?;
    let (y, c) = m.block_c("Mixed_6c", y, c, 160)?;
    let (y, c) = m.block_c("Mixed_6d", y, c, 160)?;
    let (y, c) = m.block_c("Mixed_6e", y, c, 192)?;
    let (y, c) = m.block_d("Mixed_7a", y, c)?;
    let (y, c) = m.block_e("Mixed_7b", y, c)?;
    let (y, c) = m.block_e("Mixed_7c", y, c)?;
    let y = m.net.b.global_avg_pool(y)?;
    let y = m.net.flatten(y)?;
    Ok(vec![m.net.fc("fc", y, c, classes)?])
}
