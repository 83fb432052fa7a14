#!/usr/bin/env python3
"""Export real PyTorch architectures (random, seeded weights; small configs) with
BOTH torch.onnx exporters, with onnxruntime's outputs (issue 16 item 4).

    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py                 # target/torch-gauntlet
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --only bert,resnet18
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --set ci        # testdata/onnx/torch
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --set heldout3  # one set's models only
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --set heldout4 --out target/heldout4
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --dynamic       # target/torch-gauntlet-dynamic
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --dynamic --set ci   # testdata/onnx/dynamic/torch
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --decode        # target/torch-gauntlet-decode
    /work/venvs/torch/bin/python tools/models/gen_torch_gauntlet.py --decode --set ci    # testdata/onnx/dynamic/torch_decode

Needs torch, torchvision, timm, transformers, onnxscript (the dynamo exporter),
onnx and onnxruntime -- gigabytes, so this runs in its own venv, never in CI.

For every model and exporter it writes OUT/<model>/<exporter>/ with
    model.onnx      one file (weights inline: external_data=False)
    inN.npy         the inputs, bound by the graph input names of meta.json
    outN.npy        onnxruntime's outputs of model.onnx on those inputs
    meta.json       name, set (tuned / heldout / heldout2 / heldout3 / heldout4), note, input and output names,
                    and the largest |torch - onnxruntime| difference
where <exporter> is `dynamo` (torch.onnx.export's default, dynamo=True, via
onnxscript) or `torchscript` (dynamo=False). An export that torch itself
refuses is recorded as meta.json with "export_error" and no model.

`tuned` models are the ones issue 16 names (BERT, DistilBERT, GPT-2, Llama,
Qwen2: GatherND from the attention mask; Swin: ScatterND); every other model
is `heldout`: nobody looked at its export before the first run of
tools/models/run_torch_gauntlet.py. `heldout2` is a second such set, added
after the first was passing (grouped / 3D / transposed convolution, Swin-V2,
MaxViT, encoder-decoder BART, LSTM/GRU, a detector's TopK and NMS, ...),
`heldout3` a third, added after the second was passing (optical flow's
GridSample, Unfold / Fold (Col2Im), space-to-depth and PixelShuffle
(DepthToSpace), 1-D and dilated convolutions, ConvTranspose1d, FFT (DFT),
CumSum, hashing by Mod, vector quantisation's ArgMax, weight standardisation,
channels-first LayerNorm, 2-D LSTMs, conformer and time-series blocks, ...),
and `heldout4` a fourth, added after the third was passing (MLP mixers, large-kernel
and multi-branch convolutions, spatial-reduction / talking-heads / window attention,
depth estimation's reassembly, ALiBi, partial rotary, local attention, a selective
state-space scan, a spectrogram transformer, ...).
`--set <name>` exports one set's models only.

`--dynamic` (issue 15) exports the models of DYNAMIC_SET with dynamic axes
instead -- `dynamic_shapes` for dynamo (named `torch.export.Dim`s: batch,
sequence; batch, height, width for a CNN; batch for ViT, whose position
embedding fixes the image size), `dynamic_axes` for TorchScript -- from an
example at batch 2 (torch.export specialises dims of size 1), and writes the
inputs and onnxruntime's outputs at each size of SIZES as
<size>.inN.npy / <size>.outN.npy (meta.json "sizes" lists them).

`--decode` (issue 15 item 5) exports the causal LMs of DECODE_SET (the
*ForCausalLM / LMHeadModel classes) with a KV cache: inputs input_ids,
attention_mask [batch, past + new], position_ids and past_key_values.<l>.key /
.value [batch, kv_heads, past_sequence, head_dim]; outputs logits and
present.<l>.key / .value (the cache grown by the new tokens). Dynamo gets named
Dims batch, sequence, past_sequence (the mask's length is Dim.AUTO: torch
derives it as past + new), TorchScript dynamic_axes. From ONE export it
records onnxruntime's outputs at the past lengths of DECODE_SIZES (0 = the
prefill, 1, 7, 31) and onnxruntime's greedy decoding of 16 tokens
(greedy.prompt.npy, meta.json "greedy"; tools/models/greedy_decode.py), each
present fed back as the next past.

Configurations are small (64x64 images, 10 classes; transformers with 2
layers, hidden 32, vocabulary 256, 8 tokens) so a debug ge build compiles and
runs each in seconds; the architecture (every block type and op pattern) is
the real library's.
"""

import argparse
import json
import os
import shutil
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from greedy_decode import STEPS, greedy  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMG = 64
CLASSES = 10
VOCAB = 256
SEQ = 8


class FirstOutput(torch.nn.Module):
    """Returns one tensor of a model that returns a dict / tuple / ModelOutput."""

    def __init__(self, m, key):
        super().__init__()
        self.m = m
        self.key = key

    def forward(self, *args):
        out = self.m(*args)
        return out[self.key]


def image(seed=0, batch=1, height=IMG, width=IMG):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, 3, height, width, generator=g),), ["pixels"], ["logits"]


def tokens(mask=True, seed=0, batch=1, seq=SEQ):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (batch, seq), generator=g)
    if not mask:
        return (ids,), ["input_ids"], ["last_hidden_state"]
    # A padded batch element: the last two tokens of the last element are
    # masked out, so the mask code's output matters.
    m = torch.ones(batch, seq, dtype=torch.int64)
    m[-1, -min(2, seq - 1):] = 0
    return (ids, m), ["input_ids", "attention_mask"], ["last_hidden_state"]


# --- torchvision / timm image models -------------------------------------


def tv(fn, **kw):
    import torchvision.models as tvm

    return getattr(tvm, fn)(weights=None, num_classes=CLASSES, **kw), *image()


def m_convnext_tiny():
    # ConvNeXt-tiny's depths (3, 3, 9, 3), widths / 4 (24..192 instead of 96..768).
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    cfg = [CNBlockConfig(24, 48, 3), CNBlockConfig(48, 96, 3), CNBlockConfig(96, 192, 9), CNBlockConfig(192, None, 3)]
    return ConvNeXt(cfg, stochastic_depth_prob=0.1, num_classes=CLASSES), *image()


def m_swin_t():
    # Swin-T's depths (2, 2, 6, 2) and window 7, embed 24 (/4), heads 1-2-4-8;
    # 64x64 input: 16x16 patches, padded to the window, shifted windows.
    from torchvision.models.swin_transformer import SwinTransformer

    m = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2, 6, 2], num_heads=[1, 2, 4, 8],
                        window_size=[7, 7], stochastic_depth_prob=0.2, num_classes=CLASSES)
    return m, *image()


def m_vit():
    import timm

    m = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=IMG, num_classes=CLASSES, depth=4)
    return m, *image()


def m_deeplabv3():
    import torchvision.models.segmentation as seg

    m = seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5, aux_loss=False)
    args, ins, _ = image()
    return FirstOutput(m, "out"), args, ins, ["out"]


# --- transformers ---------------------------------------------------------


class ByName(torch.nn.Module):
    """A transformers model called as a user calls it: inputs by keyword
    (GPT-2's second positional argument is past_key_values, not the mask),
    the first output (last_hidden_state) as a tensor."""

    def __init__(self, m, names):
        super().__init__()
        self.m = m
        self.names = names

    def forward(self, *args):
        return self.m(**dict(zip(self.names, args)), return_dict=False)[0]


def hf(model_cls, cfg, mask=True):
    cfg.use_cache = False
    m = model_cls(cfg)
    args, ins, outs = tokens(mask)
    return ByName(m, ins), args, ins, outs


def m_bert():
    from transformers import BertConfig, BertModel

    return hf(BertModel, BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                    intermediate_size=64, max_position_embeddings=64))


def m_distilbert():
    from transformers import DistilBertConfig, DistilBertModel

    return hf(DistilBertModel, DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                                max_position_embeddings=64))


def m_gpt2():
    from transformers import GPT2Config, GPT2Model

    return hf(GPT2Model, GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=64))


def m_llama():
    from transformers import LlamaConfig, LlamaModel

    return hf(LlamaModel, LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))


def m_qwen2():
    from transformers import Qwen2Config, Qwen2Model

    return hf(Qwen2Model, Qwen2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))


def m_t5_encoder():
    from transformers import T5Config, T5EncoderModel

    return hf(T5EncoderModel, T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4))


def m_roberta():
    from transformers import RobertaConfig, RobertaModel

    return hf(RobertaModel, RobertaConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=64, max_position_embeddings=64))


def m_mistral():
    from transformers import MistralConfig, MistralModel

    return hf(MistralModel, MistralConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                          sliding_window=4))


def m_whisper_encoder():
    from transformers import WhisperConfig, WhisperModel

    cfg = WhisperConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
                        max_source_positions=16, max_target_positions=16, pad_token_id=1, bos_token_id=2,
                        eos_token_id=2, decoder_start_token_id=2)
    enc = WhisperModel(cfg).get_encoder()
    g = torch.Generator().manual_seed(0)
    feats = torch.randn(1, 16, 32, generator=g)  # [batch, mel bins, 2 * max_source_positions]
    return ByName(enc, ["input_features"]), (feats,), ["input_features"], ["last_hidden_state"]


def m_deberta_v2():
    from transformers import DebertaV2Config, DebertaV2Model

    return hf(DebertaV2Model, DebertaV2Config(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                              relative_attention=True, position_buckets=16,
                                              pos_att_type=["p2c", "c2p"]))


def m_albert():
    from transformers import AlbertConfig, AlbertModel

    return hf(AlbertModel, AlbertConfig(vocab_size=VOCAB, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))


def m_gemma():
    from transformers import GemmaConfig, GemmaModel

    return hf(GemmaModel, GemmaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=1, head_dim=8,
                                      max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2))


def m_wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    cfg = Wav2Vec2Config(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, feat_extract_norm="group",
                         do_stable_layer_norm=False, mask_time_prob=0.0)
    g = torch.Generator().manual_seed(0)
    wave = torch.randn(1, 800, generator=g)
    return ByName(Wav2Vec2Model(cfg), ["input_values"]), (wave,), ["input_values"], ["last_hidden_state"]


