//! `ge-run`: run a model. Today: `--interpret model.air` runs a function with
//! the reference interpreter (compiled `.om` models come with the runtime).

use crate::npy::{read_npy, write_npy};
use clap::Parser as ClapParser;
use ge_ir::diagnostics::SourceMap;
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{Dim, Ident, Type};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

#[derive(ClapParser, Debug, Clone)]
#[command(
    name = "ge-run",
    version,
    about = "Run a model on the CPU device (or interpret .air with --interpret)"
)]
pub struct RunArgs {
    /// Run this .air file with the reference interpreter
    #[arg(long, value_name = "FILE")]
    pub interpret: String,
    /// Function to run (default: `main`, else the first public function)
    #[arg(long)]
    pub function: Option<String>,
    /// Input as NAME=FILE.npy or FILE.npy (positional order); NAME is `argN` or the argument index
    #[arg(long = "input", value_name = "[NAME=]FILE")]
    pub inputs: Vec<String>,
    /// Fill missing inputs with seeded random values
    #[arg(long)]
    pub random_inputs: bool,
    /// Seed for --random-inputs
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Value for a symbolic dim of random inputs, e.g. B=4 (default 1)
    #[arg(long = "bind", value_name = "SYM=N")]
    pub binds: Vec<String>,
    /// Write output i to the i-th FILE.npy
    #[arg(long = "output", value_name = "FILE")]
    pub outputs: Vec<String>,
    /// Compare output i with the i-th FILE.npy (numpy allclose); exit 1 on mismatch
    #[arg(long = "expect", value_name = "FILE")]
    pub expects: Vec<String>,
    /// Relative tolerance for --expect (default: by dtype)
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance for --expect (default: by dtype)
    #[arg(long)]
    pub atol: Option<f64>,
    /// Accept unregistered dialects
    #[arg(long)]
    pub allow_unregistered_dialect: bool,
}

pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

fn fail(stderr: String) -> RunOutput {
    RunOutput {
        stdout: String::new(),
        stderr,
        code: 1,
    }
}

