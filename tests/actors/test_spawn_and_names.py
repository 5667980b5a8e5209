"""spawn: factories, names, paths, addresses, resolve, hierarchy and the actor's context."""

from __future__ import annotations

from typing import Any

import pytest
from actor_kit import TIMEOUT, Echo, Inbox, Recorder, until_terminated, watch

from dovecote import (
    Actor,
    ActorNotFoundError,
    ActorStoppedError,
    DovecoteError,
    InvalidActorNameError,
    OneForOneStrategy,
)


class Parent(Actor):
    """Spawns the children it is asked for and answers with their refs."""

    def __init__(self, decisions: list[BaseException] | None = None) -> None:
        super().__init__()
        self.decisions = decisions

    @property
    def supervisor_strategy(self) -> Any:
        from dovecote import default_decider

        def decider(error: BaseException) -> Any:
            if self.decisions is not None:
                self.decisions.append(error)
            return default_decider(error)

        return OneForOneStrategy(decider=decider)

    def on_receive(self, message: Any) -> Any:
        kind, *rest = message
        if kind == "spawn":
            factory, name = rest
            return self.context.spawn(factory, name)
        if kind == "children":
            return self.context.children
        if kind == "stop":
            self.context.stop(rest[0])
            return None
        return None


class Introspect(Actor):
    """Answers with what its context says about itself."""

    def on_receive(self, message: Any) -> Any:
        ctx = self.context
        return {
            "self": ctx.self,
            "self_ref": self.self_ref,
            "parent": ctx.parent,
            "children": ctx.children,
            "system": ctx.system,
        }


async def test_spawn_returns_a_live_ref_whose_name_path_and_address_describe_the_actor(system):
    ref = system.spawn(Echo, "greeter")
    assert ref.name == "greeter"
    assert ref.path == "/user/greeter"
    assert ref.address == "mem://t@local/user/greeter"
    assert ref.is_alive
    assert await ref.ask("hi", timeout=TIMEOUT) == "hi"


async def test_system_exposes_its_name_and_host(system):
    assert system.name == "t"
    assert system.host == "local"


async def test_child_paths_and_addresses_nest_under_the_parent(system):
    parent = system.spawn(Parent, "parent")
    child = await parent.ask(("spawn", Echo, "child"), timeout=TIMEOUT)
    assert child.name == "child"
    assert child.path == "/user/parent/child"
    assert child.address == "mem://t@local/user/parent/child"
    assert await child.ask("x", timeout=TIMEOUT) == "x"
    assert await parent.ask(("children",), timeout=TIMEOUT) == (child,)


@pytest.mark.parametrize(
    "name",
    ["a", "Z", "0", "a-b_c.d~e", "worker-1", "9lives", "a" * 255, "x" + "~" * 254],
)
async def test_names_matching_the_name_pattern_are_accepted(system, name):
    ref = system.spawn(Echo, name)
    assert ref.name == name
    assert ref.path == f"/user/{name}"


@pytest.mark.parametrize(
    "name",
    [
        "",
        "-a",
        "_a",
        ".a",
        "~a",
        "$a",
        "a/b",
        "a b",
        "a@b",
        "a?b",
        "a#b",
        "a%20",
        "é",
        "abc\n",
        "a" * 256,
    ],
)
async def test_malformed_names_raise_invalid_actor_name_error(system, name):
    with pytest.raises(InvalidActorNameError):
        system.spawn(Echo, name)


async def test_invalid_actor_name_error_is_a_dovecote_error():
    assert issubclass(InvalidActorNameError, DovecoteError)


async def test_a_duplicate_sibling_name_raises_invalid_actor_name_error(system):
    first = system.spawn(Echo, "twin")
    with pytest.raises(InvalidActorNameError):
        system.spawn(Echo, "twin")
    # the failed spawn changed nothing: the first actor is untouched
    assert first.is_alive
    assert await first.ask("still here", timeout=TIMEOUT) == "still here"


async def test_a_duplicate_child_name_raises_invalid_actor_name_error_inside_the_parent(system):
    parent = system.spawn(Parent, "p")
    await parent.ask(("spawn", Echo, "kid"), timeout=TIMEOUT)
    with pytest.raises(InvalidActorNameError):
        await parent.ask(("spawn", Echo, "kid"), timeout=TIMEOUT)