def m_clip_vision():
    from transformers import CLIPVisionConfig, CLIPVisionModel

    cfg = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=IMG, patch_size=16)
    args, ins, _ = image()
    return ByName(CLIPVisionModel(cfg), ["pixel_values"]), args, ins, ["last_hidden_state"]


def m_segformer():
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    cfg = SegformerConfig(num_labels=5, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 1, 2, 2],
                          decoder_hidden_size=32)
    args, ins, _ = image()
    return ByName(SegformerForSemanticSegmentation(cfg), ["pixel_values"]), args, ins, ["logits"]


def m_mobilevit():
    import timm

    return timm.create_model("mobilevit_xxs", pretrained=False, num_classes=CLASSES), *image()


def m_lraspp():
    import torchvision.models.segmentation as seg

    m = seg.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)
    args, ins, _ = image()
    return FirstOutput(m, "out"), args, ins, ["out"]


def m_inception_v3():
    import torchvision.models as tvm

    # init_weights=False: torchvision's own init (truncated normal, std 0.1) makes
    # the logits ~1e10 at random weights; PyTorch's default init keeps them O(1).
    m = tvm.inception_v3(weights=None, num_classes=CLASSES, aux_logits=False, init_weights=False)
    g = torch.Generator().manual_seed(0)
    return m, (torch.randn(1, 3, 96, 96, generator=g),), ["pixels"], ["logits"]


# name -> (builder, set, note)
# --- heldout2: architectures nobody looked at before their first run -------


def m_vgg11_bn():
    import torchvision.models as tvm

    # VGG-11 with BatchNorm; its classifier's 4096-wide layers narrowed to 256
    # (25088 x 4096 weights would be 400 MB). At 64x64 the features are 2x2, so
    # AdaptiveAvgPool2d((7, 7)) upsamples (overlapping, non-divisible bins).
    m = tvm.vgg11_bn(weights=None, num_classes=CLASSES)
    m.classifier[0] = torch.nn.Linear(512 * 7 * 7, 256)
    m.classifier[3] = torch.nn.Linear(256, 256)
    m.classifier[6] = torch.nn.Linear(256, CLASSES)
    return m, *image()


def m_r3d_18():
    import torchvision.models.video as tvv

    m = tvv.r3d_18(weights=None, num_classes=CLASSES)
    g = torch.Generator().manual_seed(0)
    return m, (torch.randn(1, 3, 4, 32, 32, generator=g),), ["clip"], ["logits"]


def m_swin_v2_t():
    # Swin-V2 blocks (cosine attention, log-spaced continuous position bias MLP,
    # post-norm, PatchMergingV2), embed 24, window 8, depths 2-2-2-2, 64x64.
    from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

    m = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2, 2, 2], num_heads=[1, 2, 4, 8],
                        window_size=[8, 8], stochastic_depth_prob=0.2, num_classes=CLASSES,
                        block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2)
    return m, *image()


def m_maxvit():
    # MaxViT's blocks (MBConv + SE, block and grid attention with relative
    # position bias), channels 16-128, partition 2, 64x64.
    from torchvision.models.maxvit import MaxVit

    m = MaxVit(input_size=(IMG, IMG), stem_channels=16, partition_size=2, block_channels=[16, 32, 64, 128],
               block_layers=[2, 2, 2, 2], head_dim=8, stochastic_depth_prob=0.2, num_classes=CLASSES)
    return m, *image()


class UNet(torch.nn.Module):
    """A small UNet: three levels, skips by Concat; up-sampling by
    ConvTranspose2d (stride 2, kernel 2 and kernel 3 with output_padding) and by
    bilinear Upsample (align_corners False) and interpolate (align_corners True)."""

    def __init__(self, classes=5):
        super().__init__()

        def block(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1, bias=False), torch.nn.BatchNorm2d(o),
                                       torch.nn.ReLU(inplace=True), torch.nn.Conv2d(o, o, 3, padding=1, bias=False),
                                       torch.nn.BatchNorm2d(o), torch.nn.ReLU(inplace=True))

        self.e1, self.e2, self.e3, self.mid = block(3, 8), block(8, 16), block(16, 32), block(32, 64)
        self.pool = torch.nn.MaxPool2d(2)
        self.up3 = torch.nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.d3 = block(64, 32)
        self.up2 = torch.nn.Sequential(torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                       torch.nn.Conv2d(32, 16, 1))
        self.d2 = block(32, 16)
        self.up1 = torch.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
        self.d1 = block(16, 8)
        self.head = torch.nn.Conv2d(8, classes, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(self.pool(e1))
        e3 = self.e3(self.pool(e2))
        m = self.mid(self.pool(e3))
        d3 = self.d3(torch.cat([self.up3(m), e3], 1))
        d2 = self.d2(torch.cat([self.up2(d3), e2], 1))
        d1 = self.d1(torch.cat([self.up1(d2), e1], 1))
        y = self.head(d1)
        return y + torch.nn.functional.interpolate(y[:, :, ::2, ::2], scale_factor=2, mode="bilinear",
                                                   align_corners=True)


def m_unet():
    args, ins, _ = image()
    return UNet(), args, ins, ["out"]


def m_bart():
    from transformers import BartConfig, BartModel

    # Encoder-decoder: the decoder's inputs are input_ids shifted right (BartModel
    # does it), causal self-attention and cross-attention to the padded encoder.
    return hf(BartModel, BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
                                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                                    decoder_ffn_dim=64, max_position_embeddings=64))


def m_mobilebert():
    from transformers import MobileBertConfig, MobileBertModel

    return hf(MobileBertModel, MobileBertConfig(vocab_size=VOCAB, hidden_size=32, embedding_size=16, num_hidden_layers=2,
                                                num_attention_heads=2, intermediate_size=32, intra_bottleneck_size=16,
                                                true_hidden_size=16, num_feedforward_networks=4,
                                                max_position_embeddings=64))


def m_convbert():
    from transformers import ConvBertConfig, ConvBertModel

    return hf(ConvBertModel, ConvBertConfig(vocab_size=VOCAB, hidden_size=32, embedding_size=32, num_hidden_layers=2,
                                            num_attention_heads=2, intermediate_size=64, head_ratio=2,
                                            conv_kernel_size=9, num_groups=1, max_position_embeddings=64))


def m_dinov2():
    from transformers import Dinov2Config, Dinov2Model

    # Trained at 64x64 (4x4 patches), run at 80x80: the position embedding is
    # interpolated (bicubic) to 5x5; layer scale.
    cfg = Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2, image_size=IMG,
                       patch_size=16)
    args, ins, _ = image(height=80, width=80)
    return ByName(Dinov2Model(cfg), ["pixel_values"]), args, ins, ["last_hidden_state"]


def m_beit():
    from transformers import BeitConfig, BeitModel

    cfg = BeitConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=IMG,
                     patch_size=16, use_relative_position_bias=True, use_mask_token=False, use_mean_pooling=True)
    args, ins, _ = image()
    return ByName(BeitModel(cfg), ["pixel_values"]), args, ins, ["last_hidden_state"]


def m_levit():
    import timm

    return timm.create_model("levit_128s", pretrained=False, img_size=IMG, num_classes=CLASSES), *image()


def m_poolformer():
    import timm

    return timm.create_model("poolformer_s12", pretrained=False, num_classes=CLASSES), *image()


class RNNTagger(torch.nn.Module):
    """Embedding, a 2-layer bidirectional LSTM, a GRU and a linear head per token."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 32)
        self.lstm = torch.nn.LSTM(32, 32, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = torch.nn.GRU(64, 32, batch_first=True)
        self.head = torch.nn.Linear(32, CLASSES)

    def forward(self, ids):
        x, _ = self.lstm(self.emb(ids))
        x, _ = self.gru(x)
        return self.head(x)


def m_rnn():
    args, ins, _ = tokens(mask=False)
    return RNNTagger(), args, ins, ["logits"]


class Detections(torch.nn.Module):
    """A torchvision detector called on a batch of one image: its boxes,
    scores and labels (a variable number of detections)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m(list(x))[0]
        return out["boxes"], out["scores"], out["labels"]


def m_ssdlite():
    import torchvision.models.detection as det

    # Its transform resizes the 64x64 image to 320x320 (bilinear); the head's
    # post-processing: score threshold, TopK per class, batched NMS.
    m = det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)
    args, ins, _ = image()
    return Detections(m), args, ins, ["boxes", "scores", "labels"]


def m_xlnet():
    from transformers import XLNetConfig, XLNetModel

    return hf(XLNetModel, XLNetConfig(vocab_size=VOCAB, d_model=32, n_layer=2, n_head=2, d_inner=64))


def m_funnel():
    from transformers import FunnelBaseModel, FunnelConfig

    return hf(FunnelBaseModel, FunnelConfig(vocab_size=VOCAB, block_sizes=[1, 1], block_repeats=[1, 1], d_model=32,
                                            n_head=2, d_head=16, d_inner=64, max_position_embeddings=64))


def m_longformer():
    from transformers import LongformerConfig, LongformerModel

    return hf(LongformerModel, LongformerConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                                num_attention_heads=2, intermediate_size=64, attention_window=4,
                                                max_position_embeddings=64))


def m_convnextv2():
    import timm

    return timm.create_model("convnextv2_atto", pretrained=False, num_classes=CLASSES), *image()


# --- heldout3: a third set nobody looked at before its first run ------------


def timm_image(name, img=IMG, **kw):
    import timm

    m = timm.create_model(name, pretrained=False, num_classes=CLASSES, **kw)
    g = torch.Generator().manual_seed(0)
    return m, (torch.randn(1, 3, img, img, generator=g),), ["pixels"], ["logits"]


class LastFlow(torch.nn.Module):
    """RAFT called on two frames with a few refinement iterations: the last flow."""

    def __init__(self, m, updates):
        super().__init__()
        self.m = m
        self.updates = updates

    def forward(self, a, b):
        return self.m(a, b, num_flow_updates=self.updates)[-1]


def m_raft_small():
    from torchvision.models.optical_flow import raft_small

    # Feature / context encoders at 1/8 (16x16 of 128x128: the smallest its
    # 4-level correlation pyramid takes), the all-pairs correlation volume, the
    # correlation lookup by grid_sample (bilinear, zeros padding, align_corners
    # True), a ConvGRU and raft_small's bilinear flow upsampling; 3 flow updates.
    m = raft_small(weights=None)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(1, 3, 128, 128, generator=g), torch.randn(1, 3, 128, 128, generator=g)
    return LastFlow(m, 3), (a, b), ["frame1", "frame2"], ["flow"]


