"""MailAddress: the seed's address format, RFC 3986 rules and the normal form."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote._errors import InvalidMailboxAddressError
from dovecote.addressing import MAX_ADDRESS_LENGTH, MailAddress


def test_both_spellings_parse_to_the_same_normal_form() -> None:
    short = MailAddress.parse("mem:api@myservice.com/utils/greeter")
    long = MailAddress.parse("mem://api@myservice.com/utils/greeter")
    assert short == long
    assert str(short) == "mem://api@myservice.com/utils/greeter"


def test_fields_are_scheme_user_host_path_and_physical() -> None:
    address = MailAddress.parse("mailto:api@myservice.com/utils/greeter")
    assert address.scheme == "mailto"
    assert address.user == "api"
    assert address.host == "myservice.com"
    assert address.path == "/utils/greeter"
    assert address.physical == "api@myservice.com"


def test_the_path_is_optional() -> None:
    address = MailAddress.parse("mem:api@myservice.com")
    assert address.path == ""
    assert str(address) == "mem://api@myservice.com"


def test_scheme_and_host_are_lower_cased_but_user_and_path_keep_their_case() -> None:
    address = MailAddress.parse("MEM://Sales@Example.COM/Inbox")
    assert str(address) == "mem://Sales@example.com/Inbox"


def test_percent_encoding_is_made_canonical() -> None:
    address = MailAddress.parse("mem://s%61les@example.com/a%2fb/%7euser/%e6%ad%bb")
    assert address.user == "sales"
    assert address.path == "/a%2Fb/~user/%E6%AD%BB"


def test_characters_that_may_not_appear_literally_are_percent_encoded() -> None:
    address = MailAddress.parse("mem://sales@example.com/死信 box")
    assert address.path == "/%E6%AD%BB%E4%BF%A1%20box"


def test_the_same_physical_address_is_shared_across_protocols() -> None:
    mem, mail = MailAddress.parse("mem:api@x.io"), MailAddress.parse("mailto:api@x.io")
    assert mem.physical == mail.physical
    assert mem != mail


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("mem:sales@example.com/inbox?thread=1", "query"),
        ("mem:sales@example.com/inbox#top", "fragment"),
        ("mem:sales@example.com?x", "query"),
    ],
)
def test_query_strings_and_fragments_are_rejected_not_dropped(text: str, part: str) -> None:
    with pytest.raises(InvalidMailboxAddressError, match=part):
        MailAddress.parse(text)


@pytest.mark.parametrize(
    "text",
    ["mem:a@b/./x", "mem:a@b/x/..", "mem:a@b/%2E%2e/x", "mem:a@b/x/%2e"],
)
def test_dot_segments_are_rejected(text: str) -> None:
    with pytest.raises(InvalidMailboxAddressError, match="segment"):
        MailAddress.parse(text)


@pytest.mark.parametrize(
    ("text", "part"),
    [
        (":a@b/x", "scheme"),
        ("a@b/x", "scheme"),
        ("1mem:a@b", "scheme"),
        ("mem:@b/x", "user"),
        ("mem:b/x", "user"),
        ("mem:a@/x", "host"),
        ("mem:a@b@c/x", "host"),
        ("mem:a@exa mple.com", "host"),
        ("mem:a@b:http/x", "port"),
    ],
)
def test_missing_or_malformed_parts_are_named_in_the_error(text: str, part: str) -> None:
    with pytest.raises(InvalidMailboxAddressError, match=part):
        MailAddress.parse(text)


@pytest.mark.parametrize("char", ["\x00", "\n", "\t", "\x7f", "\x85"])
def test_control_characters_are_rejected(char: str) -> None:
    with pytest.raises(InvalidMailboxAddressError, match="control character"):
        MailAddress.parse(f"mem:a@b/x{char}y")


def test_over_long_input_is_rejected() -> None:
    with pytest.raises(InvalidMailboxAddressError, match="too long"):
        MailAddress.parse("mem:a@b/" + "x" * MAX_ADDRESS_LENGTH)


def test_an_address_whose_normal_form_would_be_over_long_is_rejected() -> None:
    with pytest.raises(InvalidMailboxAddressError, match="too long"):
        MailAddress.parse("mem:a@b/" + "é" * 1000)


def test_malformed_percent_escapes_are_rejected() -> None:
    with pytest.raises(InvalidMailboxAddressError, match="percent"):
        MailAddress.parse("mem:a@b/%zz")


def test_non_strings_are_rejected_with_the_address_error() -> None:
    with pytest.raises(InvalidMailboxAddressError):
        MailAddress.parse(42)  # type: ignore[arg-type]


def test_addresses_are_hashable_values() -> None:
    assert len({MailAddress.parse("mem:a@B"), MailAddress.parse("mem://a@b")}) == 1


_segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=8
).filter(lambda s: "/" not in s and "?" not in s and "#" not in s)
_user = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=8
).filter(lambda s: all(c not in s for c in "/?#@"))
_host = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,10}[A-Za-z0-9])?", fullmatch=True)


@st.composite
def _addresses(draw: st.DrawFn) -> str:
    scheme = draw(st.from_regex(r"[A-Za-z][A-Za-z0-9+.\-]{0,6}", fullmatch=True))
    segments = draw(st.lists(_segment.filter(lambda s: s not in (".", "..")), max_size=4))
    separator = draw(st.sampled_from([":", "://"]))
    path = "".join("/" + segment for segment in segments)
    return f"{scheme}{separator}{draw(_user)}@{draw(_host)}{path}"


@given(_addresses())
def test_parse_of_the_normal_form_gives_back_the_same_address(text: str) -> None:
    try:
        address = MailAddress.parse(text)
    except InvalidMailboxAddressError:
        return  # e.g. a segment that percent-decodes to a dot segment
    assert MailAddress.parse(str(address)) == address
    assert str(MailAddress.parse(str(address))) == str(address)


@given(st.text(max_size=200))
def test_arbitrary_text_raises_nothing_but_the_address_error(text: str) -> None:
    try:
        address = MailAddress.parse(text)
    except InvalidMailboxAddressError:
        return
    assert MailAddress.parse(str(address)) == address


@given(st.text(alphabet="mem:/@%.?#abcAB12 é\x00", max_size=40))
def test_address_like_text_raises_nothing_but_the_address_error(text: str) -> None:
    with contextlib.suppress(InvalidMailboxAddressError):
        MailAddress.parse(text)
