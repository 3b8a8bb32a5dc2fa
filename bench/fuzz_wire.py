"""Full wire-level fuzzing campaign (issue 12, item 2): ``python bench/fuzz_wire.py [SAMPLES_PER_TOPIC] [SEED]``.

Runs ``test/test_fuzz_wire.py`` (the four nodes as processes, the simulator streaming at 1 kHz) with
SAMPLES_PER_TOPIC malformed samples (default 1200) on each of the six subscribed topics and a tenth as many
undecodable requests on each of the nine services, then prints what was sent, what the DDS writer refused (Cyclone
validates CDR before it goes on the wire, as a receiving Cyclone does), the rejections each node counted per cause,
its exit code and its resident-memory growth. Last line: the headline.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
    seed = sys.argv[2] if len(sys.argv) > 2 else "12"
    env = dict(os.environ, FLEXROBOT_FUZZ_SAMPLES=str(samples), FLEXROBOT_FUZZ_REQUESTS=str(max(20, samples // 10)),
               FLEXROBOT_FUZZ_SEED=seed)
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                          "test/test_fuzz_wire.py"], cwd=REPO, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    lines = [line for line in run.stdout.splitlines() if line.startswith("FUZZ_RESULT ")]
    if run.returncode != 0 or not lines:
        print(run.stdout[-5000:], run.stderr[-3000:])
        sys.exit(f"campaign failed (pytest exit {run.returncode})")
    result = json.loads(lines[-1].split(" ", 1)[1])
    sent = result["sent"]
    on_wire = sum(v for k, v in sent.items() if not k.startswith("refused"))
    refused = sum(v for k, v in sent.items() if k.startswith("refused"))
    print(f"seed {seed}, {samples} samples per topic, {env['FLEXROBOT_FUZZ_REQUESTS']} requests per service, "
          f"{elapsed:.1f} s")
    for kind, count in sorted(sent.items()):
        print(f"  {kind:<45} {count:>7}")
    for node, errors in result["rejections"].items():
        print(f"{node}: exit {result['exit codes'][node]}, RSS growth {result['rss_growth_mb'][node]} MB")
        for cause, count in sorted(errors.items()):
            print(f"  {cause:<60} {count:>7}")
    crashes = sum(code != 0 for code in result["exit codes"].values())
    growth = max(result["rss_growth_mb"].values())
    print(f"fuzz_wire: {on_wire + refused} malformed samples/requests ({on_wire} on the wire, {refused} refused by "
          f"Cyclone's CDR check), {crashes} crashes, valid traffic continued, largest memory growth {growth} MB")


if __name__ == "__main__":
    main()
