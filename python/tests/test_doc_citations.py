"""Every citation of a document's section, `docs/NAME.md, "Heading"` in code and docs (or
`NAME.md, "Heading"`, `[NAME.md](NAME.md) ("Heading")` inside docs/), names a file that exists
and a heading it has: comments cite the project's docs for the reason they give
(CONTRIBUTING.md), and a renamed heading must not leave them pointing at nothing.

A heading is a Markdown heading or the bold words that open a paragraph or a list item, as the
decisions of docs/architecture.md and the papers of docs/references.md are titled; either is
named with or without its closing parenthesis (`PRODUCE` for "PRODUCE (8)")."""

import os
import re
from pathlib import Path
from typing import Iterator, List, Set, Tuple

ROOT = Path(__file__).resolve().parents[2]

SKIPPED_DIRS = {"target", ".venv", ".git", "node_modules", "__pycache__"}
SCANNED_SUFFIXES = {".java", ".h", ".cc", ".py", ".md", ".sh"}
SCANNED_NAMES = {"pom.xml", "sluice"}

# A line break with what starts a continued comment or list item: a citation's heading may wrap.
LINE_BREAK = re.compile(r"[ \t]*\n[ \t]*(?:(?:\*|//|#+|--|-)(?=[ \t]))?[ \t]*")
# The document: a path ending in .md, bare or as a Markdown link's target, then its headings:
# one or more quoted names after a comma or in parentheses, joined by commas or "and".
QUOTED = r'"([^"\n]{1,120})"'
CITATION = re.compile(
    r"(?:\[[^\]\n]*\]\()?(?P<path>(?:[\w.-]+/)*[\w.-]+\.md)(?:#[\w-]*)?\)?"
    r"(?:, | \()" + QUOTED + r"(?P<more>(?:(?:,| and|, and) " + QUOTED + r")*)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
# Bold words at the start of a paragraph or list item, up to a blank line at most.
BOLD_TITLE = re.compile(r"^[ \t]*(?:[-*][ \t]+|\d+\.[ \t]+)?\*\*((?:(?!\n[ \t]*\n).)+?)\*\*",
                        re.MULTILINE | re.DOTALL)
CLOSING_PARENTHESIS = re.compile(r"\s*\(.*\)$", re.DOTALL)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def scanned_files() -> Iterator[Path]:
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
            if path.suffix in SCANNED_SUFFIXES or name in SCANNED_NAMES:
                yield path


def normalized(heading: str) -> str:
    return " ".join(heading.replace("`", "").split()).rstrip(".:")


def headings(document: Path) -> Set[str]:
    text = FENCE.sub("", document.read_text("utf-8"))
    names = set()
    for title in HEADING.findall(text) + BOLD_TITLE.findall(text):
        names.add(normalized(title))
        names.add(normalized(CLOSING_PARENTHESIS.sub("", normalized(title))))
    return names


def resolve(citing: Path, cited: str) -> Path:
    """A path from the repository's root, or, in a document, first from the document's folder."""
    if citing.suffix == ".md":
        beside = (citing.parent / cited).resolve()
        if beside.is_file():
            return beside
    return ROOT / cited


def citations(path: Path) -> Iterator[Tuple[str, List[str]]]:
    text = LINE_BREAK.sub(" ", path.read_text("utf-8", errors="replace"))
    for match in CITATION.finditer(text):
        names = [match.group(2)] + re.findall(QUOTED, match.group("more"))
        yield match.group("path"), names


def broken_citations() -> List[str]:
    broken = []
    known = {}
    for path in scanned_files():
        if path == Path(__file__).resolve():
            continue  # its examples are not citations
        for cited, names in citations(path):
            document = resolve(path, cited)
            where = f"{path.relative_to(ROOT)}: {cited}"
            if not document.is_file():
                broken.append(f"{where}: no such file")
                continue
            if document not in known:
                known[document] = headings(document)
            for name in names:
                if normalized(name) not in known[document]:
                    broken.append(f'{where}: no heading "{name}"')
    return broken


def test_every_citation_names_an_existing_document_and_heading():
    assert broken_citations() == []


def test_a_citation_wrapped_over_comment_lines_is_read_whole(tmp_path):
    source = tmp_path / "Example.java"
    source.write_text('/**\n * Why (docs/generation.md, "Speculative\n * duplicates" and "Buffer'
                      ' model").\n */\n// and (docs/formats.md, "Delivery progress", {@code X})\n')
    assert list(citations(source)) == [
        ("docs/generation.md", ["Speculative duplicates", "Buffer model"]),
        ("docs/formats.md", ["Delivery progress"]),
    ]


def test_a_document_cites_its_neighbours_by_link_or_by_name(tmp_path):
    document = tmp_path / "page.md"
    document.write_text('See [brokerd.md](brokerd.md) ("Local producers"), and\nformats.md,'
                        ' "PRODUCE".\n')
    assert list(citations(document)) == [
        ("brokerd.md", ["Local producers"]),
        ("formats.md", ["PRODUCE"]),
    ]
