# The tool lives in official_bert/tools/extract_features.py; this file keeps `python extract_features.py ...` working from a checkout.
from official_bert.tools.extract_features import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
