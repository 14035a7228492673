"""Counts kept while generating, added up across blocks, and the end-of-run summary."""

import dataclasses

from official_bert.io.utf8 import utf8_warning


@dataclasses.dataclass
class RunStats:
    """What a run read and wrote.

    Example:
    >>> total = RunStats(instances=3, random_next=1)
    >>> total.add(RunStats(instances=1, random_next=1))
    >>> total.instances, total.random_next
    (4, 2)
    """

    documents: int = 0
    one_sentence_documents: int = 0
    sentences: int = 0
    long_sentences: int = 0
    first_long_sentence: str = ""
    instances: int = 0
    random_next: int = 0
    tokens: int = 0
    masked: int = 0
    dropped_bytes: int = 0
    first_dropped: str = ""

    def add(self, other):
        for field in dataclasses.fields(self):
            if field.type is int:
                setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))
        self.first_long_sentence = self.first_long_sentence or other.first_long_sentence
        self.first_dropped = self.first_dropped or other.first_dropped

    def warnings(self):
        """Lines for the end-of-run warnings: input that was changed to be usable.

        >>> RunStats(dropped_bytes=3, first_dropped="a.txt:7").warnings()
        ['dropped 3 bytes that are not UTF-8, as the original does (the first on a.txt:7)']
        """
        return [w for w in (utf8_warning(self.dropped_bytes, self.first_dropped),) if w]

    def summary(self, max_num_tokens, no_nsp=False):
        """Lines for the end-of-run log."""
        lines = [f"wrote {self.instances:,} instances from {self.documents:,} documents "
                 f"({self.sentences:,} sentences)",
                 f"masked {self.masked:,} of {self.tokens:,} tokens ({_share(self.masked, self.tokens)}, "
                 f"{self.masked / max(1, self.instances):.2f} per instance)"]
        if not no_nsp:
            lines.append(f"next sentence: {self.instances - self.random_next:,} actual "
                         f"({_share(self.instances - self.random_next, self.instances)}), "
                         f"{self.random_next:,} random ({_share(self.random_next, self.instances)})")
            if self.one_sentence_documents:
                lines.append(f"{self.one_sentence_documents:,} one-sentence documents: their instances always "
                             "take a random next segment, as in the original")
        if self.long_sentences:
            lines.append(f"{self.long_sentences:,} sentences longer than {max_num_tokens} tokens were truncated "
                         f"(first at {self.first_long_sentence}); is the input one sentence per line?")
        return lines


def _share(part, whole):
    return f"{100 * part / max(1, whole):.1f} %"
