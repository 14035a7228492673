"""Writes tests/fixtures/families/: BERT's family as transformers saves it, and transformers' outputs and ids.

Run once, in an environment with torch, transformers, tokenizers and sentencepiece beside the project's stack (the
project's tests never import torch or transformers), from the repository root:

    PYTHONPATH=. /work/benchvenv/bin/python tools/make_family_fixtures.py

(`/work/benchvenv` is such an environment: torch 2.13, transformers 5.12.1, tokenizers 0.22.) It writes:

1. Test vocabularies trained here on data/corpus/sotu.txt: a byte-level BPE (the `tokenizers` library's
   `ByteLevelBPETokenizer`, RoBERTa's kind: vocab.json + merges.txt), a SentencePiece unigram model (the
   `sentencepiece` library, XLM-R's kind: sentencepiece.bpe.model) and an uncased WordPiece (`BertWordPieceTokenizer`:
   vocab.txt, DistilBERT's and ELECTRA's kind).
2. One small random-weight model per family, saved by transformers with its tokenizer files beside it: roberta
   (`RobertaForMaskedLM`), xlm-roberta (`XLMRobertaForMaskedLM`), distilbert (`DistilBertForMaskedLM`), electra (the
   discriminator, `ElectraForPreTraining`, with embedding_size 24 != hidden_size 32) and electra-generator
   (`ElectraForMaskedLM`, hidden 16, embedding_size 24). Two layers, hidden 32 (the generator's 16), vocabularies of
   a few hundred tokens (350 BPE, 252 SentencePiece, 320 WordPiece).
3. reference.npz: for each family, transformers' tokenizer's inputs for texts of data/classification/dev.tsv (a
   single sentence and a pair, padded), every hidden state (the embeddings' output first) and the head's outputs
   (a masked LM's at the first two positions); and the tensor names and shapes transformers' sequence classifier of
   each family saves (3 labels).
4. tokenizer_ids.npz: Hugging Face's ids for 4,000 lines of data/corpus/sotu_heldout.txt and the hard cases
   (`HARD_CASES`) with each test vocabulary: transformers' RobertaTokenizer (the only byte-level BPE transformers 5
   has), XLMRobertaTokenizer and the slow SentencePiece path it replaced (the `sentencepiece` library with fairseq's
   ids, as transformers 4's XLMRobertaTokenizer), BertTokenizer and BertTokenizerLegacy (fast and slow, which must
   agree). Per corpus line a count and a CRC-32 of the ids (the full ids of the first 100 lines), the hard cases and
   some pairs (special tokens and packing) in full; and the words of tests/fixtures/ner/train.txt's sentences as
   transformers tokenizes them for token classification (`is_split_into_words`, RoBERTa's with
   add_prefix_space=True): the ids and each one's word. The SentencePiece model normalizes by a rule table of its own
   (NFKC of `NORMALIZED`), a few lines where nmt_nfkc's would be 200 KiB.

Then it checks the round trip with our code (the lines it prints are also kept as reference.npz["checks"]): each family's directory loaded by official_bert and written back by
`save_checkpoint(..., "huggingface")` gives transformers the same tensors, config and outputs (max difference printed,
at most 1e-5), and our own outputs agree with transformers' to 1e-4; a classifier of each family that we write loads
into transformers' ForSequenceClassification with nothing missing or unexpected and the same logits.
"""

import contextlib
import json
import os
import shutil
import tempfile
import unicodedata
import zlib

# One thread for the tokenizers library's trainers, so that the same corpus gives the same vocabularies.
os.environ.update(TOKENIZERS_PARALLELISM="false", RAYON_NUM_THREADS="1", RAYON_RS_NUM_CPUS="1")

import numpy as np  # noqa: E402 (after the environment the trainers read)
import sentencepiece
import torch
import transformers
from absl import app, flags
from safetensors.numpy import load_file
from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer
from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

from official_bert import BertClassifier, BertConfig, BertEncoder, BertPretrainer, ElectraDiscriminator
from official_bert.checkpoints import load_checkpoint, save_checkpoint

FLAGS = flags.FLAGS
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
flags.DEFINE_string("output_dir", os.path.join(REPO, "tests", "fixtures", "families"), "Where to write the fixtures.")

