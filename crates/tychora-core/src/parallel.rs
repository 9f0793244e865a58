//! Work spread over threads with results in input order: ingestion's prepare step and the code
//! benchmarks' whole-tree analysis. Scoped threads pulling the next index from one counter keep
//! both cores busy when item sizes vary (one large file does not hold up a fixed share).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `f` over `items` on up to `threads` threads. `None` marks an item whose thread panicked
/// (a bug the caller reports per item; the other results stand).
pub fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, items.len().max(1));
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    for (i, r) in done {
        slots[i] = Some(r);
    }
    slots
}

/// The machine's available parallelism (1 if unknown).
#[must_use]
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_input_order() {
        let items: Vec<u64> = (0..1000).collect();
        let out = super::map(&items, 4, |x| x * 2);
        assert!(
            out.iter()
                .enumerate()
                .all(|(i, r)| *r == Some(i as u64 * 2))
        );
        assert!(super::map(&[] as &[u64], 4, |x| *x).is_empty());
    }
}
