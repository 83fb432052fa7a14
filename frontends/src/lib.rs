//! ge-frontends (see docs/architecture.md).
