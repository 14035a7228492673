"""Each task's files as distributed parse into the examples the original run_classifier.py would make."""

import logging
import os

import pytest

from official_bert.classification import ClassificationDataError, InputExample, MultipleChoiceExample, get_processor
from tests.classification.test_glue_fixtures import GLUE, SWAG, XNLI, tsv, write_files

DIRS = {"cola": "CoLA", "sst-2": "SST-2", "mrpc": "MRPC", "sts-b": "STS-B", "qqp": "QQP", "mnli": "MNLI",
        "qnli": "QNLI", "rte": "RTE", "wnli": "WNLI", "ax": "AX"}


@pytest.fixture(scope="module")
def glue_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("glue")
    for files_dir, files in GLUE.items():
        write_files(root / files_dir, files)
    return root


def examples(glue_dir, task, split):
    return get_processor(task, str(glue_dir / DIRS[task])).get_examples(split)


def test_cola_train_and_dev_have_no_header_test_has_one(glue_dir):
    assert examples(glue_dir, "cola", "train") == [
        InputExample("train-0", "Our friends won't buy this analysis, let alone the next one we propose.", None, "1"),
        InputExample("train-1", "They drank the pub.", None, "0")]
    assert [e.text_a for e in examples(glue_dir, "cola", "dev")] == [
        "The sailors rode the breeze clear of the rocks.", "The more we study verbs, the crazier they get get."]
    # The original's guid counts the header line; test labels are the placeholder "0".
    assert examples(glue_dir, "cola", "test") == [
        InputExample("test-1", "Bill whistled past the house.", None, "0"),
        InputExample("test-2", "The car honked its way down the road.", None, "0")]


def test_sst2_keeps_text_as_is(glue_dir):
    assert examples(glue_dir, "sst-2", "train") == [
        InputExample("train-1", "hide new secretions from the parental units ", None, "0"),
        InputExample("train-2", "that loves its characters ", None, "1")]
    assert examples(glue_dir, "sst-2", "test") == [
        InputExample("test-1", "uneasy mishmash of styles and genres .", None, "0")]


def test_mrpc_byte_order_mark_and_unbalanced_quotes(glue_dir):
    train = examples(glue_dir, "mrpc", "train")
    assert [(e.guid, e.label) for e in train] == [("train-1", "1"), ("train-2", "0")]
    assert train[0].text_a == ('Amrozi accused his brother , whom he called " the witness " , of deliberately '
                               'distorting his evidence .')
    assert train[1].text_b == 'Yucaipa bought Dominick\'s " in 1995 .'
    assert examples(glue_dir, "mrpc", "test") == [InputExample(
        "test-1", "PCCW 's chief operating officer , Mike Butcher , will report directly to Mr So .",
        "Current Chief Operating Officer Mike Butcher will report to So .", "0")]


def test_stsb_scores_are_floats_and_test_scores_zero(glue_dir):
    assert examples(glue_dir, "sts-b", "train") == [
        InputExample("train-1", "A plane is taking off.", "An air plane is taking off.", 5.0),
        InputExample("train-2", "A man is playing a large flute.", "A man is playing a flute.", 3.8)]
    assert examples(glue_dir, "sts-b", "test") == [
        InputExample("test-1", "A girl is styling her hair.", "A girl is brushing her hair.", 0.0)]
    processor = get_processor("sts-b", str(glue_dir / "STS-B"))
    assert processor.is_regression and processor.num_labels == 1


def test_qqp_skips_malformed_rows_with_a_count_and_a_warning(glue_dir, caplog):
    processor = get_processor("qqp", str(glue_dir / "QQP"))
    with caplog.at_level(logging.WARNING):
        train = processor.get_examples("train")
    assert [(e.guid, e.label) for e in train] == [("train-133273", "0"), ("train-402555", "1")]
    assert train[1].text_a == 'How do I control my "horny emotions?'
    assert processor.skipped_rows == {"train": 2}
    assert "skipped 2 malformed rows with fewer than 6 columns (lines 3, 4)" in caplog.text
    assert examples(glue_dir, "qqp", "test") == [InputExample(
        "test-0", "Why am I mentally very lonely?", "Find the remainder when 23^24 is divided by 24?", "0")]


def test_mnli_gold_label_two_dev_and_two_test_files(glue_dir):
    processor = get_processor("mnli", str(glue_dir / "MNLI"))
    assert processor.label_list == ("contradiction", "entailment", "neutral")
    assert processor.dev_splits == ("dev_matched", "dev_mismatched")
    assert processor.test_splits == ("test_matched", "test_mismatched")
    assert processor.get_examples("train")[0] == InputExample(
        "train-0", "Conceptually cream skimming has two basic dimensions .",
        "Product and geography are what make cream skimming work .", "neutral")
    matched = processor.get_examples("dev_matched")
    assert [(e.guid, e.label) for e in matched] == [("dev_matched-0", "neutral"), ("dev_matched-1", "contradiction")]
    assert matched[1].text_a == 'This site includes a list of "winners .'
    assert processor.get_examples("dev_mismatched") == [InputExample(
        "dev_mismatched-0", "Your contribution helped make it possible .", "Your contributions were of no help .",
        "contradiction")]
    assert processor.get_examples("test_matched") == [
        InputExample("test_matched-0", "Hierbas , ans seco .", "Hierbas is a name .", "contradiction")]
    assert processor.get_examples("test_mismatched")[0].text_b == "So what 's your decision ?"


