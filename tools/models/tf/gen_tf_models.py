#!/usr/bin/env python3
"""Build the TensorFlow model set of issue 21 with random weights, freeze each
model to a GraphDef and save it as a SavedModel, and record TensorFlow's
outputs for seeded random inputs.

TensorFlow lives in its own venv, never in the repository's .venv:

    python3 -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install tensorflow-cpu
    /work/venvs/tf/bin/pip cache purge

    # the tiny set committed for CI (testdata/tf/models, < 5 MB in all):
    /work/venvs/tf/bin/python tools/models/tf/gen_tf_models.py --set tiny
    # the full-size Keras applications and the rest (gigabytes; not committed):
    /work/venvs/tf/bin/python tools/models/tf/gen_tf_models.py --set full --out target/tf-models
    # then compare ge with TensorFlow (tools/models/tf/run.py):
    tools/models/tf/run.py --dir target/tf-models

Each model NAME gets a directory OUT/NAME with

    frozen.pb        convert_variables_to_constants_v2 of the serving function
                     (v1 control flow: Enter/Exit/Merge/Switch/NextIteration/LoopCond,
                     as TensorFlow lowers tf.while_loop and tf.cond when freezing),
    frozen_fn.pb     only for models with `functional=True`: frozen with
                     lower_control_flow=False, so While/If stay functional ops
                     with their bodies in the graph's function library,
    saved_model/     tf.saved_model.save with the `serving_default` signature,
    inN.npy / outN.npy  inputs and TensorFlow's outputs (in signature order),
    meta.json        input/output names (frozen: node:port; SavedModel: the
                     signature keys), the set (tuned or held-out) and notes.

"tuned" models are the ones of the issue's table (the importer was developed
against them); "heldout" ones were only run once the importer was done, to see
how it generalises. Everything is seeded (keras.utils.set_random_seed), so the
weights and inputs are the same on every run; the protobuf bytes of a
SavedModel are not guaranteed to be identical across TensorFlow versions.
"""

import argparse
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

MODELS = {}


def model(name, sets, kind, functional=False, note=""):
    """Register a builder: `sets` ⊆ {tiny, full}; kind is tuned or heldout."""

    def wrap(fn):
        MODELS[name] = dict(build=fn, sets=sets, kind=kind, functional=functional, note=note)
        return fn

    return wrap


def spec(shape, dtype=tf.float32, name="x"):
    return tf.TensorSpec(shape, dtype, name=name)


# ---------------------------------------------------------------- Keras applications


def app(ctor, size, **kw):
    def build():
        m = ctor(weights=None, input_shape=(size, size, 3), classes=kw.pop("classes", 1000), **kw)
        return m, [spec([1, size, size, 3])]

    return build


for _name, _ctor, _size in [
    ("mobilenet_v2", keras.applications.MobileNetV2, 224),
    ("densenet121", keras.applications.DenseNet121, 224),
    ("xception", keras.applications.Xception, 299),
    ("vgg16", keras.applications.VGG16, 224),
    ("resnet50", keras.applications.ResNet50, 224),
    ("inception_v3", keras.applications.InceptionV3, 299),
    ("efficientnet_b0", keras.applications.EfficientNetB0, 224),
    ("nasnet_mobile", keras.applications.NASNetMobile, 224),
]:
    model(_name, {"full"}, "tuned")(app(_ctor, _size))

