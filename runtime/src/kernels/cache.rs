//! The size of a core's L2 cache, which blocking decisions size their
//! working sets by (issue 17: the same blocking measured 1.8x apart on an
//! AMD core with 1 MiB of L2 and an Intel core with 2 MiB).
//!
//! Read once from CPUID's deterministic cache parameters: leaf 4 on Intel,
//! 0x8000_001D on AMD (the same layout; leaf 4 reads as empty there). A
//! hypervisor passes its guest's view through, which is what the guest's
//! threads get. `GE_L2_BYTES` overrides it (to compare blockings on one
//! machine); without an answer, 1 MiB.

use std::sync::OnceLock;

/// When neither CPUID nor `GE_L2_BYTES` tells.
const FALLBACK: usize = 1 << 20;

/// Bytes of the L2 cache of the core a kernel runs on.
pub fn l2_bytes() -> usize {
    static L2: OnceLock<usize> = OnceLock::new();
    *L2.get_or_init(|| {
        std::env::var("GE_L2_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .or_else(read)
            .filter(|&b| b > 0)
            .unwrap_or(FALLBACK)
    })
}

#[cfg(target_arch = "x86_64")]
fn read() -> Option<usize> {
    use std::arch::x86_64::__cpuid_count;
    let max = __cpuid_count(0, 0).eax;
    let max_ext = __cpuid_count(0x8000_0000, 0).eax;
    let leaves = [(4, max >= 4), (0x8000_001D, max_ext >= 0x8000_001D)];
    leaves
        .into_iter()
        .filter(|&(_, there)| there)
        .find_map(|(leaf, _)| level2(|sub| __cpuid_count(leaf, sub)))
}

#[cfg(not(target_arch = "x86_64"))]
fn read() -> Option<usize> {
    None
}

/// The data or unified level-2 cache among the subleaves of one
/// deterministic-cache-parameters leaf (`query(subleaf)`), if listed.
#[cfg(target_arch = "x86_64")]
fn level2(query: impl Fn(u32) -> std::arch::x86_64::CpuidResult) -> Option<usize> {
    // A CPU lists a handful of caches; 16 subleaves bound a bad answer.
    for sub in 0..16 {
        let r = query(sub);
        let kind = r.eax & 0x1f;
        if kind == 0 {
            return None;
        }
        let level = (r.eax >> 5) & 0x7;
        // 1: data, 3: unified (2 is instructions).
        if level == 2 && (kind == 1 || kind == 3) {
            let ways = ((r.ebx >> 22) & 0x3ff) as usize + 1;
            let partitions = ((r.ebx >> 12) & 0x3ff) as usize + 1;
            let line = (r.ebx & 0xfff) as usize + 1;
            let sets = r.ecx as usize + 1;
            return Some(ways * partitions * line * sets);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_l2_of_a_plausible_size() {
        // Every x86-64 core of the last decade has 256 KiB to 4 MiB; the
        // fallback is 1 MiB.
        let b = l2_bytes();
        assert!((128 << 10..=64 << 20).contains(&b), "{b}");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_leaf_layout_is_decoded() {
        use std::arch::x86_64::CpuidResult;
        // An L1d (level 1, data), then a 2 MiB 16-way unified L2 of 64-byte
        // lines: 2048 sets.
        let caches = [
            CpuidResult {
                eax: 0x21,
                ebx: (11 << 22) | 63,
                ecx: 63,
                edx: 0,
            },
            CpuidResult {
                eax: 0x43,
                ebx: (15 << 22) | 63,
                ecx: 2047,
                edx: 0,
            },
            CpuidResult {
                eax: 0,
                ebx: 0,
                ecx: 0,
                edx: 0,
            },
        ];
        assert_eq!(level2(|s| caches[s as usize]), Some(2 << 20));
        // No level 2 listed (an empty leaf, as leaf 4 on AMD).
        assert_eq!(level2(|_| caches[2]), None);
    }
}