CORPUS = os.path.join(REPO, "data", "corpus", "sotu.txt")
HELDOUT = os.path.join(REPO, "data", "corpus", "sotu_heldout.txt")
DEV = os.path.join(REPO, "data", "classification", "dev.tsv")
NUM_LINES = 4000
FULL_LINES = 20
# The SentencePiece model normalizes as XLM-R's (nmt_nfkc: NFKC, control characters dropped, whitespace made
# spaces), but by a rule table of the characters the tests use (`normalization_rules`), a few lines where nmt_nfkc's
# is 200 KiB. SentencePiece, transformers and tensorflow-text all apply the model's own table.
UNICODE_SPACES = "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u200c\u200d\u2028\u2029" \
                 "\u202f\u205f\u3000\ufeff"
TOLERANCE = 1e-4
ROUND_TRIP_TOLERANCE = 1e-5

# Texts the corpus lacks: accents (composed and decomposed), CJK, emoji (with modifiers and joiners), control
# characters, whitespace of every kind, long words, contractions, compatibility characters.
HARD_CASES = [
    "Café naïve Ångström résumé déjà vu",
    "cafe\u0301 decomposed accents n\u0303",
    "中文字符 日本語のテキスト 한국어 문장",
    "emoji 😀👍🏽 flags 🇫🇷 family 👨\u200d👩\u200d👧",
    "ctrl\x00\x01\x1c\x1f\x7f\x85 end",
    "\tleading tab and trailing newline\n",
    "   three leading spaces and two trailing  ",
    "a" * 150,
    "supercalifragilisticexpialidocious" * 8,
    "ﬁ ligature ① ＡＢＣ ½ ² ㍿",
    "zero\u200bwidth\u00a0nbsp\u2028line\u3000ideographic\u2009thin",
    "don't can't we'll I'M 'quoted' rock'n'roll 's 've",
    "x\ufffdy replacement",
    "",
    " ",
    "\n\n",
    "Ελληνικά ΣΊΣΥΦΟΣ ὀδυσσεύς",
    "numbers 1,234.56 ٣٤٥ Ⅻ 3rd 2²",
    "mixed\r\nline\rends\x0bvt\x0cff",
    "math ∑∫√ arrows →⇒ symbols ©®™ ‘curly’ “quotes” — dash…",
    "URL https://example.com/path?q=1&x=y#frag e-mail a.b@c.org",
    "  multiple   inner    spaces  ",
]
# Words as NER gives them (CoNLL-2003's one word per line, tests/fixtures/ner/train.txt): transformers tokenizes them
# with is_split_into_words (RoBERTa's and XLM-R's with add_prefix_space=True, as its token-classification example).
NER_FILE = os.path.join(REPO, "tests", "fixtures", "ner", "train.txt")
PAIRS = [("How old is the Nation?", "It was founded in 1776."), ("   spaced  ", " out "), ("Café", "中文"), ("", "b")]

# family → (transformers class, config, tokenizer kind).
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32)
MODELS = {
    "roberta": ("RobertaForMaskedLM", dict(**SMALL, max_position_embeddings=66, type_vocab_size=1, layer_norm_eps=1e-5),
                "bpe"),
    "xlm-roberta": ("XLMRobertaForMaskedLM", dict(**SMALL, max_position_embeddings=66, type_vocab_size=1,
                                                  layer_norm_eps=1e-5), "spm"),
    "distilbert": ("DistilBertForMaskedLM", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=32,
                                                 max_position_embeddings=64), "wordpiece"),
    "electra": ("ElectraForPreTraining", dict(**SMALL, embedding_size=24, max_position_embeddings=64), "wordpiece"),
    "electra-generator": ("ElectraForMaskedLM", dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                                     intermediate_size=32, embedding_size=24,
                                                     max_position_embeddings=64), "wordpiece"),
}
CONFIG_CLASSES = {"roberta": "RobertaConfig", "xlm-roberta": "XLMRobertaConfig", "distilbert": "DistilBertConfig",
                  "electra": "ElectraConfig", "electra-generator": "ElectraConfig"}
CLASSIFIERS = {"roberta": "RobertaForSequenceClassification", "xlm-roberta": "XLMRobertaForSequenceClassification",
               "distilbert": "DistilBertForSequenceClassification", "electra": "ElectraForSequenceClassification"}
