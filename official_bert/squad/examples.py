"""SQuAD JSON → `SquadExample`s, exactly as the original run_squad.py's `read_squad_examples`."""

import dataclasses

from absl import logging

from official_bert import tokenization
from official_bert.squad import json_files
from official_bert.squad.errors import SquadError


@dataclasses.dataclass
class SquadExample:
    """One question about one paragraph.

    Args:
        qas_id: the question's id.
        question_text: the question.
        doc_tokens: the paragraph split on whitespace (`split_paragraph`).
        orig_answer_text: the answer as annotated (training only; "" when impossible).
        start_position: index in `doc_tokens` of the answer's first word (training only; -1 when impossible).
        end_position: index of its last word.
        is_impossible: a SQuAD 2.0 question the paragraph does not answer (training only).

    Example:
    >>> SquadExample("q1", "Who?", ["Ann", "ran."], "Ann", 0, 0).doc_tokens
    ['Ann', 'ran.']
    """

    qas_id: str
    question_text: str
    doc_tokens: list
    orig_answer_text: str = None
    start_position: int = None
    end_position: int = None
    is_impossible: bool = False


class SquadExamples(list):
    """A list of `SquadExample`s, plus `num_skipped`: training questions whose answer was not found in the text.

    Example:
    >>> examples = SquadExamples([SquadExample("q1", "Who?", ["Ann"])])
    >>> len(examples), examples.num_skipped
    (1, 0)
    """

    num_skipped = 0


def is_whitespace(char):
    """The original's whitespace for splitting paragraphs: space, tab, CR, LF and U+202F (narrow no-break space).

    Other Unicode spaces (e.g. U+00A0) stay inside words, as in the original.

    Example:
    >>> [is_whitespace(c) for c in " \\t\\u202f\\u00a0x"]
    [True, True, True, False, False]
    """
    return char in (" ", "\t", "\r", "\n") or ord(char) == 0x202F


def split_paragraph(text):
    """Splits `text` on `is_whitespace` into words, and maps every character to the index of its word.

    A whitespace character maps to the word before it (-1 before the first word), as the original.

    Example:
    >>> split_paragraph(" Hi  there")
    (['Hi', 'there'], [-1, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    """
    doc_tokens = []
    char_to_word_offset = []
    prev_is_whitespace = True
    for char in text:
        if is_whitespace(char):
            prev_is_whitespace = True
        else:
            if prev_is_whitespace:
                doc_tokens.append(char)
            else:
                doc_tokens[-1] += char
            prev_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def read_squad_examples(input_file, is_training, version_2_with_negative=False):
    """Reads a SQuAD 1.1 or 2.0 JSON file into `SquadExample`s, as the original does.

    For training each question needs exactly one answer (or `is_impossible` with version 2.0); an answer whose
    text is not found at its `answer_start` (often odd Unicode) is logged with "Could not find answer" and
    skipped, and the number skipped is in the result's `num_skipped`.

    Args:
        input_file: a SQuAD JSON file (`{"data": [{"paragraphs": [{"context", "qas": [...]}]}]}`).
        is_training: read the answers (prediction reads only ids, questions and paragraphs).
        version_2_with_negative: honour `is_impossible` (SQuAD 2.0).

    Returns a `SquadExamples` list. Raises SquadError naming the file and the place in it on malformed input,
    and on two questions with the same id (their predictions, keyed by id, would collapse into one).

    Example:
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.json")
    >>> qas = [{"id": "q1", "question": "Who ran?", "answers": [{"text": "Ann", "answer_start": 4}]},
    ...        {"id": "q2", "question": "Who?", "answers": [{"text": "Bob", "answer_start": 4}]}]
    >>> _ = open(path, "w").write(json.dumps({"data": [{"paragraphs": [{"context": "Now Ann ran.", "qas": qas}]}]}))
    >>> examples = read_squad_examples(path, is_training=True)
    >>> [(e.qas_id, e.start_position, e.end_position) for e in examples], examples.num_skipped
    ([('q1', 1, 1)], 1)
    """
    data = json_files.read_json(input_file, "a SQuAD JSON file")
    reader = _Reader(input_file)
    examples = SquadExamples()
    num_questions, seen = 0, {}
    for a, article in enumerate(reader.field(data, "data", list, "the top level")):
        for p, paragraph in enumerate(reader.field(article, "paragraphs", list, f"data[{a}]")):
            where = f"data[{a}].paragraphs[{p}]"
            doc_tokens, char_to_word_offset = split_paragraph(reader.field(paragraph, "context", str, where))
            for q, qa in enumerate(reader.field(paragraph, "qas", list, where)):
                num_questions += 1
                qa_where = f"{where}.qas[{q}]"
                qas_id = reader.field(qa, "id", str, qa_where)
                if qas_id in seen:
                    raise SquadError(f"{input_file}: {qa_where}: duplicate question id {qas_id!r} (first at "
                                     f"{seen[qas_id]}): each question needs its own id")
                seen[qas_id] = qa_where
                example = reader.example(qa, qa_where, doc_tokens, char_to_word_offset, is_training,
                                         version_2_with_negative)
                if example is None:
                    examples.num_skipped += 1
                else:
                    examples.append(example)
    if examples.num_skipped:
        logging.warning("%s: skipped %d of %d questions whose answer text was not found at answer_start",
                        input_file, examples.num_skipped, num_questions)
    return examples


