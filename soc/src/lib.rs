//! ge-soc: SoC profiles, the performance numbers of a target chip, kept in
//! data files (`soc/profiles/<name>.json`) rather than code.
//!
//! The shipped profiles are compiled in (so the tools work from any
//! directory); `Soc::load` also accepts a path to a user's own profile with the
//! same fields. The eqsat cost model (ge-rewrites' `eqsat/cost.rs`), the
//! lowering stages (ge-lowering's `cost.rs`, engine partition, fusion,
//! precision, streams) and the runtime (which SoCs it executes) read them;
//! engines listed in `engines` are the ones the partitioner may use on this
//! chip. A crate of its own so that the runtime needs no compiler crate to
//! know the SoCs.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One SoC profile (see `soc/profiles/Ascend910B.json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Soc {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub ai_cores: u32,
    pub vector_cores: u32,
    pub clock_ghz: f64,
    /// Cube (matrix) unit peak, TFLOPS by dtype name (`f16`, `bf16`, `f32`, `i8`).
    pub cube_tflops: BTreeMap<String, f64>,
    /// Vector unit peak, TFLOPS by dtype name.
    pub vector_tflops: BTreeMap<String, f64>,
    /// AI CPU throughput (GFLOPS, all AI CPU cores).
    pub aicpu_gflops: f64,
    /// Host CPU throughput available to host tasks (GFLOPS).
    pub host_gflops: f64,
    /// Device memory (HBM / LPDDR) bandwidth, GB/s.
    pub hbm_bandwidth_gbps: f64,
    pub l2_bytes: u64,
    /// Device memory size in bytes.
    pub memory_bytes: u64,
    /// Allocation granularity of device memory (GE: 512 bytes).
    pub memory_alignment: u64,
    /// Fixed cost of one AI Core / Vector Core task (launch + scheduling), µs.
    pub task_launch_us: f64,
    /// Fixed cost of one AI CPU task, µs.
    pub aicpu_launch_us: f64,
    /// Fixed cost of one host task, µs.
    pub host_launch_us: f64,
    /// Cost of one cross-stream event (record + wait), µs.
    pub event_sync_us: f64,
    /// C0 block size of the NC1HWC0 / fractal formats by dtype name.
    pub c0: BTreeMap<String, u32>,
    /// Engines present on this chip.
    pub engines: Vec<String>,
    #[serde(default)]
    pub notes: String,
}

/// The profiles shipped with ge.
pub const BUILTIN: &[(&str, &str)] = &[
    ("Ascend910B", include_str!("../profiles/Ascend910B.json")),
    ("Ascend310P", include_str!("../profiles/Ascend310P.json")),
];

/// The SoC used when none is named.
pub const DEFAULT_SOC: &str = "Ascend910B";

