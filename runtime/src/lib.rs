//! ge-runtime (see docs/architecture.md).
