//! Convolutional classifiers: ResNet-50, ResNeXt-50 (32x4d), VGG-19,
//! SqueezeNet 1.0 and MobileNetV2, layer for layer as torchvision builds them
//! (inference form: batch norm with running statistics, no dropout).

use super::net::{Net, Win};
use super::Size;
use ge_dialects::es::{EsResult, Tensor};

/// The image input `x: tensor<Bx3xSxSxf32>`.
fn image<'g>(net: &mut Net<'g>, side: usize) -> EsResult<Tensor<'g>> {
    net.b
        .input("x", format!("tensor<Bx3x{side}x{side}xf32>").as_str())
}

// ---- ResNet-50 / ResNeXt-50 ----------------------------------------------------

struct ResNetCfg {
    /// Bottlenecks per stage.
    layers: [usize; 4],
    /// `planes` of the first stage (64 in the paper); later stages double it.
    base: usize,
    /// Width of the 3x3 conv relative to `planes` (1 for ResNet; 2 for
    /// ResNeXt 32x4d: 32 groups × 4 channels = 128 = 2 × 64).
    width_mult: usize,
    groups: usize,
    side: usize,
    classes: usize,
}

/// A bottleneck: 1x1 reduce → 3x3 (strided, grouped) → 1x1 expand ×4, with a
/// projection shortcut (strided 1x1 conv + BN) when the shape changes.
fn bottleneck<'g>(
    net: &mut Net<'g>,
    name: &str,
    x: Tensor<'g>,
    cin: usize,
    planes: usize,
    stride: i64,
    cfg: &ResNetCfg,
) -> EsResult<Tensor<'g>> {
    let width = planes * cfg.width_mult;
    let cout = planes * 4;
    let y = net.conv_bn(&format!("{name}.1"), x, cin, width, Win::one(), 1, true)?;
    let y = net.conv_bn(
        &format!("{name}.2"),
        y,
        width,
        width,
        Win::same(3, stride),
        cfg.groups,
        true,
    )?;
    let y = net.conv_bn(&format!("{name}.3"), y, width, cout, Win::one(), 1, false)?;
    let shortcut = if stride != 1 || cin != cout {
        net.conv_bn(
            &format!("{name}.downsample"),
            x,
            cin,
            cout,
            Win::valid(1, stride),
            1,
            false,
        )?
    } else {
        x
    };
    net.b.relu((y + shortcut)?)
}

fn resnet<'g>(net: &mut Net<'g>, cfg: &ResNetCfg) -> EsResult<Vec<Tensor<'g>>> {
    let x = image(net, cfg.side)?;
    let y = net.conv_bn("conv1", x, 3, cfg.base, Win::same(7, 2), 1, true)?;
    let mut y = net.max_pool(y, Win::same(3, 2), false)?;
    let mut cin = cfg.base;
    for (stage, &n) in cfg.layers.iter().enumerate() {
        let planes = cfg.base << stage;
        for i in 0..n {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            let name = format!("layer{}.{i}", stage + 1);
            y = bottleneck(net, &name, y, cin, planes, stride, cfg)?;
            cin = planes * 4;
        }
    }
    let y = net.b.global_avg_pool(y)?;
    let y = net.flatten(y)?;
    Ok(vec![net.fc("fc", y, cin, cfg.classes)?])
}

/// ResNet-50 v1.5 (stride in the 3x3 conv). Tiny: channels / 16, 32x32
/// input, 10 classes; full: 224x224, 1000 classes.
pub fn resnet50<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (base, side, classes) = match size {
        Size::Tiny => (4, 32, 10),
        Size::Full => (64, 224, 1000),
    };
    resnet(
        net,
        &ResNetCfg {
            layers: [3, 4, 6, 3],
            base,
            width_mult: 1,
            groups: 1,
            side,
            classes,
        },
    )
}

/// ResNeXt-50 32x4d: ResNet-50 with grouped 3x3 convs twice as wide. Tiny:
/// cardinality 4 with 2 channels per group, channels / 16, 32x32 input.
pub fn resnext50<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (base, groups, side, classes) = match size {
        Size::Tiny => (4, 4, 32, 10),
        Size::Full => (64, 32, 224, 1000),
    };
    resnet(
        net,
        &ResNetCfg {
            layers: [3, 4, 6, 3],
            base,
            width_mult: 2,
            groups,
            side,
            classes,
        },
    )
}

// ---- VGG-19 ----------------------------------------------------------------------

/// VGG-19 (configuration E): 16 3x3 convs with ReLU in five pooled stages,
/// then three fully connected layers. Tiny: channels / 16, hidden 64, 32x32
/// input (the last feature map is 1x1); full: 224x224, 7x7x512 → 4096 → 4096 → 1000.
pub fn vgg19<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (div, side, hidden, classes) = match size {
        Size::Tiny => (16, 32, 64, 10),
        Size::Full => (1, 224, 4096, 1000),
    };
    let stages: [(usize, usize); 5] = [(64, 2), (128, 2), (256, 4), (512, 4), (512, 4)];
    let x = image(net, side)?;
    let mut y = x;
    let mut cin = 3;
    let mut n = 0;
    for (c, reps) in stages {
        let c = c / div;
        for _ in 0..reps {
            y = net.conv(
                &format!("features.{n}"),
                y,
                cin,
                c,
                Win::same(3, 1),
                1,
                true,
            )?;
            y = net.b.relu(y)?;
            cin = c;
            n += 1;
        }
        y = net.max_pool(y, Win::valid(2, 2), false)?;
    }
    let spatial = side / 32;
    let flat = cin * spatial * spatial;
    let y = net.flatten(y)?;
    let y = net.fc("classifier.0", y, flat, hidden)?;
    let y = net.b.relu(y)?;
    let y = net.fc("classifier.3", y, hidden, hidden)?;
    let y = net.b.relu(y)?;
    Ok(vec![net.fc("classifier.6", y, hidden, classes)?])
}

