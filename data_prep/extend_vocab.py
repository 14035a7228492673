# The tool lives in official_bert/tools/extend_vocab.py; this file keeps `python data_prep/extend_vocab.py ...` working from a checkout.
from official_bert.tools.extend_vocab import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
