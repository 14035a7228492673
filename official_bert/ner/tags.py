"""Entity tags: IOB1, IOB2, IOBES and BILOU, their chunks by conlleval's rules, and conversion between schemes.

A tag is `O` or `<prefix>-<type>`: B (begin), I (inside), E (end), S (single); BILOU's L (last) and U (unit) are
E and S. conlleval (the CoNLL shared tasks' scorer) decides where chunks start and end from consecutive tags,
for every scheme at once:

- a chunk starts at B-X (or S-X), at I-X (or E-X) after O, after E- or S-, after a tag of another type, or at
  the start of a sentence;
- a chunk ends before B-, S-, O or a tag of another type, and after E- or S-.

For IOB1 and IOB2 these are exactly conlleval's `startOfChunk`/`endOfChunk`; conlleval does not know S- (and
keeps a chunk going from E-X into B-X), so for IOBES the rules above add what it lacks. Because chunks are read
this way everywhere, converting tags to another scheme (`to_scheme`) keeps every chunk, even for invalid
sequences a model predicts, such as I-PER after O.

Example:
>>> chunks(["I-PER", "I-PER", "O", "B-LOC", "I-LOC", "B-LOC"])
[('PER', 0, 2), ('LOC', 3, 5), ('LOC', 5, 6)]
>>> to_scheme(["I-PER", "I-PER", "O", "I-LOC", "B-LOC"], "iob2")
['B-PER', 'I-PER', 'O', 'B-LOC', 'B-LOC']
"""

import dataclasses

SCHEMES = ("iob1", "iob2", "iobes", "bilou")
_PREFIXES = {"B": "B", "I": "I", "E": "E", "S": "S", "L": "E", "U": "S"}


def split_tag(tag):
    """`tag` as (prefix, type), with BILOU's L and U read as E and S; ("O", "") for O.

    Raises ValueError for anything else (the caller names the file and line).

    Example:
    >>> split_tag("B-PER"), split_tag("U-LOC"), split_tag("O"), split_tag("I-MISC-X")
    (('B', 'PER'), ('S', 'LOC'), ('O', ''), ('I', 'MISC-X'))
    """
    if tag == "O":
        return "O", ""
    prefix, dash, entity_type = tag.partition("-")
    if not dash or prefix not in _PREFIXES or not entity_type:
        raise ValueError(f"tag {tag!r} is neither O nor B-, I-, E-, S-, L- or U- followed by a type")
    return _PREFIXES[prefix], entity_type


def _starts(previous, current):
    (prev_prefix, prev_type), (prefix, entity_type) = previous, current
    if prefix in ("B", "S"):
        return True
    return prefix in ("I", "E") and (prev_prefix in ("O", "E", "S") or prev_type != entity_type)


def chunks(tags):
    """The chunks of one sentence's tags, as (type, start, end) with `end` exclusive, in order.

    Args:
        tags: tag strings, in any scheme (see the module docstring for the rules).

    Example:
    >>> chunks(["B-PER", "I-LOC", "E-LOC", "S-LOC", "O", "I-ORG"])
    [('PER', 0, 1), ('LOC', 1, 3), ('LOC', 3, 4), ('ORG', 5, 6)]
    """
    found = []
    previous = ("O", "")
    for i, tag in enumerate(tags):
        current = split_tag(tag)
        if current[0] != "O":
            if _starts(previous, current):
                found.append([current[1], i, i + 1])
            else:
                found[-1][2] = i + 1
        previous = current
    return [tuple(chunk) for chunk in found]


def to_scheme(tags, scheme):
    """The same chunks (`chunks(tags)`) written in `scheme`.

    Args:
        tags: tag strings, in any scheme.
        scheme: "iob1" (B- only where a chunk follows one of its type), "iob2" (B- at every chunk's start),
            "iobes" or "bilou".

    Example:
    >>> tags = ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    >>> to_scheme(tags, "iob1"), to_scheme(tags, "iobes"), to_scheme(tags, "bilou")[2:]
    (['I-PER', 'I-PER', 'B-PER', 'O', 'I-LOC'], ['B-PER', 'E-PER', 'S-PER', 'O', 'S-LOC'], ['U-PER', 'O', 'U-LOC'])
    """
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tag scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    out = ["O"] * len(tags)
    previous_end, previous_type = None, None
    for entity_type, start, end in chunks(tags):
        if scheme in ("iob1", "iob2"):
            touching = previous_end == start and previous_type == entity_type
            out[start] = f"B-{entity_type}" if scheme == "iob2" or touching else f"I-{entity_type}"
            for i in range(start + 1, end):
                out[i] = f"I-{entity_type}"
        else:
            single, last = ("S", "E") if scheme == "iobes" else ("U", "L")
            if end - start == 1:
                out[start] = f"{single}-{entity_type}"
            else:
                out[start] = f"B-{entity_type}"
                for i in range(start + 1, end - 1):
                    out[i] = f"I-{entity_type}"
                out[end - 1] = f"{last}-{entity_type}"
        previous_end, previous_type = end, entity_type
    return out


