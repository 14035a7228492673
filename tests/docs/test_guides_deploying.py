"""Every page runs as a newcomer runs it (tests/docs/guides.py): the guides to embed, serve, deploy, convert and
distil, and the Keras guide; tests/docs/test_guides.py runs the others (two files, so that two pytest-xdist workers
share the pages)."""

import pytest

from tests.docs.guides import DEPLOYING, run_page, runnable_pages
from tests.docs.pages import page_id


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in runnable_pages() if page_id(p) in DEPLOYING], ids=page_id)
def test_the_page_runs_as_written(page, inputs, tmp_path, monkeypatch):
    ran = run_page(page, str(tmp_path / "reader"), inputs, monkeypatch)
    assert sum(ran.values()) >= 1
