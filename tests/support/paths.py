"""The checkout the tests run in, and its bundled samples."""

from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
SAMPLES = CHECKOUT / "ingest" / "samples"
