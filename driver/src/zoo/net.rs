//! Layers shared by the zoo models, on top of the ES API: each helper creates
//! its weights (seeded, deterministic) and the ops of one layer.

use ge_dialects::es::{
    AvgPool2dAttrs, BatchNormAttrs, Conv2dAttrs, EsResult, GemmAttrs, GraphBuilder, LayerNormAttrs,
    MaxPool2dAttrs, ReshapeAttrs, Tensor,
};
use ge_ir::{DType, Type};

/// SplitMix64: a tiny, fixed generator, so the committed models stay
/// byte-for-byte reproducible whatever version of `rand` the workspace uses.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }
}

/// A model under construction: the builder, the weight generator and the
/// parameter count.
pub struct Net<'g> {
    pub b: &'g GraphBuilder,
    rng: SplitMix64,
    /// Learnable parameters created so far (batch-norm statistics and
    /// buffers such as masks excluded).
    pub params: u64,
}

/// Kernel, stride and padding of a 2-D window (`pads` as ONNX: top, left,
/// bottom, right).
#[derive(Clone, Copy, Debug)]
pub struct Win {
    pub kh: usize,
    pub kw: usize,
    pub stride: i64,
    pub pads: [i64; 4],
}

impl Win {
    /// A square `k`×`k` window with "same" padding `k/2`.
    pub fn same(k: usize, stride: i64) -> Win {
        let p = (k / 2) as i64;
        Win {
            kh: k,
            kw: k,
            stride,
            pads: [p, p, p, p],
        }
    }
    /// A square window without padding.
    pub fn valid(k: usize, stride: i64) -> Win {
        Win {
            kh: k,
            kw: k,
            stride,
            pads: [0; 4],
        }
    }
    /// A `kh`×`kw` window, stride 1, "same" padding (Inception's 1×7, 7×1).
    pub fn rect(kh: usize, kw: usize) -> Win {
        let (ph, pw) = ((kh / 2) as i64, (kw / 2) as i64);
        Win {
            kh,
            kw,
            stride: 1,
            pads: [ph, pw, ph, pw],
        }
    }
    pub fn one() -> Win {
        Win::valid(1, 1)
    }
}

impl<'g> Net<'g> {
    pub fn new(b: &'g GraphBuilder, seed: u64) -> Net<'g> {
        Net {
            b,
            rng: SplitMix64::new(seed),
            params: 0,
        }
    }

    /// f32 bytes of `n` values drawn uniformly from `[lo, hi)`.
    fn draw(&mut self, n: usize, lo: f64, hi: f64) -> Vec<u8> {
        let mut out = Vec::with_capacity(n * 4);
        for _ in 0..n {
            out.extend_from_slice(&(self.rng.uniform(lo, hi) as f32).to_le_bytes());
        }
        out
    }

    /// A learnable f32 weight of `shape`, uniform in `[lo, hi)`.
    pub fn param(&mut self, name: &str, shape: &[usize], lo: f64, hi: f64) -> EsResult<Tensor<'g>> {
        self.params += shape.iter().product::<usize>() as u64;
        self.stat(name, shape, lo, hi)
    }

