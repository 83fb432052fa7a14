//! ATC's shape flags: `--input_shape "x:1,3,224,224;y:-1,10"` and
//! `--input_shape_range "x:[1~8,3,224,224]"` (a dim may also be a range
//! `1~8` inside `--input_shape`, as newer ATC versions accept).
//!
//! A ranged dim becomes a symbol named after its input and position
//! (`X_D0`), bounded by the range's upper end; `-1` (or `LOW~-1`) without a
//! gear is such a symbol with no bound — the runtime then plans memory per
//! concrete shape.
//!
//! ATC's gear flags bound the `-1` dims of `--input_shape` too:
//! `--dynamic_batch_size "1,2,4,8"` (every `-1` is the batch, symbol `BATCH`),
//! `--dynamic_image_size "224,224;448,448"` (each input's two `-1` dims are
//! `HEIGHT` and `WIDTH`), `--dynamic_dims "1,16;4,64"` (gear `g` gives the
//! `-1` dims in order, across inputs; symbols as for ranges). GE compiles
//! one static graph per gear; ge plans one symbolic model whose memory is
//! static up to the largest gear, so any size up to it runs.

use ge_ir::Dim;
use std::collections::BTreeMap;

/// The parsed shapes: per input, its dims; per symbol, its upper bound.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputShapes {
    pub dims: BTreeMap<String, Vec<Dim>>,
    pub bounds: BTreeMap<String, i64>,
}

/// One dim as written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Spec {
    Fixed(i64),
    Dynamic,
    Range(i64, i64),
}

fn parse_dim(flag: &str, input: &str, d: &str) -> Result<Spec, String> {
    let d = d.trim();
    let bad = || format!("--{flag}: bad dim '{d}' of input '{input}' (expected N, -1 or LOW~HIGH)");
    if let Some((lo, hi)) = d.split_once('~') {
        let lo: i64 = lo.trim().parse().map_err(|_| bad())?;
        let hi: i64 = hi.trim().parse().map_err(|_| bad())?;
        if hi == -1 && lo >= 1 {
            // ATC's `LOW~-1`: no upper bound (the low end is not needed).
            return Ok(Spec::Dynamic);
        }
        if lo < 1 || hi < lo {
            return Err(format!(
                "--{flag}: the range '{d}' of input '{input}' must have 1 <= LOW <= HIGH"
            ));
        }
        return Ok(if lo == hi {
            Spec::Fixed(lo)
        } else {
            Spec::Range(lo, hi)
        });
    }
    match d.parse::<i64>() {
        Ok(-1) => Ok(Spec::Dynamic),
        Ok(n) if n >= 0 => Ok(Spec::Fixed(n)),
        _ => Err(bad()),
    }
}

/// `name:d,d,...;name:...` (the name may contain ':', the last one splits).
fn parse_list(flag: &str, text: &str, brackets: bool) -> Result<Vec<(String, Vec<Spec>)>, String> {
    let mut out: Vec<(String, Vec<Spec>)> = vec![];
    for part in text.split(';').filter(|p| !p.trim().is_empty()) {
        let (name, dims) = part
            .rsplit_once(':')
            .ok_or_else(|| format!("--{flag}: '{part}' is not NAME:DIMS"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("--{flag}: '{part}' has no input name"));
        }
        let mut dims = dims.trim();
        if brackets {
            dims = dims
                .strip_prefix('[')
                .and_then(|d| d.strip_suffix(']'))
                .ok_or_else(|| format!("--{flag}: the dims of '{name}' must be in brackets, e.g. {name}:[1~8,3,224,224]"))?;
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("--{flag}: input '{name}' is given twice"));
        }
        let specs = if dims.trim().is_empty() {
            vec![]
        } else {
            dims.split(',')
                .map(|d| parse_dim(flag, name, d))
                .collect::<Result<_, _>>()?
        };
        out.push((name.to_string(), specs));
    }
    Ok(out)
}

/// A symbol name for dim `i` of `input`: upper-case letters, digits, `_`.
fn symbol_for(input: &str, i: usize) -> String {
    let mut s: String = input
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert(0, 'S');
    }
    format!("{s}_D{i}")
}

/// ATC's gear flags (at most one may be given).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gears<'a> {
    pub batch: Option<&'a str>,
    pub image: Option<&'a str>,
    pub dims: Option<&'a str>,
}

/// The gears of one flag: `;`-separated lists of positive integers, each
/// `width` long (`None`: any width, one list).
fn parse_gears(flag: &str, text: &str, width: Option<usize>) -> Result<Vec<Vec<i64>>, String> {
    let mut out = vec![];
    for g in text.split(';').map(str::trim).filter(|g| !g.is_empty()) {
        let vals: Vec<i64> = g
            .split(',')
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("--{flag}: '{}' is not a positive integer", v.trim()))
            })
            .collect::<Result<_, _>>()?;
        if let Some(w) = width {
            if vals.len() != w {
                return Err(format!(
                    "--{flag}: the gear '{g}' has {} values but --input_shape has {w} -1 dims",
                    vals.len()
                ));
            }
        }
        out.push(vals);
    }
    if out.is_empty() {
        return Err(format!("--{flag}: no gears given"));
    }
    Ok(out)
}

