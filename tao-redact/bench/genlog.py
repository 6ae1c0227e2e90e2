#!/usr/bin/env python3
"""Generate a synthetic training log for the tao-redact benchmark.

Usage: genlog.py SIZE_MIB OUT [--one-line]

Mostly ordinary log lines of a TAO / PyTorch / NCCL / Slurm job, with a
fake secret of the real format on about one line in 2,000 and words such
as "token" and "key" in ordinary lines (so the keyword prefilter has work
to do). A block of distinct lines is made once and repeated to SIZE_MIB.
With --one-line, newlines are replaced by spaces: one line of SIZE_MIB.
All secrets are fake (they say FAKE).
"""
import random
import sys

def main():
    size = int(sys.argv[1]) << 20
    out = sys.argv[2]
    one_line = "--one-line" in sys.argv[3:]
    rnd = random.Random(20261129)
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    hexd = "0123456789abcdef"
    def r(n, a=alnum):
        return "".join(rnd.choice(a) for _ in range(n))
    secrets = [
        lambda: "export HF_TOKEN=hf_FAKE" + r(30, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
        lambda: "ngc login failed for nvapi-FAKE" + r(60),
        lambda: "export AWS_ACCESS_KEY_ID=AKIAFAKE" + r(12, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        lambda: "git clone https://ghp_FAKE" + r(32) + "@github.com/org/repo.git",
        lambda: "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0." + r(43),
        lambda: "pip index https://user:FAKEpw" + r(8) + "@pypi.internal/simple",
        lambda: "  password: FAKE" + r(12),
        lambda: "WANDB_API_KEY=" + r(40, hexd),
        lambda: "OPENAI_API_KEY=sk-proj-FAKE" + r(60),
    ]
    def ordinary(i):
        k = rnd.randrange(14)
        ts = "2026-11-29 %02d:%02d:%02d,%03d" % (rnd.randrange(24), rnd.randrange(60), rnd.randrange(60), rnd.randrange(1000))
        if k == 0:
            return "%s - INFO - Epoch %d/%d: loss=%.4f lr=%.2e grad_norm=%.3f" % (ts, rnd.randrange(100), 100, rnd.random(), rnd.random() / 1000, rnd.random() * 3)
        if k == 1:
            return "n%d:%d:%d [%d] NCCL INFO Channel %02d/08 :    0[3b000] -> 1[5e000] via P2P/IPC/read" % (rnd.randrange(2) + 1, rnd.randrange(99999), rnd.randrange(99999), rnd.randrange(8), rnd.randrange(8))
        if k == 2:
            return "Train [%d/%d] %3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %.2fit/s]" % (rnd.randrange(10), 10, rnd.randrange(100), "#" * rnd.randrange(40), rnd.randrange(5000), 5000, rnd.randrange(60), rnd.randrange(60), rnd.randrange(60), rnd.randrange(60), rnd.random() * 10)
        if k == 3:
            return "%s - INFO - throughput: %d tokens/s, %d samples/s, mem %.1f GiB" % (ts, rnd.randrange(100000), rnd.randrange(5000), rnd.random() * 80)
        if k == 4:
            return "[rank%d]: Loading weights from /lustre/fs1/results/tao-%s/checkpoints/epoch_%03d.pth sha256=%s" % (rnd.randrange(8), r(6).lower(), rnd.randrange(100), r(64, hexd))
        if k == 5:
            return "%s - WARNING - KeyError ignored for optional key 'model.head.%d.bias'" % (ts, rnd.randrange(12))
        if k == 6:
            return "srun: job %d step %d.%d: launching tasks on nodes n[1-2] (cpu_bind=none)" % (rnd.randrange(10**6), rnd.randrange(10**6), rnd.randrange(10))
        if k == 7:
            return "  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line %d, in _call_impl" % rnd.randrange(2000)
        if k == 8:
            return "NVRM: Xid (PCI:0000:%02x:00): %d, pid=%d, name=python, Ch %08x" % (rnd.randrange(256), rnd.choice([13, 31, 43, 48, 79]), rnd.randrange(99999), rnd.randrange(2**32))
        if k == 9:
            return "%s - INFO - validation mAP=%.4f recall=%.4f precision=%.4f images=%d" % (ts, rnd.random(), rnd.random(), rnd.random(), rnd.randrange(10000))
        if k == 10:
            return "pulling nvcr.io/nvidia/tao/tao-toolkit@sha256:%s (layer %s)" % (r(64, hexd), r(12, hexd))
        if k == 11:
            return "%s - DEBUG - tokenizer vocab=%d max_tokens=%d pad_token=%d" % (ts, rnd.randrange(50000), rnd.randrange(8192), rnd.randrange(10))
        if k == 12:
            return "%s - INFO - run_id=%s-%s-%s-%s-%s status=RUNNING" % (ts, r(8, hexd), r(4, hexd), r(4, hexd), r(4, hexd), r(12, hexd))
        return "%s - INFO - step %d: time/iter=%.3fs data=%.3fs eta %dh%02dm" % (ts, rnd.randrange(100000), rnd.random(), rnd.random() / 10, rnd.randrange(10), rnd.randrange(60))
    lines = []
    total = 0
    block_target = 8 << 20
    i = 0
    while total < block_target:
        line = rnd.choice(secrets)() if rnd.randrange(2000) == 0 else ordinary(i)
        lines.append(line)
        total += len(line) + 1
        i += 1
    sep = " " if one_line else "\n"
    block = (sep.join(lines) + sep).encode()
    with open(out, "wb") as f:
        written = 0
        while written < size:
            chunk = block[: size - written]
            f.write(chunk)
            written += len(chunk)
        if one_line:
            f.write(b"\n")

if __name__ == "__main__":
    main()
