"""Scripts/check-docs.py against small trees made here: a tree whose links, layout
table and README are right passes; each kind of fault is reported as FILE:LINE
with its target, and the script exits 1."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "check-docs.py"

ARCHITECTURE = """\
# Architecture

## Layout

| path | what |
| --- | --- |
| `Sources/Core`, `Sources/tool` | the code |
| `Sources/HomeServer` | the server |
| `Sources/HomeServer/Store` | its store |
| `Clients/providers/sysfs` | a provider |
"""


def make_tree(root: Path) -> None:
    files = {
        "README.md": "# Demo\n\nSee [the docs](docs/guide.md#first-steps) and [code](Sources/Core/main.swift).\n",
        "docs/guide.md": "# Guide\n\n## First steps\n\nBack to the [README](../README.md#demo).\n"
        "Also [Errors: per call](#errors-per-call) and [a web page](https://example.com/x).\n\n"
        "## Errors: per call\n\n```sh\n[not a link](nowhere.md)\n```\n\nA `[code span](nowhere.md)` too.\n",
        "docs/architecture.md": ARCHITECTURE,
        "Sources/Core/main.swift": "print(1)\n",
        "Sources/tool/main.swift": "print(2)\n",
        "Sources/HomeServer/Store/Store.swift": "struct Store {}\n",
        "Clients/providers/sysfs/README.md": "# sysfs\n\nPart of [homed](../../../README.md).\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True, timeout=60
    )


def test_a_tree_that_is_right_passes(tmp_path):
    make_tree(tmp_path)
    result = run(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_a_broken_link_is_reported_with_its_file_line_and_target(tmp_path):
    make_tree(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text() + "\nAnd [gone](docs/missing.md).\n")
    result = run(tmp_path)
    assert result.returncode == 1
    assert "README.md:5: broken link to docs/missing.md" in result.stdout


def test_a_link_to_a_heading_that_does_not_exist_is_reported(tmp_path):
    make_tree(tmp_path)
    guide = tmp_path / "docs" / "guide.md"
    guide.write_text(guide.read_text().replace("#errors-per-call", "#errors"))
    result = run(tmp_path)
    assert result.returncode == 1
    assert "docs/guide.md:6: broken link to #errors: docs/guide.md has no heading #errors" in result.stdout


def test_the_layout_table_must_list_every_directory_and_only_real_ones(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "Sources" / "New").mkdir()
    (tmp_path / "Sources" / "New" / "a.swift").write_text("\n")
    (tmp_path / "Clients" / "bridges" / "nats").mkdir(parents=True)
    (tmp_path / "Clients" / "bridges" / "nats" / "x.py").write_text("\n")
    architecture = tmp_path / "docs" / "architecture.md"
    architecture.write_text(architecture.read_text() + "| `Sources/Gone` | removed long ago |\n")
    result = run(tmp_path)
    assert result.returncode == 1
    assert "the layout table has no row for Sources/New/" in result.stdout
    assert "the layout table has no row for Clients/bridges/nats/" in result.stdout
    assert "docs/architecture.md:11: the layout table names Sources/Gone, which does not exist" in result.stdout


def test_a_long_readme_is_reported(tmp_path):
    make_tree(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text() + "line\n" * 200)
    result = run(tmp_path)
    assert result.returncode == 1
    assert "README.md:161: 203 lines, more than 160" in result.stdout


def test_help_says_what_it_checks():
    result = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for words in ("relative link", "anchor", "docs/architecture.md", "Sources/", "160 lines"):
        assert words in result.stdout
