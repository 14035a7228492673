# The tool lives in official_bert/tools/fill_mask.py; this file keeps `python fill_mask.py ...` working from a checkout.
from official_bert.tools.fill_mask import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
