"""Which token sequences share a start, so that a causal scorer computes each shared start once.

:func:`prefix_groups` plans the work of :func:`lmbias.lm.likelihood` 's causal scorer: sequences
are sorted (so that those with a common start are neighbours) and cut into groups whose
members share their first ``shared`` tokens. The scorer runs each group's shared tokens once and
each member's remaining tokens on a copy of that key / value cache. A CrowS-Pairs pair's common
start, a StereoSet item's context, a BBQ item's context, a chat template's opening: each is one
group's prefix.

A group holds at most ``max_members`` sequences (the scorer's batch), so a start shared by
thousands of sequences (a chat template's) is computed once per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_SHARED = 2  # tokens a group's members share at least: a lone start token is not worth a pass of its own


@dataclass(frozen=True)
class PrefixGroup:
    """Sequences (indices into the planned list) whose first ``shared`` tokens are equal."""

    members: tuple[int, ...]
    shared: int


def prefix_groups(sequences: Sequence[Sequence[int]], *, max_members: int) -> list[PrefixGroup]:
    """Groups of ``sequences`` with a common start, every sequence in exactly one group, chosen to
    compute the fewest token positions (:func:`tokens_computed`).

    Sequences are sorted, so that those with a common start are neighbours, and cut into runs of at
    most ``max_members``; a run's ``shared`` is its members' common start, at most each member's
    length minus one (every member keeps its last token, which a scorer never feeds as input, out
    of the prefix; a group of one shares everything but its last token). A run of ``n`` sharing
    ``L >= MIN_SHARED`` tokens saves ``(n - 1) * L`` positions; the cut that saves the most is found
    by dynamic programming. Sequences of fewer than two tokens are left out (nothing of them is predicted from
    an earlier token).

    >>> prefix_groups([[5, 1, 2, 3], [5, 1, 2, 4], [5, 9, 9]], max_members=8)
    [PrefixGroup(members=(0, 1), shared=3), PrefixGroup(members=(2,), shared=2)]
    """
    if max_members < 1:
        raise ValueError(f"max_members must be >= 1, got {max_members}")
    order = sorted((k for k, s in enumerate(sequences) if len(s) >= 2), key=lambda k: list(sequences[k]))
    sorted_ = [sequences[k] for k in order]
    common = [_common_start(a, b) for a, b in zip(sorted_, sorted_[1:])]  # of each sequence and the next
    best = [0] * (len(sorted_) + 1)  # best[j]: the most positions saved by cutting the first j sequences
    cut = [0] * (len(sorted_) + 1)  # where the last run of that best cut starts
    for j in range(1, len(sorted_) + 1):
        best[j], cut[j] = best[j - 1], j - 1  # the j-th sequence alone
        shared = len(sorted_[j - 1]) - 1
        for i in range(j - 2, max(j - max_members, 0) - 1, -1):  # the run sorted_[i:j]
            shared = min(shared, common[i], len(sorted_[i]) - 1)
            if shared < MIN_SHARED:
                break
            if best[i] + (j - 1 - i) * shared > best[j]:
                best[j], cut[j] = best[i] + (j - 1 - i) * shared, i
    groups = []
    j = len(sorted_)
    while j:
        i = cut[j]
        shared = min([len(s) - 1 for s in sorted_[i:j]] + common[i:j - 1])
        groups.append(PrefixGroup(tuple(order[i:j]), shared))
        j = i
    return groups[::-1]


def _common_start(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def tokens_computed(sequences: Sequence[Sequence[int]], groups: Sequence[PrefixGroup]) -> int:
    """Token positions a shared-prefix scorer runs for ``groups`` (each prefix once, each member's
    tokens after it but its last): padding not counted. Compare with ``sum(map(len, sequences))``,
    what one pass per whole sequence runs."""
    return sum(g.shared + sum(len(sequences[k]) - 1 - g.shared for k in g.members) for g in groups)
