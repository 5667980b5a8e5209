"""NatsTransport: one NATS connection and one wildcard subscription per node.

Sending: ``tell`` encodes in the caller's frame and the outbox publishes at the end of
the iteration; every publish goes through ``NatsIO`` (see _nats_io: straight to the
socket when it can, never a task, flush or await per message). ``ask`` publishes with a
reply subject under this node's own prefix (``<node>._r.<token>``): every answer
arrives on the node's one subscription and is matched to its future by token; its
deadline is kept by the system's AskTimeouts, like a local ask's.

Receiving: the socket's bytes are parsed in the iteration they arrive (``InlineReader``,
see _nats_reader); the node subscription (served from nats-py's parser by ``NatsIO``)
hands each message to the actor its subject names, in arrival order (NATS keeps one
connection's messages in order), so tells and asks from one node to one actor share one
lane.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from dovecote._errors import (
    ActorNotFoundError,
    AskTimeoutError,
)
from dovecote.actors import ActorRef, ActorStopped
from dovecote.addressing import MailAddress
from dovecote.observability import get_logger
from dovecote.remote import _wire as w
from dovecote.remote._body import encode_body
from dovecote.remote._errors import (
    MessageTooLargeError,
    NodeAlreadyJoinedError,
    RemoteUnavailableError,
)
from dovecote.remote._inbound import Inbound
from dovecote.remote._membership import Cluster
from dovecote.remote._nats_io import NatsIO
from dovecote.remote._nats_reader import InlineReader
from dovecote.remote._outbox import Outbox
from dovecote.remote._ref import RemoteRef, RemoteTarget
from dovecote.remote._replies import settle
from dovecote.remote._subjects import node_prefix, subject_of_path
from dovecote.remote._watch import Watches

if TYPE_CHECKING:
    from nats.aio.client import Client

    from dovecote.actors import ActorSystem
    from dovecote.remote._config import NatsRemote

__all__ = ["NatsTransport", "RemoteDeadLetterReason"]

_log = get_logger("dovecote.remote")
_NO_RESPONDERS = "503"
_SWEEP_MIN = 256  # pending asks kept before the finished (timed-out) ones are swept


class RemoteDeadLetterReason:
    """The dead-letter reasons of remote messaging."""

    REMOTE_UNAVAILABLE = "remote-unavailable"
    """Told while this node was not connected to NATS."""
    UNDECODABLE = "undecodable"
    """Arrived from the wire but did not decode (bad frame, unknown type)."""
    UNKNOWN_RECIPIENT = "unknown-recipient"
    """Arrived for a path (or system) this node does not host."""


class NatsTransport:
    """The remote transport of one actor system (made by ``NatsRemote.open_transport``)."""

    scheme = "nats"

    def __init__(self, system: ActorSystem, config: NatsRemote) -> None:
        self._system = system
        self._config = config
        self.loop = system._loop
        self.loop_thread = threading.get_ident()
        self.prefix = node_prefix(system.name, system.host)
        self._reply_prefix = self.prefix + "._r."
        self._control = self.prefix + "._c"
        self._nc: Client | None = None
        self._io: NatsIO | None = None
        self._reader: InlineReader | None = None
        self._connected = False
        self._started = False
        self._closing = False
        self._max_payload = 1_048_576
        self._tokens = itertools.count(1)
        self._sweep_at = _SWEEP_MIN
        self._pending: dict[str, tuple[asyncio.Future[Any], asyncio.TimerHandle | None]] = {}
        self._targets: weakref.WeakValueDictionary[str, RemoteTarget] = (
            weakref.WeakValueDictionary()
        )
        self.watches = Watches(self)
        self._outbox = Outbox(self.loop, self.publish)
        self._inbound = Inbound(self)
        self._waiters: list[asyncio.Future[None]] = []
        self._cluster = Cluster(
            system, config, self.prefix, uuid.uuid4().hex, self.watches.node_down
        )

    @property
    def connected(self) -> bool:
        """True while this node is connected to NATS (False while reconnecting)."""
        return self._connected

    async def wait_connected(self, connected: bool = True) -> None:
        """Return once :attr:`connected` equals ``connected``."""
        while self._connected != connected:
            waiter = self.loop.create_future()
            self._waiters.append(waiter)
            await waiter

    def _set_connected(self, connected: bool) -> None:
        self._connected = connected
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    @property
    def system(self) -> ActorSystem:
        """The actor system this transport links."""
        return self._system

    def target(self, address: str) -> RemoteTarget | None:
        """The stand-in for a remote address, if this node holds one."""
        return self._targets.get(address)

    @property
    def cluster(self) -> Cluster:
        """This node's view of the cluster."""
        return self._cluster

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, check that the host is free, subscribe, join the cluster."""
        if self._started:
            return
        self._started = True
        import nats
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeoutError

        nc = await nats.connect(
            **self._config.connect_kwargs(),
            disconnected_cb=self._disconnected,
            reconnected_cb=self._reconnected,
            error_cb=self._error,
        )
        self._nc = nc
        self._io = NatsIO(self.loop, nc)
        self._reader = InlineReader(self.loop, nc)
        try:
            try:  # is another live node already serving this prefix?
                await nc.request(self._control, w.encode_frame(w.PING), timeout=0.5)
            except (NoRespondersError, NatsTimeoutError):
                pass
            else:
                raise NodeAlreadyJoinedError(
                    f"a live node already serves {self._system.name}@{self._system.host}: "
                    "give every node its own host"
                )
            self._max_payload = nc.max_payload
            self._outbox.set_limit(nc.max_payload)
            subscription = await nc.subscribe(
                self.prefix + ".>",
                cb=self._inbound.on_message,
                pending_msgs_limit=-1,
                pending_bytes_limit=-1,
            )
            self._io.deliver(subscription._id, self._inbound.on_raw)
            await nc.flush()
            self._reader.install()
            self._connected = True
            self._system.event_stream.subscribe(self.watches.actor_stopped, ActorStopped)
            await self._cluster.join(nc.jetstream())
        except BaseException:
            self._connected = False
            await nc.close()
            raise

    async def close(self, timeout: float = 5.0) -> None:
        """Leave the cluster, fail pending asks, deliver what is buffered, disconnect;
        gives up (logging a warning) after ``timeout`` seconds so shutdown stays bounded."""
        if self._closing or self._nc is None:
            return
        self._closing = True
        self._outbox.flush_all()
        for token in list(self._pending):
            self._fail(token, RemoteUnavailableError("the node shut down before the answer"))
        try:
            await asyncio.wait_for(self._leave_and_disconnect(self._nc), timeout)
        except TimeoutError:
            _log.warning("NATS did not close in time; dropping the connection", node=self.prefix)
        finally:
            self._set_connected(False)

    async def _leave_and_disconnect(self, nc: Client) -> None:
        await self._cluster.leave()
        try:
            await nc.flush(timeout=2)
        except Exception as error:
            _log.warning("could not flush before closing", error=str(error))
        self._connected = False
        await nc.close()

    async def _disconnected(self) -> None:
        self._set_connected(False)
        if self._closing:
            return
        _log.warning("disconnected from NATS; reconnecting", node=self.prefix)
        for token in list(self._pending):
            self._fail(token, RemoteUnavailableError("NATS connection lost before the answer"))

    async def _reconnected(self) -> None:
        self._set_connected(not self._closing)
        if self._reader is not None:
            self._reader.install()  # the new connection's reader
        _log.warning("reconnected to NATS", node=self.prefix)

    async def _error(self, error: Exception) -> None:
        _log.warning("NATS error", error=repr(error))

    # -- refs ----------------------------------------------------------------------------------
    def resolve(self, address: str) -> RemoteRef:
        """The ref for another node's actor address (no round trip)."""
        target = self._targets.get(address)
        if target is None or target._terminated:
            parsed = MailAddress.parse(address)
            if parsed.scheme != self.scheme or not parsed.path.startswith("/user/"):
                raise ActorNotFoundError(f"{address!r} is not an actor address of a nats node")
            prefix = node_prefix(parsed.user, parsed.host)
            path: str = parsed.path
            text = str(parsed)
            target = self._targets.get(text)
            if target is None or target._terminated:
                target = RemoteTarget(self, text, prefix, subject_of_path(prefix, path), path)
                target._ref = RemoteRef(target)
                self._targets[text] = target
            if text != address:
                self._targets[address] = target
        return target._ref  # type: ignore[return-value]

    # -- sending -------------------------------------------------------------------------------
    @property
    def io(self) -> NatsIO | None:
        """How this node reads and writes its NATS connection (None before start)."""
        return self._io

    @property
    def reader(self) -> InlineReader | None:
        """How this node's socket is read (None before start)."""
        return self._reader

    def publish(self, subject: str, payload: bytes, reply: str = "") -> None:
        """Publish one NATS message now, without awaiting; MessageTooLargeError if it is
        over the server's max payload."""
        io = self._io
        assert io is not None
        if len(payload) > self._max_payload:
            raise MessageTooLargeError(
                f"{len(payload)} bytes is over the NATS server's max_payload "
                f"({self._max_payload} bytes)"
            )
        io.publish(subject, payload, reply)

    def send_tell(self, target: RemoteTarget, message: Any, sender: ActorRef | None) -> None:
        """``RemoteRef.tell`` on the loop thread: checked and encoded now, published with
        the other tells to the same node at the end of this loop iteration (see _outbox)."""
        body = encode_body(message)
        origin = sender.address if sender is not None else None
        if (
            len(body) + len(target.subject) + 64 + (len(origin) if origin else 0)
            > self._max_payload
        ):
            raise MessageTooLargeError(
                f"{len(body)} bytes is over the NATS server's max_payload "
                f"({self._max_payload} bytes)"
            )
        if not self._connected:
            self._system._dead_letter(
                message, sender, target._ref, RemoteDeadLetterReason.REMOTE_UNAVAILABLE
            )
            return
        self._outbox.add(target.node, target.subject, target.path, origin, body)

    def send_stop(self, target: RemoteTarget, now: bool = False) -> None:
        """``stop()`` (graceful, in lane order) or ``context.stop`` (now) of a remote actor."""
        if self._connected:
            self._outbox.flush(target.node)  # behind the tells sent before it
            self.publish(target.subject, w.encode_frame(w.STOP_NOW if now else w.STOP))

    def send_ask(self, target: RemoteTarget, message: Any, timeout: float) -> asyncio.Future[Any]:
        """``RemoteRef.ask``: publish now, answer through the node's reply inbox."""
        if threading.get_ident() != self.loop_thread:
            return asyncio.run_coroutine_threadsafe(
                self._ask_async(target, message, timeout), self.loop
            )  # type: ignore[return-value]
        payload = w.encode_frame(w.ASK, encode_body(message))
        future: asyncio.Future[Any] = self.loop.create_future()
        if not self._connected:
            future.set_exception(
                RemoteUnavailableError(f"not connected to NATS; ask to {target.address} not sent")
            )
            return future
        self._outbox.flush(target.node)  # behind the tells sent before it
        self._send_request(target.subject, payload, future)
        if timeout != math.inf:  # expired like a local ask (no timer per ask)
            self._system._ask_timeouts.track(future, target._ref, message, timeout)
        return future

    async def _ask_async(self, target: RemoteTarget, message: Any, timeout: float) -> Any:
        return await self.send_ask(target, message, timeout)

    def request(
        self, subject: str, payload: bytes, future: asyncio.Future[Any], timeout: float, what: str
    ) -> None:
        """Publish a request whose answer (on this node's reply inbox) settles ``future``,
        or AskTimeoutError after ``timeout`` seconds."""
        token = self._send_request(subject, payload, future)
        if timeout != math.inf:
            timer = self.loop.call_later(timeout, self._timed_out, token, what, timeout)
            self._pending[token] = (future, timer)

    def _send_request(self, subject: str, payload: bytes, future: asyncio.Future[Any]) -> str:
        token = str(next(self._tokens))
        self.publish(subject, payload, reply=self._reply_prefix + token)
        pending = self._pending
        pending[token] = (future, None)
        if len(pending) > self._sweep_at:  # asks that timed out and were never answered
            self._pending = {t: e for t, e in pending.items() if not e[0].done()}
            self._sweep_at = max(_SWEEP_MIN, 2 * len(self._pending))
        return token

    def _timed_out(self, token: str, what: str, timeout: float) -> None:
        self._fail(token, AskTimeoutError(f"{what} did not answer within {timeout} s"))

    def _fail(self, token: str, error: BaseException) -> None:
        entry = self._pending.pop(token, None)
        if entry is not None:
            future, timer = entry
            if timer is not None:
                timer.cancel()
            if not future.done():
                future.set_exception(error)

    # -- receiving -----------------------------------------------------------------------------
    def answer_now(self, reply: str, *items: Any) -> None:
        """Publish the answer frame ``items`` to the asker's ``reply`` subject, behind the
        tells this node has queued for the asker's node."""
        if self._connected:
            if self._outbox.holds_any():
                self._outbox.flush(reply.rpartition("._r.")[0])
            self.publish(reply, w.encode_frame(*items))

    def on_reply(self, token: str, data: bytes, headers: dict[str, str] | None) -> None:
        """An answer arrived on this node's reply inbox: settle the ask ``token`` names."""
        entry = self._pending.pop(token, None)
        if entry is None:
            return  # the ask timed out already; its answer is late
        future, timer = entry
        if timer is not None:
            timer.cancel()
        if not future.done():
            no_responders = headers is not None and headers.get("Status") == _NO_RESPONDERS
            settle(future, data, no_responders, self._system)
