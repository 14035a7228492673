"""BERT pretraining data (the original create_pretraining_data.py), streamed and parallel.

Same algorithm as google-research/bert (SPEC §3): documents are cut into [CLS] A [SEP] B [SEP] pairs
with the original's target lengths, random-next draws, put-back and truncation; masked-LM positions are
chosen and replaced 80/10/10 as the original does; examples carry the original's features.

What differs, and why:
- Streaming: documents are read one at a time and grouped into blocks (`PoolConfig`: 500 documents or
  1 MiB of text). A block is one worker's unit of work and the pool that random "next" segments are drawn
  from: the original drew them from the whole corpus, which forced it to hold the corpus in memory. The
  random segment's distribution (a uniformly random other document, a uniformly random start sentence,
  sentences until the target length) is the same; only the set of documents it can come from is the
  block instead of the corpus. Tests compare the statistics of both, and of the original's code.
- Memory: at most 2 × num_workers blocks are in flight, and each worker caches the ids of at most 2**18
  whitespace-separated chunks of text (`LineTokenizer`, ~50 MB); a document over 8 MiB is an error.
- Parallel: blocks run in worker processes; the results are written in block order, and each block's
  randomness is seeded by (random_seed, block index), so the output is the same for any number of workers.
- Shuffling is within a block (dupe_factor passes included), not across the corpus: shuffle the files
  and use a shuffle buffer when training.
- The end of a file ends a document (the original let a document run on into the next file).
- Whole words never cross [SEP] (the original joined a "##" piece that starts segment B to the word
  ending segment A). With SentencePiece, a word runs from one "▁" piece to the next.
- Input the original silently mangled is refused: non-UTF-8 bytes (it dropped them), a corpus that is one
  document (every "random" next came from that document), max_predictions_per_seq below what
  masked_lm_prob needs (it capped the masking). One-sentence documents and sentences longer than a
  sequence are handled as the original does, and counted in the summary.
- Random draws use the same distributions as the original but not its random-number sequence (e.g. the
  masked positions are a lazily drawn shuffle), so the output is statistically, not bytewise, the original's.
"""

from official_bert.pretraining_data.block_processor import BlockProcessor, BlockResult
from official_bert.pretraining_data.documents import (Block, Document, PoolConfig, expand_input_files,
                                                      iter_blocks, read_documents)
from official_bert.pretraining_data.errors import PretrainingDataError
from official_bert.pretraining_data.example_codec import ExampleEncoder
from official_bert.pretraining_data.instances import (TrainingInstance, create_segment_pairs,
                                                      create_single_segments, truncate_seq_pair)
from official_bert.pretraining_data.line_tokenizer import LineTokenizer
from official_bert.pretraining_data.masking import Masker
from official_bert.pretraining_data.options import PretrainingOptions, num_to_predict
from official_bert.pretraining_data.pipeline import create_pretraining_data
from official_bert.pretraining_data.progress import Progress
from official_bert.pretraining_data.sharded_writer import ShardedRecordWriter, output_paths
from official_bert.pretraining_data.stats import RunStats
