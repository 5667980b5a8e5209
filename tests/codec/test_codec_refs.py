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
