"""A retrieval set in BEIR's layout: `corpus.jsonl` ({"_id", "title", "text"} a passage), `queries.jsonl`
({"_id", "text"}) and `qrels/<split>.tsv` (a header, then query-id, corpus-id, score; a score above 0 is relevant).

A passage's text is its title and text joined by a space, as sentence-transformers' BEIR loader joins them. The
corpus is kept in the order of its ids (as strings), so that the search's tie order is sentence-transformers':
equal scores ranked by ascending corpus id. A split's queries are those it judges relevant to at least one passage.
"""

import dataclasses
import os

from official_bert.classification import validation
from official_bert.io import is_file
from official_bert.io.table_files import read_rows
from official_bert.retrieval.errors import RetrievalDataError

CORPUS, QUERIES, QRELS = "corpus.jsonl", "queries.jsonl", "qrels"
_QRELS_COLUMNS = ("query-id", "corpus-id", "score")


@dataclasses.dataclass(frozen=True)
class RetrievalSet:
    """Queries, a corpus and which passages are relevant to each query.

    Args:
        corpus_ids: the passages' ids, in ascending order.
        corpus_texts: their texts.
        query_ids: the judged queries' ids, in queries.jsonl's order.
        query_texts: their texts.
        relevant: for each query, the set of its relevant passages' ids.
    """

    corpus_ids: list
    corpus_texts: list
    query_ids: list
    query_texts: list
    relevant: list


def read_beir(directory, split, flag="--eval_dir"):
    """Reads `directory` (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) as a `RetrievalSet`.

    Args:
        directory: the data set's directory.
        split: the qrels file's name without ".tsv" ("dev", "test").
        flag: the flag that named the directory, for messages.

    Raises:
        RetrievalDataError (or `io.table_files.TableFileError`): a missing file, a row without an id or text, an id
            given twice, a judgement naming a query or passage the files do not hold, a split without a relevant
            passage.

    Example:
    >>> import os, tempfile
    >>> work = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(work, "qrels"))
    >>> _ = open(os.path.join(work, "corpus.jsonl"), "w").write('{"_id": "p2", "title": "Cats", "text": "purr"}\\n'
    ...                                                         '{"_id": "p1", "text": "Dogs bark"}\\n')
    >>> _ = open(os.path.join(work, "queries.jsonl"), "w").write('{"_id": "q1", "text": "what purrs"}\\n')
    >>> _ = open(os.path.join(work, "qrels", "dev.tsv"), "w").write("query-id\\tcorpus-id\\tscore\\nq1\\tp2\\t1\\n")
    >>> found = read_beir(work, "dev")
    >>> found.corpus_ids, found.corpus_texts, found.relevant
    (['p1', 'p2'], ['Dogs bark', 'Cats purr'], [{'p2'}])
    >>> _ = open(os.path.join(work, "qrels", "dev.tsv"), "a").write("q1\\tp9\\t1\\n")
    >>> read_beir(work, "dev")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    official_bert.retrieval.errors.RetrievalDataError: ...dev.tsv, row 2: corpus-id 'p9' is not in ...corpus.jsonl
    """
    paths = {name: os.path.join(directory, name) for name in (CORPUS, QUERIES)}
    paths[QRELS] = os.path.join(directory, QRELS, f"{split}.tsv")
    for path in paths.values():
        if not is_file(path):
            raise RetrievalDataError(f"{flag}={directory}: no {os.path.relpath(path, directory)} (expected BEIR's "
                                     f"layout: {CORPUS}, {QUERIES}, {QRELS}/<split>.tsv)")
    corpus = _texts(paths[CORPUS], with_title=True)
    queries = _texts(paths[QUERIES], with_title=False)
    judged = {}
    for row_number, row in read_rows(paths[QRELS], "tsv", _QRELS_COLUMNS):
        where = f"{paths[QRELS]}, row {row_number}"
        query_id, corpus_id = row["query-id"].strip(), row["corpus-id"].strip()
        for name, value, known, path in (("query-id", query_id, queries, QUERIES),
                                         ("corpus-id", corpus_id, corpus, CORPUS)):
            if value not in known:
                raise RetrievalDataError(f"{where}: {name} {value!r} is not in {paths[path]}")
        try:
            score = float(row["score"])
        except ValueError:
            raise RetrievalDataError(f"{where}: score {row['score'][:40]!r} is not a number") from None
        if score > 0:
            judged.setdefault(query_id, set()).add(corpus_id)
    if not judged:
        raise RetrievalDataError(f"{paths[QRELS]}: no query has a relevant passage (a score above 0)")
    query_ids = [query_id for query_id in queries if query_id in judged]
    corpus_ids = sorted(corpus)
    return RetrievalSet(corpus_ids, [corpus[i] for i in corpus_ids], query_ids, [queries[i] for i in query_ids],
                        [judged[i] for i in query_ids])


def _texts(path, with_title):
    """{id: text} of a corpus.jsonl or queries.jsonl file, in its order."""
    texts = {}
    for row_number, row in read_rows(path, "jsonl", ["_id"]):
        where = f"{path}, row {row_number}"
        key = row["_id"]
        if isinstance(key, bool) or not isinstance(key, (str, int)) or not str(key).strip():
            raise RetrievalDataError(f"{where}: _id {key!r} is not an id (a string or an integer)")
        key = str(key).strip()
        if key in texts:
            raise RetrievalDataError(f"{where}: _id {key!r} is given twice")
        parts = [validation.text(row.get(name, ""), f"{where}, field {name!r}")
                 for name in (("title", "text") if with_title else ("text",))]
        text = " ".join(parts).strip()
        if not text:
            raise RetrievalDataError(f"{where}: an empty text")
        texts[key] = text
    return texts
