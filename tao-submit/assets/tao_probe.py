#!/usr/bin/env python3
"""tao-slurm communication probe: one all-reduce across every process of the
allocation, run before a multi-node (or multi-GPU) job so that a job that
would hang in its first collective never holds its GPUs.

With torch installed it runs under torchrun (one launcher per node, the
container spawns the GPU processes) and uses torch.distributed: NCCL when
CUDA is available, gloo otherwise. Without torch (clusters without PyTorch
on the host, and this project's local test cluster) it performs the same
all-reduce over plain TCP sockets between one process per node, which still
proves that every node reaches MASTER_ADDR:MASTER_PORT.

Environment: MASTER_ADDR, MASTER_PORT, and either torchrun's RANK/WORLD_SIZE
or Slurm's SLURM_NODEID/SLURM_NNODES (started once per node without
torchrun, it sets RANK/WORLD_SIZE/LOCAL_RANK from them for torch).
Output: `TAO_PROBE_OK world=<n> sum=<s> backend=<b>` on success (rank 0).
Exit status: 0 success, 1 wrong sum or error, 124 when the timeout runs out.

Test double (labelled): TAO_PROBE_TEST_HANG_UNLESS=VAR makes the probe hang
as an NCCL transport hang would unless VAR is set in the environment. It
exists because no GPU or NCCL is available on the local test cluster; the
tests use it to drive the knob-retry flow. Never set it on a real cluster.
"""
import os
import socket
import struct
import sys
import time

TIMEOUT = float(os.environ.get("TAO_PROBE_TIMEOUT", "120"))


def rank_world():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ and "LOCAL_RANK" in os.environ:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    return int(os.environ.get("SLURM_NODEID", "0")), int(os.environ.get("SLURM_NNODES", "1"))


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        buf += chunk
    return buf


def socket_allreduce(rank, world, value):
    addr = os.environ["MASTER_ADDR"]
    port = int(os.environ.get("MASTER_PORT", "29500")) + 1
    deadline = time.monotonic() + TIMEOUT
    if rank == 0:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", port))
        srv.listen(world)
        srv.settimeout(TIMEOUT)
        peers, total = [], value
        while len(peers) < world - 1:
            conn, _ = srv.accept()
            conn.settimeout(max(1.0, deadline - time.monotonic()))
            total += struct.unpack("!q", recv_exact(conn, 8))[0]
            peers.append(conn)
        for conn in peers:
            conn.sendall(struct.pack("!q", total))
            conn.close()
        return total
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    conn.settimeout(max(1.0, deadline - time.monotonic()))
    conn.sendall(struct.pack("!q", value))
    return struct.unpack("!q", recv_exact(conn, 8))[0]


def main():
    hang_unless = os.environ.get("TAO_PROBE_TEST_HANG_UNLESS")
    if hang_unless and not os.environ.get(hang_unless):
        print(f"probe: simulating a transport hang ({hang_unless} not set)", flush=True)
        time.sleep(TIMEOUT + 3600)
    rank, world = rank_world()
    value = rank + 1
    try:
        import datetime
        import torch
        import torch.distributed as dist
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if "LOCAL_RANK" not in os.environ:
            # Started once per node without torchrun (tao-submit
            # --probe-launcher python3): one process per node.
            os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK="0")
        dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=TIMEOUT))
        t = torch.tensor([value], dtype=torch.int64)
        if backend == "nccl":
            t = t.cuda(int(os.environ.get("LOCAL_RANK", "0")))
        dist.all_reduce(t)
        total = int(t.item())
        dist.destroy_process_group()
    except ImportError:
        backend = "tcp"
        total = socket_allreduce(rank, world, value)
    want = world * (world + 1) // 2
    if total != want:
        print(f"TAO_PROBE_FAIL world={world} sum={total} want={want}", flush=True)
        return 1
    if rank == 0:
        print(f"TAO_PROBE_OK world={world} sum={total} backend={backend}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
