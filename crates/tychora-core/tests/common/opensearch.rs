//! A real OpenSearch cluster for the tests: the node `node scripts/opensearch.mjs build` builds
//! from Maven Central into `~/.cache/tychora/opensearch` (or `TYCHORA_OPENSEARCH`), started as
//! one JVM per node on loopback ports (the same command line as scripts/opensearch.mjs). Each
//! node is stopped (SIGTERM, then SIGKILL) when the cluster is dropped.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running cluster.
pub struct Cluster {
    nodes: Vec<Option<Child>>,
    _dir: tempfile::TempDir,
    /// `127.0.0.1:PORT` of each node's HTTP API.
    pub hosts: Vec<String>,
}

fn home() -> PathBuf {
    std::env::var_os("TYCHORA_OPENSEARCH").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/tychora/opensearch")
        },
        PathBuf::from,
    )
}

/// Whether the node is built, or `None` (with the reason) when it is not and this run does not
/// require servers.
fn built() -> Option<PathBuf> {
    let home = home();
    if home.join("classes/dev/tychora/TestNode.class").is_file() {
        return Some(home);
    }
    super::servers::missing(
        &format!("no OpenSearch test node at {}", home.display()),
        "node scripts/opensearch.mjs build (Maven) builds it",
    )
}

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
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// `GET path` on `host`, the status and body (`None` when the node does not answer).
pub fn get(host: &str, path: &str) -> Option<(u16, String)> {
    request(host, "GET", path)
}

/// One plain HTTP/1.0 request (the tests' own view of the cluster, apart from the engine's client).
pub fn request(host: &str, method: &str, path: &str) -> Option<(u16, String)> {
    request_with(host, method, path, "")
}

/// [`request`] with a JSON body.
pub fn request_with(host: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(host).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Some((status, body))
}

impl Cluster {
    /// Starts `count` nodes as one cluster and waits until every node has joined and the
    /// cluster is not red; `None` when the node is not built here (see [`built`]).
    pub fn start(count: usize) -> Option<Self> {
        Self::start_with(count, "")
    }

    /// [`Self::start`] with `yml` as each node's `config/opensearch.yml` (node settings).
    pub fn start_with(count: usize, yml: &str) -> Option<Self> {
        let home = built()?;
        let classpath = ["classes", "lib/*", "lib/knn/*"]
            .map(|p| home.join(p).display().to_string())
            .join(":");
        let dir = tempfile::tempdir().unwrap();
        let ports: Vec<(u16, u16)> = (0..count).map(|_| (free_port(), free_port())).collect();
        let seeds = ports
            .iter()
            .map(|p| format!("127.0.0.1:{}", p.1))
            .collect::<Vec<_>>()
            .join(",");
        let names = (0..count)
            .map(|i| format!("n{i}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut nodes = Vec::new();
        for (i, (http, transport)) in ports.iter().enumerate() {
            let node_home = dir.path().join(format!("n{i}"));
            std::fs::create_dir_all(node_home.join("config")).unwrap();
            std::fs::write(node_home.join("config/opensearch.yml"), yml).unwrap();
            let log = std::fs::File::create(node_home.join("node.log")).unwrap();
            let mut command = Command::new("java");
            command.args([
                "-Xms256m",
                "-Xmx384m",
                "-cp",
                &classpath,
                "dev.tychora.TestNode",
            ]);
            command
                .arg(&node_home)
                .arg(http.to_string())
                .arg(transport.to_string())
                .arg(format!("n{i}"));
            if count > 1 {
                command.arg(&seeds).arg(&names);
            }
            let child = command
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("java runs");
            nodes.push(Some(child));
        }
        let cluster = Self {
            nodes,
            hosts: ports.iter().map(|p| format!("127.0.0.1:{}", p.0)).collect(),
            _dir: dir,
        };
        let started = Instant::now();
        let mut cluster = cluster;
        loop {
            for (i, node) in cluster.nodes.iter_mut().enumerate() {
                if let Some(child) = node
                    && child.try_wait().ok().flatten().is_some()
                {
                    let log =
                        std::fs::read_to_string(cluster._dir.path().join(format!("n{i}/node.log")))
                            .unwrap_or_default();
                    let tail: String = log
                        .chars()
                        .rev()
                        .take(2000)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    panic!("OpenSearch node n{i} exited while starting:\n{tail}");
                }
            }
            if let Some((200, body)) = get(&cluster.hosts[0], "/_cluster/health") {
                let health: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                if health["number_of_nodes"].as_u64() == Some(count as u64)
                    && health["status"].as_str().is_some_and(|s| s != "red")
                {
                    return Some(cluster);
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(180),
                "the OpenSearch cluster did not form in 180 s"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// `opensearch://host:port,…` naming every node.
    pub fn url(&self) -> String {
        format!("opensearch://{}", self.hosts.join(","))
    }

    /// Kills node `i` at once (SIGKILL).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits until the cluster reports `status` (`green`, `yellow`).
    pub fn wait_for(&self, status: &str) {
        let host = &self.hosts[self.nodes.iter().position(Option::is_some).unwrap_or(0)];
        let (code, body) = get(
            host,
            &format!("/_cluster/health?wait_for_status={status}&timeout=60s"),
        )
        .expect("the cluster answers");
        assert_eq!(code, 200, "{body}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in self.nodes.iter_mut().flatten() {
            // SIGTERM: the node closes; SIGKILL after 10 s.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
        }
        let until = Instant::now() + Duration::from_secs(10);
        for child in self.nodes.iter_mut().flatten() {
            while child.try_wait().ok().flatten().is_none() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