for _name, _ctor, _size in [
    ("mobilenet_v3_small", keras.applications.MobileNetV3Small, 224),
    ("resnet50_v2", keras.applications.ResNet50V2, 224),
    ("convnext_tiny", keras.applications.ConvNeXtTiny, 224),
    ("efficientnet_v2_b0", keras.applications.EfficientNetV2B0, 224),
    ("mobilenet", keras.applications.MobileNet, 224),
    ("densenet169", keras.applications.DenseNet169, 224),
    # The rest of keras.applications, one or more members of every family, measured
    # first on 2026-12-02 (after the importer work): a second held-out set.
    ("vgg19", keras.applications.VGG19, 224),
    ("resnet101", keras.applications.ResNet101, 224),
    ("resnet152_v2", keras.applications.ResNet152V2, 224),
    ("inception_resnet_v2", keras.applications.InceptionResNetV2, 299),
    ("mobilenet_v3_large", keras.applications.MobileNetV3Large, 224),
    ("densenet201", keras.applications.DenseNet201, 224),
    ("nasnet_large", keras.applications.NASNetLarge, 331),
    ("efficientnet_b3", keras.applications.EfficientNetB3, 300),
    ("efficientnet_v2_s", keras.applications.EfficientNetV2S, 384),
    ("convnext_small", keras.applications.ConvNeXtSmall, 224),
    # ... and every remaining member, so that all 36 constructors of keras.applications
    # are in the set (the largest last: ConvNeXtXLarge is 350M parameters).
    ("resnet152", keras.applications.ResNet152, 224),
    ("resnet101_v2", keras.applications.ResNet101V2, 224),
    ("efficientnet_b1", keras.applications.EfficientNetB1, 240),
    ("efficientnet_b2", keras.applications.EfficientNetB2, 260),
    ("efficientnet_b4", keras.applications.EfficientNetB4, 380),
    ("efficientnet_b5", keras.applications.EfficientNetB5, 456),
    ("efficientnet_b6", keras.applications.EfficientNetB6, 528),
    ("efficientnet_b7", keras.applications.EfficientNetB7, 600),
    ("efficientnet_v2_b1", keras.applications.EfficientNetV2B1, 240),
    ("efficientnet_v2_b2", keras.applications.EfficientNetV2B2, 260),
    ("efficientnet_v2_b3", keras.applications.EfficientNetV2B3, 300),
    ("efficientnet_v2_m", keras.applications.EfficientNetV2M, 480),
    ("efficientnet_v2_l", keras.applications.EfficientNetV2L, 480),
    ("convnext_base", keras.applications.ConvNeXtBase, 224),
    ("convnext_large", keras.applications.ConvNeXtLarge, 224),
    ("convnext_xlarge", keras.applications.ConvNeXtXLarge, 224),
]:
    model(_name, {"full"}, "heldout")(app(_ctor, _size))


# Tiny configurations of the same architectures (same op graph, few channels).


@model("t_efficientnet", {"full"}, "tuned", note="EfficientNet, width 0.1 depth 0.1, 32x32")
def t_efficientnet():
    from keras.src.applications import efficientnet

    m = efficientnet.EfficientNet(
        0.1, 0.1, 32, 0.2, name="tiny_efficientnet", weights=None,
        input_shape=(32, 32, 3), classes=10,
    )
    return m, [spec([1, 32, 32, 3])]


@model("t_nasnet", {"full"}, "tuned", note="NASNet with 4 filters per cell, 1 block, 32x32")
def t_nasnet():
    from keras.src.applications import nasnet

    m = nasnet.NASNet(
        input_shape=(32, 32, 3), penultimate_filters=96, num_blocks=1, stem_block_filters=8,
        skip_reduction=False, filter_multiplier=2, include_top=True, weights=None, classes=10,
        default_size=32,
    )
    return m, [spec([1, 32, 32, 3])]


@model("t_mobilenet_v2", {"full"}, "tuned", note="MobileNetV2 alpha 0.35, 32x32, 10 classes")
def t_mobilenet_v2():
    m = keras.applications.MobileNetV2(alpha=0.35, weights=None, input_shape=(32, 32, 3), classes=10)
    return m, [spec([1, 32, 32, 3])]


@model("t_swish_se", {"tiny", "full"}, "tuned",
       note="EfficientNet's MBConv: swish (IdentityN), depthwise, squeeze-excite, BatchNorm")
