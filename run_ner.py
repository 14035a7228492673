# The tool lives in official_bert/tools/run_ner.py; this file keeps `python run_ner.py ...` working from a checkout.
from official_bert.tools.run_ner import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
