# The tool lives in official_bert/tools/convert_checkpoint.py; this file keeps `python convert_checkpoint.py ...` working from a checkout.
from official_bert.tools.convert_checkpoint import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