MAX_LENGTH = 32


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def train_vocabularies(directory):
    """The three test vocabularies, trained on the shipped corpus; returns their files."""
    lines = read_lines(CORPUS)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(lines, vocab_size=350, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    os.makedirs(os.path.join(directory, "bpe"))
    bpe.save_model(os.path.join(directory, "bpe"))
    # Relative paths, in `directory`: the model records them, and the same corpus then gives the same bytes.
    with contextlib.chdir(directory):
        with open("rules.tsv", "w", encoding="utf-8") as f:
            f.write(normalization_rules(lines))
        sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix="spm", vocab_size=250,
                                                 model_type="unigram", normalization_rule_tsv="rules.tsv",
                                                 num_threads=1, minloglevel=2)
    spm_prefix = os.path.join(directory, "spm")
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(lines, vocab_size=320, min_frequency=2)
    os.makedirs(os.path.join(directory, "wordpiece"))
    wordpiece.save_model(os.path.join(directory, "wordpiece"))
    # The trainer lists its alphabet in a hash map's order: the special tokens first, then the rest sorted.
    vocab_txt = os.path.join(directory, "wordpiece", "vocab.txt")
    tokens = open(vocab_txt, encoding="utf-8").read().split("\n")
    tokens = [t for t in tokens if t]
    special = [t for t in tokens if t.startswith("[") and t.endswith("]")]
    with open(vocab_txt, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in special + sorted(set(tokens) - set(special))))
    return {"bpe": [os.path.join(directory, "bpe", n) for n in ("vocab.json", "merges.txt")],
            "spm": [spm_prefix + ".model"], "wordpiece": [os.path.join(directory, "wordpiece", "vocab.txt")]}


def normalization_rules(lines):
    """nmt_nfkc's mapping of each character of the corpus, the test lines, the hard cases, the control characters and
    Unicode's spaces, as a SentencePiece rule table (one "source<TAB>target" line per character it changes; combining
    marks, which NFKC composes with what precedes them, are left alone)."""
    normalizer = sentencepiece.SentencePieceNormalizer(rule_name="nmt_nfkc")
    controls = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA1)]))
    chars = set("".join(lines + read_lines(HELDOUT)[:NUM_LINES] + HARD_CASES) + controls + UNICODE_SPACES)
    rules = []
    for char in sorted(chars):
        if unicodedata.category(char).startswith("M"):
            continue
        mapped = normalizer.normalize(f"#{char}#")[1:-1]
        if mapped != char:
            rules.append(f"{ord(char):04X}\t{' '.join(f'{ord(c):04X}' for c in mapped)}\n")
    return "".join(rules)


def hf_tokenizers(vocabularies):
    """kind → {name: a Hugging Face tokenizer (or the slow SentencePiece path) called like one}."""
    vocab = vocabularies["bpe"][0]
    roberta = transformers.RobertaTokenizer.from_pretrained(os.path.dirname(vocab))
    xlmr = transformers.XLMRobertaTokenizer.from_pretrained(os.path.dirname(vocabularies["spm"][0]),
                                                            vocab_file=vocabularies["spm"][0])
    processor = sentencepiece.SentencePieceProcessor(model_file=vocabularies["spm"][0])

    def xlmr_slow(text, pair=None, add_special_tokens=True):
        """transformers 4's slow XLMRobertaTokenizer: SentencePiece's ids, fairseq's mapping (spm's <unk> 0 → 3,
        every other id + 1), <s> A </s></s> B </s>."""
        ids = [3 if i == 0 else i + 1 for i in processor.encode(text)]
        if pair is not None:
            second = [3 if i == 0 else i + 1 for i in processor.encode(pair)]
            return {"input_ids": [0, *ids, 2, 2, *second, 2]}
        return {"input_ids": [0, *ids, 2] if add_special_tokens else ids}

    wordpiece = vocabularies["wordpiece"][0]
    return {"bpe": {"fast": roberta, "words": transformers.RobertaTokenizer.from_pretrained(os.path.dirname(vocab),
                                                                                          add_prefix_space=True)},
            "spm": {"fast": xlmr, "slow": xlmr_slow},
            "wordpiece": {"fast": transformers.BertTokenizer.from_pretrained(os.path.dirname(wordpiece),
                                                                             do_lower_case=True),
                          "slow": BertTokenizerLegacy(vocab_file=wordpiece, do_lower_case=True)}}


