"""SWAG: the multiple-choice task's CSV files as distributed (train.csv, val.csv, test.csv)."""

import csv
import os

from official_bert.classification.errors import ClassificationDataError
from official_bert.classification.examples import MultipleChoiceExample
from official_bert.classification.processor import DataProcessor
from official_bert.classification.tsv import open_task_file

ENDINGS = ("ending0", "ending1", "ending2", "ending3")
SWAG_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


class SwagProcessor(DataProcessor):
    """Reads SWAG's CSV files (columns found by their header names) into MultipleChoiceExamples.

    As in the common BERT SWAG recipe, the context is `sent1` and choice i's ending is `sent2 + " " + ending_i`
    (sent2 is the start of every ending). The test file has no label column.

    Args:
        data_dir: the directory holding train.csv, val.csv (the "dev" split) and test.csv.

    Example:
    >>> import os, tempfile
    >>> data_dir = tempfile.mkdtemp()
    >>> _ = open(os.path.join(data_dir, "val.csv"), "w").write(
    ...     ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\\n"
    ...     '0,v1,5,"He sat. He","He sat.",He,gold,"stood, slowly.",ate.,ran.,flew.,0\\n')
    >>> SwagProcessor(data_dir).get_examples("dev")[0].endings
    ('He stood, slowly.', 'He ate.', 'He ran.', 'He flew.')
    """

    def __init__(self, data_dir):
        super().__init__("swag", SWAG_FILES, ("0", "1", "2", "3"), num_choices=len(ENDINGS))
        self.data_dir = data_dir

    def data_files(self, split):
        self.check_split(split)
        return [os.path.join(self.data_dir, SWAG_FILES[split])]

    def _read(self, split):
        [path] = self.data_files(split)
        needed = ("sent1", "sent2", *ENDINGS) + (() if split.startswith("test") else ("label",))
        with open_task_file(path, "r") as f:
            reader = csv.reader(f)
            try:
                return self._examples(split, path, reader, needed)
            except csv.Error as e:
                raise ClassificationDataError(f"{path}:{reader.line_num}: not valid CSV: {e}") from None
            except UnicodeDecodeError as e:
                raise ClassificationDataError(f"{path}:{reader.line_num + 1}: expected UTF-8 text ({e.reason})") \
                    from None

    def _examples(self, split, path, reader, needed):
        header = next(reader, None)
        if header is None:
            return []
        header = [name.strip().removeprefix("\ufeff") for name in header]
        missing = [name for name in needed if name not in header]
        if missing:
            raise ClassificationDataError(f"{path}:1: expected a header with the SWAG columns {', '.join(needed)}; "
                                          f"missing {', '.join(missing)}")
        column = {name: header.index(name) for name in needed}
        examples = []
        for row in reader:
            if not row:
                continue
            where = f"{path}:{reader.line_num}"
            if len(row) != len(header):
                raise ClassificationDataError(f"{where}: expected {len(header)} comma-separated fields as in the "
                                              f"header, found {len(row)}")
            start = row[column["sent2"]]
            endings = tuple(f"{start} {row[column[name]]}" for name in ENDINGS)
            label = self.check_label(row[column["label"]], where) if "label" in column else self.placeholder_label
            examples.append(MultipleChoiceExample(f"{split}-{len(examples)}", row[column["sent1"]], endings, label))
        return examples
