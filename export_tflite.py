# The tool lives in official_bert/tools/export_tflite.py; this file keeps `python export_tflite.py ...` working from a checkout.
from official_bert.tools.export_tflite import __doc__, run  # noqa: F401

if __name__ == "__main__":
    run()
