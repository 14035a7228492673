# The tool lives in official_bert/tools/prepare_corpus.py; this file keeps `python data_prep/prepare_corpus.py ...` working from a checkout.
from official_bert.tools.prepare_corpus import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
