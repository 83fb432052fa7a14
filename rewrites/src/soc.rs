//! SoC profiles: the numbers a cost model needs, from data files in `soc/`
//! (compiled in, and loadable from any path), not from code.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct EngineProfile {
    pub cube_fp16_tflops: f64,
    pub cube_int8_tops: f64,
    pub cube_fp32_tflops: f64,
    pub vector_fp16_tflops: f64,
    pub vector_fp32_tflops: f64,
    /// Per-task launch overhead in microseconds.
    pub launch_us: f64,
    /// Lower is preferred (GE's engine order).
    pub priority: u32,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct SocProfile {
    pub name: String,
    pub description: String,
    pub ai_cores: u32,
    pub vector_cores: u32,
    pub memory_bytes: u64,
    /// Device memory bandwidth in GB/s.
    pub hbm_gbps: f64,
    pub l2_bytes: u64,
    pub engines: BTreeMap<String, EngineProfile>,
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

    pub fn engine(&self, name: &str) -> Option<&EngineProfile> {
        self.engines.get(name)
    }

    /// Bytes per microsecond of device memory.
    pub fn bytes_per_us(&self) -> f64 {
        self.hbm_gbps * 1e3
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
            assert!(p.engine("AICore").is_some_and(|e| e.cube_fp16_tflops > 0.0));
        }
        assert!(SocProfile::load("Ascend999").is_err());
    }
}
