//! Interface values many op declarations share (see `ge_ir::interfaces`):
//! the engine sets of the built-in engines, and the prelude the declarations
//! import. An op's own cost model or layout lives with the op.

pub use ge_ir::interfaces::{
    BlockedWeight, BuiltinEngine, Cost, CostCtx, EngineSupport, FusionPattern, KernelFamily,
    Layout, PrecisionClass,
};
use BuiltinEngine::*;

/// AI Core (cube and vector units), the vector cores, and the CPUs:
/// elementwise math, reductions, normalisation, data movement.
pub const VECTOR_ENGINES: EngineSupport = EngineSupport::of(&[AiCore, VectorCore, AiCpu, HostCpu]);

/// AI Core (it needs the cube unit or the blocked formats) and the CPUs.
pub const CUBE_ENGINES: EngineSupport = EngineSupport::of(&[AiCore, AiCpu, HostCpu]);

/// Only the CPUs (AI CPU, host).
pub const CPU_ENGINES: EngineSupport = EngineSupport::of(&[AiCpu, HostCpu]);

/// The image pre-processing unit (u8 images) and the CPUs.
pub const IMAGE_ENGINES: EngineSupport = EngineSupport::of(&[Dvpp, AiCpu, HostCpu]);