def t_swish_se():
    x0 = keras.Input((16, 16, 3), name="x")
    x = layers.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(x0)
    x = layers.Activation("swish")(layers.BatchNormalization()(x))
    y = layers.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
    y = layers.Activation("swish")(layers.BatchNormalization()(y))
    se = layers.GlobalAveragePooling2D(keepdims=True)(y)
    se = layers.Conv2D(2, 1, activation="swish")(se)
    se = layers.Conv2D(8, 1, activation="sigmoid")(se)
    y = layers.Multiply()([y, se])
    y = layers.Add()([x, layers.Conv2D(8, 1)(y)])
    y = layers.Dense(5)(layers.GlobalAveragePooling2D()(y))
    return keras.Model(x0, y), [spec([1, 16, 16, 3])]


# ---------------------------------------------------------------- transformer blocks


def encoder_block(x, d, heads, ff, mask=None, causal=False):
    a = layers.MultiHeadAttention(heads, d // heads)(x, x, attention_mask=mask, use_causal_mask=causal)
    x = layers.LayerNormalization(epsilon=1e-6)(x + a)
    f = layers.Dense(ff, activation=keras.activations.gelu)(x)  # exact GELU (erf)
    f = layers.Dense(d)(f)
    return layers.LayerNormalization(epsilon=1e-6)(x + f)


@model("t_transformer_encoder", {"tiny", "full"}, "tuned",
       note="token + position embedding, MHA (Einsum), LayerNorm, exact GELU")
def t_transformer_encoder():
    seq, vocab, d = 8, 50, 16
    ids = keras.Input((seq,), dtype="int32", name="ids")
    x = layers.Embedding(vocab, d)(ids)
    pos = layers.Embedding(seq, d)(keras.ops.arange(seq))
    x = x + pos
    x = encoder_block(x, d, 2, 32)
    y = layers.Dense(4)(layers.GlobalAveragePooling1D()(x))
    m = keras.Model(ids, y)
    return m, [spec([1, seq], tf.int32, "ids")]


@model("h_transformer_decoder", {"tiny", "full"}, "heldout",
       note="causal self-attention + cross-attention with a padding mask input, keras-hub style")
def h_transformer_decoder():
    seq, src, vocab, d = 6, 5, 40, 16
    ids = keras.Input((seq,), dtype="int32", name="ids")
    mem = keras.Input((src, d), name="memory")
    mmask = keras.Input((src,), dtype="int32", name="memory_mask")
    x = layers.Embedding(vocab, d)(ids)
    a = layers.MultiHeadAttention(2, 8)(x, x, use_causal_mask=True)
    x = layers.LayerNormalization()(x + a)
    cross_mask = keras.ops.cast(mmask[:, None, :], "bool")
    c = layers.MultiHeadAttention(2, 8)(x, mem, attention_mask=cross_mask)
    x = layers.LayerNormalization()(x + c)
    f = layers.Dense(32, activation="relu")(x)
    x = layers.LayerNormalization()(x + layers.Dense(d)(f))
    logits = layers.Dense(vocab)(x)
    m = keras.Model([ids, mem, mmask], logits)
    return m, [spec([1, seq], tf.int32, "ids"), spec([1, src, d], name="memory"),
               spec([1, src], tf.int32, "memory_mask")]


# ---------------------------------------------------------------- recurrent and 1-D


@model("t_lstm", {"tiny", "full"}, "tuned", note="Embedding + LSTM, fixed sequence length 6")
def t_lstm():
    ids = keras.Input((6,), dtype="int32", name="ids")
    x = layers.Embedding(50, 8)(ids)
    x = layers.LSTM(8)(x)
    m = keras.Model(ids, layers.Dense(3)(x))
    return m, [spec([1, 6], tf.int32, "ids")]


@model("t_gru", {"tiny", "full"}, "tuned", note="Embedding + GRU, fixed sequence length 6")
def t_gru():
    ids = keras.Input((6,), dtype="int32", name="ids")
    x = layers.Embedding(50, 8)(ids)
    x = layers.GRU(8)(x)
    m = keras.Model(ids, layers.Dense(3)(x))
    return m, [spec([1, 6], tf.int32, "ids")]


@model("t_conv1d_dilated", {"tiny", "full"}, "tuned", note="Conv1D with dilation 2 and 4")
def t_conv1d_dilated():
    x0 = keras.Input((20, 4), name="x")
    x = layers.Conv1D(8, 3, dilation_rate=2, padding="same", activation="relu")(x0)
    x = layers.Conv1D(8, 3, dilation_rate=4, padding="causal")(x)
    m = keras.Model(x0, layers.GlobalAveragePooling1D()(x))
    return m, [spec([1, 20, 4])]


@model("h_bilstm_conv1d", {"tiny", "full"}, "heldout",
       note="Conv1D + Bidirectional LSTM (sequences) + GRU + GlobalMaxPool1D")
def h_bilstm_conv1d():
    x0 = keras.Input((7, 5), name="x")
    x = layers.Conv1D(6, 3, padding="same", activation="tanh")(x0)
    x = layers.Bidirectional(layers.LSTM(4, return_sequences=True))(x)
    x = layers.GRU(5, return_sequences=True)(x)
    x = layers.SimpleRNN(3, return_sequences=True)(x)
    m = keras.Model(x0, layers.GlobalMaxPooling1D()(x))
    return m, [spec([1, 7, 5])]


# ---------------------------------------------------------------- image ops


@model("t_image_ops", {"tiny", "full"}, "tuned",
       note="tf.image.resize bilinear + nearest, concat, depthwise conv, mean; "
            "TF1 bicubic resizes (align_corners, legacy coordinates)")
def t_image_ops():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dw = layers.DepthwiseConv2D(3, padding="same")

        def call(self, x):
            a = tf.image.resize(x, [12, 12], method="bilinear")
            b = tf.image.resize(x, [12, 12], method="nearest")
            y = self.dw(tf.concat([a, b], axis=-1))
            c1 = tf.compat.v1.image.resize_bicubic(x, [13, 9], align_corners=True)
            c2 = tf.compat.v1.image.resize_bicubic(x, [5, 11])
            return [tf.reduce_mean(y, axis=[1, 2]), c1, c2]

    m = Net()
    m(tf.zeros([1, 8, 8, 3]))
    return m, [spec([1, 8, 8, 3])]


@model("t_grouped_conv", {"tiny", "full"}, "tuned",
       note="Conv2D with groups (ConvNeXt's depthwise conv in Keras 3: a grouped Conv2D)")
def t_grouped_conv():
    x0 = keras.Input((8, 8, 8), name="x")
    y = layers.Conv2D(8, 3, padding="same", groups=8)(x0)
    y = layers.Conv2D(12, 1, groups=4)(y)
    return keras.Model(x0, y), [spec([1, 8, 8, 8])]


@model("h_image_misc", {"tiny", "full"}, "heldout",
       note="flip, grayscale, bicubic/align_corners resizes, central crop, crop (Cropping2D), "
            "per-image standardisation")
def h_image_misc():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.conv = layers.Conv2D(4, 3, padding="same")
            self.crop = layers.Cropping2D(((1, 2), (2, 1)))

        def call(self, x):
            f = tf.image.flip_left_right(x)
            g = tf.image.rgb_to_grayscale(f)
            c = tf.image.resize(x, [10, 14], method="bicubic")
            a = tf.compat.v1.image.resize_bilinear(x, [11, 11], align_corners=True)
            n = tf.compat.v1.image.resize_nearest_neighbor(x, [5, 5], half_pixel_centers=True)
            cc = tf.image.central_crop(x, 0.5)
            s = tf.image.per_image_standardization(self.crop(self.conv(x)))
            return [g, c, a, n, cc, s]

    m = Net()
    m(tf.zeros([1, 8, 8, 3]))
    return m, [spec([1, 8, 8, 3])]


@model("h_unet", {"tiny", "full"}, "heldout",
       note="Conv2DTranspose, UpSampling2D, ZeroPadding2D, SeparableConv2D, PReLU, LeakyReLU, ELU")
def h_unet():
    x0 = keras.Input((16, 16, 3), name="x")
    e1 = layers.Conv2D(4, 3, padding="same")(x0)
    e1 = layers.PReLU(shared_axes=[1, 2])(e1)
    p = layers.MaxPooling2D()(e1)
    e2 = layers.SeparableConv2D(8, 3, padding="same")(p)
    e2 = layers.LeakyReLU(0.1)(e2)
    u = layers.Conv2DTranspose(4, 3, strides=2, padding="same")(e2)
    u2 = layers.UpSampling2D(interpolation="bilinear")(e2)
    u2 = layers.Conv2D(4, 1)(u2)
    z = layers.ZeroPadding2D(((1, 0), (0, 1)))(layers.Conv2DTranspose(4, 2, strides=2, padding="valid")(p))
    z = layers.Cropping2D(((1, 0), (0, 1)))(z)
    c = layers.Concatenate()([e1, u, u2, z])
    c = layers.ELU()(layers.BatchNormalization()(c))
    m = keras.Model(x0, layers.Conv2D(2, 1, activation="softmax")(c))
    return m, [spec([1, 16, 16, 3])]


@model("h_convnext_block", {"tiny", "full"}, "heldout",
       note="ConvNeXt-style block: depthwise 7x7, channel LayerNorm, GELU (tanh), layer scale")
def h_convnext_block():
    x0 = keras.Input((14, 14, 8), name="x")
    y = layers.DepthwiseConv2D(7, padding="same")(x0)
    y = layers.LayerNormalization(epsilon=1e-6)(y)
    y = layers.Dense(32)(y)
    y = layers.Activation(lambda t: keras.activations.gelu(t, approximate=True))(y)
    y = layers.Dense(8)(y)
    y = layers.Rescaling(0.5)(y)
    y = layers.Add()([x0, y])
    y = layers.AveragePooling2D(2)(y)
    y = layers.GlobalMaxPooling2D()(y)
    return keras.Model(x0, layers.Softmax()(y)), [spec([1, 14, 14, 8])]


# ---------------------------------------------------------------- raw TF ops and control flow


class FnModel(tf.Module):
    """A model written as a tf.function over tf.Variables."""

    def __init__(self, fn, specs, weights):
        super().__init__()
        self.w = [tf.Variable(w) for w in weights]
        self._fn = fn
        self.specs = specs

    def __call__(self, *xs):
        return self._fn(self.w, *xs)


@model("h_tf_ops", {"tiny", "full"}, "heldout",
       note="StridedSlice masks, GatherV2 batch_dims, TopKV2, ArgMax/ArgMin, OneHot, Cumsum, Tile, "
            "Fill, ZerosLike/OnesLike, SelectV2, Pack/Unpack, SplitV, Range, SquaredDifference, "
            "Erfc, BatchMatMulV2 with adjoints and broadcasting, Einsum, MirrorPad")
def h_tf_ops():
    rng = np.random.default_rng(1)
    w = [rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((2, 6, 3)).astype(np.float32),
         rng.standard_normal((6, 5)).astype(np.float32)]

    def fn(w, x, idx):
        a = x[:, 1:, ::2]  # begin/end masks, stride
        b = x[..., -1]  # ellipsis + shrink
        c = x[:, None, ::-1, 1:5]  # new axis + negative stride
        d = tf.gather(x, idx, axis=1, batch_dims=1)
        vals, ind = tf.math.top_k(x[0], k=3)
        am = tf.argmax(x, axis=-1, output_type=tf.int32)
        an = tf.argmin(x, axis=1)
        oh = tf.one_hot(am, depth=6, on_value=2.0, off_value=-1.0)
        cs = tf.cumsum(x, axis=2, exclusive=True, reverse=True)
        t = tf.tile(x[:, :1], [1, 2, 1])
        f = tf.fill([2, 3], 1.5) + tf.zeros_like(x[0, :2, :3]) + tf.ones_like(x[0, :2, :3])
        s = tf.where(x > 0.0, x, tf.math.squared_difference(x, 0.5))
        p = tf.stack(tf.unstack(x, axis=1)[::-1], axis=1)
        s1, s2 = tf.split(x, [2, 4], axis=2)
        r = tf.cast(tf.range(3, 15, 2), tf.float32)
        e = tf.math.erfc(x)
        bm = tf.linalg.matmul(x, w[1], adjoint_a=False, adjoint_b=False)
        bm2 = tf.linalg.matmul(w[2], x, transpose_a=True, transpose_b=True)
        es = tf.einsum("bij,jk->bik", x, tf.transpose(w[0]))
        mp = tf.pad(x, [[0, 0], [1, 2], [2, 1]], mode="REFLECT")
        ms = tf.pad(x, [[0, 0], [1, 1], [0, 2]], mode="SYMMETRIC")
        return [a, b, c, d, vals, ind, am, an, oh, cs, t, f, s, p, s1, s2, r, e, bm, bm2, es, mp, ms]

    specs = [spec([2, 4, 6]), spec([2, 3], tf.int32, "idx")]
    return FnModel(fn, specs, w), specs


@model("h_where_nonzero", {"tiny", "full"}, "heldout",
       note="tf.where(cond) (coordinates of true elements): a data-dependent output shape")
def h_where_nonzero():
    def fn(w, x):
        return tf.cast(tf.where(x > 0.5), tf.float32) * w[0]

    specs = [spec([3, 4])]
    return FnModel(fn, specs, [np.float32(2.0)]), specs


@model("h_while_fn", {"tiny", "full"}, "heldout", functional=True,
       note="tf.while_loop with a data-independent trip count and a tf.cond inside")
def h_while_fn():
    rng = np.random.default_rng(2)
    w = [rng.standard_normal((5, 5)).astype(np.float32) * 0.3]

    def fn(w, x):
        def cond(i, h):
            return i < 4

        def body(i, h):
            h2 = tf.tanh(tf.matmul(h, w[0]))
            h2 = tf.cond(tf.reduce_sum(h2) > 0.0, lambda: h2 * 2.0, lambda: h2 - 1.0)
            return i + 1, h2

        _, h = tf.while_loop(cond, body, [tf.constant(0), x])
        return h

    specs = [spec([2, 5])]
    return FnModel(fn, specs, w), specs


@model("h_cond_fn", {"tiny", "full"}, "heldout", functional=True,
       note="tf.cond on an input value, branches of different ops")
def h_cond_fn():
    rng = np.random.default_rng(3)
    w = [rng.standard_normal((3, 4)).astype(np.float32)]

    def fn(w, x, flag):
        return tf.cond(flag[0] > 0, lambda: tf.nn.relu(tf.matmul(x, w[0])),
                       lambda: tf.sigmoid(tf.matmul(x, w[0])) * 3.0)

    specs = [spec([2, 3]), spec([1], tf.int32, "flag")]
    return FnModel(fn, specs, w), specs


@model("h_rnn_fn", {"tiny", "full"}, "heldout", functional=True,
       note="a hand-written RNN: tf.while_loop over time with a TensorArray")
def h_rnn_fn():
    rng = np.random.default_rng(4)
    w = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32)]

    def fn(w, x):
        steps = 5
        ta = tf.TensorArray(tf.float32, size=steps)
        xs = tf.TensorArray(tf.float32, size=steps).unstack(tf.transpose(x, [1, 0, 2]))

        def body(t, h, ta):
            h = tf.tanh(tf.matmul(xs.read(t), w[0]) + tf.matmul(h, w[1]))
            return t + 1, h, ta.write(t, h)

        _, h, ta = tf.while_loop(lambda t, *_: t < steps, body, [0, tf.zeros([2, 4]), ta])
        return [h, tf.transpose(ta.stack(), [1, 0, 2])]

    specs = [spec([2, 5, 3])]
    return FnModel(fn, specs, w), specs


