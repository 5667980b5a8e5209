"""Cluster membership on NATS itself: a JetStream key-value bucket with TTL heartbeats.

Each node puts its entry (key ``<system>.<host>``) every ``heartbeat_interval`` seconds
into one bucket (``dovecote_members`` unless configured) whose entries expire, so the
entry of a node that stopped beating ages out. Every node watches its own system's keys:
a new key is a ``MemberUp``; a deleted key (a node that left) or a key with no heartbeat
for ``down_after`` seconds (a node that was killed or cut off) is a ``MemberDown``.
Systems share the bucket without seeing each other, and nothing is left behind per
system but keys that expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from dovecote.observability import get_logger

if TYPE_CHECKING:
    from nats.js.kv import KeyValue

    from dovecote.actors import ActorSystem
    from dovecote.remote._config import NatsRemote

__all__ = ["BUCKET", "Cluster", "Member", "MemberDown", "MemberStatus", "MemberUp", "system_key"]

_log = get_logger("dovecote.remote.cluster")
MemberStatus = Literal["up", "down"]
UP: Final = "up"
DOWN: Final = "down"
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
#: the default membership bucket, shared by every system on the NATS account
BUCKET: Final = "dovecote_members"
#: how long an entry outlives its last heartbeat in the bucket (joiners also skip
#: entries older than their own ``down_after``)
ENTRY_TTL: Final = 60.0


@attrs.frozen(slots=True)
class Member:
    """One node of the cluster: its host, its node address, and whether it is up."""

    host: str
    address: str
    status: MemberStatus = UP


@attrs.frozen(slots=True)
class MemberUp:
    """Event: a node joined the cluster (published on the event stream)."""

    member: Member


@attrs.frozen(slots=True)
class MemberDown:
    """Event: a node left, or has not been heard from for ``down_after`` seconds."""

    member: Member


def system_key(system: str) -> str:
    """The first key token of a system's entries (KV keys allow ``[-/_=.A-Za-z0-9]``;
    anything else, the dot included, becomes ``=XX``)."""
    return _KEY_UNSAFE.sub(lambda m: "".join(f"={b:02X}" for b in m.group().encode()), system)


@attrs.define(slots=True)
class _Peer:
    member: Member
    incarnation: str
    prefix: str
    last_seen: float


class Cluster:
    """The membership view of one node: ``members`` (this node included), kept live.

    ``on_down(prefix)`` is called once for each node declared down (its subject prefix).
    """

    def __init__(
        self,
        system: ActorSystem,
        config: NatsRemote,
        prefix: str,
        incarnation: str,
        on_down: Callable[[str], None],
    ) -> None:
        self._system = system
        self._config = config
        self._prefix = prefix
        self._incarnation = incarnation
        self._on_down = on_down
        self._self = Member(system.host, f"nats://{system.name}@{system.host}")
        self._peers: dict[str, _Peer] = {}
        self._kv: KeyValue | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        self.bucket = config.bucket or BUCKET
        self._keys = system_key(system.name) + "."

    @property
    def self_member(self) -> Member:
        """This node."""
        return self._self

    @property
    def members(self) -> tuple[Member, ...]:
        """The nodes that are up, this one included, ordered by host."""
        found = [self._self] if not self._closed else []
        found.extend(peer.member for peer in self._peers.values())
        return tuple(sorted(found, key=lambda m: m.host))

    def is_up(self, prefix: str) -> bool:
        """True while the node with this subject prefix is a member (this node included)."""
        return prefix == self._prefix or any(p.prefix == prefix for p in self._peers.values())

    # -- joining and leaving --------------------------------------------------------------------
    async def join(self, js: object) -> None:
        """Create or open the bucket, put this node's entry, start beating and watching."""
        from nats.js.errors import BucketNotFoundError

        try:
            kv = await js.key_value(self.bucket)  # type: ignore[attr-defined]
        except BucketNotFoundError:
            ttl = max(ENTRY_TTL, 2 * self._config.down_after)
            kv = await js.create_key_value(  # type: ignore[attr-defined]
                bucket=self.bucket, ttl=ttl, history=1
            )
        self._kv = kv
        await self._beat()
        watcher = await kv.watch(self._keys + ">")
        while (entry := await watcher.updates(timeout=10.0)) is not None:
            self._handle(entry)  # the members already there: known when join() returns
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._watch(watcher), name="dovecote-cluster-watch"),
            loop.create_task(self._heartbeats(), name="dovecote-cluster-heartbeat"),
        ]
        self._watcher = watcher

    async def leave(self) -> None:
        """Delete this node's entry (the others see MemberDown at once) and stop."""
        if self._closed:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._kv is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
            try:
                await self._kv.delete(self._key(self._system.host))
            except Exception as error:  # disconnected: the entry ages out instead
                _log.warning("could not remove this node from the cluster", error=str(error))

    # -- the two loops ----------------------------------------------------------------------------
    def _key(self, host: str) -> str:
        return self._keys + host  # hosts match [A-Za-z0-9.-]: valid KV key tokens as they are

    def _entry(self) -> bytes:
        return json.dumps(
            {
                "address": self._self.address,
                "incarnation": self._incarnation,
                "prefix": self._prefix,
            }
        ).encode()

    async def _beat(self) -> None:
        assert self._kv is not None
        await self._kv.put(self._key(self._system.host), self._entry())

    async def _heartbeats(self) -> None:
        interval = self._config.heartbeat_interval
        while True:
            await asyncio.sleep(interval)
            try:
                await self._beat()
            except Exception as error:  # reconnecting: the next beat may make it
                _log.debug("heartbeat failed", error=str(error))
            self._sweep()

    def _sweep(self) -> None:
        deadline = asyncio.get_running_loop().time() - self._config.down_after
        for host, peer in list(self._peers.items()):
            if peer.last_seen < deadline:
                self._down(host, "no heartbeat")

    async def _watch(self, watcher: object) -> None:
        async for entry in watcher:  # type: ignore[attr-defined]
            if entry is not None:
                self._handle(entry)

    def _handle(self, entry: Any) -> None:
        if entry.key == self._key(self._system.host):
            return
        try:
            self._update(entry.key[len(self._keys) :], entry)
        except Exception:
            _log.exception("bad membership entry", key=entry.key)

    def _update(self, key: str, entry: object) -> None:
        """An entry of host ``key`` arrived: a heartbeat, a join, or a leave."""
        if entry.operation in ("DEL", "PURGE"):  # type: ignore[attr-defined]
            self._down(key, "left")
            return
        data = json.loads(entry.value)  # type: ignore[attr-defined]
        loop_now = asyncio.get_running_loop().time()
        created = entry.created  # type: ignore[attr-defined]
        age = 0.0
        if isinstance(created, dt.datetime):
            age = (dt.datetime.now(dt.UTC) - created).total_seconds()
        seen = loop_now - min(max(age, 0.0), self._config.down_after)
        if age >= self._config.down_after:
            return  # an entry of a dead node that has not aged out yet
        if not data.get("prefix"):
            raise ValueError("entry without a subject prefix")
        peer = self._peers.get(key)
        if peer is not None and peer.incarnation != data["incarnation"]:
            self._down(key, "restarted")
            peer = None
        if peer is None:
            member = Member(key, str(data["address"]))
            self._peers[key] = _Peer(member, str(data["incarnation"]), str(data["prefix"]), seen)
            _log.info("member up", host=key)
            self._system.event_stream.publish(MemberUp(member))
        else:
            peer.last_seen = max(peer.last_seen, seen)

    def _down(self, host: str, why: str) -> None:
        peer = self._peers.pop(host, None)
        if peer is None:
            return
        _log.info("member down", host=host, reason=why)
        self._on_down(peer.prefix)
        self._system.event_stream.publish(MemberDown(attrs.evolve(peer.member, status=DOWN)))
