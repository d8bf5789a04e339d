"""Small network and data helpers shared by the tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import strategies as st


@contextmanager
def taken_port() -> Iterator[int]:
    """A loopback port some other program is listening on, for as long as the block runs."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        yield int(squatter.getsockname()[1])


# Any JSON value, small: for fuzzing what peers send.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=15,
)