def m_ghostnetv2():
    # Ghost modules (cheap depthwise features, Concat + Slice), DFC attention
    # (AvgPool, (1,5) / (5,1) depthwise convs, nearest Resize, sigmoid gate), SE.
    return timm_image("ghostnetv2_100")


def m_hrnet_w18_small():
    # Parallel multi-resolution branches fused by strided convs and nearest
    # Upsample (x2, x4, x8), incremental classification head.
    return timm_image("hrnet_w18_small")


def m_resnest14d():
    # Split attention (radix 2: grouped conv, sum, global pool, softmax over the
    # radix by Reshape/Transpose), deep stem, avg-pool downsampling.
    return timm_image("resnest14d")


def m_xcit_nano():
    # Cross-covariance attention (L2-normalised q/k over tokens, learned
    # temperature), Fourier position encoding, local patch interaction
    # (depthwise conv + BatchNorm), class attention; depth 4.
    return timm_image("xcit_nano_12_p16_224", img_size=IMG, depth=4)


def m_tnt():
    # Transformer in transformer: pixel embedding by nn.Unfold (im2col), inner
    # and outer attention; depth 4.
    return timm_image("tnt_s_patch16_224", img_size=IMG, depth=4)


def m_volo():
    # VOLO-D1's blocks with 1 block per stage, widths / 3: outlook attention
    # (Unfold, per-location attention weights, Fold (col2im) with overlaps,
    # AvgPool), then class attention.
    from timm.models.volo import VOLO

    m = VOLO(layers=(1, 1, 1, 1), img_size=IMG, embed_dims=(64, 128, 128, 128), num_heads=(2, 4, 4, 4),
             num_classes=CLASSES)
    return m, *image()


def m_eca_nfnet():
    # Normalizer-free ResNet: scaled weight-standardised convs (the weights
    # normalised in the graph), ECA attention (a 1-D conv across channels),
    # SiLU, skip gains; depths 1-1-1-1.
    return timm_image("eca_nfnet_l0", depths=(1, 1, 1, 1))


def m_tresnet_m():
    # TResNet: space-to-depth stem (Reshape / Transpose), anti-aliased
    # downsampling (fixed blur depthwise conv), leaky-ReLU BatchNorm, SE.
    return timm_image("tresnet_m")


def m_edgenext():
    # LayerNorm over channels (channels-first), split depthwise convs,
    # cross-covariance transposed attention, Fourier position encoding.
    return timm_image("edgenext_xx_small")


def m_sequencer():
    # Sequencer2D: bidirectional LSTMs along rows and columns of the patch grid;
    # one block per stage. timm zero-initialises the head (all logits 0): a
    # fresh Linear (PyTorch's default init) instead.
    m, *rest = timm_image("sequencer2d_s", layers=(1, 1, 1, 1))
    m.reset_classifier(CLASSES)
    return m, *rest


def m_botnet():
    # BoTNet: bottleneck self-attention with relative position logits
    # (rel_to_abs by Pad / Reshape / Slice), 64x64.
    return timm_image("botnet26t_256", img_size=IMG)


def m_efficientvit():
    # MIT EfficientViT: ReLU linear attention (value padded with ones: Pad
    # with a constant 1, division by the last row), multi-scale aggregation
    # (grouped 5x5 conv), hard-swish.
    return timm_image("efficientvit_b0")


def m_skresnet18():
    # Selective kernel: 3x3 and dilated 3x3 (dilation 2) branches, softmax
    # attention over the branches.
    return timm_image("skresnet18")


def m_coat_lite():
    # CoaT-Lite: factorised attention (softmax over the tokens of k, then
    # k^T v, q (k^T v): MatMuls), convolutional relative position encoding
    # (depthwise convs of kernels 3, 5, 7 on channel splits), conv position
    # encoding.
    return timm_image("coat_lite_tiny", img_size=IMG)


def m_fnet():
    from transformers import FNetConfig, FNetModel

    # Fourier token mixing: the real part of a 2-D FFT over (sequence, hidden).
    cfg = FNetConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, intermediate_size=64,
                     max_position_embeddings=64, use_tpu_fourier_optimizations=False)
    return hf(FNetModel, cfg, mask=False)


def m_squeezebert():
    from transformers import SqueezeBertConfig, SqueezeBertModel

    # Grouped 1-D convolutions (kernel 1) instead of the q/k/v/out/FFN Linears.
    return hf(SqueezeBertModel, SqueezeBertConfig(vocab_size=VOCAB, hidden_size=32, embedding_size=32,
                                                  num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                                  max_position_embeddings=64, q_groups=2, k_groups=2, v_groups=2,
                                                  post_attention_groups=2, intermediate_groups=4, output_groups=4))


def m_canine():
    from transformers import CanineConfig, CanineModel

    # Characters hashed into buckets (multiply, modulo), local attention,
    # strided 1-D conv downsampling by 4, repeat upsampling, 16 characters.
    cfg = CanineConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                       max_position_embeddings=64, num_hash_functions=4, num_hash_buckets=64, downsampling_rate=4,
                       upsampling_kernel_size=4, local_transformer_stride=8)
    cfg.use_cache = False
    args, ins, outs = tokens(seq=16)
    return ByName(CanineModel(cfg), ins), args, ins, outs


class Detr(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m(pixel_values=x)
        return out.logits, out.pred_boxes


def m_detr():
    from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig

    # A transformers ResNet backbone (no timm), the pixel mask interpolated
    # (nearest) to the features, sine position embedding by CumSum, a 2+2-layer
    # encoder-decoder over 10 object queries, class and box heads. Weights
    # N(0, 0.2): at its default 0.02 every box is 0.5 +- 1e-4.
    backbone = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                            layer_type="basic", out_features=["stage4"])
    cfg = DetrConfig(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False,
                     d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=10,
                     num_labels=5, init_std=0.2)
    args, ins, _ = image()
    return Detr(DetrForObjectDetection(cfg)), args, ins, ["logits", "pred_boxes"]


def m_swin2sr():
    from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution

    # Super-resolution x2 of a 32x32 image: Swin-V2 blocks, window 8,
    # PixelShuffle (DepthToSpace) upsampler. (Its reflect padding of sizes that
    # are not multiples of the window is broken in transformers 5.)
    cfg = Swin2SRConfig(image_size=32, patch_size=1, embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=8,
                        mlp_ratio=2.0, upscale=2, upsampler="pixelshuffle", img_range=1.0)
    args, ins, _ = image(height=32, width=32)
    return ByName(Swin2SRForImageSuperResolution(cfg), ["pixel_values"]), args, ins, ["reconstruction"]


def m_hifigan():
    from transformers import SpeechT5HifiGan, SpeechT5HifiGanConfig

    # HiFi-GAN vocoder: ConvTranspose1d upsampling x4 x4, multi-receptive-field
    # residual blocks of dilated 1-D convs (dilation 1, 3, 5), leaky ReLU, tanh.
    # Weights N(0, 0.1) (its default 0.01 makes the waveform ~1e-5).
    cfg = SpeechT5HifiGanConfig(model_in_dim=16, upsample_initial_channel=32, upsample_rates=[4, 4],
                                upsample_kernel_sizes=[8, 8], resblock_kernel_sizes=[3, 7],
                                resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]], initializer_range=0.1)
    g = torch.Generator().manual_seed(0)
    return SpeechT5HifiGan(cfg), (torch.randn(1, 20, 16, generator=g),), ["spectrogram"], ["waveform"]


class EncodecRoundTrip(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x, return_dict=True).audio_values


def m_encodec():
    from transformers import EncodecConfig, EncodecModel

    # Neural audio codec: causal 1-D convs with reflect padding, weight norm,
    # strided downsampling, ELU, LSTM, residual vector quantisation (nearest
    # code: ArgMax of the negative distance, Gather; 2 codebooks of 64 at
    # 12 kbps), ConvTranspose1d decoder; 800 samples. (torch.export refuses it:
    # the conv paddings are computed from tensors.)
    cfg = EncodecConfig(target_bandwidths=[12.0], sampling_rate=8000, hidden_size=16, num_filters=4,
                        upsampling_ratios=[4, 2], num_lstm_layers=1, codebook_size=64, codebook_dim=16)
    g = torch.Generator().manual_seed(0)
    return EncodecRoundTrip(EncodecModel(cfg)), (torch.randn(1, 1, 800, generator=g),), ["audio"], ["audio_values"]


def m_wav2vec2_conformer():
    from transformers import Wav2Vec2ConformerConfig, Wav2Vec2ConformerModel

    # Conformer blocks: relative positional self-attention (Transformer-XL
    # style, rel_shift), convolution module (GLU, depthwise Conv1d,
    # BatchNorm1d, SiLU), macaron half-step FFNs.
    cfg = Wav2Vec2ConformerConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2),
                                  conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                  position_embeddings_type="relative", conv_depthwise_kernel_size=7,
                                  max_source_positions=64, mask_time_prob=0.0)
    g = torch.Generator().manual_seed(0)
    wave = torch.randn(1, 800, generator=g)
    return ByName(Wav2Vec2ConformerModel(cfg), ["input_values"]), (wave,), ["input_values"], ["last_hidden_state"]


def m_patchtst():
    from transformers import PatchTSTConfig, PatchTSTModel

    # Time series: per-series standard scaling, patches by Tensor.unfold
    # (length 8, stride 4), channel-independent transformer with BatchNorm.
    cfg = PatchTSTConfig(num_input_channels=3, context_length=32, patch_length=8, patch_stride=4, d_model=32,
                         num_hidden_layers=2, num_attention_heads=2, ffn_dim=64, scaling="std", do_mask_input=False)
    g = torch.Generator().manual_seed(0)
    series = torch.randn(1, 32, 3, generator=g)
    return ByName(PatchTSTModel(cfg), ["past_values"]), (series,), ["past_values"], ["last_hidden_state"]


# --- heldout4: a fourth set nobody looked at before its first run -----------