def ner_sentences():
    sentences, words = [], []
    for line in open(NER_FILE, encoding="utf-8"):
        if line.startswith("-DOCSTART-") or not line.strip():
            if words:
                sentences.append(words)
            words = []
        else:
            words.append(line.split()[0])
    return sentences + ([words] if words else [])


def ids_of(tokenizer, text, pair=None, add_special_tokens=True):
    if pair is not None:
        return list(tokenizer(text, pair)["input_ids"])
    return list(tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])


def crc(ids):
    return zlib.crc32(np.asarray(ids, np.int32).tobytes())


def ragged(rows):
    """Lists of ids as (flat int32 values, int32 row lengths)."""
    return (np.array([i for row in rows for i in row], np.int32), np.array([len(row) for row in rows], np.int32))


def tokenizer_reference(tokenizers):
    """Hugging Face's ids for the corpus lines, the hard cases and the pairs; fast and slow must agree."""
    lines = read_lines(HELDOUT)[:NUM_LINES]
    # The lines themselves are read from the corpus by the tests; this says they are the same.
    arrays = {"lines_crc32": np.uint32(zlib.crc32("\n".join(lines).encode("utf-8"))),
              "hard_cases": np.array(HARD_CASES), "pairs": np.array([list(pair) for pair in PAIRS])}
    for kind, by_speed in tokenizers.items():
        fast = by_speed["fast"]
        for name, slow in by_speed.items():
            if name in ("fast", "words"):
                continue
            differ = [t for t in lines + HARD_CASES
                      if ids_of(fast, t, add_special_tokens=False) != ids_of(slow, t, add_special_tokens=False)]
            differ += [a for a, b in PAIRS if ids_of(fast, a, b) != ids_of(slow, a, b)]
            assert not differ, f"{kind}: the fast and slow tokenizers differ on {differ[:3]}"
        print(f"{kind}: {', '.join(n for n in by_speed if n != 'words')} tokenizers agree on the {len(lines)} lines, {len(HARD_CASES)} hard "
              f"cases and {len(PAIRS)} pairs")
        line_ids = [ids_of(fast, t, add_special_tokens=False) for t in lines]
        arrays[f"{kind}/line_counts"] = np.array([len(ids) for ids in line_ids], np.int32)
        arrays[f"{kind}/line_crc32"] = np.array([crc(ids) for ids in line_ids], np.uint32)
        groups = {"first_lines": line_ids[:FULL_LINES],
                  "hard_cases": [ids_of(fast, t, add_special_tokens=False) for t in HARD_CASES],
                  "pairs": [ids_of(fast, a, b) for a, b in PAIRS]}
        for group, rows in groups.items():
            arrays[f"{kind}/{group}"], arrays[f"{kind}/{group}_lengths"] = ragged(rows)
        # Each NER sentence's ids and, per id, the index of its word (-1 for the special tokens).
        words = by_speed.get("words", fast)
        encodings = [words(sentence, is_split_into_words=True) for sentence in ner_sentences()]
        arrays[f"{kind}/ner_ids"], arrays[f"{kind}/ner_ids_lengths"] = ragged([e["input_ids"] for e in encodings])
        arrays[f"{kind}/ner_word_ids"] = np.array([-1 if w is None else w for e in encodings for w in e.word_ids()],
                                                  np.int32)
        print(f"{kind}: {sum(map(len, line_ids)):,} ids on the corpus lines")
    return arrays


def write_models(directory, vocabularies, tokenizers):
    """Each family's random-weight model as transformers saves it, with its tokenizer files; returns the models."""
    sizes = {"bpe": len(json.load(open(vocabularies["bpe"][0], encoding="utf-8"))),
             "spm": sentencepiece.SentencePieceProcessor(model_file=vocabularies["spm"][0]).get_piece_size() + 2,
             "wordpiece": sum(1 for _ in open(vocabularies["wordpiece"][0], encoding="utf-8"))}
    hf_models = {}
    for family, (class_name, values, kind) in MODELS.items():
        torch.manual_seed(len(hf_models))
        config = getattr(transformers, CONFIG_CLASSES[family])(vocab_size=sizes[kind], **values)
        model = getattr(transformers, class_name)(config).eval()
        target = os.path.join(directory, family)
        model.save_pretrained(target)
        for path in vocabularies[kind]:
            shutil.copy(path, os.path.join(target, "sentencepiece.bpe.model" if kind == "spm"
                                           else os.path.basename(path)))
        if kind == "wordpiece":
            with open(os.path.join(target, "tokenizer_config.json"), "w") as f:
                json.dump({"do_lower_case": True, "tokenizer_class": "BertTokenizer"}, f, indent=2)
        hf_models[family] = (model, tokenizers[kind]["fast"])
    return hf_models


