"""The ``grpc-h2load`` row: gRPC ``SendMessage`` driven by ``h2load`` (nghttp2's HTTP/2 load
generator, Debian package ``nghttp2-client``) instead of a Python client.

A grpc.aio client costs about as much CPU per call as the server; on a 2-core machine it
takes the cores the server needs. ``h2load`` is C: it replays one framed request (the
5-byte gRPC prefix and the serialized ``SendMessageRequest``) on ``connections`` HTTP/2
connections with ``concurrency / connections`` streams each, so the workload is the same
(32 calls in flight, 64-byte payloads). It does not read gRPC trailers, so the row checks
afterwards that the mailbox holds exactly one message per call: a failed call cannot pass
unseen. Only ``send``: claim+commit needs the claimed id, which a replayed request lacks.
"""

from __future__ import annotations

import asyncio
import re
import resource
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ._measure import percentile

__all__ = ["available", "grpc_h2load_row"]

_CONNECTIONS = 4


def available() -> bool:
    """Whether ``h2load`` is on PATH."""
    return shutil.which("h2load") is not None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def grpc_h2load_row(
    address: str, server_cpu: Any, size: int, concurrency: int, payload: bytes
) -> dict[str, float]:
    """Send ``size`` messages over gRPC with h2load; figures as the other rows'."""
    import grpc

    from dovecote.gateway._proto import SERVICE_NAME, load

    pb, services = load()
    async with grpc.aio.insecure_channel(address) as channel:
        stub = services.PostboxServiceStub(channel)
        await stub.EnsureMailbox(
            pb.EnsureMailboxRequest(agent_id="bench", ordering_mode="unordered", capacity=10**9)
        )
        request = pb.SendMessageRequest(to_agent="bench", from_agent="s0", payload=payload)
        body = request.SerializeToString()
        streams = max(1, concurrency // _CONNECTIONS)
        with tempfile.TemporaryDirectory() as tmp:
            frame, log = Path(tmp) / "request", Path(tmp) / "log"
            frame.write_bytes(b"\0" + len(body).to_bytes(4, "big") + body)
            command = [
                "h2load", "-n", str(size), "-c", str(_CONNECTIONS), "-m", str(streams),
                "-t", "1", "-d", str(frame), f"--log-file={log}",
                "-H", "content-type: application/grpc", "-H", "te: trailers",
                f"http://{address}/{SERVICE_NAME}/SendMessage",
            ]  # fmt: skip
            cpu0, server0 = _children_cpu(), server_cpu()
            done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
            server, client = server_cpu() - server0, _children_cpu() - cpu0
            latencies = sorted(int(line.split("\t")[2]) / 1e6 for line in log.open())
        ok = re.search(r"(\d+) succeeded", done.stdout)
        stats = await stub.GetMailboxStats(pb.GetMailboxStatsRequest(agent_id="bench"))
        if done.returncode or not ok or int(ok[1]) != size or stats.stats.pending_count != size:
            raise RuntimeError(f"h2load: not every send landed:\n{done.stdout}{done.stderr}")
    took = re.search(r"finished in ([\d.]+)(m?s)", done.stdout)
    assert took is not None, done.stdout
    seconds = float(took[1]) / (1000 if took[2] == "ms" else 1)
    return {
        "ops_per_s": size / seconds,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
        "client_cpu_us": client / size * 1e6,
        "server_cpu_us": server / size * 1e6,
        "seconds": seconds,
    }
