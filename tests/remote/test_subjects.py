"""Names become single, safe NATS subject tokens, and come back exactly."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote.remote import decode_token, encode_token
from dovecote.remote._subjects import node_prefix, path_of_subject, subject_of_path

_TOKEN = re.compile(r"[A-Za-z0-9_%-]+")


@given(st.text(min_size=1))
def test_every_name_round_trips_through_one_token(name: str) -> None:
    token = encode_token(name)
    assert _TOKEN.fullmatch(token)  # no '.', '*', '>', whitespace: cannot split or widen
    assert decode_token(token) == name


@pytest.mark.parametrize("name", ["a.b", "*", ">", "a b", "a\tb", "%2E", "$auto", "x~y"])
def test_dangerous_names_are_escaped(name: str) -> None:
    token = encode_token(name)
    assert not set(".*> \t") & set(token)
    assert decode_token(token) == name


def test_an_empty_name_has_no_token() -> None:
    with pytest.raises(ValueError):
        encode_token("")


@given(st.lists(st.text(min_size=1).filter(lambda s: "/" not in s), min_size=1, max_size=5))
def test_paths_map_to_subjects_and_back(parts: list[str]) -> None:
    prefix = node_prefix("shop.eu", "node-a.example.com")
    assert prefix == "dovecote.shop%2Eeu.node-a%2Eexample%2Ecom"
    path = "/user/" + "/".join(parts)
    subject = subject_of_path(prefix, path)
    assert subject.count(".") == prefix.count(".") + 1 + len(parts)
    assert path_of_subject(len(prefix) + 1, subject) == path
