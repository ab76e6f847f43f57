//! What the CPU peer benchmarks (`cpu_peers`, `peers_in_turns`) share: the sizes, from
//! where per-op costs dominate to where memory bandwidth does, and the data.

/// Element counts, with criterion's labels. 2K to 8K: past a 32 KiB L1d (Zen 4) and before
/// 16K, where a 3K-element add fell to 0.72x ndarray unseen. 64K: an add's 768 KiB, in the
/// band where splitting over the threads starts to pay.
pub const SIZES: [(&str, usize); 11] = [
    ("1K", 1 << 10),
    ("2K", 1 << 11),
    ("4K", 1 << 12),
    ("8K", 1 << 13),
    ("16K", 1 << 14),
    ("64K", 1 << 16),
    ("256K", 1 << 18),
    ("1M", 1 << 20),
    ("4M", 1 << 22),
    ("16M", 1 << 24),
    ("64M", 1 << 26),
];

/// `n` float32s in [0, 500).
pub fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1000) as f32 * 0.5).collect()
}
