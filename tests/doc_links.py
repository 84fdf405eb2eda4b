#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown files: every file or directory a
link names exists, and every `#anchor` (in the same file or another Markdown file) is the
anchor of a heading there, as GitHub makes them (lower case, punctuation dropped, spaces
as `-`, a repeated heading `-1`, `-2`, ...). Links to web pages (http:, https:, mailto:)
are not followed.

Usage: doc_links.py [FILE.md ...]   (default: every tracked *.md file, from `git ls-files`,
                                    or every *.md outside .git, .ci and target/ without git)
Prints each broken link as FILE:LINE: LINK (why) and exits 1 if there is one.
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
# [text](target) and [text](target "title"); images too. Not inside inline code.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """Yields (line number, line) outside fenced code blocks, inline code blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        yield number, re.sub(r"`[^`]*`", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        fence = None
        for line in path.read_text(encoding="utf-8").splitlines():
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)
                continue
            if fence is not None:
                if line.strip().startswith(fence):
                    fence = None
                continue
            h = HEADING.match(line)
            if h:
                base = slug(h.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check(md):
    broken = []
    text = md.read_text(encoding="utf-8")
    for number, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            file_part, _, anchor = target.partition("#")
            dest = md if not file_part else (md.parent / file_part).resolve()
            if not dest.exists():
                broken.append((number, target, "no such file"))
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append((number, target, f"no heading with anchor #{anchor} in {dest.relative_to(ROOT)}"))
    return broken


def main():
    files = [pathlib.Path(a).resolve() for a in sys.argv[1:]]
    if not files:
        try:
            out = subprocess.run(["git", "ls-files", "*.md", "**/*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
            files = sorted({(ROOT / f).resolve() for f in out.stdout.split()})
        except (OSError, subprocess.CalledProcessError):
            skip = {".git", ".ci", "target", "node_modules"}
            files = sorted(p for p in ROOT.rglob("*.md") if not skip & set(p.relative_to(ROOT).parts))
    count = 0
    for md in files:
        for number, target, why in check(md):
            count += 1
            print(f"{md.relative_to(ROOT)}:{number}: {target} ({why})")
    print(f"{len(files)} Markdown files, {count} broken relative links")
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
