# The tool lives in official_bert/tools/inspect_pretraining_data.py; this file keeps `python data_prep/inspect_pretraining_data.py ...` working from a checkout.
from official_bert.tools.inspect_pretraining_data import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