def detect_scheme(tag_sequences):
    """The scheme a file's tags are written in: bilou or iobes if any L-/U- or E-/S- tag, iob1 if a chunk starts
    with I- (CoNLL-2003's original files), else iob2 (`scheme_evidence` says which tags decided it).

    Args:
        tag_sequences: each sentence's tags.

    Example:
    >>> detect_scheme([["I-PER", "O"], ["B-LOC", "O"]]), detect_scheme([["B-PER", "I-PER"]])
    ('iob1', 'iob2')
    >>> detect_scheme([["S-PER"]]), detect_scheme([["U-PER"]])
    ('iobes', 'bilou')
    """
    return scheme_evidence(tag_sequences).scheme


@dataclasses.dataclass(frozen=True)
class Evidence:
    """The first tag that implies a scheme.

    Args:
        sentence: the index of its sentence.
        word: its index in the sentence.
        reason: why it implies the scheme, e.g. "E-PER is an E-/S- tag".
    """

    sentence: int
    word: int
    reason: str


@dataclasses.dataclass(frozen=True)
class SchemeEvidence:
    """What decided a file's scheme (`scheme_evidence`).

    Args:
        scheme: the scheme the file is read and written in (as `detect_scheme`).
        evidence: scheme → the `Evidence` of the first tag that implies it, for each scheme some tag implies:
            bilou (an L-/U- tag), iobes (an E-/S- tag), iob1 (a chunk that starts with I-), iob2 (a chunk that
            starts with B- though no chunk of its type precedes it, which IOB1 never writes).
    """

    scheme: str
    evidence: dict

    @property
    def decided_by(self):
        """The `Evidence` of `scheme`, or None (iob2 for lack of any other: no tag implies a scheme)."""
        return self.evidence.get(self.scheme)

    @property
    def mixed(self):
        """The schemes implied that exclude one another, in the order of `SCHEMES`: IOB1 with any other, IOBES
        with BILOU (IOB2's B- at a chunk's start is IOBES's and BILOU's too); empty when the file is consistent.

        Example:
        >>> scheme_evidence([["I-PER", "O", "E-PER"]]).mixed, scheme_evidence([["B-PER", "E-PER"]]).mixed
        (['iob1', 'iobes'], [])
        """
        implied = set(self.evidence)
        if implied & {"iobes", "bilou"}:
            implied.discard("iob2")
        return [scheme for scheme in SCHEMES if scheme in implied] if len(implied) > 1 else []


def scheme_evidence(tag_sequences):
    """The scheme of a file's tags (`detect_scheme`) and the first tag that implies each scheme found.

    Args:
        tag_sequences: each sentence's tags.

    Example:
    >>> found = scheme_evidence([["O", "I-PER"], ["B-LOC", "O", "E-PER"]])
    >>> found.scheme, found.decided_by, found.mixed
    ('iobes', Evidence(sentence=1, word=2, reason='E-PER is an E-/S- tag'), ['iob1', 'iobes'])
    >>> found.evidence["iob1"].reason
    'I-PER starts a chunk'
    """
    evidence = {}
    for sentence, tags in enumerate(tag_sequences):
        previous = ("O", "")
        chunk_end, chunk_type = None, None  # the chunk before the current tag, to tell IOB1's B- from IOB2's
        for word, tag in enumerate(tags):
            current = split_tag(tag)
            prefix = tag.partition("-")[0]
            if prefix in ("L", "U"):
                evidence.setdefault("bilou", Evidence(sentence, word, f"{tag} is an L-/U- tag"))
            elif prefix in ("E", "S"):
                evidence.setdefault("iobes", Evidence(sentence, word, f"{tag} is an E-/S- tag"))
            if current[0] != "O" and _starts(previous, current):
                if prefix == "I":
                    evidence.setdefault("iob1", Evidence(sentence, word, f"{tag} starts a chunk"))
                elif prefix == "B" and not (chunk_end == word and chunk_type == current[1]):
                    evidence.setdefault("iob2", Evidence(sentence, word, f"{tag} starts a chunk that follows none "
                                                                         "of its type"))
            if current[0] != "O":
                chunk_end, chunk_type = word + 1, current[1]
            previous = current
    for scheme in ("bilou", "iobes", "iob1"):
        if scheme in evidence:
            return SchemeEvidence(scheme, evidence)
    return SchemeEvidence("iob2", evidence)
