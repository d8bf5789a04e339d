"""A tab's refs (tools/state/tab_state.py ``TabRefs``): stable per node, released with their
document, never handed out twice, bounded."""

from __future__ import annotations

import pytest

from tabrelay.tools.state import tab_state
from tabrelay.tools.state.tab_state import RefTarget, TabRefs


def test_the_same_node_keeps_its_ref_across_snapshots() -> None:
    refs = TabRefs()
    first = refs.assign(RefTarget(10, "main", "doc-1"))
    assert refs.assign(RefTarget(11, "main", "doc-1")) != first
    assert refs.assign(RefTarget(10, "main", "doc-1")) == first
    assert len(refs) == 2


def test_a_snapshot_of_a_new_document_releases_the_old_documents_refs() -> None:
    """Even when no navigation event was seen (its domain off, events dropped): the refs of a
    frame's earlier document go as soon as refs of its new one are handed out."""
    refs = TabRefs()
    old = [refs.assign(RefTarget(n, "main", "doc-1")) for n in range(100)]
    in_frame = refs.assign(RefTarget(1, "frame", "frame-doc-1"))
    new = refs.assign(RefTarget(1, "main", "doc-2"))
    assert len(refs) == 2 and refs.get(in_frame) is not None and refs.get(new) is not None
    assert all(refs.get(ref) is None and refs.issued(ref) for ref in old)
    assert new not in old, "a ref is never handed out twice"


def test_only_refs_handed_out_count_as_issued() -> None:
    refs = TabRefs()
    refs.assign(RefTarget(1, "main", "doc-1"))
    assert refs.issued("e1")
    assert not refs.issued("e2") and not refs.issued("x1") and not refs.issued("e01")


def test_a_new_main_document_releases_every_other_documents_refs() -> None:
    refs = TabRefs()
    refs.assign(RefTarget(1, "main", "doc-1"))
    refs.assign(RefTarget(2, "frame", "frame-doc"))
    kept = refs.assign(RefTarget(3, "main", "doc-2"))  # a snapshot raced the event
    refs.release_all(keep=("main", "doc-2"))
    assert len(refs) == 1 and refs.get(kept) == RefTarget(3, "main", "doc-2")
    refs.release_all()
    assert len(refs) == 0


def test_a_tab_holds_at_most_its_cap_of_refs() -> None:
    refs = TabRefs()
    cap = tab_state.MAX_REFS_PER_TAB
    for n in range(cap + 10):
        refs.assign(RefTarget(n, "main", "doc-1"))
    assert len(refs) == cap
    assert refs.get("e1") is None and refs.issued("e1")


def test_a_learnt_node_goes_with_its_ref() -> None:
    """The backend node a tool looked up for a ref is kept only as long as the ref: released
    with its document, evicted with it, and never learnt for a ref not handed out."""
    refs = TabRefs()
    kept = refs.assign(RefTarget(1, "main", "doc-1"))
    framed = refs.assign(RefTarget(2, "frame", "frame-doc-1"))
    refs.learn_node(kept, 101)
    refs.learn_node(framed, 102)
    refs.learn_node("e999", 103)
    assert (refs.node_of(kept), refs.node_of(framed), refs.node_of("e999")) == (101, 102, None)
    refs.release_frame("frame")
    assert refs.node_of(framed) is None and refs.node_of(kept) == 101
    refs.assign(RefTarget(1, "main", "doc-2"))  # a new document: the old one's refs go
    assert refs.node_of(kept) is None
    refs.learn_node(kept, 101)  # released: nothing is learnt for it
    assert refs.node_of(kept) is None


def test_an_evicted_ref_forgets_its_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tab_state, "MAX_REFS_PER_TAB", 2)
    refs = TabRefs()
    first = refs.assign(RefTarget(1, "main", "doc-1"))
    refs.learn_node(first, 101)
    refs.assign(RefTarget(2, "main", "doc-1"))
    refs.assign(RefTarget(3, "main", "doc-1"))  # past the bound: the oldest goes
    assert refs.get(first) is None and refs.node_of(first) is None
