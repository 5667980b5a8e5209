"""Actor refs travel as addresses and come back as refs of the decoding system."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from dovecote import Actor, ActorRef, ActorSystem
from dovecote.codec import ActorAddress, decode, encode, register


class Echo(Actor):
    def on_receive(self, message: Any) -> Any:
        return message


@register
@dataclasses.dataclass
class Reply:
    to: ActorRef
    text: str


async def test_a_ref_encodes_as_its_address_and_decodes_to_actor_address(
    system: ActorSystem,
) -> None:
    ref = system.spawn(Echo, "echo")
    back = decode(encode({"reply_to": ref}))
    assert back == {"reply_to": ActorAddress(ref.address)}
    assert str(back["reply_to"]) == ref.address


async def test_with_a_system_addresses_become_live_refs(system: ActorSystem) -> None:
    ref = system.spawn(Echo, "echo")
    back = decode(encode([ref, Reply(ref, "hi")]), system=system)
    assert back[0] is ref or back[0] == ref
    assert isinstance(back[1].to, ActorRef)
    assert back[1].to == ref
    assert await back[1].to.ask("ping", timeout=2.0) == "ping"


async def test_typed_ref_fields_hold_the_address_without_a_system(system: ActorSystem) -> None:
    ref = system.spawn(Echo, "echo")
    assert decode(encode(Reply(ref, "x"))).to == ActorAddress(ref.address)


async def test_a_ref_to_a_gone_actor_stays_an_address(system: ActorSystem) -> None:
    ref = system.spawn(Echo, "gone")
    data = encode(ref)
    await ref.ask("sync", timeout=2.0)
    ref.stop()
    async with ActorSystem("other") as other:
        assert decode(data, system=other) == ActorAddress(ref.address)


def test_actor_address_values_encode_as_addresses() -> None:
    address = ActorAddress("mem://a@local/user/x")
    assert decode(encode(address)) == address


@register
class Envelope(msgspec.Struct, frozen=True):
    reply_to: ActorRef | None
    body: Any


async def test_optional_ref_fields_of_frozen_structs(system: ActorSystem) -> None:
    ref = system.spawn(Echo, "echo")
    assert decode(encode(Envelope(ref, 1))).reply_to == ActorAddress(ref.address)
    assert decode(encode(Envelope(ref, 1)), system=system).reply_to == ref
    assert decode(encode(Envelope(None, [ref])), system=system) == Envelope(None, [ref])


def test_the_codec_is_a_leaf() -> None:
    import ast
    import pathlib

    import dovecote.codec

    for path in pathlib.Path(dovecote.codec.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
                assert not module.startswith("dovecote.") or module.startswith(
                    ("dovecote._errors", "dovecote.codec")
                ), f"{path.name} imports {module}"


class Resolver:
    """An AddressResolver that names itself in what it resolves."""

    def __init__(self, name: str) -> None:
        self.name = name

    def resolve(self, address: str) -> tuple[str, str]:
        return (self.name, address)


class SlottedResolver:
    """A resolver that cannot be weakly referenced (the codec falls back to a context
    variable for it)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def resolve(self, address: str) -> tuple[str, str]:
        return (self.name, address)


def nested_refs(address: str) -> bytes:
    """A ref at the top, inside a registered class and a set, and in a dict with tuple keys."""
    ref = ActorAddress(address)
    return encode([ref, Envelope(None, [ref, {ref}]), {(1, 2): ref}])


def test_each_system_resolves_its_own_refs_whatever_order_they_decode_in() -> None:
    from dovecote.codec import default_codec

    data = nested_refs("mem://s@h/user/x")
    resolvers = [Resolver("a"), Resolver("b"), SlottedResolver("c"), Resolver("a2")]
    for resolver in resolvers * 3 + resolvers[::-1]:
        expected = (resolver.name, "mem://s@h/user/x")
        top, envelope, pairs = default_codec.decode(data, system=resolver)
        assert top == expected
        assert envelope == Envelope(None, [expected, {expected}])
        assert pairs == {(1, 2): expected}
    assert decode(data)[0] == ActorAddress("mem://s@h/user/x")  # and without a system


def test_the_codec_keeps_no_system_alive() -> None:
    import gc
    import weakref

    from dovecote.codec import default_codec

    resolver = Resolver("short-lived")
    gone = weakref.ref(resolver)
    assert default_codec.decode(nested_refs("mem://s@h/user/y"), system=resolver)[0] == (
        "short-lived",
        "mem://s@h/user/y",
    )
    key = id(resolver)
    del resolver
    gc.collect()
    assert gone() is None
    assert key not in default_codec._decoders


def test_threads_decoding_for_different_systems_do_not_mix_them_up() -> None:
    import threading

    data = nested_refs("mem://s@h/user/z")
    wrong: list[object] = []

    def decode_for(resolver: Resolver | SlottedResolver) -> None:
        for _ in range(2_000):
            top = decode(data, system=resolver)[0]  # type: ignore[arg-type]
            if top != (resolver.name, "mem://s@h/user/z"):
                wrong.append(top)

    threads = [
        threading.Thread(target=decode_for, args=(r,))
        for r in (Resolver("t1"), Resolver("t2"), SlottedResolver("t3"), SlottedResolver("t4"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
