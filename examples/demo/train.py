#!/usr/bin/env python3
"""Demo training job for tao-slurm: a small real program, not `sleep`.

Fits y = a*x + b by stochastic gradient descent on generated data, logs
progress per step to stdout, and appends status lines to
<results_dir>/status.json the way TAO's status logger does (rank 0 only;
nvidia_tao_pytorch/core/loggers/api_logging.py and the epoch callback
TAOStatusLogger in core/callbacks/loggers.py): one JSON object a line with
date, time, status, verbosity, message, the sticky `kpi` object, and per
finished epoch `epoch`, `max_epoch`, `time_per_epoch` and `eta` (Python
str(timedelta) text). tao-poll reads them into `progress`; the last SUCCESS
or FAILURE decides the job's verdict.

Usage: train.py -e SPEC.yaml -r RESULTS_DIR [--fail-at-epoch N]
Exit status: 0 on success, 1 when the loss diverges or --fail-at-epoch hits.
"""
import argparse
import datetime
import json
import os
import random
import sys
import time

import yaml


def status(results_dir, state, message, kpi=None, data=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    rec = dict(data or {})
    rec.update({
        "date": now.strftime("%-m/%-d/%Y"),
        "time": now.strftime("%-H:%M:%S"),
        "status": state,
        "verbosity": "INFO",
        "message": message,
    })
    if kpi:
        rec["kpi"] = kpi
    with open(os.path.join(results_dir, "status.json"), "a", encoding="utf-8") as f:
        f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-e", "--experiment-spec", required=True)
    ap.add_argument("-r", "--results-dir", default=os.environ.get("RESULTS_DIR"))
    ap.add_argument("--fail-at-epoch", type=int, default=None)
    args = ap.parse_args()
    if not args.results_dir:
        sys.exit("train.py: error: no results dir: pass -r or set RESULTS_DIR")
    os.makedirs(args.results_dir, exist_ok=True)
    with open(args.experiment_spec, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    tr, ds = spec["train"], spec["dataset"]
    rng = random.Random(tr.get("seed", 0))
    data = []
    for _ in range(ds["num_samples"]):
        x = rng.uniform(-1.0, 1.0)
        y = ds["true_slope"] * x + ds["true_intercept"] + rng.gauss(0.0, ds["noise"])
        data.append((x, y))
    a, b, lr = 0.0, 0.0, tr["learning_rate"]
    status(args.results_dir, "STARTED", "Starting training")
    print(f"training on {len(data)} samples, {tr['num_epochs']} epochs", flush=True)
    max_epoch = tr["num_epochs"]
    for epoch in range(1, max_epoch + 1):
        started = time.time()
        if args.fail_at_epoch == epoch:
            status(args.results_dir, "FAILURE", f"Failed at epoch {epoch} (requested)")
            raise RuntimeError(f"requested failure at epoch {epoch}")
        loss = 0.0
        for step in range(1, tr["steps_per_epoch"] + 1):
            batch = rng.sample(data, 16)
            ga = gb = loss = 0.0
            for x, y in batch:
                err = a * x + b - y
                ga += 2 * err * x / len(batch)
                gb += 2 * err / len(batch)
                loss += err * err / len(batch)
            a -= lr * ga
            b -= lr * gb
            print(f"epoch {epoch} step {step} loss {loss:.5f}", flush=True)
            time.sleep(tr.get("step_seconds", 0.0))
        if loss != loss or loss > 1e6:
            status(args.results_dir, "FAILURE", "Loss diverged")
            return 1
        mae = sum(abs(a * x + b - y) for x, y in data) / len(data)
        per_epoch = time.time() - started
        status(args.results_dir, "RUNNING", "Training loop in progress",
               kpi={"loss": round(loss, 6), "mae": round(mae, 6)},
               data={"epoch": epoch, "max_epoch": max_epoch,
                     "time_per_epoch": str(datetime.timedelta(seconds=per_epoch)),
                     "eta": str(datetime.timedelta(seconds=per_epoch * (max_epoch - epoch)))})
    with open(os.path.join(args.results_dir, "model.json"), "w", encoding="utf-8") as f:
        json.dump({"slope": a, "intercept": b}, f)
    status(args.results_dir, "SUCCESS", "Training finished",
           kpi={"loss": round(loss, 6), "mae": round(mae, 6),
                "slope": round(a, 4), "intercept": round(b, 4)})
    print(f"done: slope {a:.3f} intercept {b:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
