//! Command line parsing, URL parsing and building the request bytes.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

pub const USAGE: &str = "\
usage: loadgen --url http://HOST:PORT/PATH [options]

  --url URL              target (http:// only)
  --method M             request method [default: POST with a body, else GET]
  --body STRING          request body (sent with content-length)
  --body-file FILE       request body read from FILE
  --header 'name: value' extra request header (repeatable)
  --mode closed|open     closed loop, or constant rate [default: closed]
  --connections N        concurrent keep-alive connections [default: 1]
  --rate RPS             open mode: requests per second over all connections
  --duration SECONDS     measured time [default: 10]
  --warmup SECONDS       unrecorded time before it [default: 1]
  --stream               also record time to first body byte (ttfb_us)
  --timeout-ms N         per-request timeout [default: 10000]
  --threads N            runtime worker threads [default: 1]

Prints one JSON object on stdout. Exit 0 after a run (even with failed
requests), 2 on bad arguments.
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Closed,
    Open,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Closed => "closed",
            Mode::Open => "open",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub url: String,
    pub host: String,
    pub port: u16,
    /// `host[:port]` exactly as in the URL, for the `host` header.
    pub authority: String,
    pub path: String,
    pub method: String,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
    pub mode: Mode,
    pub connections: usize,
    pub rate: Option<f64>,
    pub duration: Duration,
    pub warmup: Duration,
    pub stream: bool,
    pub timeout: Duration,
    pub threads: usize,
}

/// Parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub host: String,
    pub port: u16,
    pub authority: String,
    pub path: String,
}

pub fn parse_url(url: &str) -> Result<Url, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--url {url:?}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let path = path.split('#').next().unwrap_or_default();
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("--url {url:?}: bad host"));
    }
    let bad_port = || format!("--url {url:?}: bad port");
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad_port)?;
        match after {
            "" => (host, 80),
            _ => {
                let port = after.strip_prefix(':').ok_or_else(bad_port)?;
                (host, port.parse().map_err(|_| bad_port())?)
            }
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| bad_port())?),
            None => (authority, 80),
        }
    };
    if host.is_empty() || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!("--url {url:?}: bad host or path"));
    }
    Ok(Url {
        host: host.to_string(),
        port,
        authority: authority.to_string(),
        path,
    })
}

fn value(
    name: &str,
    inline: &mut Option<String>,
    it: &mut impl Iterator<Item = String>,
) -> Result<String, String> {
    inline
        .take()
        .or_else(|| it.next())
        .ok_or_else(|| format!("{name} needs a value"))
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{name}: {v:?} is not a valid number"))
}

fn seconds(name: &str, v: &str, allow_zero: bool) -> Result<Duration, String> {
    let s: f64 = number(name, v)?;
    if !s.is_finite() || s < 0.0 || (s == 0.0 && !allow_zero) {
        return Err(format!("{name}: {v:?} out of range"));
    }
    Duration::try_from_secs_f64(s).map_err(|_| format!("{name}: {v:?} out of range"))
}

fn header(v: &str) -> Result<(String, String), String> {
    let bad = || format!("--header {v:?}: expected 'name: value'");
    let (name, val) = v.split_once(':').ok_or_else(bad)?;
    let (name, val) = (name.trim(), val.trim());
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) || val.contains(['\r', '\n']) {
        return Err(bad());
    }
    if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    {
        return Err(format!(
            "--header {name}: set by loadgen from the body, do not pass it"
        ));
    }
    Ok((name.to_string(), val.to_string()))
}

/// `Ok(None)`: `--help` was asked for.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Config>, String> {
    let mut it = args.into_iter();
    let mut url = None;
    let mut method = None;
    let mut body = None;
    let mut headers = Vec::new();
    let mut mode = Mode::Closed;
    let mut connections = 1usize;
    let mut rate = None;
    let mut duration = Duration::from_secs(10);
    let mut warmup = Duration::from_secs(1);
    let mut stream = false;
    let mut timeout_ms = 10_000u64;
    let mut threads = 1usize;

    while let Some(arg) = it.next() {
        let (name, mut inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        let n = name.as_str();
        match n {
            "-h" | "--help" => return Ok(None),
            "--stream" => {
                if inline.is_some() {
                    return Err("--stream takes no value".into());
                }
                stream = true;
            }
            "--url" => url = Some(value(n, &mut inline, &mut it)?),
            "--method" => {
                let m = value(n, &mut inline, &mut it)?;
                if m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase()) {
                    return Err(format!("--method {m:?}: expected an upper-case token"));
                }
                method = Some(m);
            }
            "--body" | "--body-file" => {
                if body.is_some() {
                    return Err("give only one of --body and --body-file".into());
                }
                let v = value(n, &mut inline, &mut it)?;
                body = Some(if n == "--body" {
                    v.into_bytes()
                } else {
                    std::fs::read(&v).map_err(|e| format!("--body-file {v}: {e}"))?
                });
            }
            "--header" => headers.push(header(&value(n, &mut inline, &mut it)?)?),
            "--mode" => {
                mode = match value(n, &mut inline, &mut it)?.as_str() {
                    "closed" => Mode::Closed,
                    "open" => Mode::Open,
                    other => return Err(format!("--mode {other:?}: expected closed or open")),
                }
            }
            "--connections" => connections = number(n, &value(n, &mut inline, &mut it)?)?,
            "--rate" => {
                let v = value(n, &mut inline, &mut it)?;
                let r: f64 = number(n, &v)?;
                if !r.is_finite() || r <= 0.0 || r > 1e9 {
                    return Err(format!("--rate {v:?} out of range"));
                }
                rate = Some(r);
            }
            "--duration" => duration = seconds(n, &value(n, &mut inline, &mut it)?, false)?,
            "--warmup" => warmup = seconds(n, &value(n, &mut inline, &mut it)?, true)?,
            "--timeout-ms" => timeout_ms = number(n, &value(n, &mut inline, &mut it)?)?,
            "--threads" => threads = number(n, &value(n, &mut inline, &mut it)?)?,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }

    let url = url.ok_or("--url is required")?;
    let parsed = parse_url(&url)?;
    if connections == 0 || connections > 100_000 {
        return Err("--connections must be 1..=100000".into());
    }
    if threads == 0 || threads > 1024 {
        return Err("--threads must be 1..=1024".into());
    }
    if timeout_ms == 0 {
        return Err("--timeout-ms must be positive".into());
    }
    match (mode, rate) {
        (Mode::Open, None) => return Err("--mode open needs --rate".into()),
        (Mode::Closed, Some(_)) => return Err("--rate applies to --mode open only".into()),
        _ => {}
    }
    let method = method.unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into());
    Ok(Some(Config {
        url,
        host: parsed.host,
        port: parsed.port,
        authority: parsed.authority,
        path: parsed.path,
        method,
        body: body.unwrap_or_default(),
        headers,
        mode,
        connections,
        rate,
        duration,
        warmup,
        stream,
        timeout: Duration::from_millis(timeout_ms),
        threads,
    }))
}

