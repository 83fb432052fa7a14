//! SoC profiles: the numbers a cost model needs, from data files in `soc/`
//! (compiled in, and loadable from any path), not from code. Shared by the
//! eqsat cost model and the lowering stages.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct SocProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub ai_cores: u32,
    #[serde(default)]
    pub vector_cores: u32,
    #[serde(default)]
    pub clock_ghz: f64,
    /// Cube (matrix) peak by dtype name, TFLOPS (TOPS for ints).
    pub cube_tflops: BTreeMap<String, f64>,
    /// Vector peak by dtype name, TFLOPS.
    pub vector_tflops: BTreeMap<String, f64>,
    #[serde(default)]
    pub aicpu_gflops: f64,
    #[serde(default)]
    pub host_gflops: f64,
    /// Device memory bandwidth, GB/s.
    pub hbm_bandwidth_gbps: f64,
    #[serde(default)]
    pub l2_bytes: u64,
    pub memory_bytes: u64,
    #[serde(default = "default_alignment")]
    pub memory_alignment: u64,
    /// Per-task launch overhead on AICore/VectorCore, µs.
    pub task_launch_us: f64,
    #[serde(default)]
    pub aicpu_launch_us: f64,
    #[serde(default)]
    pub host_launch_us: f64,
    #[serde(default)]
    pub event_sync_us: f64,
    /// C0 block size by dtype name.
    #[serde(default)]
    pub c0: BTreeMap<String, u32>,
    #[serde(default)]
    pub engines: Vec<String>,
    #[serde(default)]
    pub notes: String,
}

fn default_alignment() -> u64 {
    512
}

/// The shipped profiles (soc/*.json).
pub const BUILTIN: &[(&str, &str)] = &[
    ("Ascend910B", include_str!("../../soc/Ascend910B.json")),
    ("Ascend310P", include_str!("../../soc/Ascend310P.json")),
];

impl SocProfile {
    /// A shipped profile by name (`Ascend910B`, `Ascend310P`), or a JSON file path.
    pub fn load(name_or_path: &str) -> Result<SocProfile, String> {
        if let Some((_, text)) = BUILTIN
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name_or_path))
        {
            return serde_json::from_str(text)
                .map_err(|e| format!("built-in SoC profile '{name_or_path}' is invalid: {e}"));
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|_| {
            let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            format!(
                "unknown SoC '{name_or_path}' (known: {}; or give a JSON profile path)",
                known.join(", ")
            )
        })?;
        serde_json::from_str(&text).map_err(|e| format!("{name_or_path}: invalid SoC profile: {e}"))
    }

    /// Bytes per microsecond of device memory.
    pub fn bytes_per_us(&self) -> f64 {
        self.hbm_bandwidth_gbps * 1e3
    }

    /// Cube peak for a dtype (TFLOPS), falling back to f16.
    pub fn cube(&self, dtype: &str) -> f64 {
        self.cube_tflops
            .get(dtype)
            .or_else(|| self.cube_tflops.get("f16"))
            .copied()
            .unwrap_or(1.0)
    }

    /// Vector peak for a dtype (TFLOPS), falling back to f32.
    pub fn vector(&self, dtype: &str) -> f64 {
        self.vector_tflops
            .get(dtype)
            .or_else(|| self.vector_tflops.get("f32"))
            .copied()
            .unwrap_or(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_parse() {
        for (n, _) in BUILTIN {
            let p = SocProfile::load(n).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&p.name, n);
            assert!(p.cube("f16") > p.vector("f16"));
        }
        assert!(SocProfile::load("Ascend999").is_err());
    }
}