/// Random values for a type (symbols from `binds`, default 1).
fn random_tensor(
    ty: Type,
    binds: &HashMap<Ident, i64>,
    rng: &mut rand::rngs::SmallRng,
) -> Result<Tensor, String> {
    let tt = ty
        .as_tensor()
        .ok_or_else(|| format!("cannot make a random value of type '{ty}'"))?;
    let shape: Vec<usize> = tt
        .shape()
        .iter()
        .map(|d| match d {
            Dim::Static(n) => Ok(*n as usize),
            Dim::Unknown => Ok(1),
            Dim::Sym(_) => d
                .eval(binds)
                .map(|v| v as usize)
                .ok_or_else(|| format!("bind the symbols of '{ty}' with --bind")),
        })
        .collect::<Result<_, _>>()?;
    let n: usize = shape.iter().product();
    let dt = tt.dtype;
    Ok(if dt.is_float() {
        Tensor::from_f64(
            shape,
            dt,
            (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
        )
    } else if dt == ge_ir::DType::I1 {
        Tensor::from_i64(shape, dt, (0..n).map(|_| rng.random_range(0..2)).collect())
    } else {
        Tensor::from_i64(shape, dt, (0..n).map(|_| rng.random_range(0..10)).collect())
    })
}

pub fn summarize(t: &Tensor) -> String {
    let shown: Vec<String> = (0..t.len().min(8))
        .map(|i| {
            if t.dtype.is_float() {
                format!("{:.6}", t.get_f(i))
            } else {
                t.get_i(i).to_string()
            }
        })
        .collect();
    let more = if t.len() > 8 { ", ..." } else { "" };
    format!(
        "tensor<{}{}> [{}{more}]",
        t.shape.iter().map(|d| format!("{d}x")).collect::<String>(),
        t.dtype,
        shown.join(", ")
    )
}

pub fn main_with(args: RunArgs, ctx: &mut ge_ir::Context) -> RunOutput {
    ctx.allow_unregistered = args.allow_unregistered_dialect;
    let text = match std::fs::read_to_string(&args.interpret) {
        Ok(t) => t,
        Err(e) => return fail(format!("error: cannot read '{}': {e}\n", args.interpret)),
    };
    let mut sm = SourceMap::new();
    let file = sm.add(&args.interpret, Arc::from(text.as_str()));
    let m = match ge_ir::parser::parse_module(ctx, &args.interpret, file, &text, 0, 1) {
        Ok(m) => m,
        Err(d) => return fail(sm.render(&d)),
    };
    let diags = ge_ir::verifier::verify_module(&m);
    if diags.iter().any(|d| d.is_error()) {
        return fail(diags.iter().map(|d| sm.render(d)).collect());
    }
    let name = match &args.function {
        Some(f) => f.clone(),
        None => {
            let b = m.body();
            let names: Vec<String> = m
                .top_ops()
                .into_iter()
                .filter(|&o| {
                    b.op(o).attr("sym_visibility").and_then(|a| a.as_str()) != Some("private")
                })
                .filter_map(|o| {
                    b.op(o)
                        .attr("sym_name")
                        .and_then(|a| a.as_str())
                        .map(str::to_string)
                })
                .collect();
            match names.iter().find(|n| *n == "main").or(names.first()) {
                Some(n) => n.clone(),
                None => return fail("error: the module has no public function to run\n".into()),
            }
        }
    };
    let interp = Interpreter::new(&m);
    let Some((ins, _)) = interp.signature(&name) else {
        return fail(format!("error: no function named '@{name}'\n"));
    };
    let mut given: Vec<Option<Tensor>> = vec![None; ins.len()];
    for (k, spec) in args.inputs.iter().enumerate() {
        let (slot, path) = match spec.split_once('=') {
            Some((n, p)) => {
                let idx = n.strip_prefix("arg").unwrap_or(n).parse::<usize>();
                match idx {
                    Ok(i) => (i, p),
                    Err(_) => {
                        return fail(format!(
                            "error: --input {spec}: name must be argN or an index\n"
                        ))
                    }
                }
            }
            None => (k, spec.as_str()),
        };
        if slot >= ins.len() {
            return fail(format!(
                "error: --input {spec}: '@{name}' has only {} inputs\n",
                ins.len()
            ));
        }
        match read_npy(path) {
            Ok(t) => given[slot] = Some(t),
            Err(e) => return fail(format!("error: {e}\n")),
        }
    }
    let mut binds: HashMap<Ident, i64> = HashMap::new();
    for b in &args.binds {
        match b.split_once('=').map(|(s, v)| (s, v.parse::<i64>())) {
            Some((s, Ok(v))) => {
                binds.insert(Ident::new(s), v);
            }
            _ => return fail(format!("error: --bind {b}: expected SYM=N\n")),
        }
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(args.seed);
    let mut inputs = vec![];
    for (i, (g, &ty)) in given.into_iter().zip(ins).enumerate() {
        match g {
            Some(t) => inputs.push(t),
            None if args.random_inputs => match random_tensor(ty, &binds, &mut rng) {
                Ok(t) => inputs.push(t),
                Err(e) => return fail(format!("error: input #{i}: {e}\n")),
            },
            None => {
                return fail(format!(
                    "error: missing input #{i} of type '{ty}' (give --input or --random-inputs)\n"
                ))
            }
        }
    }
    let results = match interp.run_function(&name, inputs) {
        Ok(r) => r,
        Err(e) => return fail(sm.render(&e.to_diagnostic())),
    };
    if !args.outputs.is_empty() && args.outputs.len() != results.len() {
        return fail(format!(
            "error: '@{name}' has {} outputs but {} --output files were given\n",
            results.len(),
            args.outputs.len()
        ));
    }
    if !args.expects.is_empty() && args.expects.len() != results.len() {
        return fail(format!(
            "error: '@{name}' has {} outputs but {} --expect files were given\n",
            results.len(),
            args.expects.len()
        ));
    }
    let mut stdout = String::new();
    let mut mismatches = String::new();
    for (i, (t, path)) in results.iter().zip(&args.expects).enumerate() {
        let want = match read_npy(path) {
            Ok(w) => w,
            Err(e) => return fail(format!("error: {e}\n")),
        };
        let (rt, at) = Tensor::default_tolerance(t.dtype);
        let (rtol, atol) = (args.rtol.unwrap_or(rt), args.atol.unwrap_or(at));
        let got = if want.dtype != t.dtype {
            t.cast(want.dtype)
        } else {
            t.clone()
        };
        if got.shape != want.shape {
            mismatches.push_str(&format!(
                "output #{i}: shape {:?} but {path} has {:?}\n",
                t.shape, want.shape
            ));
        } else if !got.allclose(&want, rtol, atol) {
            let worst = (0..got.len())
                .map(|k| (k, (got.get_f(k) - want.get_f(k)).abs()))
                .fold(
                    (0, 0.0f64),
                    |m, x| if x.1 > m.1 || x.1.is_nan() { x } else { m },
                );
            mismatches.push_str(&format!(
                "output #{i}: differs from {path} (rtol={rtol}, atol={atol}): element {} is {} but expected {}\n",
                worst.0,
                got.get_f(worst.0),
                want.get_f(worst.0)
            ));
        } else {
            stdout.push_str(&format!("output #{i}: matches {path}\n"));
        }
    }
    for (i, t) in results.iter().enumerate() {
        stdout.push_str(&format!("output #{i}: {}\n", summarize(t)));
        if let Some(p) = args.outputs.get(i) {
            if let Err(e) = write_npy(p, t) {
                return fail(format!("error: {e}\n"));
            }
        }
    }
    RunOutput {
        stdout,
        stderr: String::new(),
        code: 0,
    }
}

pub fn main() -> i32 {
    let args = RunArgs::parse();
    let mut ctx = crate::registry::full_context();
    let out = main_with(args, &mut ctx);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    out.code
}