def m_mixer():
    # MLP-Mixer: token mixing by a Linear over the patches (Transpose around
    # it), channel mixing MLPs; 4 blocks.
    from timm.models.mlp_mixer import MlpMixer

    return MlpMixer(num_classes=CLASSES, img_size=IMG, patch_size=16, num_blocks=4, embed_dim=128), *image()


def m_resmlp():
    # ResMLP: Affine "norms" (per-channel scale and shift), a Linear over the
    # patches, layer scale; 4 blocks.
    from timm.models.mlp_mixer import Affine, MlpMixer, ResBlock

    return MlpMixer(num_classes=CLASSES, img_size=IMG, patch_size=16, num_blocks=4, embed_dim=128, mlp_ratio=4,
                    block_layer=ResBlock, norm_layer=Affine), *image()


def m_convmixer():
    # ConvMixer: patch embedding by a stride-4 conv, 9x9 depthwise convs with
    # GELU and BatchNorm, residual; 4 blocks of 64 channels.
    from timm.models.convmixer import ConvMixer

    return ConvMixer(dim=64, depth=4, kernel_size=9, patch_size=4, num_classes=CLASSES), *image()


def m_pvt_v2():
    # PVT-v2: overlapping patch embedding, spatial-reduction attention (keys
    # and values from a strided conv), depthwise conv in the MLP.
    return timm_image("pvt_v2_b0")


def m_cait():
    # CaiT: talking-heads attention (Linear across heads before and after the
    # softmax), layer scale, class attention; 4 + 2 blocks.
    return timm_image("cait_xxs24_224", img_size=IMG, depth=4)


def m_repvgg():
    # RepVGG-A0 in its training form: 3x3 + 1x1 + identity BatchNorm branches summed.
    return timm_image("repvgg_a0")


def m_mobileone():
    # MobileOne-S0 unreparameterised: over-parameterised depthwise/pointwise
    # branches (k parallel conv-BN), scale branch.
    return timm_image("mobileone_s0")


def m_fastvit():
    # FastViT-T8: RepMixer token mixing, conditional positional encoding by a
    # 7x7 depthwise conv, large-kernel depthwise stems.
    return timm_image("fastvit_t8")


def m_dla():
    # DLA-34: iterative and hierarchical deep aggregation (trees of concat +
    # 1x1 conv), max-pool downsampling of the residual.
    return timm_image("dla34")


def m_res2net():
    # Res2Net-50 14w 8s: each bottleneck's channels split 8 ways, a 3x3 conv
    # per split fed with the previous split's output (Split, Add, Concat).
    return timm_image("res2net50_14w_8s")


def m_rexnet():
    # ReXNet: channel-increasing inverted residuals whose shortcut adds into
    # the first channels only (Slice, Add, Concat), SiLU, SE with ReLU6.
    return timm_image("rexnet_100")


def m_cspdarknet():
    # CSPDarkNet-53: cross-stage partial blocks (split, dense path, concat),
    # leaky ReLU.
    return timm_image("cspdarknet53")


def m_dpn():
    # DPN-68: dual path (a residual part added, a dense part concatenated;
    # Slice and Concat of the two), grouped 3x3 convs.
    return timm_image("dpn68")


def m_hgnetv2():
    # PP-HGNetV2-B0: stem with a max-pool branch padded by F.pad, light conv
    # blocks (1x1 + depthwise), feature aggregation by Concat, learnable affine.
    return timm_image("hgnetv2_b0")


def m_mobilenetv4():
    # MobileNetV4 conv-small: universal inverted bottlenecks (optional
    # depthwise before and after the expansion).
    return timm_image("mobilenetv4_conv_small")


def m_inception_next():
    # InceptionNeXt-atto: the depthwise conv split into identity, 3x3, 1x11
    # and 11x1 branches (Split, Concat), ConvMLP.
    return timm_image("inception_next_atto")


def m_starnet():
    # StarNet-S1: the "star" operation (the product of two branches' ReLU6
    # and linear outputs), 7x7 depthwise convs.
    return timm_image("starnet_s1")


def m_focalnet():
    # FocalNet: focal modulation (hierarchical depthwise contexts gated by a
    # softmax-free gate, global average context, a 1x1 modulator); one block per stage.
    from timm.models.focalnet import FocalNet

    return FocalNet(depths=(1, 1, 1, 1), embed_dim=48, focal_levels=(2, 2, 2, 2), focal_windows=(3, 3, 3, 3),
                    num_classes=CLASSES), *image()


def m_tiny_vit():
    # TinyViT-5M at 64x64: MBConv stage, window attention with padding to the
    # window and attention biases by index, depthwise conv between attention and MLP.
    return timm_image("tiny_vit_5m_224")


def m_mobilevitv2():
    # MobileViT-v2: separable self-attention (a softmax over the patches of a
    # 1-channel context score), unfold/fold by Reshape.
    return timm_image("mobilevitv2_050")


def m_bloom():
    from transformers import BloomConfig, BloomModel

    # ALiBi position biases (slopes by head, cumsum of the mask), fused QKV.
    return hf(BloomModel, BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4))


def m_opt():
    from transformers import OPTConfig, OPTModel

    # Learned positions offset by 2 and computed from the mask's cumsum, ReLU FFN.
    return hf(OPTModel, OPTConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                                  num_attention_heads=2, max_position_embeddings=64, word_embed_proj_dim=32))


def m_phi():
    from transformers import PhiConfig, PhiModel

    # Partial rotary embedding (half the head dims), parallel attention and MLP.
    return hf(PhiModel, PhiConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, partial_rotary_factor=0.5, max_position_embeddings=64))


def m_gpt_neo():
    from transformers import GPTNeoConfig, GPTNeoModel

    # Alternating global and local (window 4) causal attention, no scaling.
    return hf(GPTNeoModel, GPTNeoConfig(vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=2,
                                        attention_types=[[["global", "local"], 1]], window_size=4,
                                        max_position_embeddings=64, intermediate_size=64))


def m_mpnet():
    from transformers import MPNetConfig, MPNetModel

    # Relative position buckets (log-spaced, by Where/Log/Min) added to every layer's scores.
    return hf(MPNetModel, MPNetConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=64, max_position_embeddings=64))


def m_electra():
    from transformers import ElectraConfig, ElectraModel

    # Embeddings of width 16 projected to the hidden 32.
    return hf(ElectraModel, ElectraConfig(vocab_size=VOCAB, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                                          num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))


def m_mixtral():
    from transformers import MixtralConfig, MixtralModel

    # Sparse mixture of experts: router softmax, top-2 of 4 experts, tokens
    # gathered per expert and scattered back (data-dependent shapes).
    return hf(MixtralModel, MixtralConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                          num_experts_per_tok=2, max_position_embeddings=64))


def m_mamba():
    from transformers import MambaConfig, MambaModel

    # Selective state space: causal depthwise Conv1d, softplus time steps,
    # the scan unrolled over the 8 tokens (Exp, Mul, Add per step).
    return hf(MambaModel, MambaConfig(vocab_size=VOCAB, hidden_size=32, state_size=8, num_hidden_layers=2,
                                      expand=2, conv_kernel=4), mask=False)


def m_roformer():
    from transformers import RoFormerConfig, RoFormerModel

    # Sinusoidal rotary position embedding applied to q and k (stack of
    # interleaved halves).
    return hf(RoFormerModel, RoFormerConfig(vocab_size=VOCAB, embedding_size=32, hidden_size=32, num_hidden_layers=2,
                                            num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))


def m_ast():
    from transformers import ASTConfig, ASTModel

    # Audio spectrogram transformer: overlapping 16x16 patches of a
    # 64-frame x 32-bin spectrogram (stride 10), distillation token.
    cfg = ASTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, patch_size=16,
                    frequency_stride=10, time_stride=10, max_length=64, num_mel_bins=32)
    g = torch.Generator().manual_seed(0)
    spec = torch.randn(1, 64, 32, generator=g)
    return ByName(ASTModel(cfg), ["input_values"]), (spec,), ["input_values"], ["last_hidden_state"]


def m_dpt():
    from transformers import DPTConfig, DPTForDepthEstimation

    # DPT depth estimation: ViT tokens reassembled into maps at 4 scales
    # (ConvTranspose2d x4 / x2, strided conv), RefineNet fusion with bilinear
    # upsampling (align_corners), a depth head.
    cfg = DPTConfig(hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64, image_size=64,
                    patch_size=16, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[16, 32, 64, 64],
                    fusion_hidden_size=32, reassemble_factors=[4, 2, 1, 0.5], head_in_index=-1)
    m = DPTForDepthEstimation(cfg)
    return ByName(m, ["pixel_values"]), image()[0], ["pixel_values"], ["predicted_depth"]