async def test_the_same_name_under_different_parents_is_allowed(system):
    top = system.spawn(Echo, "same")
    parent = system.spawn(Parent, "p")
    child = await parent.ask(("spawn", Echo, "same"), timeout=TIMEOUT)
    assert top.path == "/user/same"
    assert child.path == "/user/p/same"
    assert top != child


async def test_a_name_is_free_again_after_its_actor_terminated_and_the_new_ref_differs(system):
    old = system.spawn(Echo, "reused")
    terminated = await watch(system, old)
    old.stop()
    await until_terminated(terminated, old)
    assert not old.is_alive

    new = system.spawn(Echo, "reused")
    assert new.path == old.path
    assert new.address == old.address
    assert new != old
    assert new.is_alive
    assert await new.ask("again", timeout=TIMEOUT) == "again"
    assert system.resolve("/user/reused") == new
    with pytest.raises(ActorStoppedError):
        await old.ask("old incarnation", timeout=TIMEOUT)


async def test_a_none_name_generates_unique_names_starting_with_a_dollar(system):
    refs = [system.spawn(Echo) for _ in range(20)]
    names = [ref.name for ref in refs]
    assert all(name.startswith("$") for name in names)
    assert len(set(names)) == len(names)
    assert all(ref.path == f"/user/{ref.name}" for ref in refs)
    assert [await ref.ask(i, timeout=TIMEOUT) for i, ref in enumerate(refs)] == list(range(20))


async def test_a_zero_argument_callable_is_a_valid_factory(system):
    inbox = Inbox()
    ref = system.spawn(lambda: Recorder(inbox), "by-callable")
    assert await ref.ask("m", timeout=TIMEOUT) == "m"
    assert inbox.items == ["m"]


class ExplodingConstructor(Actor):
    def __init__(self) -> None:
        super().__init__()
        raise ValueError("constructor failed")

    def on_receive(self, message: Any) -> Any:
        return message


class ExplodingPreStart(Actor):
    def pre_start(self) -> None:
        raise ValueError("pre_start failed")

    def on_receive(self, message: Any) -> Any:
        return message


def exploding_factory() -> Actor:
    raise ValueError("factory failed")


@pytest.mark.parametrize(
    "factory",
    [ExplodingConstructor, ExplodingPreStart, exploding_factory],
    ids=lambda f: f.__name__,
)
async def test_an_error_while_creating_the_actor_does_not_come_out_of_spawn_and_stops_it(
    system, factory
):
    ref = system.spawn(factory, "fragile")  # must not raise
    terminated = await watch(system, ref)
    await until_terminated(terminated, ref)
    assert not ref.is_alive
    with pytest.raises(ActorStoppedError):
        await ref.ask("anyone?", timeout=TIMEOUT)


@pytest.mark.parametrize(
    "factory",
    [ExplodingConstructor, ExplodingPreStart, exploding_factory],
    ids=lambda f: f.__name__,
)
async def test_an_error_while_creating_a_child_goes_to_its_supervisor(system, factory):
    decisions: list[BaseException] = []
    parent = system.spawn(lambda: Parent(decisions), "parent")
    child = await parent.ask(("spawn", factory, "fragile"), timeout=TIMEOUT)
    terminated = await watch(system, child)
    await until_terminated(terminated, child)
    assert len(decisions) == 1
    error = decisions[0]
    # The runtime may wrap it (ActorInitializationError); the original must be reachable.
    assert isinstance(error, ValueError) or isinstance(error.__cause__, ValueError)
    assert parent.is_alive


class NotAnActor:
    def on_receive(self, message: Any) -> Any:
        return message


async def test_a_class_that_is_not_an_actor_raises_type_error(system):
    with pytest.raises(TypeError):
        system.spawn(NotAnActor, "nope")  # type: ignore[arg-type]


async def test_a_non_callable_factory_raises_type_error(system):
    with pytest.raises(TypeError):
        system.spawn("Echo", "nope")  # type: ignore[arg-type]


async def test_a_factory_that_returns_a_non_actor_is_reported_as_type_error(system):
    # spec-gap: API.md says factory *exceptions* go to the supervisor, and the issue asks for
    # a TypeError when the factory does not produce an Actor. We accept either spawn raising
    # TypeError at once, or the actor failing with a TypeError that reaches its supervisor.
    decisions: list[BaseException] = []
    parent = system.spawn(lambda: Parent(decisions), "parent")
    try:
        child = await parent.ask(("spawn", lambda: 42, "bogus"), timeout=TIMEOUT)
    except TypeError:
        return
    terminated = await watch(system, child)
    await until_terminated(terminated, child)
    assert len(decisions) == 1
    error = decisions[0]
    assert isinstance(error, TypeError) or isinstance(error.__cause__, TypeError)