// ---- SqueezeNet 1.0 ------------------------------------------------------------

/// A fire module: 1x1 squeeze, then 1x1 and 3x3 expands concatenated.
fn fire<'g>(
    net: &mut Net<'g>,
    name: &str,
    x: Tensor<'g>,
    cin: usize,
    squeeze: usize,
    expand: usize,
) -> EsResult<(Tensor<'g>, usize)> {
    let s = net.conv(
        &format!("{name}.squeeze"),
        x,
        cin,
        squeeze,
        Win::one(),
        1,
        true,
    )?;
    let s = net.b.relu(s)?;
    let e1 = net.conv(
        &format!("{name}.expand1x1"),
        s,
        squeeze,
        expand,
        Win::one(),
        1,
        true,
    )?;
    let e1 = net.b.relu(e1)?;
    let e3 = net.conv(
        &format!("{name}.expand3x3"),
        s,
        squeeze,
        expand,
        Win::same(3, 1),
        1,
        true,
    )?;
    let e3 = net.b.relu(e3)?;
    Ok((net.b.concat(&[e1, e3], 1)?, 2 * expand))
}

/// SqueezeNet 1.0: a 7x7 stem, eight fire modules between ceil-mode max
/// pools, a 1x1 conv classifier and global average pooling. Tiny: channels
/// / 8, 64x64 input, 10 classes; full: 224x224, 1000 classes.
pub fn squeezenet<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (div, side, classes) = match size {
        Size::Tiny => (8, 64, 10),
        Size::Full => (1, 224, 1000),
    };
    let x = image(net, side)?;
    let stem = 96 / div;
    let y = net.conv("features.0", x, 3, stem, Win::valid(7, 2), 1, true)?;
    let y = net.b.relu(y)?;
    let mut y = net.max_pool(y, Win::valid(3, 2), true)?;
    let mut cin = stem;
    // (squeeze, expand) of fire2..fire9; a max pool follows fire4 and fire8.
    let fires = [
        (16, 64),
        (16, 64),
        (32, 128),
        (32, 128),
        (48, 192),
        (48, 192),
        (64, 256),
        (64, 256),
    ];
    for (i, (sq, ex)) in fires.into_iter().enumerate() {
        let (out, c) = fire(net, &format!("fire{}", i + 2), y, cin, sq / div, ex / div)?;
        y = out;
        cin = c;
        if i == 2 || i == 6 {
            y = net.max_pool(y, Win::valid(3, 2), true)?;
        }
    }
    let y = net.conv("classifier.1", y, cin, classes, Win::one(), 1, true)?;
    let y = net.b.relu(y)?;
    let y = net.b.global_avg_pool(y)?;
    Ok(vec![net.flatten(y)?])
}

// ---- MobileNetV2 -----------------------------------------------------------------

/// torchvision's `_make_divisible`: round to a multiple of `d`, losing at
/// most 10%.
fn make_divisible(v: f64, d: usize) -> usize {
    let d = d as f64;
    let mut n = ((v + d / 2.0) / d).floor() * d;
    n = n.max(d);
    if n < 0.9 * v {
        n += d;
    }
    n as usize
}

/// MobileNetV2: inverted residual blocks (1x1 expand → 3x3 depthwise conv as
/// `group = channels` → linear 1x1 projection, residual when the shape
/// allows) with ReLU6 as `graph.clip`. Tiny: width multiplier 0.125 (channels
/// rounded to multiples of 2), last conv 80, 32x32 input, 10 classes; full:
/// width 1.0, 224x224, 1000 classes.
pub fn mobilenet_v2<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let (mult, div, last, side, classes) = match size {
        Size::Tiny => (0.125, 2, 80, 32, 10),
        Size::Full => (1.0, 8, 1280, 224, 1000),
    };
    // (expansion t, channels c, repeats n, stride s)
    let settings: [(usize, usize, usize, i64); 7] = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    let x = image(net, side)?;
    let stem = make_divisible(32.0 * mult, div);
    let y = net.conv_bn("features.0", x, 3, stem, Win::same(3, 2), 1, false)?;
    let mut y = net.relu6(y)?;
    let mut cin = stem;
    let mut idx = 1;
    for (t, c, n, s) in settings {
        let cout = make_divisible(c as f64 * mult, div);
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let name = format!("features.{idx}");
            let hidden = cin * t;
            let mut h = y;
            if t != 1 {
                h = net.conv_bn(
                    &format!("{name}.expand"),
                    h,
                    cin,
                    hidden,
                    Win::one(),
                    1,
                    false,
                )?;
                h = net.relu6(h)?;
            }
            h = net.conv_bn(
                &format!("{name}.dw"),
                h,
                hidden,
                hidden,
                Win::same(3, stride),
                hidden,
                false,
            )?;
            h = net.relu6(h)?;
            h = net.conv_bn(
                &format!("{name}.project"),
                h,
                hidden,
                cout,
                Win::one(),
                1,
                false,
            )?;
            y = if stride == 1 && cin == cout {
                (y + h)?
            } else {
                h
            };
            cin = cout;
            idx += 1;
        }
    }
    let y = net.conv_bn(
        &format!("features.{idx}"),
        y,
        cin,
        last,
        Win::one(),
        1,
        false,
    )?;
    let y = net.relu6(y)?;
    let y = net.b.global_avg_pool(y)?;
    let y = net.flatten(y)?;
    Ok(vec![net.fc("classifier.1", y, last, classes)?])
}