/// Bind the `-1` dims of `shapes` to symbols bounded by the largest gear.
fn apply_gears(
    shapes: &mut [(String, Vec<Spec>)],
    gears: Gears,
    bounds: &mut BTreeMap<String, Vec<(usize, String)>>,
    out: &mut BTreeMap<String, i64>,
) -> Result<(), String> {
    let given: Vec<&str> = [
        ("dynamic_batch_size", gears.batch),
        ("dynamic_image_size", gears.image),
        ("dynamic_dims", gears.dims),
    ]
    .iter()
    .filter(|(_, v)| v.is_some())
    .map(|(n, _)| *n)
    .collect();
    let flag = match given.as_slice() {
        [] => return Ok(()),
        [f] => *f,
        _ => return Err(format!("--{} cannot be combined", given.join(" and --"))),
    };
    let dynamic: Vec<(usize, usize)> = shapes
        .iter()
        .enumerate()
        .flat_map(|(i, (_, sp))| {
            sp.iter()
                .enumerate()
                .filter(|(_, s)| **s == Spec::Dynamic)
                .map(move |(k, _)| (i, k))
        })
        .collect();
    if dynamic.is_empty() {
        return Err(format!(
            "--{flag} needs --input_shape with -1 for the dynamic dims, e.g. \"x:-1,3,224,224\""
        ));
    }
    // symbol per -1 dim (in order) and its values per gear.
    let (syms, gears): (Vec<String>, Vec<Vec<i64>>) = match flag {
        "dynamic_batch_size" => {
            let g = parse_gears(flag, gears.batch.unwrap_or(""), None)?;
            let vals: Vec<i64> = g.concat();
            (
                vec!["BATCH".to_string(); dynamic.len()],
                vals.iter().map(|&v| vec![v; dynamic.len()]).collect(),
            )
        }
        "dynamic_image_size" => {
            let mut syms = vec![];
            for (i, (name, sp)) in shapes.iter().enumerate() {
                let n = dynamic.iter().filter(|(j, _)| *j == i).count();
                if n != 0 && n != 2 {
                    return Err(format!(
                        "--dynamic_image_size: input '{name}' has {n} -1 dims in --input_shape; an image has two (height and width)"
                    ));
                }
                if n == 2 && sp.len() < 2 {
                    return Err(format!(
                        "--dynamic_image_size: input '{name}' is not an image"
                    ));
                }
                if n == 2 {
                    syms.push("HEIGHT".to_string());
                    syms.push("WIDTH".to_string());
                }
            }
            let g = parse_gears(flag, gears.image.unwrap_or(""), Some(2))?;
            let per_input = syms.len() / 2;
            (syms, g.iter().map(|hw| hw.repeat(per_input)).collect())
        }
        _ => {
            let syms = dynamic
                .iter()
                .map(|&(i, k)| symbol_for(&shapes[i].0, k))
                .collect();
            (
                syms,
                parse_gears(flag, gears.dims.unwrap_or(""), Some(dynamic.len()))?,
            )
        }
    };
    for (p, &(i, k)) in dynamic.iter().enumerate() {
        let hi = gears.iter().map(|g| g[p]).max().unwrap_or(1);
        let b = out.entry(syms[p].clone()).or_insert(hi);
        *b = (*b).max(hi);
        bounds
            .entry(shapes[i].0.clone())
            .or_default()
            .push((k, syms[p].clone()));
    }
    Ok(())
}

/// Combine `--input_shape` and `--input_shape_range`.
pub fn parse(shape: Option<&str>, range: Option<&str>) -> Result<InputShapes, String> {
    parse_with_gears(shape, range, Gears::default())
}

