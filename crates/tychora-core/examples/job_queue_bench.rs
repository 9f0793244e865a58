//! `npm run bench:queue` runs this: the job queue's two adapters side by side — the embedded
//! store's SQLite (`synchronous=FULL`) and PostgreSQL (Debian's server, `fsync=on`, on a Unix
//! socket) — taking and ending JOBS empty jobs with 1, 2 and 4 workers, each worker a handle of
//! its own (as separate daemons are). Prints one JSON object: per adapter and worker count, the
//! median wall time of RUNS runs, each on a fresh queue, and the jobs per second it makes.
//! This measures the queue's own cost (two writes a job: the take and the end); a real job's work
//! comes on top.

#[allow(dead_code)] // the bench starts one durable cluster; the tests use the rest
#[path = "../tests/common/postgres.rs"]
mod postgres;
#[path = "../tests/common/servers.rs"]
mod servers;

use std::time::{Duration, Instant};

use tychora_core::Workspace;
use tychora_core::job::{JobKind, JobState};
use tychora_core::store::postgres::{PgQueue, PgStore};
use tychora_core::store::queue::{Ending, JobQueue, SqliteQueue};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One run: `jobs` queued, then `workers` handles take and end them all; returns the seconds.
fn run(open: &(dyn Fn() -> Box<dyn JobQueue> + Sync), jobs: usize, workers: usize) -> f64 {
    let queue = open();
    for i in 0..jobs {
        queue
            .enqueue(JobKind::Add, &format!(r#"{{"paths":["f{i}.md"]}}"#))
            .unwrap();
    }
    let started = Instant::now();
    std::thread::scope(|scope| {
        for w in 0..workers {
            scope.spawn(move || {
                let queue = open();
                let worker = format!("worker-{w}");
                let ending = Ending {
                    state: JobState::Succeeded,
                    receipt_json: Some("{}"),
                    error: None,
                };
                while let Some(claim) = queue.claim(&worker, Duration::from_secs(60)).unwrap() {
                    assert!(queue.finish(&claim, ending).unwrap());
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[allow(clippy::print_stdout)] // the bench's output is its JSON line
fn main() {
    let jobs = env("BENCH_JOBS", 1000);
    let runs = env("BENCH_RUNS", 3);
    let pg = postgres::Postgres::start_with(true).expect("PostgreSQL is needed for this bench");
    let mut results = Vec::new();
    for workers in [1, 2, 4] {
        for adapter in ["sqlite", "postgres"] {
            let mut times = Vec::new();
            for _ in 0..runs {
                let dir = tempfile::tempdir().unwrap();
                let time = if adapter == "sqlite" {
                    Workspace::init(dir.path()).unwrap();
                    let db = dir.path().join("corpus.sqlite3");
                    run(
                        &|| Box::new(SqliteQueue::open(&db).unwrap()) as Box<dyn JobQueue>,
                        jobs,
                        workers,
                    )
                } else {
                    let url = pg.database();
                    PgStore::open_and_migrate(&url, 1).unwrap();
                    run(
                        &|| {
                            Box::new(PgQueue::new(PgStore::open(&url, 1).unwrap()))
                                as Box<dyn JobQueue>
                        },
                        jobs,
                        workers,
                    )
                };
                times.push(time);
            }
            let seconds = median(times.clone());
            results.push(serde_json::json!({
                "adapter": adapter,
                "workers": workers,
                "jobs": jobs,
                "runs_s": times,
                "median_s": seconds,
                "jobs_per_s": jobs as f64 / seconds,
            }));
        }
    }
    println!(
        "{}",
        serde_json::json!({ "jobs": jobs, "runs": runs, "cores": std::thread::available_parallelism().map_or(0, std::num::NonZero::get), "results": results })
    );
}
