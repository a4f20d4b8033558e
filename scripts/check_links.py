#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown: README.md, docs/**/*.md and every
other README.md (build folders and hidden folders left out).

Every inline link or image `[text](path)`, `[text](path#anchor)`, `[text](#anchor)` and
every reference definition `[name]: path` outside code is checked: the target file or folder
must exist inside the repository, and an anchor into a Markdown file must be one that a
heading of that file produces under GitHub's rules (lower case; letters, digits, `_`, `-` and
spaces kept, spaces made `-`, a repeated heading suffixed `-1`, `-2`, ...) or an HTML
`id`/`name` in the file. Links with a scheme (https:, http:, mailto:, ...) are not checked.

Usage:
  python3 scripts/check_links.py [--root DIR]   exit 0: no dead link; 1: each listed as
                                                FILE:LINE: dead link 'TARGET': why
  python3 scripts/check_links.py --self-test    builds a small tree with known dead links and
                                                checks that exactly those are reported

Standard library only.
"""

import argparse
import os
import re
import sys
import tempfile
import unicodedata
import urllib.parse

SKIPPED_DIRS = {"__pycache__", "node_modules"}
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ID = re.compile(r"""<[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def markdown_files(root):
    """README.md at every level and everything under docs/, in a stable order."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith(".") and not d.startswith("build")
                         and d not in SKIPPED_DIRS)
        rel = os.path.relpath(folder, root)
        in_docs = rel == "docs" or rel.startswith("docs" + os.sep)
        for name in sorted(files):
            if name == "README.md" or (in_docs and name.endswith(".md")):
                found.append(os.path.join(folder, name))
    return found


def prose_lines(text, blank_code=True):
    """(line number, line) of the lines outside fenced code blocks, inline code blanked
    unless `blank_code` is false (a heading's anchor includes its code)."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            continue
        if fence is not None:
            if m and m.group(1).startswith(fence):
                fence = None
            continue
        yield number, INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line) if blank_code else line


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown: code, emphasis, links and tags
    reduced to their text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "").replace("*", "")


def slug(text):
    """GitHub's anchor for a heading's text (github-slugger): lower case, only letters,
    marks, digits, connector punctuation (`_`), `-` and spaces kept, spaces made `-`."""
    kept = []
    for ch in text.strip().lower():
        category = unicodedata.category(ch)
        if ch in " -" or category[0] in "LMN" or category == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(path, cache):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        anchors, seen = set(), {}
        for _, line in prose_lines(text, blank_code=False):
            m = ATX_HEADING.match(line)
            if m:
                base = slug(heading_text(m.group(2)))
                n = seen.get(base, 0)
                seen[base] = n + 1
                anchors.add(base if n == 0 else f"{base}-{n}")
            anchors.update(HTML_ID.findall(line))
        cache[path] = anchors
    return cache[path]


def link_targets(line):
    """The targets of the inline links and images of one line, and of a reference definition."""
    targets = []
    m = REFERENCE_DEF.match(line)
    if m:
        targets.append(m.group(1).strip("<>"))
    start = 0
    while True:
        at = line.find("](", start)
        if at < 0:
            break
        start = at + 2
        if "[" not in line[:at]:
            continue
        i = start
        while i < len(line) and line[i] == " ":
            i += 1
        if i < len(line) and line[i] == "<":
            end = line.find(">", i)
            if end > 0:
                targets.append(line[i + 1:end])
            continue
        depth, j = 0, i
        while j < len(line) and not line[j].isspace():
            if line[j] == "(":
                depth += 1
            elif line[j] == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        targets.append(line[i:j])
    return targets


def check_link(root, source, target, cache):
    """Why the link is dead, or None."""
    if not target or SCHEME.match(target):
        return None
    path, _, fragment = target.partition("#")
    path = urllib.parse.unquote(path)
    if not path:
        resolved = source
    elif path.startswith("/"):
        resolved = os.path.join(root, path.lstrip("/"))
    else:
        resolved = os.path.join(os.path.dirname(source), path)
    resolved = os.path.normpath(resolved)
    if os.path.relpath(resolved, root).startswith(".."):
        return "points outside the repository"
    if not os.path.exists(resolved):
        return "no such file or folder"
    if fragment and resolved.lower().endswith(".md") and os.path.isfile(resolved):
        fragment = urllib.parse.unquote(fragment)
        if fragment not in anchors_of(resolved, cache):
            return f"no heading of {os.path.relpath(resolved, root)} makes the anchor #{fragment}"
    return None


def dead_links(root):
    root = os.path.abspath(root)
    cache, dead = {}, []
    for source in markdown_files(root):
        with open(source, encoding="utf-8") as f:
            text = f.read()
        for number, line in prose_lines(text):
            for target in link_targets(line):
                why = check_link(root, source, target, cache)
                if why:
                    dead.append((os.path.relpath(source, root), number, target, why))
    return dead


def run(root):
    dead = dead_links(root)
    for source, number, target, why in dead:
        print(f"{source}:{number}: dead link '{target}': {why}")
    checked = len(markdown_files(os.path.abspath(root)))
    if dead:
        print(f"{len(dead)} dead link(s) in {checked} Markdown files")
        return 1
    print(f"links: ok ({checked} Markdown files)")
    return 0


def self_test():
    """A tree with good links and known dead ones: the check must report exactly the dead."""
    files = {
        "README.md": (
            "# Top\n"
            "[good file](docs/a.md) [good anchor](docs/a.md#second-part)\n"
            "[good folder](src) ![good image](docs/pic.png) [web](https://example.com/x.md)\n"
            "[dead file](docs/missing.md)\n"
            "[dead anchor](docs/a.md#no-such-part)\n"
            "[self anchor](#top) [dead self anchor](#bottom)\n"
            "`[in code](docs/also-missing.md)`\n"
            "```\n[in a fence](docs/fenced-missing.md)\n```\n"
            "[ref]: docs/ref-missing.md\n"
            "[outside](../../escape.md)\n"),
        "docs/a.md": (
            "# A\n## Second part\n## `code` and µGraph: yes\n## Second part\n"
            "[dup](#second-part-1) [code heading](#code-and-µgraph-yes)\n"),
        "docs/pic.png": "",
        "src/README.md": "[up](../README.md#top) [dead up](../docs/a.md#a-1)\n",
        "build/README.md": "[ignored: build folders are not scanned](nowhere.md)\n",
    }
    expected = {
        ("README.md", 4, "docs/missing.md"),
        ("README.md", 5, "docs/a.md#no-such-part"),
        ("README.md", 6, "#bottom"),
        ("README.md", 11, "docs/ref-missing.md"),
        ("README.md", 12, "../../escape.md"),
        (os.path.join("src", "README.md"), 1, "../docs/a.md#a-1"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "repo")
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        found = {(s, n, t) for s, n, t, _ in dead_links(root)}
    if found != expected:
        print("self-test FAILED")
        for item in sorted(expected - found):
            print("  not reported:", item)
        for item in sorted(found - expected):
            print("  wrongly reported:", item)
        return 1
    print(f"self-test: ok ({len(expected)} dead links caught, none wrongly reported)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the repository to check (default: this script's repository)")
    parser.add_argument("--self-test", action="store_true",
                        help="check that a tree with known dead links fails")
    args = parser.parse_args()
    return self_test() if args.self_test else run(args.root)


if __name__ == "__main__":
    sys.exit(main())
