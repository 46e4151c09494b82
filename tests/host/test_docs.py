"""The README is a guide and docs/ the reference: the README stays
short, every page of docs/ is reachable from it, and no link points at a
file that is not there."""
import re
import unittest

from rfmlib import config

README = config.REPO / "README.md"
DOCS = config.REPO / "docs"
LINK_RE = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def links(page):
    """The relative links of a Markdown page, as paths."""
    return [(page.parent / m.group(1)).resolve() for m in LINK_RE.finditer(page.read_text())
            if not re.match(r"^[a-z]+:", m.group(1))]


class Docs(unittest.TestCase):
    def test_the_readme_is_short(self):
        self.assertLessEqual(len(README.read_text().splitlines()), 300)

    def test_every_page_is_linked_from_the_readme(self):
        linked = set(links(README))
        for page in sorted(DOCS.glob("*.md")):
            self.assertIn(page.resolve(), linked, "%s: no link from README.md" % page.name)

    def test_every_link_points_at_a_file(self):
        for page in [README] + sorted(DOCS.glob("*.md")):
            for target in links(page):
                self.assertTrue(target.exists(), "%s links to %s" % (page.name, target))

    def test_the_link_finder_sees_a_broken_link(self):
        page = DOCS / "_probe.md"
        page.write_text("[a](nope.md) [b](https://example.org/x) [c](knobs.md#x)\n")
        self.addCleanup(page.unlink)
        self.assertEqual([p.name for p in links(page)], ["nope.md", "knobs.md"])


if __name__ == "__main__":
    unittest.main()
