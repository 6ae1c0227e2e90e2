#!/usr/bin/env python3
"""Demo training job for tao-slurm: a small real program, not `sleep`.

Fits y = a*x + b by stochastic gradient descent on generated data, logs
progress per step to stdout, and appends status lines to
<results_dir>/status.json the way TAO's status logger does (rank 0 only),
checked against NVIDIA's tao_pytorch_backend:

* nvidia_tao_pytorch/core/loggers/api_logging.py (BaseLogger.write): one
  JSON object a line, the record's own data first, then `date`
  (`M/D/YYYY`, local time, no zero padding), `time` (`H:M:S`, likewise),
  `status` (STARTED/RUNNING/SUCCESS/FAILURE/SKIPPED), `verbosity`,
  `message`, and the sticky `categorical`, `graphical` and `kpi` objects
  once set (every later record repeats them);
* core/callbacks/loggers.py (TAOStatusLogger): STARTED "Starting Training
  Loop.", per finished epoch a RUNNING record with `epoch` (1-based),
  `max_epoch`, `time_per_epoch` and `eta` (Python str(timedelta) text) and
  "Training loop in progress", then RUNNING "Training loop complete.";
* core/decorators/workflow.py (monitor_status): STARTED "Starting <name>
  train." first, RUNNING "Train finished successfully." when the run
  returns, FAILURE with the exception's text when it raises.

tao-poll reads them into `progress`; its verdict is the last FAILURE,
SUCCESS or "... finished successfully." record.

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


class StatusLogger:
    """TAO's StatusLogger, as far as the file it writes goes."""

    def __init__(self, results_dir):
        self.path = os.path.join(results_dir, "status.json")
        self.kpi = {}
        self.graphical = {}

    def write(self, state="RUNNING", message=None, data=None):
        rec = dict(data or {})
        now = datetime.datetime.now()
        rec["date"] = f"{now.month}/{now.day}/{now.year}"
        rec["time"] = f"{now.hour}:{now.minute}:{now.second}"
        rec["status"] = state
        rec["verbosity"] = "INFO"
        if message:
            rec["message"] = message
        if self.graphical:
            rec["graphical"] = self.graphical
        if self.kpi:
            rec["kpi"] = self.kpi
        with open(self.path, "a", encoding="utf-8") as f:
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
    log = StatusLogger(args.results_dir)
    log.write("STARTED", "Starting linear-fit train.")
    try:
        code = train(args, log)
    except Exception as e:
        log.write("FAILURE", str(e))
        raise
    if code == 0:
        log.write("RUNNING", "Train finished successfully.")
    return code


def train(args, log):
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
    log.write("STARTED", "Starting Training Loop.")
    print(f"training on {len(data)} samples, {tr['num_epochs']} epochs", flush=True)
    max_epoch = tr["num_epochs"]
    for epoch in range(1, max_epoch + 1):
        started = time.time()
        if args.fail_at_epoch == epoch:
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
            log.write("FAILURE", "Loss diverged")
            return 1
        # The model sets the sticky KPIs after its validation, then the
        # epoch callback writes the epoch record (which carries them).
        mae = sum(abs(a * x + b - y) for x, y in data) / len(data)
        log.kpi = {"loss": round(loss, 6), "mae": round(mae, 6)}
        per_epoch = time.time() - started
        log.write("RUNNING", "Training loop in progress",
                  data={"epoch": epoch, "max_epoch": max_epoch,
                        "time_per_epoch": str(datetime.timedelta(seconds=per_epoch)),
                        "eta": str(datetime.timedelta(seconds=per_epoch * (max_epoch - epoch)))})
    log.write("RUNNING", "Training loop complete.")
    with open(os.path.join(args.results_dir, "model.json"), "w", encoding="utf-8") as f:
        json.dump({"slope": a, "intercept": b}, f)
    print(f"done: slope {a:.3f} intercept {b:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