/// Combine `--input_shape`, `--input_shape_range` and the gear flags.
pub fn parse_with_gears(
    shape: Option<&str>,
    range: Option<&str>,
    gears: Gears,
) -> Result<InputShapes, String> {
    let mut shapes = parse_list("input_shape", shape.unwrap_or(""), false)?;
    let ranges = parse_list("input_shape_range", range.unwrap_or(""), true)?;
    let mut out = InputShapes::default();
    if (gears.batch.is_some() || gears.image.is_some() || gears.dims.is_some()) && range.is_some() {
        return Err("--input_shape_range cannot be combined with --dynamic_batch_size, --dynamic_image_size or --dynamic_dims".into());
    }
    // (input, dim) -> symbol of the gear flags.
    let mut geared: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    apply_gears(&mut shapes, gears, &mut geared, &mut out.bounds)?;
    let mut names: Vec<&str> = shapes.iter().map(|(n, _)| n.as_str()).collect();
    for (n, _) in &ranges {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    for name in names {
        let s = shapes.iter().find(|(n, _)| n == name).map(|(_, d)| d);
        let r = ranges.iter().find(|(n, _)| n == name).map(|(_, d)| d);
        let specs: Vec<Spec> = match (s, r) {
            (Some(s), None) => s.clone(),
            (None, Some(r)) => r.clone(),
            (Some(s), Some(r)) => {
                if s.len() != r.len() {
                    return Err(format!(
                        "--input_shape gives '{name}' {} dims but --input_shape_range gives {}",
                        s.len(),
                        r.len()
                    ));
                }
                // The range fills in the shape's -1 dims; fixed dims must agree.
                s.iter()
                    .zip(r)
                    .enumerate()
                    .map(|(i, (a, b))| match (a, b) {
                        (Spec::Dynamic, b) => Ok(*b),
                        (a, Spec::Dynamic) => Ok(*a),
                        (a, b) if a == b => Ok(*a),
                        _ => Err(format!(
                            "dim {i} of '{name}' is {} in --input_shape but {} in --input_shape_range",
                            show(*a),
                            show(*b)
                        )),
                    })
                    .collect::<Result<_, _>>()?
            }
            (None, None) => continue,
        };
        let mut dims = vec![];
        for (i, sp) in specs.into_iter().enumerate() {
            dims.push(match sp {
                Spec::Fixed(n) => Dim::Static(n),
                Spec::Range(_, hi) => {
                    let sym = symbol_for(name, i);
                    out.bounds.insert(sym.clone(), hi);
                    Dim::sym(&sym)
                }
                Spec::Dynamic if geared.contains_key(name) => {
                    match geared[name].iter().find(|(k, _)| *k == i) {
                        Some((_, sym)) => Dim::sym(sym),
                        None => Dim::Unknown,
                    }
                }
                // No bound: memory is planned per shape at run time.
                Spec::Dynamic => Dim::sym(&symbol_for(name, i)),
            });
        }
        out.dims.insert(name.to_string(), dims);
    }
    Ok(out)
}

fn show(s: Spec) -> String {
    match s {
        Spec::Fixed(n) => n.to_string(),
        Spec::Dynamic => "-1".into(),
        Spec::Range(a, b) => format!("{a}~{b}"),
    }
}

/// `--out_nodes "conv1:0;fc:1"` as (node, output index) pairs.
pub fn parse_out_nodes(text: &str) -> Result<Vec<(String, usize)>, String> {
    let mut out = vec![];
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (node, idx) = part
            .rsplit_once(':')
            .ok_or_else(|| format!("--out_nodes: '{part}' is not NODE:INDEX"))?;
        let idx: usize = idx
            .trim()
            .parse()
            .map_err(|_| format!("--out_nodes: bad output index '{idx}' in '{part}'"))?;
        if node.trim().is_empty() {
            return Err(format!("--out_nodes: '{part}' has no node name"));
        }
        out.push((node.trim().to_string(), idx));
    }
    if out.is_empty() {
        return Err("--out_nodes: no output nodes given".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_dynamic_and_ranges() {
        let s = parse(Some("x:1,3,224,224;y:-1,10"), Some("y:[1~8,10]")).unwrap();
        assert_eq!(
            s.dims["x"],
            vec![
                Dim::Static(1),
                Dim::Static(3),
                Dim::Static(224),
                Dim::Static(224)
            ]
        );
        assert_eq!(s.dims["y"], vec![Dim::sym("Y_D0"), Dim::Static(10)]);
        assert_eq!(s.bounds["Y_D0"], 8);
        let inline = parse(Some("in.0:1~4,3"), None).unwrap();
        assert_eq!(inline.dims["in.0"][0], Dim::sym("IN_0_D0"));
        assert_eq!(inline.bounds["IN_0_D0"], 4);
    }

    #[test]
    fn errors_name_the_problem() {
        // -1 and LOW~-1 without gears: a symbol with no bound.
        let s = parse(Some("x:-1,3"), Some("y:[1~-1]")).unwrap();
        assert_eq!(s.dims["x"][0], Dim::sym("X_D0"));
        assert_eq!(s.dims["y"][0], Dim::sym("Y_D0"));
        assert!(s.bounds.is_empty());
        let e = parse(Some("x:1,a"), None).unwrap_err();
        assert!(e.contains("bad dim 'a'"), "{e}");
        let e = parse(None, Some("x:1~8,3")).unwrap_err();
        assert!(e.contains("brackets"), "{e}");
        let e = parse(Some("x:2,3"), Some("x:[1~8,3]")).unwrap_err();
        assert!(e.contains("dim 0 of 'x' is 2"), "{e}");
        let e = parse(Some("x:8~1"), None).unwrap_err();
        assert!(e.contains("LOW <= HIGH"), "{e}");
        assert_eq!(
            parse_out_nodes("conv1:0; fc:1").unwrap(),
            vec![("conv1".into(), 0), ("fc".into(), 1)]
        );
        assert!(parse_out_nodes("conv1").is_err());
    }
}