def texts():
    with open(DEV, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t")[0] for line in f][1:]
    return rows[2], (rows[5][:80], rows[6][:80])


def encoded(tokenizer, family):
    """A single sentence and a pair, tokenized by transformers (truncated to MAX_LENGTH), padded to the longest."""
    single, pair = texts()
    rows = [tokenizer(single, truncation=True, max_length=MAX_LENGTH),
            tokenizer(*pair, truncation=True, max_length=MAX_LENGTH)]
    length = max(len(r["input_ids"]) for r in rows)
    pad = 1 if family in ("roberta", "xlm-roberta") else 0
    out = {name: np.zeros((len(rows), length), np.int32) for name in ("input_mask", "input_type_ids")}
    out["input_word_ids"] = np.full((len(rows), length), pad, np.int32)
    for i, r in enumerate(rows):
        n = len(r["input_ids"])
        out["input_word_ids"][i, :n] = r["input_ids"]
        out["input_mask"][i, :n] = 1
        if "token_type_ids" in r:
            out["input_type_ids"][i, :n] = r["token_type_ids"]
    return out


def hf_outputs(model, inputs, family):
    kwargs = {"input_ids": torch.tensor(inputs["input_word_ids"], dtype=torch.long),
              "attention_mask": torch.tensor(inputs["input_mask"], dtype=torch.long)}
    if family not in ("distilbert",):
        kwargs["token_type_ids"] = torch.tensor(inputs["input_type_ids"], dtype=torch.long)
    with torch.no_grad():
        out = model(**kwargs, output_hidden_states=True)
    return [h.numpy() for h in out.hidden_states], out.logits.numpy()


def our_model(family, directory):
    config = BertConfig.from_json_file(os.path.join(directory, "config.json"))
    encoder = BertEncoder(config)
    model = ElectraDiscriminator(encoder) if family == "electra" else BertPretrainer(encoder, use_nsp=False)
    report = load_checkpoint(model, directory)
    assert not report.unexpected, report
    return model, encoder


def our_outputs(model, encoder, inputs, family):
    states = encoder.layer_states(inputs, training=False)
    hidden = [states["embedding_output"].numpy()] + [h.numpy() for h in states["encoder_outputs"]]
    if family == "electra":
        return hidden, model(inputs, training=False).numpy()
    positions = np.tile(np.arange(inputs["input_word_ids"].shape[1], dtype=np.int32), (len(inputs["input_mask"]), 1))
    return hidden, model({**inputs, "masked_lm_positions": positions}, training=False)["mlm_logits"].numpy()


def masked_max(a, b, mask):
    mask = mask.astype(bool).reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
    return float(np.where(mask, np.abs(a - b), 0).max())


def model_reference(directory, hf_models, checks):
    """transformers' outputs on real text, and the round trip of each family through our code (each check's line
    appended to `checks`)."""
    arrays = {}
    for family, (model, tokenizer) in hf_models.items():
        inputs = encoded(tokenizer, family)
        hidden, logits = hf_outputs(model, inputs, family)
        arrays.update({f"{family}/{k}": v for k, v in inputs.items()})
        for i, h in enumerate(hidden):
            arrays[f"{family}/hidden_{i}"] = h
        # The masked LMs' logits at each row's first two positions (the whole [B, T, V] would be most of the file).
        arrays[f"{family}/logits"] = logits if family == "electra" else logits[:, :2]
        ours, encoder = our_model(family, os.path.join(directory, family))
        our_hidden, our_logits = our_outputs(ours, encoder, inputs, family)
        mask = inputs["input_mask"]
        diffs = [masked_max(a, b, mask) for a, b in zip(our_hidden, hidden, strict=True)]
        diffs.append(masked_max(our_logits, logits, mask))
        checks.append(f"{family}: max |ours - transformers| over the hidden states {max(diffs[:-1]):.2e}, the head "
                      f"{diffs[-1]:.2e} (real positions)")
        assert max(diffs) <= TOLERANCE, (family, diffs)
        with tempfile.TemporaryDirectory() as written:
            save_checkpoint(ours, written, "huggingface")
            original, ours_file = load_file(os.path.join(directory, family, "model.safetensors")), load_file(
                os.path.join(written, "model.safetensors"))
            assert sorted(original) == sorted(ours_file), (family, sorted(set(original) ^ set(ours_file)))
            assert all(np.array_equal(original[k], ours_file[k]) and original[k].dtype == ours_file[k].dtype
                       for k in original), family
            theirs_config = json.load(open(os.path.join(directory, family, "config.json")))
            theirs_config.pop("transformers_version")
            assert json.load(open(os.path.join(written, "config.json"))) == theirs_config, family
            reread, info = type(model).from_pretrained(written, output_loading_info=True, attn_implementation="eager")
            assert not any(info.values()), (family, info)
            re_hidden, re_logits = hf_outputs(reread.eval(), inputs, family)
            diff = max(float(np.abs(a - b).max()) for a, b in zip(re_hidden + [re_logits], hidden + [logits]))
            checks.append(f"{family}: our written directory: the same tensors and config.json as transformers', read "
                          f"by {type(model).__name__} with nothing missing or unexpected; max |transformers(ours) - "
                          f"transformers(original)| = {diff:.2e}")
            assert diff <= ROUND_TRIP_TOLERANCE
        if family in CLASSIFIERS:
            arrays.update(classifier_reference(family, encoder, inputs, checks))
    return arrays


def classifier_reference(family, encoder, inputs, checks):
    """Our classifier of the family, written as Hugging Face's: transformers' sequence classifier reads it clean and
    computes our logits; returns the names and shapes it saves."""
    classifier = BertClassifier(BertEncoder(encoder.config), 3)
    rng = np.random.default_rng(0)
    for variable in classifier.weights:
        variable.assign(rng.standard_normal(variable.shape).astype(np.float32) * 0.2)
    with tempfile.TemporaryDirectory() as written:
        save_checkpoint(classifier, written, "huggingface")
        hf, info = getattr(transformers, CLASSIFIERS[family]).from_pretrained(
            written, output_loading_info=True, attn_implementation="eager")
        assert not any(info.values()), (family, info)
        _, logits = hf_outputs(hf.eval(), inputs, family)
        diff = float(np.abs(classifier(inputs, training=False).numpy() - logits).max())
        checks.append(f"{family}: our classifier written as {CLASSIFIERS[family]}: nothing missing or unexpected, "
                      f"max |ours - transformers| = {diff:.2e}")
        assert diff <= TOLERANCE
        state = {k: tuple(v.shape) for k, v in hf.state_dict().items() if not k.endswith("position_ids")}
    return {f"{family}/classifier_names": np.array(sorted(state)),
            f"{family}/classifier_shapes": np.array(json.dumps([state[k] for k in sorted(state)]))}


def main(argv):
    del argv  # no positional arguments
    output = FLAGS.output_dir
    tmp = output + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    checks = []
    with tempfile.TemporaryDirectory() as work:
        vocabularies = train_vocabularies(work)
        tokenizers = hf_tokenizers(vocabularies)
        token_arrays = tokenizer_reference(tokenizers)
        hf_models = write_models(tmp, vocabularies, tokenizers)
        model_arrays = model_reference(tmp, hf_models, checks)
    print("\n".join(checks))
    versions = np.array(f"transformers {transformers.__version__}, torch {torch.__version__}")
    np.savez_compressed(os.path.join(tmp, "tokenizer_ids.npz"), **token_arrays, versions=versions)
    # What the checks measured, kept with the fixture: reference.npz["checks"].
    np.savez_compressed(os.path.join(tmp, "reference.npz"), **model_arrays, versions=versions,
                        checks=np.array("\n".join(checks)))
    shutil.rmtree(output, ignore_errors=True)
    os.replace(tmp, output)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(output) for f in files)
    print(f"wrote {output} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    app.run(main)