pub fn resolve(cfg: &Config) -> Result<SocketAddr, String> {
    (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", cfg.host))?
        .next()
        .ok_or_else(|| format!("cannot resolve {}: no address", cfg.host))
}

/// The complete request, built once and sent as is for every request.
pub fn build_request(cfg: &Config) -> Vec<u8> {
    let has = |name: &str| {
        cfg.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let mut head = format!("{} {} HTTP/1.1\r\n", cfg.method, cfg.path);
    if !has("host") {
        head.push_str(&format!("host: {}\r\n", cfg.authority));
    }
    for (name, value) in &cfg.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !cfg.body.is_empty() && !has("content-type") {
        head.push_str("content-type: application/json\r\n");
    }
    if !cfg.body.is_empty() || matches!(cfg.method.as_str(), "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("content-length: {}\r\n", cfg.body.len()));
    }
    head.push_str("\r\n");
    let mut req = head.into_bytes();
    req.extend_from_slice(&cfg.body);
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Option<Config>, String> {
        parse_args(v.iter().map(|s| s.to_string()))
    }

    #[test]
    fn urls() {
        let u = parse_url("http://127.0.0.1:8080/v1/chat/completions").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", 8080));
        assert_eq!(u.authority, "127.0.0.1:8080");
        assert_eq!(u.path, "/v1/chat/completions");
        let u = parse_url("http://example.com").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
        let u = parse_url("http://[::1]:9/x?y=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 9, "/x?y=1")
        );
        let u = parse_url("http://h:1?q").unwrap();
        assert_eq!(u.path, "/?q");
        for bad in [
            "https://x/",
            "http://",
            "http://h:99999/",
            "http://u@h/",
            "http://h:/",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_and_request_bytes() {
        let cfg = args(&["--url", "http://127.0.0.1:1/v1/x", "--body", "{}"])
            .unwrap()
            .unwrap();
        assert_eq!(cfg.mode, Mode::Closed);
        assert_eq!(cfg.connections, 1);
        assert_eq!(cfg.warmup, Duration::from_secs(1));
        assert_eq!(cfg.timeout, Duration::from_millis(10_000));
        assert_eq!(
            String::from_utf8(build_request(&cfg)).unwrap(),
            "POST /v1/x HTTP/1.1\r\nhost: 127.0.0.1:1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
        );
        let cfg = args(&[
            "--url=http://h/",
            "--header",
            "Host: other",
            "--header=x-a:  b ",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            String::from_utf8(build_request(&cfg)).unwrap(),
            "GET / HTTP/1.1\r\nHost: other\r\nx-a: b\r\n\r\n"
        );
    }

    #[test]
    fn open_mode_and_errors() {
        let cfg = args(&[
            "--url",
            "http://h/",
            "--mode",
            "open",
            "--rate",
            "200",
            "--connections",
            "64",
            "--duration",
            "1.5",
            "--warmup",
            "0",
            "--stream",
            "--threads",
            "2",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(cfg.rate, Some(200.0));
        assert_eq!(cfg.duration, Duration::from_millis(1500));
        assert_eq!(cfg.warmup, Duration::ZERO);
        assert!(cfg.stream);
        assert_eq!(args(&["--help"]).unwrap(), None);
        for bad in [
            &["--url", "http://h/", "--mode", "open"][..],
            &["--url", "http://h/", "--rate", "5"],
            &["--url", "http://h/", "--mode", "sideways"],
            &["--url", "http://h/", "--connections", "0"],
            &["--url", "http://h/", "--duration", "0"],
            &["--url", "http://h/", "--duration", "-1"],
            &["--url", "http://h/", "--warmup", "nan"],
            &["--url", "http://h/", "--header", "content-length: 3"],
            &["--url", "http://h/", "--header", "bad"],
            &["--url", "http://h/", "--body", "a", "--body", "b"],
            &["--url", "http://h/", "--body-file", "/nonexistent/x"],
            &["--url", "http://h/", "--bogus"],
            &["--url"],
            &[],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
    }
}
