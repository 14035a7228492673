"""The tokenized documents of a run, on disk, so that any document can be the random next one without holding the
corpus in memory.

The original held every tokenized document in a list to draw random next segments from. Here they go to an
unnamed temporary file (it has no name from the start, so nothing is left behind even after `kill -9`), with an
index of where each document ends; the worker processes, forked once the store exists, inherit the file and read
a document with one `pread`. Memory stays flat whatever the corpus size; the file is about 4 bytes a token.

A document is stored as uint32 values: its number of sentences n, the n sentence lengths, then the ids.
"""

import itertools
import os
import struct
import tempfile

import numpy as np


def pack_document(sentences):
    """The stored form of a document (a list of non-empty lists of ids), as a list of ints.

    >>> pack_document([[7, 8], [9]])
    [2, 2, 1, 7, 8, 9]
    """
    return [len(sentences), *map(len, sentences), *itertools.chain.from_iterable(sentences)]


def _unpack(values):
    n = values[0]
    bounds = itertools.accumulate(values[1:1 + n], initial=1 + n)
    return [values[start:end] for start, end in itertools.pairwise(bounds)]


class TokenStore:
    """Appends tokenized documents to an unnamed temporary file and reads them back by number.

    Args:
        directory: where the temporary files live (their space is used, their names never appear).

    Example:
    >>> store = TokenStore(tempfile.gettempdir())
    >>> store.append(pack_document([[1, 2], [3]]) + pack_document([[4]]), [6, 3])
    >>> store.flush()
    >>> len(store), store.document(1), store.documents(0, 2)
    (2, [[4]], [[[1, 2], [3]], [[4]]])
    >>> store.close()
    """

    def __init__(self, directory):
        self._data = tempfile.TemporaryFile(dir=directory)
        self._ends = tempfile.TemporaryFile(dir=directory)  # int64: where each document ends, in uint32 units
        self._size = 0
        self.num_documents = 0

    def __len__(self):
        return self.num_documents

    def append(self, values, sizes):
        """Appends packed documents: `values` (ints, or their uint32 bytes) holding documents of `sizes` values."""
        data = values if isinstance(values, bytes) else np.asarray(values, np.uint32).tobytes()
        self._data.write(data)
        ends = self._size + np.cumsum(np.asarray(sizes, np.int64))
        self._ends.write(ends.astype("<i8").tobytes())
        self._size = int(ends[-1]) if len(sizes) else self._size
        self.num_documents += len(sizes)

    def flush(self):
        """Makes everything appended visible to readers (other processes included)."""
        self._data.flush()
        self._ends.flush()

    def _span(self, first, end):
        """(start, end) in uint32 units of documents first..end-1."""
        fd = self._ends.fileno()
        if first == 0:
            return 0, int.from_bytes(os.pread(fd, 8, 8 * (end - 1)), "little")
        if end == first + 1:  # one document: its start and end are neighbours
            return struct.unpack("<qq", os.pread(fd, 16, 8 * (first - 1)))
        return (int.from_bytes(os.pread(fd, 8, 8 * (first - 1)), "little"),
                int.from_bytes(os.pread(fd, 8, 8 * (end - 1)), "little"))

    def _raw(self, first, end):
        start, stop = self._span(first, end)
        return os.pread(self._data.fileno(), 4 * (stop - start), 4 * start)

    def _values(self, first, end):
        return np.frombuffer(self._raw(first, end), "<u4").tolist()

    def stored_document(self, index):
        """Document `index` as a `StoredDocument`: a random next segment uses a few of a document's sentences,
        and a Python int for every id of the others would cost more than reading the document did."""
        return StoredDocument(self._raw(index, index + 1))

    def document(self, index):
        """Document `index` as a list of sentences, each a list of ids."""
        return _unpack(self._values(index, index + 1))

    def documents(self, first, end):
        """Documents first..end-1, read at once."""
        values, documents, start = self._values(first, end), [], 0
        for _ in range(end - first):
            n = values[start]
            size = 1 + n + sum(values[start + 1:start + 1 + n])
            documents.append(_unpack(values[start:start + size]))
            start += size
        return documents

    def pool(self, num_documents, first, documents):
        """The run's documents as a sequence for `create_segment_pairs`: documents first.. are the given ones
        (already read), any other is read when drawn (a `StoredDocument`, see `stored_document`)."""
        return _Pool(self, num_documents, first, documents)

    def close(self):
        self._data.close()
        self._ends.close()


class StoredDocument:
    """A document as the store holds it (see the module's docstring): its length is its number of sentences,
    and `document[k:]` iterates over sentences k.. as memoryviews of their uint32 ids, each made when reached.

    Example:
    >>> import array
    >>> document = StoredDocument(array.array("I", pack_document([[1, 2], [3], [4, 5, 6]])).tobytes())
    >>> len(document), [list(sentence) for sentence in document[1:]]
    (3, [[3], [4, 5, 6]])
    """

    __slots__ = ("_values",)

    def __init__(self, raw):
        self._values = memoryview(raw).cast("I")

    def __len__(self):
        return self._values[0]

    def __getitem__(self, index):
        if not isinstance(index, slice) or index.stop is not None or index.step is not None:
            raise TypeError("a StoredDocument takes only [k:]")
        return self._sentences(index.start or 0)

    def _sentences(self, first):
        values = self._values
        n = values[0]
        start = 1 + n + sum(values[1:1 + first])
        for length in values[1 + first:1 + n]:
            yield values[start:start + length]
            start += length


class _Pool:
    def __init__(self, store, num_documents, first, documents):
        self._store, self._n, self._first, self._local = store, num_documents, first, documents

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        offset = index - self._first
        if 0 <= offset < len(self._local):
            return self._local[offset]
        return self._store.stored_document(index)