MODELS = {
    "bert": (m_bert, "tuned", "transformers BertModel, 2 layers, hidden 32, padding mask"),
    "distilbert": (m_distilbert, "tuned", "transformers DistilBertModel, 2 layers, hidden 32, padding mask"),
    "gpt2": (m_gpt2, "tuned", "transformers GPT2Model, 2 layers, n_embd 32, padding mask"),
    "llama": (m_llama, "tuned", "transformers LlamaModel, 2 layers, hidden 32, GQA 4/2 heads, RoPE, padding mask"),
    "qwen2": (m_qwen2, "tuned", "transformers Qwen2Model, 2 layers, hidden 32, GQA 4/2 heads, padding mask"),
    "swin_t": (m_swin_t, "tuned", "torchvision SwinTransformer, Swin-T depths/window, embed 24, 64x64"),
    "resnet18": (lambda: tv("resnet18"), "heldout", "torchvision resnet18, 64x64, 10 classes"),
    "mobilenet_v3_small": (lambda: tv("mobilenet_v3_small"), "heldout", "torchvision, hard-swish, squeeze-excite, 64x64"),
    "efficientnet_b0": (lambda: tv("efficientnet_b0"), "heldout", "torchvision, SiLU, squeeze-excite, stochastic depth (eval), 64x64"),
    "densenet121": (lambda: tv("densenet121"), "heldout", "torchvision, 64x64"),
    "shufflenet_v2": (lambda: tv("shufflenet_v2_x0_5"), "heldout", "torchvision shufflenet_v2_x0_5 (channel shuffle), 64x64"),
    "squeezenet": (lambda: tv("squeezenet1_1"), "heldout", "torchvision squeezenet1_1 (ceil-mode max pool), 64x64"),
    "mnasnet": (lambda: tv("mnasnet0_5"), "heldout", "torchvision mnasnet0_5, 64x64"),
    "regnet": (lambda: tv("regnet_y_400mf"), "heldout", "torchvision regnet_y_400mf (grouped conv, SE), 64x64"),
    "googlenet": (lambda: tv("googlenet", aux_logits=False, init_weights=True), "heldout", "torchvision GoogLeNet (inception blocks, ceil-mode pools), 64x64"),
    "convnext_tiny": (m_convnext_tiny, "heldout", "torchvision ConvNeXt, tiny depths 3-3-9-3, widths 24-192, 64x64"),
    "vit": (m_vit, "heldout", "timm vit_tiny_patch16_224 at 64x64, depth 4"),
    "deeplabv3": (m_deeplabv3, "heldout", "torchvision deeplabv3_mobilenet_v3_large head (ASPP, bilinear Resize), 64x64"),
    "t5_encoder": (m_t5_encoder, "heldout", "transformers T5EncoderModel, 2 layers, d_model 32, relative position bias"),
    "roberta": (m_roberta, "heldout", "transformers RobertaModel, 2 layers, hidden 32 (positions from the padding)"),
    "mistral": (m_mistral, "heldout", "transformers MistralModel, 2 layers, GQA, sliding window 4"),
    "whisper_encoder": (m_whisper_encoder, "heldout", "transformers Whisper encoder, 2 layers, d_model 32, 16 mel bins"),
    "wav2vec2": (m_wav2vec2, "heldout", "transformers Wav2Vec2Model: conv feature encoder, GroupNorm, conv positions, 800 samples"),
    "deberta_v2": (m_deberta_v2, "heldout", "transformers DebertaV2Model, disentangled relative attention (p2c, c2p)"),
    "albert": (m_albert, "heldout", "transformers AlbertModel, shared layers, factorised embedding"),
    "gemma": (m_gemma, "heldout", "transformers GemmaModel, multi-query attention, GELU-tanh gate, scaled embedding"),
    "clip_vision": (m_clip_vision, "heldout", "transformers CLIPVisionModel, patch 16, 64x64, quick-GELU"),
    "segformer": (m_segformer, "heldout", "transformers SegFormer for segmentation: overlapping patches, efficient attention, Resize"),
    "mobilevit": (m_mobilevit, "heldout", "timm mobilevit_xxs (unfold/fold by Reshape+Transpose), 64x64"),
    "lraspp": (m_lraspp, "heldout", "torchvision lraspp_mobilenet_v3_large (bilinear Resize), 64x64"),
    "mobilenet_v2": (lambda: tv("mobilenet_v2"), "heldout", "torchvision mobilenet_v2, 64x64"),
    "inception_v3": (m_inception_v3, "heldout", "torchvision Inception v3, 96x96"),
    # heldout2: nobody looked at these exports before their first run.
    "resnext50": (lambda: tv("resnext50_32x4d"), "heldout2", "torchvision resnext50_32x4d (grouped conv, bottleneck), 64x64"),
    "mobilenet_v3_large": (lambda: tv("mobilenet_v3_large"), "heldout2", "torchvision mobilenet_v3_large, 64x64"),
    "efficientnet_v2_s": (lambda: tv("efficientnet_v2_s"), "heldout2", "torchvision efficientnet_v2_s (fused MBConv), 64x64"),
    "vgg11_bn": (m_vgg11_bn, "heldout2", "torchvision vgg11_bn, classifier 256 wide, AdaptiveAvgPool 2x2 -> 7x7, 64x64"),
    "r3d_18": (m_r3d_18, "heldout2", "torchvision video r3d_18 (Conv3d, BatchNorm3d, 3D pools), 1x3x4x32x32"),
    "swin_v2_t": (m_swin_v2_t, "heldout2", "torchvision Swin-V2 blocks (cosine attention, CPB MLP), embed 24, window 8, 64x64"),
    "maxvit": (m_maxvit, "heldout2", "torchvision MaxVit (MBConv+SE, block/grid attention), channels 16-128, 64x64"),
    "unet": (m_unet, "heldout2", "inline UNet: ConvTranspose2d, skip Concat, bilinear Upsample / align_corners, 64x64"),
    "bart": (m_bart, "heldout2", "transformers BartModel, 2+2 layers, d_model 32, shifted decoder inputs, cross-attention"),
    "mobilebert": (m_mobilebert, "heldout2", "transformers MobileBertModel: trigram embedding, bottlenecks, NoNorm, 4 FFNs"),
    "convbert": (m_convbert, "heldout2", "transformers ConvBertModel: span-based dynamic conv (unfold), head ratio 2"),
    "dinov2": (m_dinov2, "heldout2", "transformers Dinov2Model at 80x80: bicubic position interpolation (Resize; dynamo folds it), layer scale"),
    "beit": (m_beit, "heldout2", "transformers BeitModel: relative position bias, layer scale, 64x64"),
    "levit": (m_levit, "heldout2", "timm levit_128s at 64x64: attention bias by index (folded by both exporters), hard-swish, BN-linear"),
    "poolformer": (m_poolformer, "heldout2", "timm poolformer_s12 (AvgPool token mixer, GroupNorm), 64x64"),
    "rnn": (m_rnn, "heldout2", "inline tagger: Embedding, 2-layer bidirectional LSTM, GRU, Linear per token"),
    "ssdlite": (m_ssdlite, "heldout2", "torchvision ssdlite320_mobilenet_v3_large: resize to 320, TopK by a run-time K, batched NMS, If"),
    "xlnet": (m_xlnet, "heldout2", "transformers XLNetModel: two-stream relative attention (rel_shift), 2 layers"),
    "funnel": (m_funnel, "heldout2", "transformers FunnelBaseModel: sequence pooling between blocks, relative attention"),
    "longformer": (m_longformer, "heldout2", "transformers LongformerModel: sliding-window chunked attention, window 4"),
    "convnextv2": (m_convnextv2, "heldout2", "timm convnextv2_atto (global response norm), 64x64"),
    # heldout3: a third such set, nobody looked at these exports before their first run.
    "raft_small": (m_raft_small, "heldout3", "torchvision raft_small optical flow: correlation pyramid, grid_sample lookup, ConvGRU, 3 updates, 2x 128x128"),
    "ghostnetv2": (m_ghostnetv2, "heldout3", "timm ghostnetv2_100: ghost modules, DFC attention (AvgPool, 1x5/5x1 depthwise, nearest Resize), 64x64"),
    "hrnet_w18_small": (m_hrnet_w18_small, "heldout3", "timm hrnet_w18_small: multi-resolution fusion, nearest Upsample x2/x4/x8, 64x64"),
    "resnest14d": (m_resnest14d, "heldout3", "timm resnest14d: split attention (radix softmax), deep stem, avg-pool downsampling, 64x64"),
    "xcit_nano": (m_xcit_nano, "heldout3", "timm xcit_nano_12_p16 depth 4: cross-covariance attention (L2 normalise), Fourier positions, LPI, class attention, 64x64"),
    "tnt": (m_tnt, "heldout3", "timm tnt_s_patch16 depth 4: pixel embedding by nn.Unfold (im2col), inner/outer attention, 64x64"),
    "volo": (m_volo, "heldout3", "timm VOLO (d1 blocks, 1/stage, widths 64-128): outlook attention (Unfold, Fold with overlaps), class attention, 64x64"),
    "eca_nfnet": (m_eca_nfnet, "heldout3", "timm eca_nfnet_l0 depths 1-1-1-1: scaled weight-standardised convs, ECA (Conv1d over channels), 64x64"),
    "tresnet_m": (m_tresnet_m, "heldout3", "timm tresnet_m: space-to-depth stem (Reshape/Transpose), anti-aliased (blur) downsampling, leaky ReLU, SE, 64x64"),
    "edgenext": (m_edgenext, "heldout3", "timm edgenext_xx_small: channels-first LayerNorm, split depthwise convs, transposed attention, 64x64"),
    "sequencer": (m_sequencer, "heldout3", "timm sequencer2d_s 1 block/stage: bidirectional LSTMs along rows and columns, 64x64"),
    "botnet": (m_botnet, "heldout3", "timm botnet26t at 64x64: self-attention with relative position logits (Pad/Reshape rel_to_abs)"),
    "efficientvit": (m_efficientvit, "heldout3", "timm efficientvit_b0 (MIT): ReLU linear attention (Pad by 1), multi-scale grouped convs, 64x64"),
    "skresnet18": (m_skresnet18, "heldout3", "timm skresnet18: selective kernel (3x3 + dilated 3x3 branches, softmax over branches), 64x64"),
    "coat_lite": (m_coat_lite, "heldout3", "timm coat_lite_tiny: factorised attention (k^T v), conv relative position encoding (3/5/7 depthwise), 64x64"),
    "fnet": (m_fnet, "heldout3", "transformers FNetModel, 2 layers, hidden 32: Fourier token mixing (real part of a 2-D FFT)"),
    "squeezebert": (m_squeezebert, "heldout3", "transformers SqueezeBertModel, 2 layers, hidden 32: grouped Conv1d projections, padding mask"),
    "canine": (m_canine, "heldout3", "transformers CanineModel: hashed character embeddings (Mod), Conv1d downsampling x4, repeat upsampling, 16 chars"),
    "detr": (m_detr, "heldout3", "transformers DetrForObjectDetection, ResNet backbone (no timm): mask Resize, CumSum sine positions, 10 queries, 64x64"),
    "swin2sr": (m_swin2sr, "heldout3", "transformers Swin2SR x2 of 32x32: Swin-V2 blocks, window 8, PixelShuffle upsampler"),
    "hifigan": (m_hifigan, "heldout3", "transformers SpeechT5HifiGan vocoder: ConvTranspose1d x4 x4, dilated Conv1d residual blocks, leaky ReLU, 20 frames"),
    "encodec": (m_encodec, "heldout3", "transformers EncodecModel round trip: reflect-padded causal Conv1d, ELU, LSTM, residual VQ (ArgMax), ConvTranspose1d, 800 samples"),
    "wav2vec2_conformer": (m_wav2vec2_conformer, "heldout3", "transformers Wav2Vec2ConformerModel: relative position attention, conv module (GLU, depthwise Conv1d, BatchNorm1d)"),
    "patchtst": (m_patchtst, "heldout3", "transformers PatchTSTModel: std scaling, patches by Tensor.unfold, channel-independent transformer, 3x32 series"),
    # heldout4: a fourth such set, nobody looked at these exports before their first run.
    "mixer": (m_mixer, "heldout4", "timm MlpMixer (patch 16, embed 128, 4 blocks) at 64x64: token-mixing Linear over patches (Transpose)"),
    "resmlp": (m_resmlp, "heldout4", "timm ResMLP (MlpMixer with ResBlock, embed 128, 4 blocks) at 64x64: Affine norms, Linear over patches, layer scale"),
    "convmixer": (m_convmixer, "heldout4", "timm ConvMixer dim 64 depth 4: stride-4 patch conv, 9x9 depthwise, GELU, BatchNorm, 64x64"),
    "pvt_v2": (m_pvt_v2, "heldout4", "timm pvt_v2_b0: overlapping patch embedding, spatial-reduction attention, depthwise conv MLP, 64x64"),
    "cait": (m_cait, "heldout4", "timm cait_xxs24 depth 4 at 64x64: talking-heads attention, layer scale, class attention"),
    "repvgg": (m_repvgg, "heldout4", "timm repvgg_a0 (training form: 3x3 + 1x1 + identity BN branches), 64x64"),
    "mobileone": (m_mobileone, "heldout4", "timm mobileone_s0 unreparameterised (parallel conv-BN branches), 64x64"),
    "fastvit": (m_fastvit, "heldout4", "timm fastvit_t8: RepMixer, conditional positional encoding (7x7 depthwise), 64x64"),
    "dla": (m_dla, "heldout4", "timm dla34: deep layer aggregation trees (Concat + 1x1), 64x64"),
    "res2net": (m_res2net, "heldout4", "timm res2net50_14w_8s: hierarchical 8-way channel splits per bottleneck, 64x64"),
    "rexnet": (m_rexnet, "heldout4", "timm rexnet_100: shortcut added into the first channels (Slice/Add/Concat), SiLU, SE, 64x64"),
    "cspdarknet": (m_cspdarknet, "heldout4", "timm cspdarknet53: cross-stage partial blocks, leaky ReLU, 64x64"),
    "dpn": (m_dpn, "heldout4", "timm dpn68: dual path blocks (residual Add + dense Concat), grouped convs, 64x64"),
    "hgnetv2": (m_hgnetv2, "heldout4", "timm hgnetv2_b0: padded max-pool stem branch, light conv blocks, aggregation Concat, 64x64"),
    "mobilenetv4": (m_mobilenetv4, "heldout4", "timm mobilenetv4_conv_small: universal inverted bottlenecks, 64x64"),
    "inception_next": (m_inception_next, "heldout4", "timm inception_next_atto: depthwise conv split into 3x3 / 1x11 / 11x1 / identity, 64x64"),
    "starnet": (m_starnet, "heldout4", "timm starnet_s1: element-wise product of two branches (star), 7x7 depthwise, 64x64"),
    "focalnet": (m_focalnet, "heldout4", "timm FocalNet (embed 48, 1 block/stage, focal level 2): focal modulation (gated depthwise contexts), 64x64"),
    "tiny_vit": (m_tiny_vit, "heldout4", "timm tiny_vit_5m at 64x64: window attention padded to the window, attention biases by index"),
    "mobilevitv2": (m_mobilevitv2, "heldout4", "timm mobilevitv2_050: separable self-attention (softmax over patches), 64x64"),
    "bloom": (m_bloom, "heldout4", "transformers BloomModel, 2 layers, hidden 32: ALiBi biases, padding mask"),
    "opt": (m_opt, "heldout4", "transformers OPTModel, 2 layers, hidden 32: positions from the mask's cumsum, ReLU FFN"),
    "phi": (m_phi, "heldout4", "transformers PhiModel, 2 layers, hidden 32: partial rotary (half the head), parallel attention + MLP"),
    "gpt_neo": (m_gpt_neo, "heldout4", "transformers GPTNeoModel, global + local (window 4) attention layers"),
    "mpnet": (m_mpnet, "heldout4", "transformers MPNetModel: log-bucketed relative position bias"),
    "electra": (m_electra, "heldout4", "transformers ElectraModel: embeddings 16 projected to hidden 32"),
    "mixtral": (m_mixtral, "heldout4", "transformers MixtralModel: sparse MoE, top-2 of 4 experts, GQA 4/2, padding mask"),
    "mamba": (m_mamba, "heldout4", "transformers MambaModel, 2 layers: selective scan unrolled over 8 tokens, causal Conv1d, softplus"),
    "roformer": (m_roformer, "heldout4", "transformers RoFormerModel: sinusoidal rotary q/k, padding mask"),
    "ast": (m_ast, "heldout4", "transformers ASTModel: overlapping 16x16 patches of a 64x32 spectrogram, distillation token"),
    "dpt": (m_dpt, "heldout4", "transformers DPTForDepthEstimation: ViT reassembled at 4 scales (ConvTranspose2d), bilinear fusion, 64x64"),
}