class _Reader:
    """Checks the JSON's structure as it goes, so that errors name the file and the place in it."""

    def __init__(self, input_file):
        self.input_file = input_file

    def field(self, obj, key, kind, where):
        if not isinstance(obj, dict) or key not in obj:
            raise SquadError(f"{self.input_file}: {where}: expected an object with a {key!r} field")
        value = obj[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise SquadError(f"{self.input_file}: {where}.{key}: expected {_KIND_NAMES[kind]}, "
                             f"got {type(value).__name__}")
        return value

    def example(self, qa, where, doc_tokens, char_to_word_offset, is_training, version_2_with_negative):
        """The question's SquadExample, or None when its answer is not found in the paragraph."""
        qas_id = self.field(qa, "id", str, where)
        question_text = self.field(qa, "question", str, where)
        example = SquadExample(qas_id, question_text, doc_tokens)
        if not is_training:
            return example
        if version_2_with_negative and "is_impossible" in qa:
            example.is_impossible = self.field(qa, "is_impossible", bool, where)
        if example.is_impossible:
            example.start_position = example.end_position = -1
            example.orig_answer_text = ""
            return example
        answers = self.field(qa, "answers", list, where)
        if len(answers) != 1:
            raise SquadError(f"{self.input_file}: {where} (id {qas_id!r}): for training, each question should "
                             f"have exactly 1 answer, found {len(answers)}")
        answer_where = f"{where}.answers[0]"
        text = self.field(answers[0], "text", str, answer_where)
        offset = self.field(answers[0], "answer_start", int, answer_where)
        last_char = offset + len(text) - 1
        cleaned_answer_text = " ".join(tokenization.whitespace_tokenize(text))
        # The original would index from the end for a negative answer_start, crash past the end, and train on
        # an empty span for an empty answer: all three are answers not found in the text.
        if offset < 0 or last_char >= len(char_to_word_offset) or not cleaned_answer_text:
            logging.warning("%s: %s (id %r): Could not find answer: answer_start %d, text %r, context of %d "
                            "characters", self.input_file, where, qas_id, offset, text, len(char_to_word_offset))
            return None
        example.start_position = char_to_word_offset[offset]
        example.end_position = char_to_word_offset[last_char]
        # Only answers that can be recovered exactly from the words are kept; the rest are usually odd Unicode.
        actual_text = " ".join(doc_tokens[example.start_position:example.end_position + 1])
        if actual_text.find(cleaned_answer_text) == -1:
            logging.warning("%s: %s (id %r): Could not find answer: '%s' vs. '%s'", self.input_file, where,
                            qas_id, actual_text, cleaned_answer_text)
            return None
        example.orig_answer_text = text
        return example


_KIND_NAMES = {list: "a list", str: "a string", int: "an integer", bool: "true or false"}
