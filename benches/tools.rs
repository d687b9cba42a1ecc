//! Benchmarks of the tool catalogue (filled in by a later commit).
fn main() {}
