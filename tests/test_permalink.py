"""Permalinks: programs and page state into a URL query and back; bad links refused whole
or in part, with the reason, never a crash."""

from __future__ import annotations

import base64
import zlib
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.content.examples import EXAMPLES
from explorer.content.i18n import texts
from explorer.views import permalink
from explorer.views.permalink import MAX_CODE, MAX_QUERY, LinkError, decode_code, encode_code, read


def _token(raw: bytes) -> str:
    return permalink.DEFLATE + base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_every_seed_program_round_trips_and_fits_a_link(example):
    token = encode_code(example.code)
    assert decode_code(token) == example.code
    assert set(token) <= set("zABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(token) < len(quote(example.code))  # shorter than the program as URL text
    assert len(token) < MAX_QUERY // 4


@given(st.text(max_size=2000))
def test_any_text_round_trips(code):
    assert decode_code(encode_code(code)) == code


def test_page_state_round_trips_through_show_and_read():
    state = {"code": "x = torch.ones(2)\n# 中文注释\n", "lang": "zh", "device": "cuda:1",
             "step": 7, "inspect": "w1", "roots": ["y", "z"], "saved": False, "attrs": True,
             "expand": True, "node": "n12", "tab": "graph", "call": 3, "replay": 12,
             "left": "a", "right": "b", "n": 64, "d_in": 1000, "h": 100, "d_out": 10,
             "lr": 1e-6, "iters": 500, "trained": True, "k": 499, "opened": True,
             "last": (2, 48)}
    query = {param: permalink.show(param, value) for param, value in state.items()}
    assert read(query) == (state, [])
    assert read({"roots": permalink.show("roots", [])}) == ({"roots": []}, [])


@pytest.mark.parametrize("token", [
    "", "abc", "z", "z!!!!", "z" + "A" * 7, _token(b"not zlib at all"),
    _token(zlib.compress(b"x = 1\n")[:-3]),  # cut short: no end, no checksum
    _token(zlib.compress(b"x = 1\n") + b"junk"),  # something after the end
    _token(zlib.compress("\udcff".encode(errors="surrogateescape"))),  # not UTF-8
    _token(bytes(zlib.compress(b"x = 1\n")[:-1]) + b"\x00"),  # wrong checksum
])
def test_a_damaged_program_refuses_the_whole_link(token):
    with pytest.raises(LinkError) as refused:
        read({"code": token, "step": "2"})
    assert refused.value.key == "link_corrupt"


def test_a_zip_bomb_is_refused_without_unpacking_it():
    bomb = zlib.compress(b"#" * (200 * 1024 * 1024), 9)  # 200 MiB of comment, ~200 KB packed
    token = _token(bomb[:9000])  # what fits in a link still unpacks to megabytes
    with pytest.raises(LinkError) as refused:
        decode_code(token)
    assert refused.value.key == "link_too_big"
    assert refused.value.values == {"limit": MAX_CODE // 1024}
    assert decode_code(encode_code("#" * MAX_CODE)) == "#" * MAX_CODE  # the limit itself is fine
    with pytest.raises(LinkError):
        decode_code(encode_code("#" * (MAX_CODE + 1)))


def test_a_link_too_long_is_refused_before_anything_is_read():
    with pytest.raises(LinkError) as refused:
        read({"code": "z" + "A" * MAX_QUERY})
    assert refused.value.key == "link_too_long"
    with pytest.raises(LinkError):
        read({"utm": "x" * MAX_QUERY, "step": "1"})  # whatever makes it long


@pytest.mark.parametrize(("param", "value"), [
    ("step", "0"), ("step", "-1"), ("step", "1e3"), ("step", "９"), ("step", "9" * 40),
    ("lang", "fr"), ("device", "tpu"), ("device", "cuda:123"), ("saved", "yes"),
    ("roots", "a,,b"), ("roots", ",".join("x" * 33)), ("node", "a\nb"), ("inspect", "x" * 101),
    ("tab", "evil"), ("n", "513"), ("lr", "nan"), ("lr", "inf"), ("lr", "2"),
    ("iters", "2001"), ("k", "0"), ("last", "3"), ("last", "3.0"), ("last", "-1.2"),
    ("last", "1.2.3"), ("last", "10001.1"), ("last", "1." + "9" * 11),
])
def test_a_bad_value_is_dropped_and_named_and_the_rest_kept(param, value):
    code = encode_code("x = 1\n")
    assert read({"code": code, param: value, "attrs": "0"}) == (
        {"code": "x = 1\n", "attrs": False}, [param])


def test_unknown_parameters_are_ignored():
    assert read({"utm_source": "mail", "embed": "true", "step": "2"}) == ({"step": 2}, [])


def test_every_refusal_has_words_in_both_languages():
    for key in ("link_corrupt", "link_too_big", "link_too_long", "link_refused",
                "link_dropped", "link_device", "link_opened", "share", "share_copied",
                "share_by_hand", "share_too_long"):
        assert set(texts()[key]) == {"en", "zh"}, key