# The committed CI subset (testdata/onnx/torch, < 5 MB with both exporters).
CI_SET = ["bert", "llama", "resnet18_ci"]


def m_resnet18_ci():
    # ResNet-18's topology at 32x32 with widths / 8: the CNN of the CI set.
    m = _narrow_resnet(8)
    g = torch.Generator().manual_seed(0)
    return m, (torch.randn(1, 3, 32, 32, generator=g),), ["pixels"], ["logits"]


def _narrow_resnet(width):
    """torchvision's ResNet with BasicBlocks at widths width..8*width (it has
    no width factor for BasicBlock): its own _make_layer builds the stages."""
    from torchvision.models.resnet import BasicBlock, ResNet

    class Narrow(ResNet):
        def __init__(self):
            torch.nn.Module.__init__(self)
            self._norm_layer = torch.nn.BatchNorm2d
            self.inplanes = width
            self.dilation = 1
            self.groups = 1
            self.base_width = 64
            self.conv1 = torch.nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(width)
            self.relu = torch.nn.ReLU(inplace=True)
            self.maxpool = torch.nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(BasicBlock, width, 2)
            self.layer2 = self._make_layer(BasicBlock, 2 * width, 2, stride=2)
            self.layer3 = self._make_layer(BasicBlock, 4 * width, 2, stride=2)
            self.layer4 = self._make_layer(BasicBlock, 8 * width, 2, stride=2)
            self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
            self.fc = torch.nn.Linear(8 * width, CLASSES)

    return Narrow()


MODELS["resnet18_ci"] = (m_resnet18_ci, "heldout", "torchvision ResNet (BasicBlock 2-2-2-2), widths 8-64, 32x32 (CI set)")


def m_resnet18_tiny():
    # ResNet-18's topology with widths / 16 (4-32): the CNN of the dynamic CI set.
    m = _narrow_resnet(4)
    args, ins, outs = image(batch=2, height=40, width=32)
    return m, args, ins, outs


MODELS["resnet18_tiny"] = (m_resnet18_tiny, "heldout", "torchvision ResNet (BasicBlock 2-2-2-2), widths 4-32 (dynamic CI set)")

# --dynamic: name -> axes kind. "tokens": input_ids / attention_mask [batch,
# sequence] -> [batch, sequence, hidden]; "image" / "small_image": pixels
# [batch, 3, height, width] -> logits [batch, classes] (small_image: sizes
# that keep the CI set small); "batch": pixels [batch, 3, IMG, IMG].
DYNAMIC_SET = {"bert": "tokens", "distilbert": "tokens", "gpt2": "tokens", "llama": "tokens", "qwen2": "tokens",
               "roberta": "tokens", "resnet18": "image", "vit": "batch", "resnet18_tiny": "small_image"}
DYNAMIC_CI_SET = ["bert", "llama", "resnet18_tiny"]
# The sizes each kind runs at (the export's example is batch 2, not one of
# torch.export's specialised sizes 0 and 1).
SIZES = {"tokens": [(1, 5), (2, 8), (3, 13)], "image": [(1, 64, 64), (2, 48, 40), (3, 72, 56)],
         "small_image": [(1, 32, 32), (2, 40, 32), (3, 24, 40)], "batch": [(1,), (2,), (3,)]}
AXES = {"tokens": ({0: "batch", 1: "sequence"}, {0: "batch", 1: "sequence"}),
        "image": ({0: "batch", 2: "height", 3: "width"}, {0: "batch"}),
        "small_image": ({0: "batch", 2: "height", 3: "width"}, {0: "batch"}),
        "batch": ({0: "batch"}, {0: "batch"})}


def size_name(kind, size):
    return "".join(f"{k}{v}" for k, v in zip({"tokens": "bs", "batch": "b"}.get(kind, "bhw"), size))


def dynamic_inputs(kind, n_inputs, size, seed):
    if kind == "tokens":
        return tokens(mask=n_inputs == 2, seed=seed, batch=size[0], seq=size[1])[0]
    if kind in ("image", "small_image"):
        return image(seed=seed, batch=size[0], height=size[1], width=size[2])[0]
    return image(seed=seed, batch=size[0])[0]


