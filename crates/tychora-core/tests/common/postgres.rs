//! A real PostgreSQL for the tests: Debian's `postgresql` package (`.ci/run` installs it), a
//! cluster made by `initdb` in a temporary directory and served on a Unix socket only
//! (`listen_addresses=''`). As root (CI), the server runs as the `postgres` user, since `initdb`
//! refuses root. Stopped (`pg_ctl stop -m immediate`) when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running cluster.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// The socket's directory (the `host` of a connection string).
    pub socket: PathBuf,
    /// The socket's port number.
    pub port: u16,
    as_postgres: bool,
    databases: AtomicUsize,
    durable: bool,
}

/// The directory holding `initdb`, `pg_ctl` and `psql`, or `None` (with the reason printed) when
/// PostgreSQL is missing and this run does not require it; panics when `TYCHORA_REQUIRE` names
/// `servers` (or `all`), as `.ci/run` does.
pub fn bin_dir() -> Option<PathBuf> {
    let from_env = std::env::var_os("TYCHORA_PG_BIN").map(PathBuf::from);
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|entries| {
            let mut versions: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").is_file())
                .collect();
            versions.sort();
            versions.pop()
        });
    if let Some(dir) = from_env.or(debian) {
        return Some(dir);
    }
    super::servers::missing(
        "no PostgreSQL under /usr/lib/postgresql",
        "apt-get install postgresql",
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A temporary directory for a cluster and its socket's directory inside, owned by the
/// `postgres` user when the server runs as it.
fn cluster_dir(as_postgres: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("sock");
    std::fs::create_dir(&socket).unwrap();
    if as_postgres {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "chown to postgres failed");
    }
    (dir, socket)
}

impl Postgres {
    /// Makes and starts a cluster for a test (`fsync=off`: the tests check behaviour, not
    /// durability); `None` when PostgreSQL is missing (see [`bin_dir`]).
    pub fn start() -> Option<Self> {
        Self::start_with(false)
    }

    /// As [`Postgres::start`]; `durable` keeps PostgreSQL's default `fsync=on` (benchmarks, which
    /// compare with SQLite's `synchronous=FULL`).
    pub fn start_with(durable: bool) -> Option<Self> {
        let bin = bin_dir()?;
        let as_postgres = is_root();
        let (dir, socket) = cluster_dir(as_postgres);
        let port = 20_000 + u16::try_from(std::process::id() % 20_000).unwrap();
        let server = Self {
            dir,
            bin,
            socket,
            port,
            as_postgres,
            databases: AtomicUsize::new(0),
            durable,
        };
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        server.start_server();
        Some(server)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> String {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts the server (again, after [`Postgres::stop`]).
    pub fn start_server(&self) {
        let options = format!(
            "-k {} -c listen_addresses='' -p {} -c fsync={} -c max_connections=200",
            self.socket.display(),
            self.port,
            if self.durable { "on" } else { "off" }
        );
        let log = self.dir.path().join("server.log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-o",
                &options,
                "start",
            ],
        );
    }

    /// Stops the server at once, as a crash would (`-m immediate`).
    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .output();
    }

    /// A connection string for `database`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "host={} port={} user=postgres dbname={database}",
            self.socket.display(),
            self.port
        )
    }

    /// Runs SQL with `psql` on `database`; returns its unaligned output.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let host = self.socket.display().to_string();
        let port = self.port.to_string();
        self.run(
            "psql",
            &[
                "-h",
                &host,
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ],
        )
    }

    /// A new empty database; returns its connection string.
    pub fn database(&self) -> String {
        let name = format!("t{}", self.databases.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// The cluster's directory.
    #[allow(dead_code)]
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A streaming standby of this cluster (`pg_basebackup -R`: it follows this one's WAL until
    /// promoted), on a socket and port of its own.
    #[allow(dead_code)]
    pub fn standby(&self) -> Self {
        let (dir, socket) = cluster_dir(self.as_postgres);
        let standby = Self {
            dir,
            bin: self.bin.clone(),
            socket,
            port: self.port + 1,
            as_postgres: self.as_postgres,
            databases: AtomicUsize::new(1_000),
            durable: self.durable,
        };
        let host = self.socket.display().to_string();
        let port = self.port.to_string();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                &host,
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &standby.data(),
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync",
            ],
        );
        standby.start_server();
        standby
    }

    /// Promotes a standby to a primary (`pg_ctl promote`, waiting until it takes writes).
    #[allow(dead_code)]
    pub fn promote(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-w", "promote"]);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
