"""The README as a new user reads it: the quickstart runs without a warning, and the
text never cites the project's tracker, which a reader does not have."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _block(marker):
    text = (ROOT / "README.md").read_text()
    after = text.split(f"<!-- {marker} -->", 1)[1]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


def test_the_quickstart_runs_without_a_warning_and_learns():
    done = subprocess.run([sys.executable, "-W", "error", "-c", _block("quickstart")], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    accuracy = float(done.stdout.split()[-1])
    assert 0.9 < accuracy <= 1.0, accuracy  # 26 classes: chance is 0.04


@pytest.mark.parametrize("page", ["README.md", *sorted(p.relative_to(ROOT).as_posix()
                                                      for p in (ROOT / "docs").glob("*.md"))])
def test_no_page_cites_an_issue_number(page):
    text = (ROOT / page).read_text()
    cited = re.findall(r"\b(?:issue|task)s?\s*#?\d+", text, re.I)
    assert not cited, f"{page} cites {cited}: say what the text means instead"


def test_every_docs_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    for page in (ROOT / "docs").glob("*.md"):
        assert f"docs/{page.name}" in readme, f"docs/{page.name} is not linked from README.md"
