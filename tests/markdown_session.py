#!/usr/bin/env python3
"""Runs the shell session written in a Markdown file and checks its output.

A session is every fenced code block whose info string contains the word
`walkthrough` (for example ```` ```console walkthrough ````). In it, a line starting
with `$ ` is a command (a trailing backslash continues it on the next line); the lines
up to the next command are its expected output (stdout and stderr together). An
expected line `...` matches any number of lines. Trailing spaces are ignored.

The commands are written for a reader's server on `localhost:50051`; the runner
substitutes the address of the server under test, so the Markdown can be shown
verbatim in the docs (README.md, docs/walkthrough.md, docs/security.md).

Usage: markdown_session.py FILE ADDRESS [--show] [--tag=TAG] [--cwd=DIR] [--sub=FROM=TO ...]
  --show         print each command's actual output instead of checking it (for writing docs).
  --tag=TAG      run the blocks tagged TAG instead of `walkthrough` (for example
                 `walkthrough-secure`, the blocks that need a server with TLS and tokens).
  --cwd=DIR      run the commands in DIR (where a setup left the files they name).
  --sub=FROM=TO  also replace FROM by TO in the commands (another port of the server).
Prints one line per command and closes with "N passed, M failed"; exits 1 on failure.
"""

import re
import subprocess
import sys

DEFAULT_ADDRESS = "localhost:50051"
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")


def sessions(text, tag="walkthrough"):
    """Yields (line number, lines) of each block tagged `tag`."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2)
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        if tag in info.split():
            yield start + 1, lines[start:j]
        i = j + 1


def commands(block_start, lines):
    """Splits a block into (line number, command, expected lines)."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if line.strip():
                raise SystemExit(f"line {block_start + i}: output before any command: {line!r}")
            i += 1
            continue
        number = block_start + i
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i].rstrip())
            i += 1
        while expected and not expected[-1]:
            expected.pop()
        out.append((number, command, expected))
    return out


def matches(expected, actual):
    """Line-by-line match where an expected `...` skips any number of actual lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0] == head and matches(rest, actual[1:])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show = "--show" in sys.argv
    options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    tag = options.get("tag", "walkthrough")
    cwd = options.get("cwd")
    subs = [a[len("--sub="):].split("=", 1) for a in sys.argv[1:] if a.startswith("--sub=")]
    if len(args) != 2:
        print(__doc__)
        return 2
    path, address = args
    with open(path, encoding="utf-8") as f:
        text = f.read()
    passed = failed = 0
    for block_start, lines in sessions(text, tag):
        for number, command, expected in commands(block_start, lines):
            run = command.replace(DEFAULT_ADDRESS, address)
            for old, new in subs:
                run = run.replace(old, new)
            proc = subprocess.run(["bash", "-c", run], capture_output=True, text=True, timeout=120, cwd=cwd)
            actual = [l.rstrip() for l in (proc.stdout + proc.stderr).splitlines()]
            while actual and not actual[-1]:
                actual.pop()
            if show:
                print(f"$ {command}")
                print("\n".join(actual))
                continue
            if matches(expected, actual):
                passed += 1
                print(f"ok   {path}:{number}: {command.splitlines()[0][:100]}")
            else:
                failed += 1
                print(f"FAIL {path}:{number}: {command}")
                print("  expected:")
                print("\n".join("    " + l for l in expected))
                print("  actual:")
                print("\n".join("    " + l for l in actual))
    if show:
        return 0
    if passed + failed == 0:
        print(f"no {tag} commands found in {path}")
        return 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