    /// A non-learnable f32 tensor (batch-norm running statistics), uniform
    /// in `[lo, hi)`.
    pub fn stat(&mut self, name: &str, shape: &[usize], lo: f64, hi: f64) -> EsResult<Tensor<'g>> {
        let n: usize = shape.iter().product();
        let bytes = self.draw(n, lo, hi);
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        self.b
            .weight_raw(name, Type::tensor_static(&dims, DType::F32), &bytes)
    }

    /// A learnable weight with fan-in scaling: He-uniform (`sqrt(6/fan_in)`)
    /// keeps activations of deep ReLU stacks in range.
    pub fn he(&mut self, name: &str, shape: &[usize], fan_in: usize) -> EsResult<Tensor<'g>> {
        let bound = (6.0 / fan_in.max(1) as f64).sqrt();
        self.param(name, shape, -bound, bound)
    }

    /// A learnable weight scaled like PyTorch's `nn.Linear` (`1/sqrt(fan_in)`).
    pub fn lecun(&mut self, name: &str, shape: &[usize], fan_in: usize) -> EsResult<Tensor<'g>> {
        let bound = 1.0 / (fan_in.max(1) as f64).sqrt();
        self.param(name, shape, -bound, bound)
    }

    /// A non-learnable buffer (masks): raw bytes of `dtype`.
    pub fn buffer(
        &mut self,
        name: &str,
        shape: &[i64],
        dtype: DType,
        bytes: &[u8],
    ) -> EsResult<Tensor<'g>> {
        self.b
            .weight_raw(name, Type::tensor_static(shape, dtype), bytes)
    }

    /// `graph.conv2d` with an OIHW filter (and a bias when `bias`).
    #[allow(clippy::too_many_arguments)]
    pub fn conv(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        cout: usize,
        w: Win,
        group: usize,
        bias: bool,
    ) -> EsResult<Tensor<'g>> {
        let fan_in = cin / group.max(1) * w.kh * w.kw;
        let filter = self.he(
            &format!("{name}.weight"),
            &[cout, cin / group.max(1), w.kh, w.kw],
            fan_in,
        )?;
        let bias = if bias {
            Some(self.lecun(&format!("{name}.bias"), &[cout], fan_in)?)
        } else {
            None
        };
        self.b.conv2d(
            x,
            filter,
            bias,
            Conv2dAttrs {
                strides: vec![w.stride, w.stride],
                pads: w.pads.to_vec(),
                group: group as i64,
                ..Default::default()
            },
        )
    }

    /// Inference batch normalisation over `c` channels (random running stats).
    pub fn bn(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        c: usize,
        epsilon: f64,
    ) -> EsResult<Tensor<'g>> {
        let scale = self.param(&format!("{name}.weight"), &[c], 0.5, 1.0)?;
        let bias = self.param(&format!("{name}.bias"), &[c], -0.1, 0.1)?;
        let mean = self.stat(&format!("{name}.running_mean"), &[c], -0.1, 0.1)?;
        let var = self.stat(&format!("{name}.running_var"), &[c], 0.5, 1.5)?;
        self.b
            .batch_norm(x, scale, bias, mean, var, BatchNormAttrs { epsilon })
    }

    /// conv (no bias) → batch norm → optional ReLU: the basic CNN block.
    #[allow(clippy::too_many_arguments)]
    pub fn conv_bn(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        cout: usize,
        w: Win,
        group: usize,
        relu: bool,
    ) -> EsResult<Tensor<'g>> {
        let y = self.conv(&format!("{name}.conv"), x, cin, cout, w, group, false)?;
        let y = self.bn(&format!("{name}.bn"), y, cout, 1e-5)?;
        if relu {
            self.b.relu(y)
        } else {
            Ok(y)
        }
    }

    /// min(max(x, 0), 6) as `graph.clip` (MobileNet's ReLU6).
    pub fn relu6(&mut self, x: Tensor<'g>) -> EsResult<Tensor<'g>> {
        let lo = self.b.scalar(0.0, DType::F32)?;
        let hi = self.b.scalar(6.0, DType::F32)?;
        self.b.clip(x, Some(lo), Some(hi))
    }

    pub fn max_pool(&mut self, x: Tensor<'g>, w: Win, ceil_mode: bool) -> EsResult<Tensor<'g>> {
        self.b.max_pool2d(
            x,
            &[w.kh as i64, w.kw as i64],
            MaxPool2dAttrs {
                strides: vec![w.stride, w.stride],
                pads: w.pads.to_vec(),
                ceil_mode: ceil_mode as i64,
                ..Default::default()
            },
        )
    }

    pub fn avg_pool(
        &mut self,
        x: Tensor<'g>,
        w: Win,
        count_include_pad: bool,
    ) -> EsResult<Tensor<'g>> {
        self.b.avg_pool2d(
            x,
            &[w.kh as i64, w.kw as i64],
            AvgPool2dAttrs {
                strides: vec![w.stride, w.stride],
                pads: w.pads.to_vec(),
                count_include_pad: count_include_pad as i64,
                ..Default::default()
            },
        )
    }

    /// `[B, C, H, W]` → `[B, C·H·W]`.
    pub fn flatten(&mut self, x: Tensor<'g>) -> EsResult<Tensor<'g>> {
        self.b.reshape(x, &[0, -1], ReshapeAttrs::default())
    }

    /// A fully connected classifier layer as ONNX exports `nn.Linear` on 2-D
    /// input: `graph.gemm` with a transposed `[out, in]` weight and a bias.
    pub fn fc(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        cout: usize,
    ) -> EsResult<Tensor<'g>> {
        let w = self.lecun(&format!("{name}.weight"), &[cout, cin], cin)?;
        let bias = self.lecun(&format!("{name}.bias"), &[cout], cin)?;
        self.b.gemm(
            x,
            w,
            Some(bias),
            GemmAttrs {
                trans_b: 1,
                ..Default::default()
            },
        )
    }

    /// A linear layer on the last dim of any rank (`matmul` + `add`, as ONNX
    /// exports transformer projections).
    pub fn linear(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        cin: usize,
        cout: usize,
    ) -> EsResult<Tensor<'g>> {
        let w = self.lecun(&format!("{name}.weight"), &[cin, cout], cin)?;
        let bias = self.lecun(&format!("{name}.bias"), &[cout], cin)?;
        self.b.matmul(x, w)? + bias
    }

    /// Layer normalisation over the last dim.
    pub fn layer_norm(
        &mut self,
        name: &str,
        x: Tensor<'g>,
        h: usize,
        epsilon: f64,
    ) -> EsResult<Tensor<'g>> {
        let g = self.param(&format!("{name}.weight"), &[h], 0.8, 1.2)?;
        let beta = self.param(&format!("{name}.bias"), &[h], -0.1, 0.1)?;
        self.b.layer_norm(
            x,
            g,
            Some(beta),
            LayerNormAttrs {
                epsilon,
                ..Default::default()
            },
        )
    }
}
