//! The arrows point one way: server -> service -> registry -> store -> lifecycle -> rules.
//! The edge (load shedding, auth, metrics: `src/service/edge/`) is part of the service.
//! Nothing below the service names protobuf, tonic, the service (its edge included) or
//! the server; nothing below the registry names the registry; the service never names
//! the server.

use std::path::Path;

/// Every Rust file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn nothing_below_the_service_names_protobuf_tonic_the_edge_or_an_upper_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Top down: each layer may name none of the service's names (the top: the server
    // and the service, with its edge) nor any layer above it.
    let below_the_service = ["registry", "store", "lifecycle", "rules"];
    let service_names = [
        "tonic",
        "prost",
        "crate::pb",
        "crate::service",
        "crate::server",
    ];
    let below = below_the_service.iter().enumerate().map(|(i, &layer)| {
        let above = below_the_service[..i].iter().map(|l| format!("crate::{l}"));
        let forbidden: Vec<String> = service_names
            .iter()
            .map(|n| n.to_string())
            .chain(above)
            .collect();
        (layer, forbidden)
    });
    // The service, its edge included, never names the server above it.
    let top = [("service", vec!["crate::server".to_string()])];
    let layers = top.into_iter().chain(below);
    let mut found = Vec::new();
    let mut read = 0;
    for (layer, forbidden) in layers {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        for file in files {
            read += 1;
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for name in &forbidden {
                    if code.contains(name) {
                        found.push(format!("{}:{}: {name}", file.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(read > 50, "{read} files read");
    assert!(
        found.is_empty(),
        "upward or protocol names in a layer:\n{}",
        found.join("\n")
    );
}
