//! Transformers as ONNX exports them: BERT-base encoder and a GPT-2 small block
//! stack, with attention spelled out (`matmul` q·kᵀ, scale, mask, `softmax`,
//! `matmul` with v, heads split and merged by `reshape` + `transpose`).

use super::net::Net;
use super::Size;
use ge_dialects::es::{
    EsResult, GatherAttrs, GeluAttrs, ReshapeAttrs, SoftmaxAttrs, SplitAttrs, Tensor,
};
use ge_ir::tensor::Tensor as HostTensor;
use ge_ir::DType;

struct Cfg {
    layers: usize,
    hidden: usize,
    heads: usize,
    ffn: usize,
    vocab: usize,
    seq: usize,
}

/// `[B, S, H]` → `[B, heads, S, dh]` (or `[B, heads, dh, S]` for keys).
fn split_heads<'g>(net: &mut Net<'g>, x: Tensor<'g>, cfg: &Cfg, key: bool) -> EsResult<Tensor<'g>> {
    let dh = (cfg.hidden / cfg.heads) as i64;
    let y = net
        .b
        .reshape(x, &[0, 0, cfg.heads as i64, dh], ReshapeAttrs::default())?;
    let perm: &[i64] = if key { &[0, 2, 3, 1] } else { &[0, 2, 1, 3] };
    net.b.transpose(y, perm)
}

/// Scaled dot-product attention over split heads, optionally with a causal
/// mask (`graph.where` with a `[S, S]` i1 buffer, as GPT-2 does), and the
/// heads merged back to `[B, S, H]`.
fn attention<'g>(
    net: &mut Net<'g>,
    q: Tensor<'g>,
    k: Tensor<'g>,
    v: Tensor<'g>,
    cfg: &Cfg,
    causal: Option<(Tensor<'g>, Tensor<'g>)>,
) -> EsResult<Tensor<'g>> {
    let q = split_heads(net, q, cfg, false)?;
    let k = split_heads(net, k, cfg, true)?;
    let v = split_heads(net, v, cfg, false)?;
    let scale = 1.0 / ((cfg.hidden / cfg.heads) as f64).sqrt();
    let mut s = (net.b.matmul(q, k)? * scale)?;
    if let Some((mask, fill)) = causal {
        s = net.b.where_(mask, s, fill)?;
    }
    let p = net.b.softmax(s, SoftmaxAttrs { axis: -1 })?;
    let c = net.b.matmul(p, v)?;
    let c = net.b.transpose(c, &[0, 2, 1, 3])?;
    net.b
        .reshape(c, &[0, 0, cfg.hidden as i64], ReshapeAttrs::default())
}

/// Token ids `[B, S]` (i64) → embeddings + learned positions `[B, S, H]`.
fn embed<'g>(net: &mut Net<'g>, names: [&str; 2], cfg: &Cfg) -> EsResult<Tensor<'g>> {
    let ids = net
        .b
        .input("input_ids", format!("tensor<Bx{}xi64>", cfg.seq).as_str())?;
    let table = net.param(names[0], &[cfg.vocab, cfg.hidden], -0.1, 0.1)?;
    let words = net.b.embedding(table, ids)?;
    let pos = net.param(names[1], &[cfg.seq, cfg.hidden], -0.1, 0.1)?;
    words + pos
}

