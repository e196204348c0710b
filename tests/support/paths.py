"""The checkout the tests run in, its bundled samples, and the shared folder of real samples and releases
(``$EVENTKG_SHARED``, else a ``shared`` folder beside the checkout)."""

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
SAMPLES = CHECKOUT / "ingest" / "samples"
SHARED = Path(os.environ["EVENTKG_SHARED"]) if os.environ.get("EVENTKG_SHARED") else CHECKOUT.parent / "shared"
