//! ge-lowering (see docs/architecture.md).