def export_dynamic(name, exporter, out_dir):
    """Exports NAME with dynamic axes and writes onnxruntime's outputs at each size of SIZES."""
    import inspect

    builder, kind, note = MODELS[name]
    axes = DYNAMIC_SET[name]
    torch.manual_seed(0)
    model, _, in_names, out_names = builder()
    model.eval()
    with torch.no_grad():
        randomize_norms(model)
    example = dynamic_inputs(axes, len(in_names), (2, 8) if axes == "tokens" else (2, 64, 56)[: len(SIZES[axes][0])], 0)
    in_axes, out_axes = AXES[axes]
    d = os.path.join(out_dir, name, exporter)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    meta = {"name": name, "set": kind, "note": note, "exporter": exporter, "torch": torch.__version__,
            "inputs": in_names, "outputs": out_names, "dynamic": {n: in_axes for n in in_names}}
    path = os.path.join(d, "model.onnx")
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                dims = {a: torch.export.Dim(a) for a in set(in_axes.values())}
                specs = tuple({i: dims[a] for i, a in in_axes.items()} for _ in in_names)
                params = inspect.signature(model.forward).parameters.values()
                if any(p.kind == p.VAR_POSITIONAL for p in params):
                    specs = (specs,)
                torch.onnx.export(model, example, path, dynamo=True, external_data=False, input_names=in_names,
                                  output_names=out_names, dynamic_shapes=specs)
            else:
                dyn = {n: in_axes for n in in_names} | {n: out_axes for n in out_names}
                torch.onnx.export(model, example, path, dynamo=False, input_names=in_names, output_names=out_names,
                                  dynamic_axes=dyn)
        m = onnx.load(path)
    except Exception as e:  # torch refused: recorded, not a ge result
        return refused(meta, d, e)
    graph_inputs = [i.name for i in m.graph.input]
    meta["inputs"] = [n for n in in_names if n in graph_inputs]
    meta["outputs"] = [o.name for o in m.graph.output]
    meta["opset"] = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    meta["ops"] = sorted({n.op_type for n in m.graph.node})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    meta["sizes"], meta["ort_vs_torch"] = [], 0.0
    for k, size in enumerate(SIZES[axes]):
        args = dynamic_inputs(axes, len(in_names), size, 10 + k)
        sz = size_name(axes, size)
        feeds = {n: a.numpy() for n, a in zip(in_names, args) if n in meta["inputs"]}
        with torch.no_grad():
            want = flat(model(*args))
        got = sess.run(None, feeds)
        for i, n in enumerate(meta["inputs"]):
            np.save(os.path.join(d, f"{sz}.in{i}.npy"), feeds[n])
        for i, o in enumerate(got):
            np.save(os.path.join(d, f"{sz}.out{i}.npy"), o)
        diff = max(float(np.max(np.abs(g - w.numpy()))) if g.size else 0.0 for g, w in zip(got, want))
        meta["ort_vs_torch"] = max(meta["ort_vs_torch"], diff)
        meta["sizes"].append(sz)
    json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
    return meta


# --decode (issue 15 item 5): causal LMs with a KV cache. name -> (builder, set, note).
# Each builder returns (model class, config); the config keeps the gauntlet's tiny sizes.


def d_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    return LlamaForCausalLM, LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)


def d_qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return Qwen2ForCausalLM, Qwen2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)


def d_mistral():
    from transformers import MistralConfig, MistralForCausalLM

    # A sliding window shorter than the longest cache: the mask, not the cache, applies it.
    return MistralForCausalLM, MistralConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             max_position_embeddings=128, sliding_window=16)


def d_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel, GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=128)


def d_phi():
    from transformers import PhiConfig, PhiForCausalLM

    return PhiForCausalLM, PhiConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
                                     partial_rotary_factor=0.5)


def d_gemma():
    from transformers import GemmaConfig, GemmaForCausalLM

    return GemmaForCausalLM, GemmaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=1, head_dim=8,
                                         max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def d_qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM

    return Qwen3ForCausalLM, Qwen3Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                         max_position_embeddings=128)


def d_phi3():
    from transformers import Phi3Config, Phi3ForCausalLM

    return Phi3ForCausalLM, Phi3Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                       pad_token_id=0, bos_token_id=1, eos_token_id=2)


DECODE_SET = {
    "llama": (d_llama, "tuned", "transformers LlamaForCausalLM, 2 layers, hidden 32, GQA 4/2 heads, RoPE"),
    "qwen2": (d_qwen2, "tuned", "transformers Qwen2ForCausalLM, 2 layers, hidden 32, GQA 4/2 heads, q/k/v biases"),
    "mistral": (d_mistral, "heldout", "transformers MistralForCausalLM, GQA, sliding window 16 (< the longest cache)"),
    "gpt2": (d_gpt2, "heldout", "transformers GPT2LMHeadModel, 2 layers, n_embd 32, learned positions, tied head"),
    "phi": (d_phi, "heldout", "transformers PhiForCausalLM, partial rotary (half the head), parallel attention/MLP"),
    "gemma": (d_gemma, "heldout", "transformers GemmaForCausalLM, multi-query attention, scaled embedding"),
    "qwen3": (d_qwen3, "heldout", "transformers Qwen3ForCausalLM, q/k RMSNorm per head, GQA 4/2"),
    "phi3": (d_phi3, "heldout", "transformers Phi3ForCausalLM, fused qkv and gate/up projections, GQA 4/2"),
}


def d_opt():
    from transformers import OPTConfig, OPTForCausalLM

    return OPTForCausalLM, OPTConfig(vocab_size=VOCAB, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                                     num_attention_heads=2, max_position_embeddings=128, word_embed_proj_dim=32,
                                     pad_token_id=1, bos_token_id=2, eos_token_id=2)


def d_bloom():
    from transformers import BloomConfig, BloomForCausalLM

    return BloomForCausalLM, BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4)


def d_gpt_neox():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    return GPTNeoXForCausalLM, GPTNeoXConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                             num_hidden_layers=2, num_attention_heads=4, rotary_pct=0.25,
                                             max_position_embeddings=128)


def d_falcon():
    from transformers import FalconConfig, FalconForCausalLM

    return FalconForCausalLM, FalconConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                           num_attention_heads=4, num_kv_heads=1, multi_query=True,
                                           new_decoder_architecture=False, parallel_attn=True, alibi=False,
                                           max_position_embeddings=128)


def d_gemma2():
    from transformers import Gemma2Config, Gemma2ForCausalLM

    return Gemma2ForCausalLM, Gemma2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                           head_dim=8, max_position_embeddings=128, sliding_window=16,
                                           pad_token_id=0, bos_token_id=1, eos_token_id=2)


def d_olmo2():
    from transformers import Olmo2Config, Olmo2ForCausalLM

    return Olmo2ForCausalLM, Olmo2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                         pad_token_id=0, bos_token_id=1, eos_token_id=2)


def d_stablelm():
    from transformers import StableLmConfig, StableLmForCausalLM

    return StableLmForCausalLM, StableLmConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                               partial_rotary_factor=0.25, max_position_embeddings=128)


DECODE_SET.update({
    "opt": (d_opt, "heldout", "transformers OPTForCausalLM, learned positions offset by 2, ReLU, pre-LayerNorm"),
    "bloom": (d_bloom, "heldout", "transformers BloomForCausalLM, ALiBi position bias, fused qkv"),
    "gpt_neox": (d_gpt_neox, "heldout", "transformers GPTNeoXForCausalLM, rotary on a quarter of the head, parallel residual"),
    "falcon": (d_falcon, "heldout", "transformers FalconForCausalLM, multi-query attention, parallel attention/MLP"),
    "gemma2": (d_gemma2, "heldout", "transformers Gemma2ForCausalLM, logit soft-capping, alternating sliding window 16"),
    "olmo2": (d_olmo2, "heldout", "transformers Olmo2ForCausalLM, q/k RMSNorm over all heads, post-norm"),
    "stablelm": (d_stablelm, "heldout", "transformers StableLmForCausalLM, LayerNorm, rotary on a quarter of the head"),
})
DECODE_CI_SET = ["llama", "gpt2"]
# (name, batch, new tokens, past length): one export runs at each.
DECODE_SIZES = [("past0", 2, 5, 0), ("past1", 2, 1, 1), ("past7", 1, 3, 7), ("past31", 2, 1, 31)]
DECODE_EXAMPLE = (2, 3, 5)  # batch, new tokens, past length of the export's example (none 0 or 1, all distinct)
GREEDY_PROMPT = 5


class Decoder(torch.nn.Module):
    """A causal LM called as a decoding loop calls it: input_ids, attention_mask
    [batch, past + new], position_ids and the cache as flat tensors
    (past_key_values.<l>.key / .value, [batch, kv_heads, past, head_dim]) in;
    logits and the grown cache (present.<l>.key / .value) out."""

    def __init__(self, m, layers):
        super().__init__()
        self.m = m
        self.layers = layers

    def forward(self, *args):
        from transformers import DynamicCache

        ids, mask, pos, past = args[0], args[1], args[2], args[3:]
        cache = DynamicCache()
        for layer in range(self.layers):
            cache.update(past[2 * layer], past[2 * layer + 1], layer)
        out = self.m(input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=cache, use_cache=True,
                     return_dict=True)
        present = []
        for layer in out.past_key_values.layers[: self.layers]:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def decode_names(layers):
    ins = ["input_ids", "attention_mask", "position_ids"]
    outs = ["logits"]
    for layer in range(layers):
        ins += [f"past_key_values.{layer}.key", f"past_key_values.{layer}.value"]
        outs += [f"present.{layer}.key", f"present.{layer}.value"]
    return ins, outs


