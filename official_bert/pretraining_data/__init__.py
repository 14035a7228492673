"""BERT pretraining data (the original create_pretraining_data.py), streamed and parallel.

Same algorithm as google-research/bert: every document of the run is cut `dupe_factor` times into
[CLS] A [SEP] B [SEP] pairs with the original's target lengths, random-next draws (a uniformly random other
document of the whole run), put-back and truncation; masked-LM positions are chosen and replaced 80/10/10 as
the original does; all the run's examples are shuffled together; examples carry the original's features.

What differs, and why:
- Memory: the original held every tokenized document and every instance in memory. Here the tokenized
  documents go to a temporary file that random next segments are read from (`TokenStore`), and the examples
  to temporary shuffle buckets (`BucketShuffle`, a two-pass external shuffle): memory stays flat as the corpus
  grows (one bucket of at most 64 MiB, up to 1024 buckets; beyond 64 GiB of output, a bucket grows). The
  temporary files have no name, so they vanish with the process even when it is killed.
- Parallel: blocks of text are tokenized, and chunks of documents cut into examples, in worker processes.
  A chunk's randomness is seeded by (random_seed, chunk index) and the buckets' by (random_seed, bucket), so
  the output is the same for any number of workers. TensorFlow is not imported for local files (the
  TFRecord checksums are computed with NumPy), which on a corpus of a few MB is most of the original's time.
- The end of a file ends a document (the original let a document run on into the next file).
- A random next segment never comes from its own document (the original tried ten draws, so it did with
  probability n**-10, and always in a one-document corpus, which is refused here unless --no_nsp).
- Whole words never cross [SEP] (the original joined a "##" piece that starts segment B to the word
  ending segment A). With SentencePiece, a word runs from one "▁" piece to the next.
- Non-UTF-8 bytes are dropped as the original drops them, and counted in a warning that names the first line.
  max_predictions_per_seq below what masked_lm_prob asks of a full sequence caps the masking, as in the
  original, with a warning. One-sentence documents and sentences longer than a sequence are handled as the
  original does, and counted in the summary.
- Random draws use the same distributions as the original but not its random-number sequence (e.g. the
  masked positions are a lazily drawn shuffle), so the output is statistically, not bytewise, the original's.
"""

from official_bert.io.utf8 import Utf8Decoder
from official_bert.pretraining_data.documents import Block, Document, expand_input_files, iter_blocks, read_documents
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import ExampleEncoder
from official_bert.pretraining_data.files import check_output_file
from official_bert.pretraining_data.generator import (Chunk, InstanceGenerator, continuation_flags,
                                                      tokens_by_id)
from official_bert.pretraining_data.instances import (TrainingInstance, create_segment_pairs,
                                                      create_single_segments, truncate_seq_pair)
from official_bert.pretraining_data.line_tokenizer import LineTokenizer
from official_bert.pretraining_data.masking import Masker
from official_bert.pretraining_data.options import PretrainingOptions, num_to_predict
from official_bert.pretraining_data.pipeline import create_pretraining_data
from official_bert.pretraining_data.progress import Progress
from official_bert.pretraining_data.sharded_writer import ShardedRecordWriter, output_paths
from official_bert.pretraining_data.stats import RunStats
from official_bert.pretraining_data.token_store import TokenStore
