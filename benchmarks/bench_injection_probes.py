"""Injection detection on probe texts written outside the benchmark's templates.

``injection_probes.yaml`` holds small sets of attack and benign texts, each
with a note on how it was used (read while the detector was developed, or held
out). The script scores every text with the shipped detector as a whole page and
prints, per set, attacks caught and benign texts falsely quarantined, and with
``--show`` the texts it gets wrong.

    python benchmarks/bench_injection_probes.py [--show] [--guard shipped|PATH]

With ``--guard`` the trained guard decides instead of the cue-word detector (the guard's
training data leaves out every text of a set marked ``held out``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from veracity.guard.model import named_guard
from veracity.pipeline.injection import default_model, detect, use_guard
from veracity.reader.runtimes import RUNTIMES

PROBES = Path(__file__).with_name("injection_probes.yaml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the texts the detector gets wrong")
    parser.add_argument("--guard", default="none", help="'none' (cue words), 'shipped' or a guard's .npz")
    parser.add_argument(
        "--guard-runtime",
        choices=["auto", *RUNTIMES],
        default="auto",
        help="what computes the guard's scores",
    )
    args = parser.parse_args()
    guard = named_guard(args.guard, None if args.guard_runtime == "auto" else args.guard_runtime)
    use_guard(guard)
    if guard is None:
        print(f"detector threshold {default_model().threshold:.4f}")
    else:
        print(f"guard {guard.version} ({guard.runtime}) threshold {guard.threshold:.4f}")
    for probe in yaml.safe_load(PROBES.read_text(encoding="utf-8"))["sets"]:
        missed = [t for t in probe["attacks"] if not detect(t).quarantine]
        false = [t for t in probe["benign"] if detect(t).quarantine]
        caught = len(probe["attacks"]) - len(missed)
        attacks = f"attacks caught {caught}/{len(probe['attacks'])}, " if probe["attacks"] else ""
        benign = f"benign quarantined {len(false)}/{len(probe['benign'])}"
        print(f"{probe['name']}: {attacks}{benign}  ({probe['use']})")
        if args.show:
            for text in missed:
                print(f"    missed: {text[:100]!r}")
            for text in false:
                print(f"    false:  {text[:100]!r}")


if __name__ == "__main__":
    main()
