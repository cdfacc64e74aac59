//! Shared helpers for the end-to-end tests: start the mock-llm binary and
//! talk to it with a plain std::net::TcpStream HTTP/1.1 client.

// Each test crate uses a different subset of the helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Mock {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Mock {
    pub fn start(name: &str) -> Mock {
        Mock::start_with(name, &[])
    }

    pub fn start_with(name: &str, args: &[&str]) -> Mock {
        let dir = std::env::temp_dir().join(format!("mock-llm-it-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let port_file = dir.join("port");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
            .args(["--listen", "127.0.0.1:0", "--port-file"])
            .arg(&port_file)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse::<u16>().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "mock-llm did not write its port file"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, format!("mock-llm listening on 127.0.0.1:{port}\n"));
        Mock { child, port, dir }
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Sends one request on a new connection and reads the response.
    pub fn call(&self, method: &str, path: &str, body: &str, extra: &[(&str, &str)]) -> Response {
        let mut s = self.connect();
        send(&mut s, method, path, body, extra);
        read_response(&mut s).unwrap()
    }

    pub fn json(&self, method: &str, path: &str, body: &str) -> Value {
        let r = self.call(method, path, body, &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        serde_json::from_slice(&r.body).unwrap()
    }

    pub fn script(&self, script: &str) {
        let r = self.call("POST", "/_mock/script", script, &[]);
        assert_eq!(r.status, 200, "{}", r.text());
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn send(s: &mut TcpStream, method: &str, path: &str, body: &str, extra: &[(&str, &str)]) {
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in extra {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// When the head (status line and headers) was fully received.
    pub head_at: Instant,
    /// The body as received (still compressed if it was).
    pub body: Vec<u8>,
    /// For chunked responses: each chunk and when it was fully received.
    pub chunks: Vec<(Vec<u8>, Instant)>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Buffered reader that keeps what it has read, for partial-response checks.
pub struct Conn<'a> {
    pub s: &'a mut TcpStream,
    pub buf: Vec<u8>,
}

impl Conn<'_> {
    pub fn fill(&mut self) -> std::io::Result<()> {
        let mut tmp = [0u8; 16384];
        let n = self.s.read(&mut tmp)?;
        if n == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(())
    }

    pub fn line(&mut self) -> std::io::Result<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8(self.buf[..i].to_vec()).unwrap();
                self.buf.drain(..i + 2);
                return Ok(line);
            }
            self.fill()?;
        }
    }

    pub fn take(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        while self.buf.len() < n {
            self.fill()?;
        }
        Ok(self.buf.drain(..n).collect())
    }
}

pub fn read_head(c: &mut Conn<'_>) -> std::io::Result<(u16, Vec<(String, String)>)> {
    let status_line = c.line()?;
    let status = status_line[9..12].parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let line = c.line()?;
        if line.is_empty() {
            return Ok((status, headers));
        }
        let (n, v) = line.split_once(':').unwrap();
        headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
    }
}

pub fn read_response(s: &mut TcpStream) -> std::io::Result<Response> {
    let mut c = Conn { s, buf: Vec::new() };
    let (status, headers) = read_head(&mut c)?;
    let mut resp = Response {
        status,
        headers,
        head_at: Instant::now(),
        body: Vec::new(),
        chunks: Vec::new(),
    };
    if resp.header("transfer-encoding") == Some("chunked") {
        loop {
            let size = usize::from_str_radix(&c.line()?, 16).unwrap();
            if size == 0 {
                assert_eq!(c.line()?, "");
                break;
            }
            let data = c.take(size)?;
            assert_eq!(c.take(2)?, b"\r\n");
            resp.body.extend_from_slice(&data);
            resp.chunks.push((data, Instant::now()));
        }
    } else {
        let len: usize = resp.header("content-length").unwrap().parse().unwrap();
        resp.body = c.take(len)?;
    }
    Ok(resp)
}
