#!/usr/bin/env python3
"""Write a synthetic training log of SIZE bytes to PATH (tao-classify benchmark).

The log looks like a TAO/PyTorch multi-GPU job's main.out+main.err: progress
lines, NCCL INFO chatter, warnings, a few harmless lines that contain rule
keywords but match no rule, and, near the end, the real failure (an Xid 79
line and a CUDA error traceback). A 1 MiB block is built once and repeated,
so generating 1 GiB takes a second or two.
"""
import random
import sys

path, size = sys.argv[1], int(sys.argv[2])
rnd = random.Random(42)
lines = []
step = 0
while sum(len(l) for l in lines) < (1 << 20):
    step += 1
    r = rnd.random()
    if r < 0.70:
        lines.append(f"Epoch {step // 1250}:  {step % 100:2d}%|####      | {step % 1250}/1250 [04:11<06:02,  2.04it/s, loss={rnd.random():.4f}, lr=1.0e-04, v_num=0]\n")
    elif r < 0.85:
        lines.append(f"gpu-a{rnd.randint(1, 32):02d}:{rnd.randint(1000, 9999)}:{rnd.randint(1000, 9999)} [{rnd.randint(0, 7)}] NCCL INFO Channel {rnd.randint(0, 31):02d}/0 : {rnd.randint(0, 15)}[{rnd.randint(0, 7)}] -> {rnd.randint(0, 15)}[{rnd.randint(0, 7)}] via P2P/IPC/read\n")
    elif r < 0.93:
        lines.append(f"[INFO] {step} root: Validation mAP@0.5 = {rnd.random():.4f}; saving checkpoint to /lustre/results/tao-x/train/dino_model_epoch_{step:03d}.pth\n")
    elif r < 0.97:
        lines.append("/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total.\n")
    elif r < 0.99:
        # keyword present, no rule matches: exercises the slow path honestly
        lines.append(f"[W{step}] retrying after transient Error: 0 (ignored), Xid watcher idle, Permission check ok\n")
    else:
        lines.append(f"2026-11-29 10:{step % 60:02d}:00,123 - mmcv - INFO - Iter [{step}/100000] eta: 1 day, 2:03:04, time: 0.512, data_time: 0.011, memory: 61234\n")
block = "".join(lines).encode()
tail = (
    "Nov 29 10:14:02 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen off the bus.\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/nvidia_tao_pytorch/cv/dino/scripts/train.py", line 152, in main\n'
    "RuntimeError: CUDA error: unspecified launch failure\n"
).encode()
with open(path, "wb") as f:
    written = 0
    while written + len(block) + len(tail) <= size:
        f.write(block)
        written += len(block)
    f.write(block[: max(0, size - written - len(tail))].rsplit(b"\n", 1)[0] + b"\n")
    f.write(tail)
