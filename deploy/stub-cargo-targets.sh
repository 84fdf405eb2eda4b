#!/bin/sh
# Used by deploy/Dockerfile: stubs the source files of every target Cargo.toml declares (and
# src/lib.rs, src/bin/chess-server.rs), so that dependencies can be built in their own cached
# layer before the real sources are copied. Existing files are left alone. Run from the crate root.
set -eu
mkdir -p src/bin
[ -e src/lib.rs ] || : > src/lib.rs
[ -e src/bin/chess-server.rs ] || echo 'fn main() {}' > src/bin/chess-server.rs
# Any other `path = "..."` a [[bin]]/[[example]]/[[test]]/[[bench]] section names.
sed -n 's/^[[:space:]]*path[[:space:]]*=[[:space:]]*"\([^"]*\.rs\)".*/\1/p' Cargo.toml | while read -r p; do
    if [ ! -e "$p" ]; then
        mkdir -p "$(dirname "$p")"
        echo 'fn main() {}' > "$p"
    fi
done
