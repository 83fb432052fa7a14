//! NasRNN: the recurrent cell found by neural architecture search (Zoph & Le,
//! "Neural Architecture Search with Reinforcement Learning", 2017), unrolled
//! over 5 steps exactly as the TASO/TENSAT benchmark builds it
//! (`examples/nasrnn.py`): each step combines the input and the state with 8
//! pairs of matmuls, then a tree of relu/sigmoid/tanh and add/mul nodes.

use super::net::Net;
use super::Size;
use ge_dialects::es::{EsResult, Tensor};

/// `x·W1 + h·W2` with fresh weights.
fn combine<'g>(
    net: &mut Net<'g>,
    name: &str,
    x: Tensor<'g>,
    h: Tensor<'g>,
    hidden: usize,
) -> EsResult<Tensor<'g>> {
    let w1 = net.lecun(&format!("{name}.w_x"), &[hidden, hidden], hidden)?;
    let w2 = net.lecun(&format!("{name}.w_h"), &[hidden, hidden], hidden)?;
    net.b.matmul(x, w1)? + net.b.matmul(h, w2)?
}

/// One NAS cell step: the new state from the state `h` and input `x`.
fn nas_node<'g>(
    net: &mut Net<'g>,
    name: &str,
    h: Tensor<'g>,
    x: Tensor<'g>,
    hidden: usize,
) -> EsResult<Tensor<'g>> {
    let mut t = Vec::with_capacity(8);
    for i in 0..8 {
        t.push(combine(net, &format!("{name}.combine{i}"), x, h, hidden)?);
    }
    let b = net.b;
    let m0 = (b.relu(t[0])? + b.sigmoid(t[3])?)?;
    let m1 = (b.sigmoid(t[1])? + b.tanh(t[2])?)?;
    let m2 = (b.sigmoid(t[4])? * b.tanh(t[5])?)?;
    let m3 = (b.sigmoid(t[6])? * b.relu(t[7])?)?;
    let m4 = (b.sigmoid(m1)? + b.tanh(m2)?)?;
    let m5 = (b.tanh(m0)? * b.tanh(m3)?)?;
    let m6 = (b.tanh(m4)? * b.tanh(m5)?)?;
    b.tanh(m6)
}

/// Five unrolled NasRNN steps over inputs `x0..x4: [B, H]`, starting from a
/// learned `[1, H]` state; outputs the final state `[B, H]`. Tiny: H = 16;
/// full: H = 512 (TASO's size).
pub fn nasrnn<'g>(net: &mut Net<'g>, size: Size) -> EsResult<Vec<Tensor<'g>>> {
    let hidden = match size {
        Size::Tiny => 16,
        Size::Full => 512,
    };
    const STEPS: usize = 5;
    let mut xs = Vec::with_capacity(STEPS);
    for i in 0..STEPS {
        xs.push(
            net.b
                .input(&format!("x{i}"), format!("tensor<Bx{hidden}xf32>").as_str())?,
        );
    }
    let mut state = net.param("state0", &[1, hidden], -0.5, 0.5)?;
    for (i, &x) in xs.iter().enumerate() {
        state = nas_node(net, &format!("step{i}"), state, x, hidden)?;
    }
    Ok(vec![state])
}
