#!/usr/bin/env bash
# Set up, then run the main job: ingest the bundled samples into the embedded store,
# generate questions, evaluate the offline baselines, write eventkg-demo/report/report.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/eventkg demo "$@"
