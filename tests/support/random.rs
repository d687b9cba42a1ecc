//! A small seeded random source for the property, fuzz-style and soak
//! tests, so every failure reproduces from the seed it prints, and the
//! environment variables that set a run's seed and size.

/// SplitMix64: tiny, seedable, good enough to pick shapes and faults.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `p` times in a hundred.
    pub fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    /// True once in `n`.
    pub fn chance(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// The number in variable `name`, or `default` when it is not set.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}
