"""--do_lower_case against a checkpoint's own record, the same check for every tool (`checkpoints.case.check_case`):
a casing the checkpoint's vocabulary (or its tokenizer_config.json, or Google's release name) contradicts is refused
before any work, in one line; never trained on with a warning after training, printed twice (G18, K15). A vocabulary
with no cased letter at all (a script without case) is no evidence either way."""

import os
import warnings

import pytest

from official_bert import BertClassifier, BertEncoder, TextClassifier, save_checkpoint
from official_bert.checkpoints import CheckpointError
from official_bert.checkpoints.case import vocab_casing
from official_bert.checkpoints.vocab_extension import extend_vocabulary
from official_bert.distillation import DistillationTask, Teacher, distill
from official_bert.finetuning import FineTuningSettings
from tests.distillation.helpers import make_teacher, own_task, student_settings, write_data
from tests.finetuning.test_run_classifier import VOCAB, tiny_config

UNCASED = "do_lower_case=False, but {}/vocab.txt has no entry with an uppercase letter: the checkpoint is uncased, " \
          "and cased words would split into pieces or [UNK]; pass do_lower_case=True"


def checkpoint(directory, words):
    """A classifier checkpoint with a vocabulary of the special tokens and `words`; returns its directory."""
    os.makedirs(directory, exist_ok=True)
    vocab = os.path.join(directory, "words.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB[:7] + words + [str(i) for i in range(len(VOCAB) - 7 - len(words))]) + "\n")
    save_checkpoint(BertClassifier(BertEncoder(tiny_config()), 2), str(directory), vocab_file=vocab)
    return str(directory)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    work = tmp_path_factory.mktemp("case")
    return {"uncased": checkpoint(work / "uncased", ["the", "film"]), "cased": checkpoint(work / "cased", ["The"]),
            "caseless": checkpoint(work / "caseless", ["नमस्ते", "##ते"])}


def test_a_vocabulary_says_cased_uncased_or_nothing():
    assert vocab_casing(["[CLS]", "[unused0]", "the", "##s"]) == "uncased"
    assert vocab_casing(["[CLS]", "the", "The"]) == "cased"
    assert vocab_casing(["[CLS]", "[SEP]", "नमस्ते", "1", "##,"]) is None


def test_fine_tuning_refuses_at_its_settings_before_any_work(checkpoints, tmp_path):
    # K15: a UserWarning before training and again after, and a cased run on an uncased vocabulary (rc 0).
    settings = FineTuningSettings(str(tmp_path / "out"), "bert_config.json", "vocab.txt", do_train=True,
                                  init_checkpoint=checkpoints["uncased"], do_lower_case=False)
    with pytest.raises(CheckpointError) as raised:
        settings.check()
    assert str(raised.value) == f"--init_checkpoint={checkpoints['uncased']}: " + UNCASED.format(
        checkpoints["uncased"])
    with pytest.raises(CheckpointError, match=r"^--init_checkpoint=\S+/cased: do_lower_case=True, but \S+ has 1 "
                                              r"entries with uppercase letters \(e.g. \['The'\]\): the checkpoint "
                                              r"is cased; pass do_lower_case=False$"):
        FineTuningSettings(str(tmp_path / "out"), "c", "v", do_train=True, init_checkpoint=checkpoints["cased"],
                           do_lower_case=True).check()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what agrees, and a caseless vocabulary, pass without a word
        FineTuningSettings(str(tmp_path / "out"), "c", "v", do_train=True, init_checkpoint=checkpoints["uncased"],
                           do_lower_case=True).check()
        FineTuningSettings(str(tmp_path / "out"), "c", "v", do_train=True, init_checkpoint=checkpoints["caseless"],
                           do_lower_case=False).check()
    assert not (tmp_path / "out").exists()


def test_distillation_refuses_a_casing_its_teacher_contradicts_before_any_work(tmp_path):
    # G18: rc 0; the teacher labelled and the student trained on cased input, then a warning after training, twice.
    teacher = make_teacher(tmp_path / "teacher", "single")
    task = DistillationTask(own_task(write_data(str(tmp_path / "data"), "single"), "single"), Teacher(teacher))
    with pytest.raises(CheckpointError) as raised:
        distill(task, student_settings(tmp_path / "student", do_lower_case=False))
    assert str(raised.value) == f"--teacher={teacher}: " + UNCASED.format(teacher)
    assert not (tmp_path / "student").exists()


def test_keras_follows_the_checkpoint_or_refuses_what_contradicts_it(checkpoints):
    assert TextClassifier.from_checkpoint(checkpoints["uncased"], sequence_length=16).preprocessor.do_lower_case
    assert not TextClassifier.from_checkpoint(checkpoints["cased"], sequence_length=16).preprocessor.do_lower_case
    with pytest.raises(CheckpointError) as raised:
        TextClassifier.from_checkpoint(checkpoints["uncased"], do_lower_case=False, sequence_length=16)
    assert str(raised.value) == f"{checkpoints['uncased']}: " + UNCASED.format(checkpoints["uncased"])


def test_extend_vocab_refuses_it_too(checkpoints, tmp_path):
    with pytest.raises(CheckpointError) as raised:
        extend_vocabulary(checkpoints["uncased"], str(tmp_path / "out"), words=["covid"], do_lower_case=False)
    assert str(raised.value) == f"--init_checkpoint={checkpoints['uncased']}: " + UNCASED.format(
        checkpoints["uncased"])
    assert not (tmp_path / "out").exists()


def test_a_casing_left_out_is_the_checkpoints_own(checkpoints, tmp_path):
    # --do_lower_case not given: the original's True would lowercase text for a cased checkpoint, whose vocabulary
    # then misses every capitalised word; it follows the checkpoint instead, and nothing contradicts it.
    for name, lowercased in (("uncased", True), ("cased", False), ("caseless", True)):
        settings = FineTuningSettings(str(tmp_path / "out"), "c", os.path.join(checkpoints[name], "vocab.txt"),
                                      do_train=True, init_checkpoint=checkpoints[name], do_lower_case=None)
        assert settings.check().tokenizer_spec().do_lower_case is lowercased, name


def test_the_tools_follow_the_checkpoint_when_the_flag_is_left_out(checkpoints, monkeypatch):
    from absl import flags

    from official_bert.tools import flags as tool_flags

    values = flags.FlagValues()
    for name in ("vocab_file", "spm_model_file", "init_checkpoint"):
        flags.DEFINE_string(name, None, "", flag_values=values)
    flags.DEFINE_bool("do_lower_case", True, "", flag_values=values)
    for argv, lowercased in ((["--init_checkpoint={cased}"], False), (["--init_checkpoint={uncased}"], True),
                             (["--init_checkpoint={cased}", "--do_lower_case=true"], True)):
        values.unparse_flags()
        values([__file__, f"--vocab_file={checkpoints['cased']}/vocab.txt"] + [a.format(**checkpoints) for a in argv])
        monkeypatch.setattr(tool_flags, "FLAGS", values)
        assert tool_flags.tokenizer_spec_from_flags().do_lower_case is lowercased, argv
