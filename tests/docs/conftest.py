"""What the docs tests share, made once per test session: the built site (`mkdocs build --strict` in a fresh
process, as `make docs` builds it) and the guides' inputs."""

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

from tests.docs import guide_inputs
from tests.docs.pages import REPO


@dataclass
class Site:
    """A build of the site: its directory, the build's return code and output, and whether it imported
    TensorFlow."""

    path: str
    returncode: int
    output: str
    imported_tensorflow: bool

    def page(self, name):
        """The HTML of a page, by its path in the site (`api/keras_models/TextClassifier`, `index`)."""
        path = os.path.join(self.path, "index.html" if name == "index" else os.path.join(name, "index.html"))
        with open(path, encoding="utf-8") as f:
            return f.read()


def build_site(site_dir):
    """`mkdocs build --strict` into site_dir, in a fresh process."""
    script = textwrap.dedent(f"""
        import sys
        from mkdocs.__main__ import cli
        try:
            cli(["build", "--strict", "--config-file", {os.path.join(REPO, "mkdocs.yml")!r},
                 "--site-dir", {str(site_dir)!r}])
        except SystemExit as stop:
            code = stop.code or 0
        print("TENSORFLOW IMPORTED" if "tensorflow" in sys.modules else "no tensorflow")
        sys.exit(code)
    """)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    return Site(str(site_dir), done.returncode, done.stdout + done.stderr, "TENSORFLOW IMPORTED" in done.stdout)


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The site, built once for the docs tests that read it."""
    return build_site(tmp_path_factory.mktemp("site") / "site")


@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    """What the guides' readers bring, made once (tests/docs/guide_inputs.py)."""
    return guide_inputs.make_inputs(str(tmp_path_factory.mktemp("inputs")))
