"""The nesting bound of the relay's JSON frames (``decode_json``), read from the text: exact on
any valid JSON, including brackets, quotes and backslashes inside strings, and linear in the
size of the frame, also for hostile frames built to be many levels deep everywhere. Its speed
on real answers is measured by `make bench`, not here."""

from __future__ import annotations

import json
import timeit
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabrelay.errors import ProtocolViolation
from tabrelay.protocol.constants import MAX_NESTING_DEPTH
from tabrelay.protocol.messages import CommandResult, decode_json, parse_extension_message


def depth(value: Any) -> int:
    """The nesting depth as the bound means it: a scalar 0, ``[]`` 1, ``[[]]`` 2."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


tricky_text = st.text(alphabet='[]{}"\\/:,abc\n\u00fc\u202e', max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=60,
)


@settings(max_examples=400, deadline=None)
@given(values, st.integers(min_value=1, max_value=24), st.booleans())
def test_the_bound_matches_the_real_depth_of_any_value(
    value: Any, limit: int, ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    if depth(value) > limit:
        with pytest.raises(ProtocolViolation) as raised:
            decode_json(text, max_depth=limit)
        assert raised.value.code == "too_deep"
    else:
        assert decode_json(text, max_depth=limit) == value


def test_a_result_up_to_the_bound_is_accepted_and_one_level_more_is_not() -> None:
    # The frame itself is the first level; its result holds the rest, with quoted brackets.
    def frame(levels: int) -> str:
        inner = '{"a": ' * (levels - 1) + '"[[[{{{\\"\\\\"' + "}" * (levels - 1)
        return f'{{"id": "1", "result": {inner}}}'

    assert depth(json.loads(frame(MAX_NESTING_DEPTH))) == MAX_NESTING_DEPTH
    assert isinstance(parse_extension_message(frame(MAX_NESTING_DEPTH)), CommandResult)
    with pytest.raises(ProtocolViolation, match="nested deeper than"):
        parse_extension_message(frame(MAX_NESTING_DEPTH + 1))


def test_brackets_inside_strings_do_not_count() -> None:
    quoted = json.dumps(["[" * 400 + '\\"{' * 300])
    assert decode_json(quoted) == ["[" * 400 + '\\"{' * 300]


def cost(function: Any, text: str) -> float:
    """The least of a few timings (a busy machine only ever adds)."""
    return min(timeit.repeat(lambda: function(text), number=1, repeat=5))


def hostile(levels: int, copies: int) -> str:
    chain = "[" * levels + "]" * levels
    over = "[" * (MAX_NESTING_DEPTH + 10) + "]" * (MAX_NESTING_DEPTH + 10)
    return '{"id": "1", "result": [' + ",".join([chain] * copies + [over]) + "]}"


def test_a_hostile_frame_deep_everywhere_is_refused_in_linear_time() -> None:
    # Thousands of chains just under the bound, then one over it: every level of every chain
    # is looked at. A check that re-read the text once per level (size x depth) would take
    # hundreds of times json.loads here; a linear one takes about 2 times. The margin tells the
    # two apart on a busy machine; how fast the check is belongs to `make bench` ("Parsing one
    # relay answer in the app").
    text = hostile(MAX_NESTING_DEPTH - 2, 2000)

    def refused(text: str) -> None:
        with pytest.raises(ProtocolViolation, match="nested"):
            decode_json(text)

    checked, parsed = cost(refused, text), cost(json.loads, text)
    assert checked < 20 * parsed, (checked, parsed)
