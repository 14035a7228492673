"""Every page runs as a newcomer runs it (tests/docs/guides.py): README, Getting started and the guides to train
and fine-tune; tests/docs/test_guides_deploying.py runs the others. Also: what the runner itself does, that each
block not run says why, and that commands fit the page's column."""

import pytest

from tests.docs.guides import DEPLOYING, INPUTS, run_page, runnable_pages, with_sizes
from tests.docs.pages import all_pages, code_blocks, page_id


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in runnable_pages() if page_id(p) not in DEPLOYING], ids=page_id)
def test_the_page_runs_as_written(page, inputs, tmp_path, monkeypatch):
    ran = run_page(page, str(tmp_path / "reader"), inputs, monkeypatch)
    assert sum(ran.values()) >= 1


def test_every_page_with_commands_says_what_its_reader_brings():
    assert {page_id(page) for page in runnable_pages()} <= set(INPUTS)
    assert DEPLOYING <= set(INPUTS)


def test_the_blocks_not_run_are_few_and_each_says_why():
    blocks = [block for page in all_pages() for block in code_blocks(page)]
    not_run = [reason for _, _, reason, _ in blocks if reason is not None]
    assert len(blocks) - len(not_run) >= 30
    assert len(not_run) <= 20, not_run
    assert all(len(reason.split()) >= 3 for reason in not_run), not_run


def test_commands_fit_the_column():
    # 88 characters: what the code column shows beside both sidebars on a 1280-pixel screen (docs/stylesheets/).
    long = [(page_id(page), line) for page in all_pages() for kind, code, _, _ in code_blocks(page)
            for line in code.splitlines() if len(line) > 88]
    assert not long, long


def test_sizes_change_values_not_flags():
    command = "python run_pretraining.py --num_train_steps=2000 --num_warmup_steps=200 \\\n    --log_steps=200 --x=1"
    assert with_sizes(command) == ("python run_pretraining.py --num_train_steps=4 --num_warmup_steps=1 \\\n"
                                   "    --log_steps=2 --x=1")


def test_a_failing_block_fails_the_page_and_a_norun_one_is_not_run(tmp_path, monkeypatch):
    page = tmp_path / "guides" / "page.md"
    page.parent.mkdir()
    page.write_text("<!-- norun: needs a download first -->\n```bash\nexit 1\n```\n\n"
                    "```bash\npython -c 'open(\"made.txt\", \"w\").write(\"x\")'\n```\n\n"
                    "```python\nprint(open('made.txt').read() + 'y')\n```\n\nprints `xy`.\n\n"
                    "```python\nprint(undefined_name)\n```\n", encoding="utf-8")
    assert [reason for _, _, reason, _ in code_blocks(str(page))] == ["needs a download first", None, None, None]
    monkeypatch.setitem(INPUTS, page_id(str(page)), [])
    with pytest.raises(AssertionError, match="block 4 .python. failed(.|\n)*undefined_name"):
        run_page(str(page), str(tmp_path / "reader"), str(tmp_path), monkeypatch)
