#!/usr/bin/env python3
"""Checks the repository's Markdown against the tree.

  python3 Scripts/check-docs.py            check, from anywhere in the checkout
  python3 Scripts/check-docs.py --root DIR check another tree (the self-test does)

Prints one line per problem, FILE:LINE: what is wrong, and exits 1 if there is
any (0 when all is well, 2 for a bad command line). See --help for the checks.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import unicodedata
from typing import Dict, Iterator, List, Optional, Set, Tuple
from urllib.parse import unquote

DESCRIPTION = """\
Checks the repository's Markdown files against the tree:

1. Links. Every relative link in every Markdown file of the tree (the files git
   tracks, and new ones it does not ignore) points to a file or directory that
   exists. A link with an #anchor into a Markdown file must name one of its
   headings, by the slug GitHub gives it ("## Errors: per call" is
   #errors-per-call). Links to web addresses, and anything inside code spans and
   fenced code blocks, are not checked.

2. The layout table. docs/architecture.md has a table whose first column is
   "path". Every path in that column (each `quoted` path in the cell) must exist,
   and every directory directly under Sources/, Sources/HomeServer/,
   Clients/providers/ and Clients/bridges/ must have a row of its own.

3. The README. README.md is at most 160 lines (--max-readme-lines): it is a
   newcomer's page, and the reference lives in docs/.

Each problem is one line, FILE:LINE: what is wrong. The exit status is 1 when
there is any problem, else 0.
"""

ARCHITECTURE = "docs/architecture.md"
README = "README.md"
# Every directory directly under these must have a row in the layout table.
LISTED_PARENTS = ("Sources", "Sources/HomeServer", "Clients/providers", "Clients/bridges")
SKIPPED_DIRECTORIES = {".git", ".build", "node_modules", "__pycache__"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
INLINE_LINK = re.compile(
    r"!?\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(?P<target><[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[(?P<label>[^\]]+)\]:\s*(?P<target><[^>]*>|\S+)")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<[a-z][^>]*?\b(?:id|name)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")


class Problems:
    def __init__(self) -> None:
        self.lines: List[str] = []

    def add(self, path: str, line: int, message: str) -> None:
        self.lines.append(f"{path}:{line}: {message}")


# Reading the tree


def tree_files(root: str) -> List[str]:
    """The tree's files, relative to root: git's tracked and unignored new files
    when root is in a work tree, else every file under root."""
    try:
        output = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
        ).stdout
        files = [name for name in output.decode("utf-8", "surrogateescape").split("\0") if name]
        return sorted({name for name in files if os.path.isfile(os.path.join(root, name))})
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES and not d.startswith("."))
        for name in names:
            found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return sorted(found)


def tree_directories(files: List[str]) -> Set[str]:
    directories = set()
    for name in files:
        parts = name.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            directories.add("/".join(parts[:end]))
    return directories


# Reading Markdown


def blank_code_spans(line: str) -> str:
    """The line with every code span replaced by spaces (positions kept)."""
    return CODE_SPAN.sub(lambda match: " " * len(match.group(0)), line)


def prose_lines(text: str) -> Iterator[Tuple[int, str, bool]]:
    """(number, line, in_code) for each line; in_code for fenced code and fences."""
    fence: Optional[str] = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                yield number, line, True
                continue
            yield number, line, False
        else:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if line.strip() == match.group(1) or line.strip().strip(fence[0]) == "":
                    fence = None
            yield number, line, True


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it, before it makes the slug."""
    text = re.sub(r"<[^>]+>", "", raw)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[[^\]]*\]", r"\1", text)
    text = CODE_SPAN.sub(lambda match: match.group(2).strip(), text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", r"\1", text)
    text = re.sub(r"~~(.+?)~~", r"\1", text)
    return text.strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    kept = []
    for character in text.lower():
        category = unicodedata.category(character)
        if character in " -_" or category[0] in "LN" or category == "Mn":
            kept.append("-" if character == " " else character)
    return "".join(kept)


def anchors(text: str) -> Set[str]:
    """Every anchor a Markdown file has: its headings' slugs (numbered as GitHub
    numbers repeats) and the ids and names of its HTML elements."""
    found: Set[str] = set()
    seen: Dict[str, int] = {}

    def add_heading(raw: str) -> None:
        base = slug(heading_text(raw))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")

    previous: Optional[str] = None
    for _, line, in_code in prose_lines(text):
        if in_code:
            previous = None
            continue
        for match in HTML_ANCHOR.finditer(line):
            found.add((match.group(1) or match.group(2) or "").lower())
        heading = ATX_HEADING.match(line)
        if heading:
            add_heading(heading.group(2) or "")
            previous = None
            continue
        underline = SETEXT_UNDERLINE.match(line)
        if underline and previous is not None and previous.strip() and not previous.lstrip().startswith(("|", ">")):
            add_heading(previous.strip())
            previous = None
            continue
        previous = line
    return found


def links(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, target) of every link outside code."""
    for number, line, in_code in prose_lines(text):
        if in_code:
            continue
        prose = blank_code_spans(line)
        definition = REFERENCE_DEFINITION.match(prose)
        if definition:
            yield number, definition.group("target")
            continue
        for match in INLINE_LINK.finditer(prose):
            yield number, match.group("target")
        for match in HTML_LINK.finditer(prose):
            yield number, match.group(1) if match.group(1) is not None else match.group(2)


# The checks


def check_links(root: str, markdown: List[str], problems: Problems) -> None:
    anchor_cache: Dict[str, Set[str]] = {}

    def anchors_of(path: str) -> Set[str]:
        if path not in anchor_cache:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as file:
                anchor_cache[path] = anchors(file.read())
        return anchor_cache[path]

    real_root = os.path.realpath(root)
    for source in markdown:
        with open(os.path.join(root, source), encoding="utf-8", errors="replace") as file:
            text = file.read()
        for number, raw in links(text):
            target = raw.strip()
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1].strip()
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part.split("?", 1)[0])
            if path_part == "":
                resolved = source
            else:
                if path_part.startswith("/"):
                    joined = os.path.join(root, path_part.lstrip("/"))
                else:
                    joined = os.path.join(root, os.path.dirname(source), path_part)
                full = os.path.realpath(joined)
                if full != real_root and not full.startswith(real_root + os.sep):
                    problems.add(source, number, f"broken link to {raw}: it points outside the repository")
                    continue
                if not os.path.exists(joined):
                    problems.add(source, number, f"broken link to {raw}: no such file or directory")
                    continue
                resolved = os.path.relpath(os.path.normpath(joined), root).replace(os.sep, "/")
            if anchor and resolved.lower().endswith(".md") and os.path.isfile(os.path.join(root, resolved)):
                if unquote(anchor).lower() not in anchors_of(resolved):
                    problems.add(source, number, f"broken link to {raw}: {resolved} has no heading #{anchor}")


def table_rows(text: str) -> Iterator[Tuple[int, List[str]]]:
    """(line number, cells) of the data rows of the first table whose first
    header cell is "path"."""
    lines = text.splitlines()
    code = {number for number, _, in_code in prose_lines(text) if in_code}
    index = 0
    while index + 1 < len(lines):
        line = lines[index]
        if (index + 1) not in code and line.lstrip().startswith("|") and TABLE_SEPARATOR.match(lines[index + 1]):
            header = split_row(line)
            if header and header[0].strip().lower() == "path":
                row = index + 2
                while row < len(lines) and lines[row].lstrip().startswith("|"):
                    yield row + 1, split_row(lines[row])
                    row += 1
                return
        index += 1


def split_row(line: str) -> List[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, current, in_code = [], "", False
    for i, character in enumerate(body):
        if character == "`":
            in_code = not in_code
        if character == "|" and not in_code and (i == 0 or body[i - 1] != "\\"):
            cells.append(current.strip())
            current = ""
        else:
            current += character
    cells.append(current.strip())
    return cells


def check_layout_table(root: str, directories: Set[str], problems: Problems) -> None:
    path = os.path.join(root, ARCHITECTURE)
    if not os.path.isfile(path):
        problems.add(ARCHITECTURE, 1, "missing: it must hold the layout table (a table whose first column is path)")
        return
    with open(path, encoding="utf-8", errors="replace") as file:
        text = file.read()
    listed: Set[str] = set()
    rows = list(table_rows(text))
    if not rows:
        problems.add(ARCHITECTURE, 1, "no layout table: a table whose first column is path")
        return
    for number, cells in rows:
        names = re.findall(r"`([^`]+)`", cells[0]) or [cells[0]]
        for name in names:
            clean = name.strip().rstrip("/")
            if not clean:
                continue
            if not os.path.exists(os.path.join(root, clean)):
                problems.add(ARCHITECTURE, number, f"the layout table names {name}, which does not exist")
            listed.add(clean)
    table_line = rows[0][0] - 2
    for parent in LISTED_PARENTS:
        children = sorted(
            d
            for d in directories
            if d.startswith(parent + "/") and "/" not in d[len(parent) + 1 :] and os.path.isdir(os.path.join(root, d))
        )
        for child in children:
            if os.path.basename(child) in SKIPPED_DIRECTORIES:
                continue
            if child not in listed:
                problems.add(ARCHITECTURE, table_line, f"the layout table has no row for {child}/")


def check_readme(root: str, limit: int, problems: Problems) -> None:
    path = os.path.join(root, README)
    if not os.path.isfile(path):
        problems.add(README, 1, "missing")
        return
    with open(path, encoding="utf-8", errors="replace") as file:
        count = len(file.read().splitlines())
    if count > limit:
        problems.add(
            README, limit + 1, f"{count} lines, more than {limit}: move reference text into docs/ and link to it"
        )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check-docs.py", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        help="the tree to check (default: the checkout this script is in)",
    )
    parser.add_argument(
        "--max-readme-lines", metavar="N", type=int, default=160, help="the README's longest length (default 160)"
    )
    arguments = parser.parse_args(argv)
    root = os.path.abspath(arguments.root)
    if not os.path.isdir(root):
        parser.error(f"--root {arguments.root}: no such directory")

    files = tree_files(root)
    markdown = [name for name in files if name.lower().endswith(".md")]
    problems = Problems()
    check_links(root, markdown, problems)
    check_layout_table(root, tree_directories(files), problems)
    check_readme(root, arguments.max_readme_lines, problems)
    for line in problems.lines:
        print(line)
    if problems.lines:
        print(f"check-docs: {len(problems.lines)} problem(s) in {root}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
