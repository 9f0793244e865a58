//! Work spread over threads with results in input order: ingestion's prepare step and the code
//! benchmarks' whole-tree analysis. Scoped threads pulling the next index from one counter keep
//! both cores busy when item sizes vary (one large file does not hold up a fixed share).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

/// Runs `f` over `items` on up to `threads` worker threads and hands each result to `consume` on
/// the calling thread, in input order, as soon as it and every earlier one are ready: the caller
/// works on item `i` while the workers compute the ones after it. `None` marks an item whose `f`
/// panicked (the others stand). When `consume` fails, the workers take no further items and the
/// error is returned.
///
/// # Errors
/// The first error `consume` returns.
pub fn map_in_order<T: Sync, R: Send, E>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(usize, Option<R>) -> Result<(), E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = threads.clamp(1, items.len().max(1));
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Option<R>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let sender = sender.clone();
            let (next, stop, f) = (&next, &stop, &f);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item))).ok();
                    if sender.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut waiting: BTreeMap<usize, Option<R>> = BTreeMap::new();
        let mut wanted = 0;
        let mut outcome = Ok(());
        // Ends when every worker has finished (each holds a sender).
        for (i, result) in receiver {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&wanted) {
                if outcome.is_ok()
                    && let Err(e) = consume(wanted, result)
                {
                    outcome = Err(e);
                    stop.store(true, Ordering::Relaxed);
                }
                wanted += 1;
            }
        }
        outcome
    })
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

    #[test]
    fn in_order_hands_results_over_in_order_and_isolates_a_panic() {
        let items: Vec<u64> = (0..500).collect();
        let mut seen = Vec::new();
        let done: Result<(), ()> = super::map_in_order(
            &items,
            3,
            |x| {
                assert!(*x != 250, "item 250 panics");
                x * 2
            },
            |i, r| {
                seen.push((i, r));
                Ok(())
            },
        );
        assert!(done.is_ok());
        assert_eq!(seen.len(), 500);
        assert!(seen.iter().enumerate().all(|(i, (j, r))| i == *j
            && if i == 250 {
                r.is_none()
            } else {
                *r == Some(i as u64 * 2)
            }));
    }

    #[test]
    fn in_order_stops_at_the_first_error() {
        let items: Vec<u64> = (0..10_000).collect();
        let mut consumed = 0;
        let done = super::map_in_order(
            &items,
            2,
            |x| *x,
            |i, _| {
                consumed += 1;
                if i == 10 { Err(i) } else { Ok(()) }
            },
        );
        assert_eq!(done, Err(10));
        assert_eq!(consumed, 11, "nothing is consumed after the error");
    }
}