def decode_inputs(layers, kv, batch, new, past, seed):
    """Random tokens and cache; batch element 1 (if any) left-padded by 2."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (batch, new), generator=g)
    mask = torch.ones(batch, past + new, dtype=torch.int64)
    pos = torch.arange(past, past + new).repeat(batch, 1)
    if batch > 1 and past + new > 3:
        mask[1, :2] = 0
        pos[1] = (pos[1] - 2).clamp(min=0)
    args = [ids, mask, pos]
    for _ in range(2 * layers):
        args.append(torch.randn(batch, kv[0], past, kv[1], generator=g))
    return tuple(args)


def export_decode(name, exporter, out_dir, strip=False):
    """Exports NAME's causal LM with a KV cache and writes onnxruntime's outputs
    at each of DECODE_SIZES and its greedy decoding of STEPS tokens. STRIP
    drops the nodes' metadata_props (the dynamo exporter's stack traces and
    name scopes: two thirds of a tiny model's bytes, no semantics) before
    onnxruntime runs the model."""
    builder, kind, note = DECODE_SET[name]
    torch.manual_seed(0)
    cls, cfg = builder()
    cfg.use_cache = True
    lm = cls(cfg).eval()
    layers = cfg.num_hidden_layers
    with torch.no_grad():  # the cache's [kv_heads, head_dim], from the model itself
        k = lm(input_ids=torch.zeros(1, 2, dtype=torch.int64), use_cache=True).past_key_values.layers[0].keys
    kv = (k.shape[1], k.shape[3])
    model = Decoder(lm, layers).eval()
    in_names, out_names = decode_names(layers)
    d = os.path.join(out_dir, name, exporter)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    meta = {"name": name, "set": kind, "note": note, "exporter": exporter, "torch": torch.__version__,
            "inputs": in_names, "outputs": out_names, "layers": layers, "kv": list(kv)}
    example = decode_inputs(layers, kv, *DECODE_EXAMPLE, 0)
    path = os.path.join(d, "model.onnx")
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                b, s, p = torch.export.Dim("batch"), torch.export.Dim("sequence"), torch.export.Dim("past_sequence")
                auto = torch.export.Dim.AUTO
                specs = [{0: b, 1: s}, {0: b, 1: auto}, {0: b, 1: s}] + [{0: b, 2: p}] * (2 * layers)
                torch.onnx.export(model, example, path, dynamo=True, external_data=False, input_names=in_names,
                                  output_names=out_names, dynamic_shapes=(tuple(specs),))
            else:
                dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
                       "position_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
                for n in in_names[3:]:
                    dyn[n] = {0: "batch", 2: "past_sequence"}
                for n in out_names[1:]:
                    dyn[n] = {0: "batch", 2: "total_sequence"}
                torch.onnx.export(model, example, path, dynamo=False, input_names=in_names, output_names=out_names,
                                  dynamic_axes=dyn)
        m = onnx.load(path)
    except Exception as e:  # torch refused: recorded, not a ge result
        return refused(meta, d, e)
    if strip:
        for node in m.graph.node:
            del node.metadata_props[:]
        onnx.save(m, path)
        meta["stripped"] = "node metadata_props"
    meta["inputs"] = [i.name for i in m.graph.input]
    meta["outputs"] = [o.name for o in m.graph.output]
    meta["opset"] = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    meta["ops"] = sorted({n.op_type for n in m.graph.node})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    meta["sizes"], meta["ort_vs_torch"] = [], {}
    for k, (sz, batch, new, past) in enumerate(DECODE_SIZES):
        args = decode_inputs(layers, kv, batch, new, past, 10 + k)
        feeds = {n: a.numpy() for n, a in zip(in_names, args) if n in meta["inputs"]}
        with torch.no_grad():
            want = flat(model(*args))
        got = sess.run(None, feeds)
        for i, n in enumerate(meta["inputs"]):
            np.save(os.path.join(d, f"{sz}.in{i}.npy"), feeds[n])
        for i, o in enumerate(got):
            np.save(os.path.join(d, f"{sz}.out{i}.npy"), o)
        meta["ort_vs_torch"][sz] = max(float(np.max(np.abs(g - w.numpy()))) if g.size else 0.0
                                       for g, w in zip(got, want))
        meta["sizes"].append(sz)

    def ort_step(feeds):
        return sess.run(None, {n: f for n, f in zip(in_names, feeds) if n in meta["inputs"]})

    def torch_step(feeds):
        with torch.no_grad():
            return [t.numpy() for t in flat(model(*[torch.from_numpy(f) for f in feeds]))]

    # A prompt whose greedy choices are clear (top-2 logit margin > 1e-3 at
    # every step, so equal token ids are a fair test at rtol 1e-3) and, of
    # those, the one with the most distinct tokens (a random model tends to
    # repeat one token).
    best = None
    for seed in range(8):
        prompt = np.random.default_rng(100 + seed).integers(0, VOCAB, size=(1, GREEDY_PROMPT), dtype=np.int64)
        tokens, margin = greedy(ort_step, layers, kv, prompt)
        score = (margin > 1e-3, len({t[0] for t in tokens}), margin)
        if best is None or score > best[0]:
            best = (score, prompt, tokens, margin)
    _, prompt, tokens, margin = best
    np.save(os.path.join(d, "greedy.prompt.npy"), prompt)
    meta["greedy"] = {"steps": STEPS, "tokens": [t[0] for t in tokens], "min_margin": margin,
                      "torch_tokens": [t[0] for t in greedy(torch_step, layers, kv, prompt)[0]]}
    json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
    return meta


def randomize_norms(m):
    """BatchNorm running stats of a fresh model are 0/1: give them values so
    the folded/unfolded normalisation is really checked."""
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.running_mean is not None:
            mod.running_mean.copy_(torch.randn(mod.running_mean.shape, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) + 0.5)


def flat(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flat(o)]
    raise TypeError(f"unexpected output type {type(out)}")


def refused(meta, d, e):
    """Records an export torch itself refused, or onnxruntime refuses to run
    (meta.json with "export_error", no model.onnx)."""
    traceback.print_exc()
    meta["export_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
    return meta


def export(name, exporter, out_dir):
    builder, kind, note = MODELS[name]
    torch.manual_seed(0)
    model, args, in_names, out_names = builder()
    model.eval()
    with torch.no_grad():
        randomize_norms(model)
        want = flat(model(*args))
    d = os.path.join(out_dir, name, exporter)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    meta = {"name": name, "set": kind, "note": note, "exporter": exporter, "torch": torch.__version__,
            "inputs": in_names, "outputs": out_names}
    path = os.path.join(d, "model.onnx")
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                torch.onnx.export(model, args, path, dynamo=True, external_data=False,
                                  input_names=in_names, output_names=out_names)
            else:
                torch.onnx.export(model, args, path, dynamo=False, input_names=in_names, output_names=out_names)
        m = onnx.load(path)
    except Exception as e:  # torch refused: recorded, not a ge result
        return refused(meta, d, e)
    # The graph's own names (an exporter may drop an unused input, e.g. a
    # mask it folded away).
    meta["inputs"] = [i.name for i in m.graph.input]
    meta["outputs"] = [o.name for o in m.graph.output]
    meta["opset"] = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    feeds = {}
    for i, n in enumerate(in_names):
        if n in meta["inputs"]:
            feeds[n] = args[i].numpy()
    meta["inputs"] = [n for n in meta["inputs"] if n in feeds]
    try:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as e:  # an export onnxruntime refuses too (torch 2.15's TorchScript CANINE, PatchTST)
        # No model.onnx left behind: the runners would take it for a model ge must run.
        os.remove(path)
        return refused(meta, d, RuntimeError(f"onnxruntime refuses the export: {e}"))
    for i, n in enumerate(meta["inputs"]):
        np.save(os.path.join(d, f"in{i}.npy"), feeds[n])
    for i, o in enumerate(got):
        np.save(os.path.join(d, f"out{i}.npy"), o)
    meta["ort_vs_torch"] = max(float(np.max(np.abs(g - w.numpy()))) if g.size else 0.0 for g, w in zip(got, want))
    meta["ops"] = sorted({n.op_type for n in m.graph.node})
    json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output directory (default: target/torch-gauntlet; --set ci: testdata/onnx/torch)")
    ap.add_argument("--set", choices=["full", "ci", "tuned", "heldout", "heldout2", "heldout3", "heldout4"], default="full",
                    help="ci: the committed CI subset; tuned / heldout / heldout2 / heldout3 / heldout4: that set's models of "
                         "the full list")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--exporters", default="dynamo,torchscript")
    ap.add_argument("--list", action="store_true")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dynamic", action="store_true", help="dynamic axes: the models of DYNAMIC_SET at SIZES")
    mode.add_argument("--decode", action="store_true",
                      help="causal LMs with a KV cache (DECODE_SET) at DECODE_SIZES, and greedy decoding")
    a = ap.parse_args()
    table = DECODE_SET if a.decode else DYNAMIC_SET if a.dynamic else MODELS
    if a.list:
        for n in table:
            _, kind, note = DECODE_SET[n] if a.decode else MODELS[n]
            print(f"{n:20} {kind:8} {note}")
        return
    if a.decode:
        names, ci_dir, full_dir = (DECODE_CI_SET if a.set == "ci" else list(DECODE_SET), ("testdata", "onnx", "dynamic",
                                   "torch_decode"), ("target", "torch-gauntlet-decode"))
    elif a.dynamic:
        names = DYNAMIC_CI_SET if a.set == "ci" else [n for n in DYNAMIC_SET if n not in DYNAMIC_CI_SET or n in ("bert", "llama")]
        ci_dir, full_dir = ("testdata", "onnx", "dynamic", "torch"), ("target", "torch-gauntlet-dynamic")
    else:
        names = CI_SET if a.set == "ci" else [n for n in MODELS if n not in CI_SET or n in ("bert", "llama")]
        ci_dir, full_dir = ("testdata", "onnx", "torch"), ("target", "torch-gauntlet")
    if a.set not in ("full", "ci"):
        names = [n for n in names if (DECODE_SET if a.decode else MODELS)[n][1] == a.set]
    if a.only:
        names = a.only.split(",")
        unknown = [n for n in names if n not in table]
        if unknown:
            sys.exit(f"unknown model(s) {unknown}; --list shows them")
    out = a.out or os.path.join(ROOT, *(ci_dir if a.set == "ci" else full_dir))
    export_one = export_dynamic if a.dynamic else export
    if a.decode:
        def export_one(n, e, out):
            return export_decode(n, e, out, strip=a.set == "ci")
    torch.set_num_threads(1)
    for n in names:
        for e in a.exporters.split(","):
            try:
                meta = export_one(n, e, out)
            except Exception as err:  # the model itself did not build/run: a generator bug, say it and go on
                traceback.print_exc()
                print(f"{n:20} {e:12} GENERATOR ERROR {type(err).__name__}: {err}", flush=True)
                continue
            if "export_error" in meta:
                print(f"{n:20} {e:12} export refused by torch: {meta['export_error']}", flush=True)
                continue
            size = os.path.getsize(os.path.join(out, n, e, "model.onnx"))
            diff = meta["ort_vs_torch"]
            diff = max(diff.values()) if isinstance(diff, dict) else diff
            extra = f"  at {' '.join(meta['sizes'])}" if "sizes" in meta else ""
            if "greedy" in meta:
                g = meta["greedy"]
                same = "= torch" if g["tokens"] == g["torch_tokens"] else "!= torch's " + str(g["torch_tokens"])
                extra += f"  greedy {g['tokens']} {same} (margin {g['min_margin']:.1e})"
            print(f"{n:20} {e:12} opset {meta['opset']} {size / 1e6:6.2f} MB  |ort-torch| {diff:.2e}{extra}",
                  flush=True)


if __name__ == "__main__":
    main()
