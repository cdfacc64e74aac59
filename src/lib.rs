//! llm-fallback: an Envoy filter that keeps LLM-backed products up when model providers are not.
//!
//! The crate is a pure core (no host calls; tested natively and compiled to wasm) and a thin
//! proxy-wasm shell ([`shell`], only on `wasm32-wasi*`) that moves bytes and state between
//! Envoy and the core.

pub mod abi;
pub mod attempt;
pub mod body_facts;
pub mod check;
pub mod classify;
pub mod config;
pub mod flow;
pub mod fnv;
pub mod health;
pub mod inflate;
pub mod meter;
pub mod model_field;
pub mod plan;
pub mod safety;
pub mod shaping;
pub mod sse;
pub mod stats;
pub mod usage;

/// The filter itself: proxy-wasm (wasm32-wasi), an Envoy dynamic module (feature `native`), or,
/// in native tests, over a fake host.
#[cfg(any(
    all(target_arch = "wasm32", target_os = "wasi"),
    all(test, not(target_arch = "wasm32")),
    all(feature = "native", not(target_arch = "wasm32"))
))]
mod shell;

/// Helpers shared by the unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    /// A small deterministic PRNG (xorshift64*), so fuzz-style tests are repeatable.
    pub struct Rng(pub u64);

    impl Rng {
        #[allow(clippy::should_implement_trait)]
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        /// A number below `n` (0 when `n` is 0).
        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }
}
