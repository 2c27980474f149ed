//! Nothing to build: the script exists for `[build-dependencies]` in Cargo.toml, which align
//! the features build scripts' dependencies are built with across the workspace's builds.
fn main() {}