impl Soc {
    /// A shipped profile by name (`Ascend910B`), or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Soc, String> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Soc::parse(text, name_or_path);
        }
        if name_or_path.ends_with(".json") {
            let text = std::fs::read_to_string(name_or_path)
                .map_err(|e| format!("cannot read SoC profile '{name_or_path}': {e}"))?;
            return Soc::parse(&text, name_or_path);
        }
        let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        Err(format!(
            "unknown SoC '{name_or_path}' (known: {}; or give a path to a .json profile)",
            known.join(", ")
        ))
    }

    /// Parse a profile (`what` names it in errors).
    pub fn parse(text: &str, what: &str) -> Result<Soc, String> {
        let soc: Soc =
            serde_json::from_str(text).map_err(|e| format!("invalid SoC profile '{what}': {e}"))?;
        soc.check()
            .map_err(|e| format!("invalid SoC profile '{what}': {e}"))?;
        Ok(soc)
    }

    fn check(&self) -> Result<(), String> {
        let positive = [
            ("clock_ghz", self.clock_ghz),
            ("aicpu_gflops", self.aicpu_gflops),
            ("host_gflops", self.host_gflops),
            ("hbm_bandwidth_gbps", self.hbm_bandwidth_gbps),
        ];
        for (k, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("'{k}' must be a positive number, but is {v}"));
            }
        }
        for (k, v) in [
            ("task_launch_us", self.task_launch_us),
            ("aicpu_launch_us", self.aicpu_launch_us),
            ("host_launch_us", self.host_launch_us),
            ("event_sync_us", self.event_sync_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("'{k}' must be a non-negative number, but is {v}"));
            }
        }
        for (table, m) in [
            ("cube_tflops", &self.cube_tflops),
            ("vector_tflops", &self.vector_tflops),
        ] {
            if let Some((k, v)) = m.iter().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
                return Err(format!(
                    "'{table}.{k}' must be a positive number, but is {v}"
                ));
            }
        }
        if !self.memory_alignment.is_power_of_two() {
            return Err(format!(
                "'memory_alignment' must be a power of two, but is {}",
                self.memory_alignment
            ));
        }
        Ok(())
    }

    /// The default profile.
    pub fn default_profile() -> Soc {
        match Soc::load(DEFAULT_SOC) {
            Ok(s) => s,
            // The shipped file is checked by a unit test; this arm is unreachable in practice.
            Err(_) => Soc {
                name: DEFAULT_SOC.into(),
                description: String::new(),
                ai_cores: 1,
                vector_cores: 1,
                clock_ghz: 1.0,
                cube_tflops: BTreeMap::new(),
                vector_tflops: BTreeMap::new(),
                aicpu_gflops: 1.0,
                host_gflops: 1.0,
                hbm_bandwidth_gbps: 1.0,
                l2_bytes: 0,
                memory_bytes: 0,
                memory_alignment: 512,
                task_launch_us: 0.0,
                aicpu_launch_us: 0.0,
                host_launch_us: 0.0,
                event_sync_us: 0.0,
                c0: BTreeMap::new(),
                engines: vec![],
                notes: String::new(),
            },
        }
    }

    /// Cube peak in FLOP/s for a dtype (f16 when the dtype is not listed).
    pub fn cube_flops(&self, dtype: &str) -> f64 {
        rate(&self.cube_tflops, dtype) * 1e12
    }

    /// Vector peak in FLOP/s for a dtype (f16 when the dtype is not listed).
    pub fn vector_flops(&self, dtype: &str) -> f64 {
        rate(&self.vector_tflops, dtype) * 1e12
    }

    pub fn has_engine(&self, engine: &str) -> bool {
        self.engines.iter().any(|e| e == engine)
    }

    /// Bytes per microsecond of device memory (the eqsat cost model).
    pub fn bytes_per_us(&self) -> f64 {
        self.hbm_bandwidth_gbps * 1e3
    }

    /// Cube peak for a dtype in TFLOPS, falling back to f16 (the eqsat cost model).
    pub fn cube(&self, dtype: &str) -> f64 {
        self.cube_tflops
            .get(dtype)
            .or_else(|| self.cube_tflops.get("f16"))
            .copied()
            .unwrap_or(1.0)
    }

    /// Vector peak for a dtype in TFLOPS, falling back to f32 (the eqsat cost model).
    pub fn vector(&self, dtype: &str) -> f64 {
        self.vector_tflops
            .get(dtype)
            .or_else(|| self.vector_tflops.get("f32"))
            .copied()
            .unwrap_or(1.0)
    }
}

fn rate(m: &BTreeMap<String, f64>, dtype: &str) -> f64 {
    m.get(dtype)
        .or_else(|| m.get("f16"))
        .or_else(|| m.values().next())
        .copied()
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_load_and_agree_with_the_ir_c0() {
        for (name, _) in BUILTIN {
            let s = Soc::load(name).unwrap();
            assert_eq!(&s.name, name);
            for (dt, c0) in &s.c0 {
                let d = ge_ir::DType::parse(dt).unwrap();
                assert_eq!(
                    ge_ir::attributes::Format::c0(d),
                    *c0 as i64,
                    "{name}: C0 of {dt}"
                );
            }
        }
    }

    #[test]
    fn bad_profiles_are_clear_errors() {
        assert!(Soc::load("Ascend999")
            .unwrap_err()
            .contains("unknown SoC 'Ascend999' (known: Ascend910B, Ascend310P"));
        let e = Soc::parse("{\"name\": 1}", "x.json").unwrap_err();
        assert!(e.starts_with("invalid SoC profile 'x.json':"), "{e}");
        let mut v: serde_json::Value = serde_json::from_str(BUILTIN[0].1).unwrap();
        v["hbm_bandwidth_gbps"] = serde_json::json!(-1.0);
        let e = Soc::parse(&v.to_string(), "y").unwrap_err();
        assert!(
            e.contains("'hbm_bandwidth_gbps' must be a positive number"),
            "{e}"
        );
    }
}
