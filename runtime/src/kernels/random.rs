//! Native kernels of the random ops (`graph.random_uniform`,
//! `graph.random_normal`, `graph.bernoulli`, `graph.multinomial`,
//! `graph.dropout`): the ops'
//! own draw functions (dialects/src/graph/random.rs: the ChaCha8 generator,
//! seeded by the op's `seed` or afresh on every run), so a seeded op gives
//! the interpreter's values bit for bit. Their steps are not `pure`: the
//! loader never folds them, even when their input is a weight.

use super::{Kernel, Par, Slot};
use crate::buffer::{load_f64, store_f64, store_i64};
use ge_dialects::graph::random::{
    bernoulli_values, dropout_scalar, dropout_values, multinomial_shape, multinomial_values,
    normal_values, op_seed, uniform_values,
};

/// What a draw gives per element.
#[derive(Clone, Copy, Debug)]
pub enum Draw {
    /// Uniform in [low, high).
    Uniform { low: f64, high: f64 },
    /// Normal with mean and standard deviation.
    Normal { mean: f64, scale: f64 },
    /// 0 or 1 with the input's probability.
    Bernoulli,
    /// `samples` class indices per row of the input's log-probabilities.
    Multinomial { samples: usize },
}

/// A random op with its seed (`None`: a fresh one every run).
#[derive(Clone, Debug)]
pub struct Random {
    pub draw: Draw,
    pub seed: Option<f64>,
}

impl Random {
    /// The input's elements as f64 (the probabilities or log-probabilities).
    fn input(ins: &[&Slot]) -> Result<(Vec<f64>, Vec<usize>), String> {
        let x = ins.first().ok_or("the draw needs its input")?;
        let mut v = vec![0f64; x.numel()];
        load_f64(x.dtype, x.ptr, 0, &mut v);
        Ok((v, x.shape.clone()))
    }
}

impl Kernel for Random {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let [y] = outs else {
            return Err("a random op gives 1 result".into());
        };
        let seed = op_seed(self.seed);
        let n = y.numel();
        match self.draw {
            Draw::Uniform { low, high } => store_f64(
                y.dtype,
                y.ptr,
                0,
                &uniform_values(seed, n, low, high, y.dtype),
            ),
            Draw::Normal { mean, scale } => store_f64(
                y.dtype,
                y.ptr,
                0,
                &normal_values(seed, n, mean, scale, y.dtype),
            ),
            Draw::Bernoulli => {
                let (p, shape) = Random::input(ins)?;
                if shape != y.shape {
                    return Err(format!("bernoulli of {shape:?} cannot give {:?}", y.shape));
                }
                store_f64(y.dtype, y.ptr, 0, &bernoulli_values(seed, &p))
            }
            Draw::Multinomial { samples } => {
                let (logits, shape) = Random::input(ins)?;
                let (batch, classes) = multinomial_shape(&shape)?;
                if y.shape != [batch, samples] {
                    return Err(format!(
                        "multinomial of {shape:?} cannot give {:?}",
                        y.shape
                    ));
                }
                let v = multinomial_values(seed, &logits, classes, samples);
                store_i64(y.dtype, y.ptr, 0, &v)
            }
        }
        Ok(())
    }

    fn f64_ok(&self) -> bool {
        true
    }
}

/// `graph.dropout`: its ratio and training flag read from their slots on
/// every run, the mask drawn by the op's own `dropout_values`.
#[derive(Clone, Debug)]
pub struct Dropout {
    pub seed: Option<f64>,
}

impl Kernel for Dropout {
    fn run(&self, ins: &[&Slot], outs: &[&Slot], _: &Par) -> Result<(), String> {
        let (&[x, ratio, training], &[y, mask]) = (ins, outs) else {
            return Err("dropout takes 3 operands and gives 2 results".into());
        };
        if y.shape != x.shape || mask.shape != x.shape {
            return Err(format!(
                "dropout of {:?} cannot give {:?} and {:?}",
                x.shape, y.shape, mask.shape
            ));
        }
        let load = |s: &Slot| {
            let mut v = vec![0f64; s.numel()];
            load_f64(s.dtype, s.ptr, 0, &mut v);
            v
        };
        let r = dropout_scalar(&load(ratio), "ratio")?;
        let t = dropout_scalar(&load(training), "training")? != 0.0;
        let (v, keep) = dropout_values(op_seed(self.seed), &load(x), r, t)?;
        store_f64(y.dtype, y.ptr, 0, &v);
        let keep: Vec<i64> = keep.into_iter().map(i64::from).collect();
        store_i64(mask.dtype, mask.ptr, 0, &keep);
        Ok(())
    }

    fn f64_ok(&self) -> bool {
        true
    }
}
