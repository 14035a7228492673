"""--use_tfds maps tensorflow-datasets records to the same examples as the TSV files (tfds.load faked: no network)."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from official_bert.classification import ClassificationDataError, InputExample, get_processor
from tests.classification.test_glue_fixtures import GLUE, write_files


@pytest.fixture
def fake_tfds(monkeypatch):
    """Replaces tfds.load with a lookup in `datasets` ({(name, split): dict of columns}) and records the calls."""
    datasets, calls = {}, []

    def load(name, split, data_dir=None, download=True):
        calls.append((name, split, data_dir, download))
        if (name, split) not in datasets:
            raise AssertionError(f"Dataset {name}: could not find data in {data_dir}.")
        return tf.data.Dataset.from_tensor_slices(datasets[name, split])

    monkeypatch.setattr(tfds, "load", load)
    return datasets, calls


def test_mnli_labels_are_mapped_from_tfds_order_to_the_original_order(fake_tfds, tmp_path):
    datasets, calls = fake_tfds
    # tfds numbers MNLI labels entailment=0, neutral=1, contradiction=2; the original's ids are 1, 2, 0.
    datasets["glue/mnli", "validation_matched"] = {
        "premise": [b"The new rights are nice enough", b'This site includes a list of "winners .'],
        "hypothesis": [b"Everyone really likes the newest benefits",
                       b"The Government Executive articles housed on the website are not able to be searched ."],
        "label": np.array([1, 2]), "idx": np.array([0, 1], np.int32)}
    datasets["glue/mnli", "test_mismatched"] = {"premise": [b"What have you decided ?"],
                                                "hypothesis": [b"So what 's your decision ?"],
                                                "label": np.array([-1]), "idx": np.array([0], np.int32)}
    processor = get_processor("mnli", use_tfds=True, tfds_data_dir=str(tmp_path))
    from_tfds = processor.get_examples("dev_matched")
    from_tsv = get_processor("mnli", write_files(tmp_path / "MNLI", GLUE["MNLI"])).get_examples("dev_matched")
    assert from_tfds == from_tsv
    assert processor.get_examples("test_mismatched") == [InputExample(
        "test_mismatched-0", "What have you decided ?", "So what 's your decision ?", "contradiction")]
    assert calls == [("glue/mnli", "validation_matched", str(tmp_path), False),
                     ("glue/mnli", "test_mismatched", str(tmp_path), False)]


def test_single_sentence_and_regression_tasks(fake_tfds):
    datasets, _ = fake_tfds
    datasets["glue/cola", "train"] = {"sentence": [b"They drank the pub."], "label": np.array([0]),
                                      "idx": np.array([7], np.int32)}
    datasets["glue/stsb", "validation"] = {"sentence1": [b"A plane is taking off."],
                                           "sentence2": [b"An air plane is taking off."],
                                           "label": np.array([3.8], np.float32), "idx": np.array([0], np.int32)}
    datasets["glue/stsb", "test"] = {"sentence1": [b"a"], "sentence2": [b"b"], "label": np.array([-1.0], np.float32),
                                     "idx": np.array([0], np.int32)}
    assert get_processor("cola", use_tfds=True).get_examples("train") == [
        InputExample("train-7", "They drank the pub.", None, "0")]
    stsb = get_processor("sts-b", use_tfds=True)
    [dev] = stsb.get_examples("dev")
    assert dev.label == pytest.approx(3.8) and dev.text_b == "An air plane is taking off."
    assert stsb.get_examples("test")[0].label == 0.0


def test_xnli_picks_the_language_and_reads_train_from_xtreme_xnli(fake_tfds):
    datasets, calls = fake_tfds
    record = {"premise": {"de": [b"Er rief an."], "en": [b"He called."]},
              "hypothesis": {"language": [[b"de", b"en"]], "translation": [[b"Er telefonierte.", b"He phoned."]]},
              "label": np.array([0])}
    datasets["xnli", "validation"] = record
    datasets["xtreme_xnli", "train"] = record
    processor = get_processor("xnli", use_tfds=True, xnli_language="de")
    assert processor.get_examples("dev") == [InputExample("dev-0", "Er rief an.", "Er telefonierte.", "entailment")]
    assert processor.get_examples("train")[0].text_b == "Er telefonierte."
    assert [c[:2] for c in calls] == [("xnli", "validation"), ("xtreme_xnli", "train")]
    with pytest.raises(ClassificationDataError, match=r"xnli example dev-0 has no 'fr' text; it has de, en"):
        get_processor("xnli", use_tfds=True, xnli_language="fr").get_examples("dev")


def test_dataset_not_prepared_is_a_clear_error(fake_tfds, tmp_path):
    with pytest.raises(ClassificationDataError, match=r"--use_tfds: cannot load glue/rte split 'validation' from "
                                                      rf"{tmp_path} \(prepare it first with `tfds build glue/rte"):
        get_processor("rte", use_tfds=True, tfds_data_dir=str(tmp_path)).get_examples("dev")


def test_prepared_files_fingerprint_the_data(tmp_path):
    write_files(tmp_path, {"glue/qnli/2.0.0/dataset_info.json": "{}", "glue/qnli/2.0.0/glue-train.tfrecord": "x",
                           "glue/rte/2.0.0/dataset_info.json": "{}"})
    files = get_processor("qnli", use_tfds=True, tfds_data_dir=str(tmp_path)).data_files("train")
    assert files == [str(tmp_path / "glue/qnli/2.0.0/dataset_info.json"),
                     str(tmp_path / "glue/qnli/2.0.0/glue-train.tfrecord")]
