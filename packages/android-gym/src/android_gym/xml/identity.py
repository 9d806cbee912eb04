"""Deterministic, stable element ids derived from what an element is, not where it sits in the dump.

An element's identity is its class, resource id, text, content-desc, hint and the chain of its
ancestors' resource ids (class names where an ancestor has none). Text that is state rather than
identity is left out: what was typed into an editable field, and the ON/OFF text of switches and
toggle buttons. So the same screen always gives the same ids, and an element keeps its id when
another part of the screen changes, when it moves (scrolling), is typed into or toggled.

Inside a list (any descendant of a child of a scrollable node) an element is also named after its
row: the row's first label, usually its title. So "the Delete button of the Music row" keeps its id
when the list scrolls or another row changes; it changes only when that row's title does. Elements
still equal after that are told apart by the shortest run of labels of the nearest ancestors that
differ between them, and elements identical in every respect are numbered in dump order.

Ids are ``n`` plus four hex digits of a BLAKE2b hash of the identity (``n3f2a``), lengthened on the
rare collision.
"""

from __future__ import annotations

import re
from hashlib import blake2b
from itertools import compress
from operator import itemgetter

from android_gym.xml.tree import F_CHECKABLE, F_DESC, F_HINT, F_RID, F_SCROLLABLE, F_TEXT, TRUE_VALUES, UITree

__all__ = ["assign_ids", "identity_key"]

_SEP = "\x1f"
# Identity key -> hex digest: screens repeat their elements step after step, so hashing is mostly a lookup.
_DIGESTS: dict[str, str] = {}
_DIGEST_MEMO_SIZE = 20_000
_STATE_TEXT_CLASS = re.compile(r"(?:Switch|Toggle)\w*$")
_SCROLLABLE_OF = itemgetter(F_SCROLLABLE)


def _identity_text(tree: UITree, i: int) -> str:
    """The node's text when it is part of its identity, else ""."""
    if tree.editable[i]:
        return ""
    r = tree.rows[i]
    text = r[F_TEXT]
    if text and r[F_CHECKABLE] in TRUE_VALUES and _STATE_TEXT_CLASS.search(tree.classes[i]):
        return ""
    return text


def identity_key(tree: UITree, index: int, ancestry: str) -> str:
    """The identity string of node ``index`` whose ancestors' chain is ``ancestry``."""
    r = tree.rows[index]
    return _SEP.join(
        (tree.classes[index], r[F_RID], _identity_text(tree, index), r[F_DESC], r[F_HINT], ancestry)
    )


def _row_labels(tree: UITree, members: list[int]) -> list[str]:
    """For each node, the first label of the list row holding it ("" outside lists)."""
    rows, ends, child_lists = tree.rows, tree.ends, tree.child_lists
    # A node's row is its ancestor-or-self whose parent is the nearest scrollable ancestor. Scrollable
    # nodes in dump order: a nested list's rows overwrite the outer list's over their span.
    row_of: list[int] | None = None
    for s in compress(range(len(rows)), map(TRUE_VALUES.__contains__, map(_SCROLLABLE_OF, rows))):
        for c in child_lists[s]:
            if row_of is None:
                row_of = [-1] * len(rows)
            row_of[c : ends[c]] = [c] * (ends[c] - c)
    if row_of is None:
        return [""] * len(members)
    label_of: dict[int, str] = {-1: ""}
    out = []
    for r in map(row_of.__getitem__, members):
        label = label_of.get(r)
        if label is None:
            label = ""
            for j in range(r, ends[r]):
                row = rows[j]
                if row[F_TEXT] or row[F_DESC]:  # most nodes have neither: skip the finer look
                    text, desc = _identity_text(tree, j), row[F_DESC]
                    if text or desc:
                        label = f"{text}{_SEP}{desc}"
                        break
            label_of[r] = label
        out.append(label)
    return out