/// BERT-base encoder (Devlin et al. 2019): word + position + token-type
/// embeddings, layer norm, 12 post-LN layers of multi-head self-attention and
/// a GELU feed-forward block, and the tanh pooler on the first token.
/// Outputs the sequence output `[B, S, H]` and the pooled output `[B, H]`.
/// All tokens are attended (no padding mask) and every token has type 0.
/// Tiny: hidden 16, 2 heads, FFN 64, vocabulary 100 (12 layers, seq 128 kept);
/// full: hidden 768, 12 heads, FFN 3072, vocabulary 30522.
pub fn bert_base<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let cfg = match size {
        Size::Tiny => Cfg {
            layers: 12,
            hidden: 16,
            heads: 2,
            ffn: 64,
            vocab: 100,
            seq: 128,
        },
        Size::Full => Cfg {
            layers: 12,
            hidden: 768,
            heads: 12,
            ffn: 3072,
            vocab: 30522,
            seq: 128,
        },
    };
    let h = cfg.hidden;
    let x = embed(
        net,
        [
            "embeddings.word_embeddings",
            "embeddings.position_embeddings",
        ],
        &cfg,
    )?;
    let token_type = net.param("embeddings.token_type_embeddings", &[h], -0.1, 0.1)?;
    let x = (x + token_type)?;
    let mut x = net.layer_norm("embeddings.LayerNorm", x, h, 1e-12)?;
    for l in 0..cfg.layers {
        let n = format!("encoder.layer.{l}");
        let q = net.linear(&format!("{n}.attention.self.query"), x, h, h)?;
        let k = net.linear(&format!("{n}.attention.self.key"), x, h, h)?;
        let v = net.linear(&format!("{n}.attention.self.value"), x, h, h)?;
        let c = attention(net, q, k, v, &cfg, None)?;
        let a = net.linear(&format!("{n}.attention.output.dense"), c, h, h)?;
        x = net.layer_norm(
            &format!("{n}.attention.output.LayerNorm"),
            (x + a)?,
            h,
            1e-12,
        )?;
        let f = net.linear(&format!("{n}.intermediate.dense"), x, h, cfg.ffn)?;
        let f = net.b.gelu(f, GeluAttrs::default())?;
        let f = net.linear(&format!("{n}.output.dense"), f, cfg.ffn, h)?;
        x = net.layer_norm(&format!("{n}.output.LayerNorm"), (x + f)?, h, 1e-12)?;
    }
    let first = net
        .b
        .constant(&HostTensor::from_i64(vec![], DType::I64, vec![0]))?;
    let cls = net.b.gather(x, first, GatherAttrs { axis: 1 })?;
    let pooled = net.linear("pooler.dense", cls, h, h)?;
    let pooled = net.b.tanh(pooled)?;
    Ok(vec![x, pooled])
}

/// A GPT-2 small block stack (Radford et al. 2019): token + position
/// embeddings, 12 pre-LN blocks — fused QKV projection split in three,
/// causal self-attention, residual; GELU (tanh) MLP, residual — and the final
/// layer norm. Outputs the hidden states `[B, S, H]` (the tied LM head is left
/// out). Tiny: hidden 16, 2 heads, vocabulary 100 (12 blocks, seq 128 kept);
/// full: hidden 768, 12 heads, vocabulary 50257.
pub fn gpt2_small<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let cfg = match size {
        Size::Tiny => Cfg {
            layers: 12,
            hidden: 16,
            heads: 2,
            ffn: 64,
            vocab: 100,
            seq: 128,
        },
        Size::Full => Cfg {
            layers: 12,
            hidden: 768,
            heads: 12,
            ffn: 3072,
            vocab: 50257,
            seq: 128,
        },
    };
    let h = cfg.hidden;
    let mut x = embed(net, ["wte", "wpe"], &cfg)?;
    let s = cfg.seq;
    let mask: Vec<u8> = (0..s * s).map(|i| u8::from(i % s <= i / s)).collect();
    let mask = net.buffer("causal_mask", &[s as i64, s as i64], DType::I1, &mask)?;
    let fill = net.b.scalar(-1.0e4, DType::F32)?;
    for l in 0..cfg.layers {
        let n = format!("h.{l}");
        let a = net.layer_norm(&format!("{n}.ln_1"), x, h, 1e-5)?;
        let qkv = net.linear(&format!("{n}.attn.c_attn"), a, h, 3 * h)?;
        let parts = net.b.split(
            qkv,
            SplitAttrs {
                axis: -1,
                num_outputs: Some(3),
                ..Default::default()
            },
        )?;
        let [q, k, v] = parts[..] else {
            return Err(ge_dialects::es::EsError::new(
                "split gave the wrong number of parts",
            ));
        };
        let c = attention(net, q, k, v, &cfg, Some((mask, fill)))?;
        let a = net.linear(&format!("{n}.attn.c_proj"), c, h, h)?;
        x = (x + a)?;
        let m = net.layer_norm(&format!("{n}.ln_2"), x, h, 1e-5)?;
        let m = net.linear(&format!("{n}.mlp.c_fc"), m, h, cfg.ffn)?;
        let m = net.b.gelu(
            m,
            GeluAttrs {
                approximate: "tanh".into(),
            },
        )?;
        let m = net.linear(&format!("{n}.mlp.c_proj"), m, cfg.ffn, h)?;
        x = (x + m)?;
    }
    Ok(vec![net.layer_norm("ln_f", x, h, 1e-5)?])
}