@pytest.mark.parametrize("task,train,test", [
    ("qnli", InputExample("train-1", "When did the third Digimon series begin?", "Unlike the two seasons before it .",
                          "not_entailment"),
     InputExample("test-1", "What organization is devoted to Jihad?", "For some decades prior, it was Jihad.",
                  "entailment")),
    ("rte", InputExample("train-1", "No Weapons of Mass Destruction Found in Iraq Yet.",
                         "Weapons of Mass Destruction Found in Iraq.", "not_entailment"),
     InputExample("test-1", "Mangla was summoned.", "Mangla was summoned.", "entailment")),
    ("wnli", InputExample("train-1", "I stuck a pin through a carrot. When I pulled the pin out, it had a hole.",
                          "The carrot had a hole.", "1"),
     InputExample("test-1", "Maude and Dora had seen the trains rushing across the prairie.",
                  "Horses ran away when Maude and Dora came into sight.", "0")),
])
def test_sentence_pair_tasks(glue_dir, task, train, test):
    assert examples(glue_dir, task, "train") == [train]
    assert examples(glue_dir, task, "test") == [test]


def test_ax_is_predict_only_with_mnli_labels(glue_dir):
    processor = get_processor("ax", str(glue_dir / "AX"))
    assert processor.label_list == ("contradiction", "entailment", "neutral")
    assert processor.train_split is None and processor.dev_splits == ()
    assert processor.get_examples("test") == [
        InputExample("test-1", "The cat sat on the mat.", "The cat did not sit on the mat.", "contradiction"),
        InputExample("test-2", "The cat did not sit on the mat.", "The cat sat on the mat.", "contradiction")]
    with pytest.raises(ClassificationDataError, match="task ax has no 'train' split; it has: test"):
        processor.get_examples("train")


def test_xnli_filters_by_language_and_maps_contradictory(tmp_path):
    processor = get_processor("xnli", write_files(tmp_path, XNLI), xnli_language="de")
    assert processor.get_examples("train") == [
        InputExample("train-1", "Konzeptionell cremig .", "Produkt und Geografie .", "neutral"),
        InputExample("train-2", "Du weißt es .", "Du verlierst nichts .", "contradiction")]
    assert processor.get_examples("dev") == [
        InputExample("dev-2", "Und er sagte: Mama, ich bin daheim.", "Er sagte kein Wort.", "contradiction"),
        InputExample("dev-3", "Er rief an.", "Er telefonierte.", "entailment")]
    assert processor.get_examples("test") == [InputExample("test-1", "Gut so.", "Sehr gut.", "neutral")]
    assert processor.data_files("train") == [os.path.join(str(tmp_path), "multinli", "multinli.train.de.tsv")]


def test_xnli_language_without_rows(tmp_path):
    processor = get_processor("xnli", write_files(tmp_path, XNLI), xnli_language="zh")
    with pytest.raises(ClassificationDataError, match=r"xnli.dev.tsv: no rows in language 'zh'; the file has de, en"):
        processor.get_examples("dev")
    with pytest.raises(ClassificationDataError, match=r"multinli.train.zh.tsv: file not found"):
        processor.get_examples("train")


def test_swag_endings_start_with_sent2(tmp_path):
    processor = get_processor("swag", write_files(tmp_path, SWAG))
    assert processor.num_choices == 4 and processor.label_list == ("0", "1", "2", "3")
    [train] = processor.get_examples("train")
    assert train.context == ("Members of the procession walk down the street holding small horn brass "
                             "instruments.")
    assert train.endings[0] == "A drum line passes by walking down the street playing their instruments."
    assert train.endings[2] == "A drum line arrives and they're outside dancing and asleep."
    assert train.label == "0"
    assert processor.get_examples("dev") == [MultipleChoiceExample(
        "dev-0", "On stage, someone sings.",
        ("Someone smiles, pleased.", 'Someone waves, "hi".', "Someone stares.", "Someone sits."), "3")]
    assert processor.get_examples("test") == [MultipleChoiceExample(
        "test-0", "Someone opens the door.", ("He walks in.", "He sings.", "He flies.", "He eats."), "0")]


def test_swag_errors(tmp_path):
    write_files(tmp_path, {"train.csv": SWAG["test.csv"], "val.csv": SWAG["val.csv"].replace(",3\n", ",7\n"),
                           "test.csv": SWAG["test.csv"].replace("walks in.,", "walks in.")})
    processor = get_processor("swag", str(tmp_path))
    with pytest.raises(ClassificationDataError, match=r"train.csv:1: expected a header with the SWAG columns .*; "
                                                      r"missing label"):
        processor.get_examples("train")
    with pytest.raises(ClassificationDataError, match=r"val.csv:2: label '7' is not one of the task's labels "
                                                      r"0, 1, 2, 3"):
        processor.get_examples("dev")
    with pytest.raises(ClassificationDataError, match=r"test.csv:2: expected 11 comma-separated fields as in the "
                                                      r"header, found 10"):
        processor.get_examples("test")


