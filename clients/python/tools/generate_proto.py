#!/usr/bin/env python3
"""Regenerates the committed gRPC/protobuf code of chess_service_client from proto/.

The protos are copied to a temporary tree under `chess_service_client/_proto/chess/v1/`
before protoc runs, so that the generated modules import each other as
`chess_service_client._proto.chess.v1...` and never as `chess.v1...`, which would collide
with python-chess's `chess` package. Run it after changing proto/chess/v1/*.proto:

    pip install grpcio-tools==1.75.1
    python clients/python/tools/generate_proto.py

tests/test_generated_code.py runs the same generation into a temporary directory and
fails if the committed files differ, so the two cannot drift apart.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

# The grpcio-tools release the committed code was generated with. Its protoc writes
# protobuf 6.31.1 gencode (runtime protobuf >= 6.31.1) and a grpc module that wants
# grpcio >= 1.75.1, both of which still run on Python 3.9.
GRPCIO_TOOLS_VERSION = "1.75.1"

HERE = Path(__file__).resolve().parent
CLIENT_ROOT = HERE.parent
REPO_ROOT = CLIENT_ROOT.parent.parent
PROTO_DIR = REPO_ROOT / "proto" / "chess" / "v1"
PACKAGE_PREFIX = Path("chess_service_client") / "_proto" / "chess" / "v1"
# The protos (file names in proto/chess/v1) and whether each defines a service.
PROTOS = {"chess.proto": True, "error_reason.proto": False}
# Files under PACKAGE_PREFIX that this script writes (the __init__.py files are not generated).
GENERATED = sorted(
    [f"{Path(p).stem}_pb2.py" for p in PROTOS]
    + [f"{Path(p).stem}_pb2.pyi" for p in PROTOS]
    + [f"{Path(p).stem}_pb2_grpc.py" for p, service in PROTOS.items() if service]
)


def check_tools_version() -> None:
    from importlib.metadata import version

    found = version("grpcio-tools")
    if found != GRPCIO_TOOLS_VERSION:
        sys.exit(
            f"grpcio-tools {found} is installed; the committed code is made with "
            f"{GRPCIO_TOOLS_VERSION}: pip install grpcio-tools=={GRPCIO_TOOLS_VERSION}"
        )


def generate(out_root: Path, proto_dir: Path = PROTO_DIR) -> list[Path]:
    """Generates into `out_root/chess_service_client/_proto/chess/v1/`; returns the files."""
    from grpc_tools import protoc

    check_tools_version()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / PACKAGE_PREFIX
        src.mkdir(parents=True)
        for name in PROTOS:
            shutil.copyfile(proto_dir / name, src / name)
        (out_root / PACKAGE_PREFIX).mkdir(parents=True, exist_ok=True)
        for name, service in PROTOS.items():
            args = [
                "grpc_tools.protoc",
                f"--proto_path={tmp}",
                f"--python_out={out_root}",
                f"--pyi_out={out_root}",
            ]
            if service:
                args.append(f"--grpc_python_out={out_root}")
            args.append(str(PACKAGE_PREFIX / name))
            if protoc.main(args) != 0:
                raise RuntimeError(f"protoc failed on {name}")
    return [out_root / PACKAGE_PREFIX / f for f in GENERATED]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=CLIENT_ROOT / "src",
        help="root to write chess_service_client/_proto/chess/v1/ under (default: src/)",
    )
    args = parser.parse_args()
    for path in generate(args.out):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
