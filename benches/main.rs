//! Benchmarks (to come).
fn main() {}