def test_user_tasks_use_the_sst2_and_mrpc_layouts_with_their_labels(tmp_path):
    write_files(tmp_path / "single", {"train.tsv": tsv(["sentence", "label"], ["great", "pos"], ["awful", "neg"])})
    write_files(tmp_path / "pair", {"dev.tsv": tsv(["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                                   ["same", "1", "2", "A cat.", "A feline."])})
    single = get_processor("single", str(tmp_path / "single"), label_list="neg,pos")
    assert single.get_examples("train") == [InputExample("train-1", "great", None, "pos"),
                                            InputExample("train-2", "awful", None, "neg")]
    assert single.leaderboard_files == {}
    pair = get_processor("pair", str(tmp_path / "pair"), label_list=["different", "same"])
    assert pair.get_examples("dev") == [InputExample("dev-1", "A cat.", "A feline.", "same")]
    with pytest.raises(ClassificationDataError, match=r"dev.tsv:2: label 'same' is not one of the task's labels "
                                                      r"0, 1"):
        get_processor("pair", str(tmp_path / "pair"), label_list="0,1").get_examples("dev")


@pytest.mark.parametrize("kwargs,message", [
    ({"task_name": "sst"}, r"--task_name=sst: unknown task; known tasks: cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, "
                           r"rte, wnli, ax, xnli, single, pair, swag"),
    ({"task_name": "single"}, r"--task_name=single needs --label_list"),
    ({"task_name": "pair", "label_list": "a,,b"}, r"needs --label_list.*no empty label"),
    ({"task_name": "pair", "label_list": "a,b,a"}, r"--label_list names a label twice: a, b, a"),
    ({"task_name": "mrpc", "label_list": "a,b"}, r"--label_list is only for the tasks single and pair"),
    ({"task_name": "xnli"}, r"--xnli_language is needed by --task_name=xnli and only by it"),
    ({"task_name": "mnli", "xnli_language": "de"}, r"--xnli_language is needed by --task_name=xnli and only by it"),
    ({"task_name": "xnli", "xnli_language": "xx"}, r"--xnli_language=xx: expected one of ar, bg, de"),
    ({"task_name": "swag", "use_tfds": True}, r"--use_tfds: task swag is not in tensorflow-datasets"),
    ({"task_name": "cola", "data_dir": None}, r"--data_dir is needed by --task_name=cola"),
])
def test_bad_flags(kwargs, message):
    with pytest.raises(ClassificationDataError, match=message):
        get_processor(**{"data_dir": "glue", **kwargs})


def bad_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def test_bad_files(tmp_path):
    sst = get_processor("sst-2", str(tmp_path))
    path = bad_file(tmp_path, "dev.tsv", "sentence\tlabel\n")
    with pytest.raises(ClassificationDataError, match=f"^{path}: no examples in the dev set$"):
        sst.get_examples("dev")
    path = bad_file(tmp_path, "train.tsv", "sentence\tlabel\ngood .\t1\nbad .\t2\n")
    with pytest.raises(ClassificationDataError, match=f"^{path}:3: label '2' is not one of the task's labels 0, 1$"):
        sst.get_examples("train")
    with pytest.raises(ClassificationDataError, match=f"^{tmp_path / 'test.tsv'}: file not found$"):
        sst.get_examples("test")
    path = bad_file(tmp_path, "test.tsv", b"index\tsentence\n0\tna\xefve\n")
    with pytest.raises(ClassificationDataError, match=f"^{path}:2: expected UTF-8 text"):
        sst.get_examples("test")


def test_rows_with_too_few_columns_are_errors_outside_qqp(tmp_path):
    write_files(tmp_path, {"dev_matched.tsv": GLUE["MNLI"]["dev_matched.tsv"] + "2\t1\t1n\tslate\tonly four\n"})
    with pytest.raises(ClassificationDataError, match=r"dev_matched.tsv:4: expected at least 11 tab-separated columns "
                                                      r"\(index promptID .*gold_label\), found 5"):
        get_processor("mnli", str(tmp_path)).get_examples("dev_matched")
    write_files(tmp_path, {"test.tsv": GLUE["QQP"]["test.tsv"] + "1\tonly one question\n"})
    with pytest.raises(ClassificationDataError, match=r"test.tsv:3: expected at least 3 tab-separated columns"):
        get_processor("qqp", str(tmp_path)).get_examples("test")


def test_stsb_score_must_be_a_number(tmp_path):
    write_files(tmp_path, {"dev.tsv": GLUE["STS-B"]["dev.tsv"].replace("\t5.000\n", "\tfive\n")})
    with pytest.raises(ClassificationDataError, match=r"dev.tsv:2: expected a number as the score .*found 'five'"):
        get_processor("sts-b", str(tmp_path)).get_examples("dev")
