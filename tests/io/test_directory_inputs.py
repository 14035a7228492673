"""A directory given where a user's file goes: every reader refuses it in one line that names the flag (where it knows
it), says it is a directory and lists what it holds; never a traceback (IsADirectoryError) nor a message about the
file's extension or content. The readers share one check, `io.files.check_input_file`."""

import pytest

from official_bert import BertConfig
from official_bert.checkpoints.vocab_extension import read_words_file
from official_bert.classification import get_processor
from official_bert.classification.own_files import OwnFilesProcessor
from official_bert.classification.tsv import open_task_file
from official_bert.distillation import UnlabeledText
from official_bert.distillation.task import WithUnlabeled
from official_bert.errors import Error
from official_bert.export.file_prediction import input_files
from official_bert.features.inputs import read_inputs
from official_bert.io.table_files import check_table_file, read_columns, read_rows, table_format
from official_bert.ner.conll import read_conll
from official_bert.ner.jsonl import read_jsonl
from official_bert.pretraining_data import expand_input_files
from official_bert.squad.json_files import read_json
from official_bert.text.sentencepiece_tokenizer import read_model
from official_bert.tokenization import load_vocab


@pytest.fixture
def directory(tmp_path):
    """A directory holding the file the user meant, as when a folder is given for the file in it."""
    folder = tmp_path / "adir"
    folder.mkdir()
    (folder / "train.csv").write_text("text,label\nfine,pos\nbad,neg\n")
    return str(folder)


READERS = {
    "read_rows": lambda d: list(read_rows(d, "csv")),
    "read_columns": lambda d: read_columns(d, "tsv"),
    "own_files_train": lambda d: OwnFilesProcessor({"train": d}, input_format="csv"),
    "unlabeled_rows": lambda d: WithUnlabeled(get_processor("sst-2", d), UnlabeledText(d, input_format="text")
                                              ).get_examples("unlabeled"),
    "squad_json": lambda d: read_json(d, "a SQuAD JSON file"),
    "extract_features_input": read_inputs,
    "glue_tsv": open_task_file,
    "ner_conll": read_conll,
    "ner_jsonl": read_jsonl,
    "vocab": load_vocab,
    "bert_config": BertConfig.from_json_file,
    "sentencepiece_model": read_model,
    "extend_vocab_words": read_words_file,
    "pretraining_corpus": expand_input_files,
    "predict_input": input_files,
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_a_directory_in_one_line(directory, reader):
    with pytest.raises(Error) as raised:
        READERS[reader](directory)
    message = str(raised.value)
    assert "\n" not in message and "is a directory" in message and directory in message, message


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_own_files_name_the_flag_of_the_directory(directory, split):
    with pytest.raises(Error, match=rf"^--{split}_file={directory}: is a directory; expected a CSV, TSV, JSON "
                                    r"Lines or text file \(it holds train.csv\)$"):
        OwnFilesProcessor({split: directory}, input_format="csv", label_list="neg,pos")


def test_a_directory_is_named_before_its_format_is_asked_for(directory):
    # G5f: without a format flag the message was about the extension '(none)' and named --input_format.
    with pytest.raises(Error, match=rf"^--unlabeled_file={directory}: is a directory; expected "):
        check_table_file(directory, "--unlabeled_file", None, "--unlabeled_format")
    with pytest.raises(Error, match=r"^--unlabeled_file=corpus: cannot tell its format .* give "
                                    r"--unlabeled_format=csv\|tsv\|jsonl\|text$"):
        table_format("corpus", flag="--unlabeled_file", format_flag="--unlabeled_format")


def test_an_empty_directory_says_so(tmp_path):
    with pytest.raises(Error, match=r"is a directory; expected a CSV, TSV, JSON Lines or text file \(it is empty\)$"):
        list(read_rows(str(tmp_path), "jsonl"))
