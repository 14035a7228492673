"""The wheel owns its names: `pip wheel .` holds the package `official_bert` and its dist-info, nothing generic
(no run_classifier.py, data_prep/ ... in site-packages), and its console scripts run from it."""

import configparser
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    # From a copy of what the build reads, so that setuptools' build/ stays out of the checkout.
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(REPO, name), source / name)
    shutil.copytree(os.path.join(REPO, "official_bert"), source / "official_bert",
                    ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(out), str(source)], capture_output=True, text=True, timeout=600,
                           cwd=str(out))
    assert build.returncode == 0, build.stderr[-3000:]
    [name] = [n for n in os.listdir(out) if n.endswith(".whl")]
    return out / name


@pytest.mark.slow
def test_the_wheel_holds_official_bert_alone_and_its_scripts_run(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top = {name.split("/", 1)[0] for name in names}
        [dist_info] = [t for t in top if t.endswith(".dist-info")]
        assert top == {"official_bert", dist_info}, sorted(top)
        assert "official_bert/tools/run_classifier.py" in names
        entry_points = configparser.ConfigParser()
        entry_points.read_string(archive.read(f"{dist_info}/entry_points.txt").decode())
    scripts = dict(entry_points["console_scripts"])
    assert all(target.startswith("official_bert.tools.") and target.endswith(":run") for target in scripts.values())
    assert {"bert-run-classifier", "bert-run-squad", "bert-run-ner", "bert-run-pretraining",
            "bert-create-pretraining-data", "bert-build-vocab"} <= set(scripts)

    # Installed from the wheel alone, away from the checkout: the scripts import the wheel's package.
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    assert sorted(n for n in os.listdir(site) if not n.endswith(".dist-info")) == ["bin", "official_bert"]
    env = dict(os.environ, PYTHONPATH=str(site), CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    where = subprocess.run([sys.executable, "-c", "import official_bert; print(official_bert.__file__)"], env=env,
                           capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    assert where.stdout.strip() == str(site / "official_bert" / "__init__.py"), where.stderr[-2000:]

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat .\nthe dog ran .\n\na cat and a dog .\n" * 20)
    vocab = tmp_path / "vocab.txt"
    built = subprocess.run([str(site / "bin" / "bert-build-vocab"), f"--input_file={corpus}",
                            f"--output_file={vocab}", "--vocab_size=60"], env=env, capture_output=True, text=True,
                           cwd=str(tmp_path), timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    tokens = vocab.read_text().split("\n")
    assert tokens[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and "cat" in tokens
    for script in sorted(set(scripts) - {"bert-build-vocab"}):
        # absl lists each module's flags under its name, and exits 1 after help.
        shown = subprocess.run([str(site / "bin" / script), "--helpfull"], env=env, capture_output=True,
                               text=True, cwd=str(tmp_path), timeout=300)
        module = scripts[script].split(":")[0]
        assert f"{module}:" in shown.stdout, (script, shown.stdout[-2000:], shown.stderr[-2000:])
        assert "Traceback" not in shown.stderr, (script, shown.stderr[-2000:])