async def test_resolve_finds_a_live_actor_by_path_and_by_address(system):
    parent = system.spawn(Parent, "parent")
    child = await parent.ask(("spawn", Echo, "child"), timeout=TIMEOUT)
    assert system.resolve("/user/parent") == parent
    assert system.resolve("/user/parent/child") == child
    assert system.resolve("mem://t@local/user/parent/child") == child
    assert system.resolve(child.address) == child
    assert await system.resolve(child.path).ask("via resolve", timeout=TIMEOUT) == "via resolve"


async def test_resolve_of_an_unknown_path_raises_actor_not_found_error(system):
    system.spawn(Echo, "present")
    with pytest.raises(ActorNotFoundError):
        system.resolve("/user/absent")
    with pytest.raises(ActorNotFoundError):
        system.resolve("mem://t@local/user/absent")
    with pytest.raises(ActorNotFoundError):
        system.resolve("/user/present/child")


async def test_resolve_of_a_terminated_actor_raises_actor_not_found_error(system):
    ref = system.spawn(Echo, "gone")
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    with pytest.raises(ActorNotFoundError):
        system.resolve("/user/gone")


async def test_refs_compare_and_hash_by_address_and_incarnation(system):
    ref = system.spawn(Echo, "eq")
    same = system.resolve(ref.address)
    assert ref == same
    assert hash(ref) == hash(same)
    assert len({ref, same}) == 1
    assert ref != system.spawn(Echo, "other")


async def test_the_context_exposes_self_parent_children_and_system(system):
    parent = system.spawn(Parent, "parent")
    child = await parent.ask(("spawn", Introspect, "child"), timeout=TIMEOUT)
    seen = await child.ask("who am i", timeout=TIMEOUT)
    assert seen["self"] == child
    assert seen["self_ref"] == child
    assert seen["parent"] == parent
    assert seen["children"] == ()
    assert seen["system"] is system

    top = system.spawn(Introspect, "top")
    seen_top = await top.ask("who am i", timeout=TIMEOUT)
    # spec-gap: top-level actors are children of the user guardian, whose path is /user.
    assert seen_top["parent"].path == "/user"


async def test_a_stopped_child_leaves_its_parents_children(system):
    parent = system.spawn(Parent, "parent")
    a = await parent.ask(("spawn", Echo, "a"), timeout=TIMEOUT)
    b = await parent.ask(("spawn", Echo, "b"), timeout=TIMEOUT)
    assert set(await parent.ask(("children",), timeout=TIMEOUT)) == {a, b}
    terminated = await watch(system, a)
    a.stop()
    await until_terminated(terminated, a)
    assert await parent.ask(("children",), timeout=TIMEOUT) == (b,)


class Logs(Actor):
    def on_receive(self, message: Any) -> Any:
        self.log.info("handled", note=message)
        return "logged"


async def test_self_log_is_a_structlog_logger_bound_with_the_actor_path(system):
    from structlog.testing import capture_logs

    ref = system.spawn(Logs, "logger")
    with capture_logs() as logs:
        assert await ref.ask("x", timeout=TIMEOUT) == "logged"
    entries = [entry for entry in logs if entry.get("event") == "handled"]
    assert len(entries) == 1
    assert ref.path in entries[0].values()


async def test_spawn_works_without_async_with_when_shut_down_explicitly():
    # spec-gap: constructing the system inside a running loop is enough; `async with` is a
    # convenience for the shutdown.
    from dovecote import ActorSystem

    system = ActorSystem("plain")
    try:
        ref = system.spawn(Echo, "e")
        assert ref.address == "mem://plain@local/user/e"
        assert await ref.ask(1, timeout=TIMEOUT) == 1
    finally:
        await system.shutdown()


async def test_the_host_appears_in_every_address():
    from dovecote import ActorSystem

    async with ActorSystem("shop", host="node-1") as system:
        assert system.host == "node-1"
        ref = system.spawn(Echo, "orders")
        assert ref.address == "mem://shop@node-1/user/orders"
        assert system.resolve("mem://shop@node-1/user/orders") == ref
