//! Reading a server's Prometheus metrics: `GET /metrics` and its samples.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// `GET /metrics` from `addr`: the body.
pub async fn scrape(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connects to /metrics");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .expect("sends the request");
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .await
        .expect("reads the answer");
    let text = String::from_utf8(raw).expect("UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("HTTP head and body");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    body.to_string()
}

/// Samples of a Prometheus text: (name, sorted labels) to value.
pub type Samples = HashMap<(String, Vec<(String, String)>), f64>;

pub fn parse_samples(text: &str) -> Samples {
    let mut samples = Samples::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').expect("a sample and its value");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("a number in {line}"));
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), Vec::new()),
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').expect("closing brace");
                let mut labels: Vec<(String, String)> = inner
                    .split("\",")
                    .filter(|p| !p.is_empty())
                    .map(|pair| {
                        let (k, v) = pair.split_once('=').expect("label=value");
                        (k.to_string(), v.trim_matches('"').to_string())
                    })
                    .collect();
                labels.sort();
                (name.to_string(), labels)
            }
        };
        samples.insert((name, labels), value);
    }
    samples
}

pub fn sample(samples: &Samples, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut labels: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    labels.sort();
    samples.get(&(name.to_string(), labels)).copied()
}

/// The metric families of a Prometheus text by their `# TYPE` lines: name to type
/// (`counter`, `gauge`, `histogram`, `info`).
pub fn families(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_string(), kind.trim().to_string()))
        .collect()
}

/// The values of label `label` among the samples named `name`, with their values.
pub fn by_label(samples: &Samples, name: &str, label: &str) -> HashMap<String, f64> {
    samples
        .iter()
        .filter(|((n, _), _)| n == name)
        .filter_map(|((_, labels), v)| {
            labels
                .iter()
                .find(|(k, _)| k == label)
                .map(|(_, value)| (value.clone(), *v))
        })
        .collect()
}
