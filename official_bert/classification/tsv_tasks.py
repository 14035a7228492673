"""The tab-separated tasks: each GLUE file's columns as distributed, XNLI's, and the user tasks' layouts.

Columns and label lists are those of google-research/bert's run_classifier.py (CoLA, MRPC, MNLI, XNLI) and
of the Model Garden's classifier_data_lib.py for the tasks the original lacks.
"""

import dataclasses

from official_bert.classification.tsv_processor import Layout, TsvTask

BINARY = ("0", "1")
NLI = ("contradiction", "entailment", "neutral")
ENTAILMENT = ("entailment", "not_entailment")
XNLI_LANGUAGES = ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")

_SST2 = "sentence label"
_SST2_TEST = "index sentence"
_MRPC = "Quality #1_ID #2_ID #1_String #2_String"
_MRPC_TEST = "index #1_ID #2_ID #1_String #2_String"
_PAIR = "index sentence1 sentence2 label"
_PAIR_TEST = "index sentence1 sentence2"
_MNLI = "index promptID pairID genre sentence1_binary_parse sentence2_binary_parse sentence1_parse " \
        "sentence2_parse sentence1 sentence2 label1 [label2 ... label5] gold_label"
_MNLI_TEST = _MNLI.split(" label1")[0]
_XNLI = "language gold_label sentence1_binary_parse sentence2_binary_parse sentence1_parse sentence2_parse " \
        "sentence1 sentence2 promptID pairID genre label1 ... label5"


def _pair_splits(columns, test_columns, a, b, label, guid=None, test_a=None, test_b=None):
    """train/dev/test layouts of a sentence-pair task whose test file lacks the label column."""
    train = Layout("train.tsv", columns, text_a=a, text_b=b, label=label, guid=guid)
    test = Layout("test.tsv", test_columns, text_a=a if test_a is None else test_a,
                  text_b=b if test_b is None else test_b, guid=guid)
    return {"train": train, "dev": dataclasses.replace(train, file="dev.tsv"), "test": test}


def _mnli_split(file, labelled):
    return Layout(file, _MNLI if labelled else _MNLI_TEST, text_a=8, text_b=9, label=-1 if labelled else None,
                  guid=0)


# Single sentences: a row with another column count has a tab inside its text.
_SST2_TRAIN = Layout("train.tsv", _SST2, text_a=0, label=1, exact=True)
_SST2_TEST_LAYOUT = Layout("test.tsv", _SST2_TEST, text_a=1, exact=True)
_SINGLE_SPLITS = {"train": _SST2_TRAIN, "dev": dataclasses.replace(_SST2_TRAIN, file="dev.tsv"),
                  "test": _SST2_TEST_LAYOUT}
_COLA_TRAIN = Layout("train.tsv", "source label original_label sentence", text_a=3, label=1, header=False,
                     exact=True)
_MRPC_SPLITS = _pair_splits(_MRPC, _MRPC_TEST, a=3, b=4, label=0)

TSV_TASKS = {task.name: task for task in (
    TsvTask("cola", BINARY, {
        # Only CoLA's test file has a header.
        "train": _COLA_TRAIN,
        "dev": dataclasses.replace(_COLA_TRAIN, file="dev.tsv"),
        "test": _SST2_TEST_LAYOUT}, {"test": "CoLA.tsv"}),
    TsvTask("sst-2", BINARY, _SINGLE_SPLITS, {"test": "SST-2.tsv"}),
    TsvTask("mrpc", BINARY, _MRPC_SPLITS, {"test": "MRPC.tsv"}),
    TsvTask("sts-b", None, _pair_splits(
        "index genre filename year old_index source1 source2 sentence1 sentence2 score",
        "index genre filename year old_index source1 source2 sentence1 sentence2", a=7, b=8, label=9),
        {"test": "STS-B.tsv"}),
    TsvTask("qqp", BINARY, _pair_splits("id qid1 qid2 question1 question2 is_duplicate", "id question1 question2",
                                        a=3, b=4, label=5, guid=0, test_a=1, test_b=2),
            {"test": "QQP.tsv"}, skip_short_rows=("train", "dev")),
    TsvTask("mnli", NLI, {"train": _mnli_split("train.tsv", True),
                          "dev_matched": _mnli_split("dev_matched.tsv", True),
                          "dev_mismatched": _mnli_split("dev_mismatched.tsv", True),
                          "test_matched": _mnli_split("test_matched.tsv", False),
                          "test_mismatched": _mnli_split("test_mismatched.tsv", False)},
            {"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"}),
    TsvTask("qnli", ENTAILMENT, _pair_splits("index question sentence label", "index question sentence",
                                             a=1, b=2, label=-1), {"test": "QNLI.tsv"}),
    TsvTask("rte", ENTAILMENT, _pair_splits(_PAIR, _PAIR_TEST, a=1, b=2, label=-1), {"test": "RTE.tsv"}),
    TsvTask("wnli", BINARY, _pair_splits(_PAIR, _PAIR_TEST, a=1, b=2, label=-1), {"test": "WNLI.tsv"}),
    # The diagnostic set: predict only, with MNLI's labels (an MNLI model predicts it).
    TsvTask("ax", NLI, {"test": Layout("AX.tsv", _PAIR_TEST, text_a=1, text_b=2)}, {"test": "AX.tsv"}),
    TsvTask("xnli", NLI, {
        "train": Layout("multinli/multinli.train.{language}.tsv", "premise hypo label", text_a=0, text_b=1,
                        label=2),
        "dev": Layout("xnli.dev.tsv", _XNLI, text_a=6, text_b=7, label=1, language=0),
        "test": Layout("xnli.test.tsv", _XNLI, text_a=6, text_b=7, label=1, language=0)},
        label_aliases={"contradictory": "contradiction"}),
    # The user's own tasks: their labels come from --label_list.
    TsvTask("single", None, _SINGLE_SPLITS),
    TsvTask("pair", None, _MRPC_SPLITS),
)}
USER_TASKS = ("single", "pair")
