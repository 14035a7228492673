# The tool lives in official_bert/tools/run_pretraining.py; this file keeps `python run_pretraining.py ...` working from a checkout.
from official_bert.tools.run_pretraining import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