def _subtree_labels(tree: UITree, i: int, memo: dict[int, tuple[str, ...]]) -> tuple[str, ...]:
    """The identity labels (text, content-desc) inside node ``i``'s subtree, in dump order."""
    got = memo.get(i)
    if got is None:
        rows = tree.rows
        parts = []
        for j in range(i, tree.ends[i]):
            row = rows[j]
            if row[F_TEXT] or row[F_DESC]:
                text, desc = _identity_text(tree, j), row[F_DESC]
                if text or desc:
                    parts.append(f"{text}{_SEP}{desc}")
        got = memo[i] = tuple(parts)
    return got


def _disambiguate(tree: UITree, members: list[int], memo: dict[int, tuple[str, ...]]) -> list[str]:
    """Context suffixes that tell equal-identity nodes apart (``members`` in dump order)."""
    parents_of = tree.parents
    current = list(members)
    best: list[tuple[str, ...]] | None = None
    best_distinct = 1
    n = len(members)
    while True:
        parents = [parents_of[i] for i in current]
        if any(p < 0 for p in parents):
            break
        current = parents
        if len(set(current)) == 1:  # converged on a common ancestor: nothing further up can differ
            break
        ctx = [_subtree_labels(tree, i, memo) for i in current]
        distinct = len(set(ctx))
        if distinct > best_distinct:
            best, best_distinct = ctx, distinct
            if distinct == n:
                break
    if best is None:
        suffixes = [""] * n
    else:
        # The shortest run of leading labels that separates as many as the whole content does.
        longest = max(len(c) for c in best)
        for m in range(1, longest + 1):
            if len({c[:m] for c in best}) == best_distinct:
                break
        suffixes = ["\x1e".join(c[:m]) for c in best]
    # Whatever is still tied gets its order of appearance.
    seen: dict[str, int] = {}
    out = []
    for s in suffixes:
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.append(f"{s}{_SEP}#{k}" if k else s)
    return out


def assign_ids(tree: UITree, members: list[int], ancestries: list[str]) -> list[str]:
    """Short ids for the nodes ``members`` (dump order), with ``ancestries[k]`` the chain above ``members[k]``."""
    rows, classes, editable = tree.rows, tree.classes, tree.editable
    keys = []
    for i, a, row_label in zip(members, ancestries, _row_labels(tree, members)):
        r = rows[i]
        cls = classes[i]
        text = r[F_TEXT]  # the node's text unless it is state, as in `_identity_text`
        if text and (editable[i] or (r[F_CHECKABLE] in TRUE_VALUES and _STATE_TEXT_CLASS.search(cls))):
            text = ""
        keys.append(
            f"{cls}{_SEP}{r[F_RID]}{_SEP}{text}{_SEP}{r[F_DESC]}{_SEP}{r[F_HINT]}{_SEP}{a}{_SEP}{row_label}"
        )
    if len(set(keys)) < len(keys):  # some elements look the same: tell them apart by their context
        groups: dict[str, list[int]] = {}
        for pos, key in enumerate(keys):
            groups.setdefault(key, []).append(pos)
        memo: dict[int, tuple[str, ...]] = {}
        for positions in groups.values():
            if len(positions) > 1:
                suffixes = _disambiguate(tree, [members[p] for p in positions], memo)
                for p, s in zip(positions, suffixes):
                    keys[p] = f"{keys[p]}{_SEP}{s}"
    ids: list[str] = []
    taken: set[str] = set()
    digests = _DIGESTS
    for key in keys:
        digest = digests.get(key)
        if digest is None:
            if len(digests) >= _DIGEST_MEMO_SIZE:
                digests.clear()
            digest = digests[key] = blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        cand = "n" + digest[:4]
        if cand in taken:  # rare: lengthen until unique
            for width in range(5, 17):
                cand = "n" + digest[:width]
                if cand not in taken:
                    break
            else:  # equal keys cannot survive disambiguation; stay unique regardless
                k = 1
                while f"n{digest}_{k}" in taken:
                    k += 1
                cand = f"n{digest}_{k}"
        taken.add(cand)
        ids.append(cand)
    return ids
