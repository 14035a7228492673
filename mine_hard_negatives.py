# The tool lives in official_bert/tools/mine_hard_negatives.py; this file keeps `python mine_hard_negatives.py ...` working from a checkout.
from official_bert.tools.mine_hard_negatives import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