# ---------------------------------------------------------------- freezing and saving


class Serving(tf.Module):
    def __init__(self, obj, specs):
        super().__init__()
        self.obj = obj
        names = [s.name for s in specs]

        def serve(*xs):
            out = obj(*xs) if isinstance(obj, FnModel) else obj(
                xs[0] if len(xs) == 1 else list(xs), training=False)
            if not isinstance(out, (list, tuple)):
                out = [out]
            return {f"output_{i}": o for i, o in enumerate(out)}

        serve.__signature__ = None
        self.serve = tf.function(serve, input_signature=specs)
        self.names = names


def random_input(s, rng):
    shape = s.shape.as_list()
    if s.dtype.is_integer:
        hi = {"idx": 6, "flag": 2, "memory_mask": 2}.get(s.name, 40)
        v = rng.integers(0, hi, size=shape).astype(s.dtype.as_numpy_dtype)
        if s.name == "memory_mask":
            v[..., 0] = 1  # at least one key per query
        if s.name == "flag":
            v[...] = 1
        return v
    return rng.standard_normal(shape).astype(np.float32)


def write(name, out_dir):
    info = MODELS[name]
    keras.utils.set_random_seed(21)
    obj, specs = info["build"]()
    srv = Serving(obj, specs)
    cf = srv.serve.get_concrete_function()
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rng = np.random.default_rng(21)
    xs = [random_input(s, rng) for s in specs]
    outs = cf(*[tf.constant(x) for x in xs])
    keys = sorted(outs, key=lambda k: int(k.split("_")[1]))
    for i, x in enumerate(xs):
        np.save(os.path.join(d, f"in{i}.npy"), x)
    for i, k in enumerate(keys):
        np.save(os.path.join(d, f"out{i}.npy"), outs[k].numpy())
    frozen = convert_variables_to_constants_v2(cf)
    gd = frozen.graph.as_graph_def()
    with open(os.path.join(d, "frozen.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    # The frozen function's outputs follow the structured (sorted-key) order.
    out_names = [t.name for t in frozen.outputs]
    flat_keys = sorted(outs)
    frozen_outputs = [out_names[flat_keys.index(k)] for k in keys]
    if info["functional"]:
        fz = convert_variables_to_constants_v2(cf, lower_control_flow=False)
        with open(os.path.join(d, "frozen_fn.pb"), "wb") as f:
            f.write(fz.graph.as_graph_def().SerializeToString())
    tf.saved_model.save(srv, os.path.join(d, "saved_model"), signatures={"serving_default": srv.serve})
    ops = sorted({n.op for n in gd.node} | {n.op for fn in gd.library.function for n in fn.node_def})
    meta = dict(
        name=name, kind=info["kind"], note=info["note"],
        inputs=[s.name for s in specs],
        input_shapes=[s.shape.as_list() for s in specs],
        frozen_outputs=frozen_outputs,
        signature_outputs=keys,
        functional=info["functional"],
        tf_version=tf.__version__,
        ops=ops,
    )
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)
    print(f"wrote {d} ({size / 1e6:.2f} MB, {len(ops)} op types)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=["tiny", "full"], default="tiny")
    ap.add_argument("--out", help="output directory (tiny: testdata/tf/models)")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    a = ap.parse_args()
    if a.list:
        for n, i in MODELS.items():
            print(f"{n:24} {i['kind']:8} {','.join(sorted(i['sets'])):10} {i['note']}")
        return
    out = a.out or os.path.join(ROOT, "testdata", "tf", "models" if a.set == "tiny" else "../../target/tf-models")
    names = a.only.split(",") if a.only else [n for n, i in MODELS.items() if a.set in i["sets"]]
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n}")
        write(n, out)


if __name__ == "__main__":
    main()
