//! ge-dialects (see docs/architecture.md).
