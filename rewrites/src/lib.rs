//! ge-rewrites (see docs/architecture.md).
