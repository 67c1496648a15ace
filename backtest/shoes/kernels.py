"""The compiled hot path of generated and recorded shoes: the deal.

The deal's numba code lives here, marked with `lazy_jit.kernel` (compiled on
first use; run as plain Python inside `lazy_jit.interpreted`, where the
hand keys and the deal have forms written for Python: see `in_python`);
the shuffle is in `shuffle`, the random generator in `rng`.
"""

from __future__ import annotations

import numpy as np

from backtest.core.cards import RANK_VALUE
from backtest.core.rules import banker_draws, is_natural, player_draws
from backtest.jit.lazy_jit import kernel
from backtest.shoes.rng import bounded, bounded_lanes, seed_lanes, seed_state
from backtest.shoes.shuffle import shuffle, shuffle_lanes

# --- the tableau as one lookup ---------------------------------------------------


def _build_hand_table() -> np.ndarray:
    """TABLE[p2, b2, v5, v6]: packed result of a hand from the two-card totals
    and the values of the fifth and sixth cards dealt.

    bits 0-3 Player total, 4-7 Banker total, 8 Player drew, 9 Banker drew,
    10 Banker's third card is the fifth card (the Player stood), 11 a natural,
    12-13 the winner (0 Player, 1 Banker, 2 tie).
    Built from the pure rules functions, so the two can never disagree.
    """
    table = np.zeros((10, 10, 10, 10), dtype=np.uint16)
    for p2 in range(10):
        for b2 in range(10):
            for v5 in range(10):
                for v6 in range(10):
                    pt, bt, pdrew, bdrew, b_fifth = p2, b2, 0, 0, 0
                    if not (is_natural(p2) or is_natural(b2)):
                        if player_draws(p2):
                            pdrew = 1
                            pt = (p2 + v5) % 10
                            if banker_draws(b2, v5):
                                bdrew = 1
                                bt = (b2 + v6) % 10
                        elif banker_draws(b2, None):
                            bdrew, b_fifth = 1, 1
                            bt = (b2 + v5) % 10
                    natural = 1 if is_natural(p2) or is_natural(b2) else 0
                    winner = 0 if pt > bt else (1 if bt > pt else 2)
                    table[p2, b2, v5, v6] = (
                        pt
                        | (bt << 4)
                        | (pdrew << 8)
                        | (bdrew << 9)
                        | (b_fifth << 10)
                        | (natural << 11)
                        | (winner << 12)
                    )
    return table


HAND_TABLE = _build_hand_table()
CARD_VALUE = RANK_VALUE.astype(np.int64)
#: value of each card code (rank in the low four bits), for any uint8 code: indexed
#: by a code itself, unsigned, so compiled code needs no check for a negative index
CODE_VALUE = RANK_VALUE[np.minimum(np.arange(256) & 15, 13)].astype(np.uint8)
_U1, _U2, _U3, _U4, _U5, _U10 = (np.uint64(k) for k in (1, 2, 3, 4, 5, 10))


@kernel(inline=True, nrt=False)
def _write_hand(
    h: int,
    c1: int,
    c2: int,
    c3: int,
    c4: int,
    c5: int,
    c6: int,
    packed: int,
    out_cards: np.ndarray,
    out_pt: np.ndarray,
    out_bt: np.ndarray,
    out_win: np.ndarray,
    out_nat: np.ndarray,
    out_ppair: np.ndarray,
    out_bpair: np.ndarray,
    out_pn: np.ndarray,
    out_bn: np.ndarray,
) -> int:
    """Write hand h from its first six cards (c5, c6 used only as drawn) and its
    packed table entry; returns the number of cards it used."""
    i = np.uint64(h)  # an unsigned index: no negative-index wrap-around in compiled code
    pdrew = (packed >> 8) & 1
    bdrew = (packed >> 9) & 1
    pt = packed & 15
    bt = (packed >> 4) & 15
    out_cards[i, 0] = c1
    out_cards[i, 1] = c3
    out_cards[i, 2] = c5 if pdrew else 0
    out_cards[i, 3] = c2
    out_cards[i, 4] = c4
    out_cards[i, 5] = (c6 if pdrew else c5) if bdrew else 0
    out_pt[i] = pt
    out_bt[i] = bt
    out_win[i] = (packed >> 12) & 3
    out_nat[i] = (packed & 0x800) != 0
    out_ppair[i] = (c1 & 15) == (c3 & 15)
    out_bpair[i] = (c2 & 15) == (c4 & 15)
    out_pn[i] = 2 + pdrew
    out_bn[i] = 2 + bdrew
    return 4 + pdrew + bdrew


@kernel(inline=True)
def _card_value(code: np.uint8) -> np.uint64:
    """The value of a card code, by arithmetic (rank if below 10, else 0: the
    same as CODE_VALUE, checked below), so that a loop over cards vectorises."""
    rank = code & np.uint8(15)
    return np.uint64(rank) if rank < np.uint8(10) else np.uint64(0)


_ranks = np.arange(256) & 15
assert np.array_equal(CODE_VALUE, np.where(_ranks < 10, _ranks, 0)), "_card_value is CODE_VALUE"
del _ranks


@kernel(inline=True, nrt=False)
def _hand_keys(dealt: np.ndarray, keys: np.ndarray) -> None:
    """keys[i]: the flat hand-table index of a hand starting at card i of
    `dealt`, for every i with six cards from it on (one loop that vectorises)."""
    for i in range(np.uint64(dealt.shape[0] - 5)):
        v1 = _card_value(dealt[i])
        v2 = _card_value(dealt[i + _U1])
        v3 = _card_value(dealt[i + _U2])
        v4 = _card_value(dealt[i + _U3])
        v5 = _card_value(dealt[i + _U4])
        v6 = _card_value(dealt[i + _U5])
        p2 = v1 + v3
        p2 = p2 - _U10 if p2 >= _U10 else p2
        b2 = v2 + v4
        b2 = b2 - _U10 if b2 >= _U10 else b2
        keys[i] = ((p2 * _U10 + b2) * _U10 + v5) * _U10 + v6


@_hand_keys.in_python
def _hand_keys_numpy(dealt: np.ndarray, keys: np.ndarray) -> None:
    """`_hand_keys` in whole-array operations, for `interpreted` runs."""
    n = dealt.shape[0]
    v = CODE_VALUE[dealt].astype(np.uint16)
    p2 = (v[: n - 5] + v[2 : n - 3]) % 10
    b2 = (v[1 : n - 4] + v[3 : n - 2]) % 10
    keys[: n - 5] = ((p2 * 10 + b2) * 10 + v[4 : n - 1]) * 10 + v[5:]


@kernel(inline=True, nrt=False)
def _deal_hand(
    dealt: np.ndarray,
    keys: np.ndarray,
    pos: int,
    h: int,
    table: np.ndarray,
    out_cards: np.ndarray,
    out_pt: np.ndarray,
    out_bt: np.ndarray,
    out_win: np.ndarray,
    out_nat: np.ndarray,
    out_ppair: np.ndarray,
    out_bpair: np.ndarray,
    out_pn: np.ndarray,
    out_bn: np.ndarray,
) -> int:
    """Deal hand h from dealt[pos:pos + 6], whose entry in the flattened hand
    table (`table`) is keys[pos]; returns the number of cards it used."""
    p = np.uint64(pos)
    c1 = dealt[p]
    c2 = dealt[p + _U1]
    c3 = dealt[p + _U2]
    c4 = dealt[p + _U3]
    c5 = dealt[p + _U4]
    c6 = dealt[p + _U5]
    packed = table[keys[p]]
    return _write_hand(
        h,
        c1,
        c2,
        c3,
        c4,
        c5,
        c6,
        packed,
        out_cards,
        out_pt,
        out_bt,
        out_win,
        out_nat,
        out_ppair,
        out_bpair,
        out_pn,
        out_bn,
    )


@kernel(nrt=False)
def deal_shoes(
    pack: np.ndarray,
    key: np.uint64,
    shoe_ids: np.ndarray,
    cut_card: int,
    extra_hands: int,
    burn: bool,
    cut_mode: int,
    cut_at: int,
    table: np.ndarray,
    values: np.ndarray,
    max_hands: int,
    out_shoe: np.ndarray,
    out_hand: np.ndarray,
    out_cards: np.ndarray,
    out_pt: np.ndarray,
    out_bt: np.ndarray,
    out_win: np.ndarray,
    out_nat: np.ndarray,
    out_ppair: np.ndarray,
    out_bpair: np.ndarray,
    out_pn: np.ndarray,
    out_bn: np.ndarray,
    out_burn: np.ndarray,
    shuffled: np.ndarray,
    cut: np.ndarray,
    keys: np.ndarray,
    state: np.ndarray,
) -> int:
    """Shuffle and deal the shoes numbered `shoe_ids` (each its own random stream).

    pack: the unshuffled cards (codes). table: HAND_TABLE; values: CODE_VALUE
    (for the burn). cut_mode: 0 no cut, 1 cut `cut_at` cards from the top to
    the bottom, 2 cut at a random position. Dealing stops `extra_hands` hands
    after the hand during which the cut card (placed `cut_card` cards from the
    end; 0 = none) comes out, or when fewer than six cards are left.
    out_burn[k] receives the number of cards burned from shoe k. shuffled and
    cut (uint8, one per card), keys (uint16, one per card) and state (4
    uint64) are work arrays: compiled without reference counting, this
    allocates nothing. Returns the number of hands written.

    Where each hand starts depends on how many cards the one before took, a
    chain of loads and arithmetic from hand to hand. So the table entry of a
    hand starting at each position of the shoe is computed first, in one loop
    that vectorises, and the chain is one lookup per hand. Indices are
    unsigned throughout: numba checks a signed index for a negative value,
    which cost more here than the lookups.
    """
    n = pack.shape[0]
    limit = n - cut_card
    flat = table.reshape(table.size)
    h = 0
    for k in range(shoe_ids.shape[0]):
        shoe_index = shoe_ids[k]
        seed_state(key, np.uint64(shoe_index), state)
        for i in range(n):
            shuffled[i] = pack[i]
        shuffle(shuffled, state)
        c = 0
        if cut_mode == 1:
            c = cut_at
        elif cut_mode == 2:
            c = bounded(state, n + 1)
        dealt = shuffled
        if 0 < c < n:
            # the top c cards go to the bottom
            for i in range(n - c):
                cut[i] = shuffled[c + i]
            for i in range(c):
                cut[n - c + i] = shuffled[i]
            dealt = cut
        _hand_keys(dealt, keys)
        pos = 0
        if burn:
            v = values[dealt[0]]
            pos = 1 + (10 if v == 0 else v)
        out_burn[k] = pos
        h0 = h
        h_end = h + max_hands
        # hands while six cards are left, up to the one during which the cut
        # card comes out (noticed after a hand, so never before the first) ...
        top = n - 6
        while pos <= top and h < h_end:
            pos += _deal_hand(
                dealt,
                keys,
                pos,
                h,
                flat,
                out_cards,
                out_pt,
                out_bt,
                out_win,
                out_nat,
                out_ppair,
                out_bpair,
                out_pn,
                out_bn,
            )
            h += 1
            if pos > limit:
                break
        # ... then, if it came out, extra_hands more
        for _ in range(extra_hands):
            if pos + 6 > n or h >= h_end:
                break
            pos += _deal_hand(
                dealt,
                keys,
                pos,
                h,
                flat,
                out_cards,
                out_pt,
                out_bt,
                out_win,
                out_nat,
                out_ppair,
                out_bpair,
                out_pn,
                out_bn,
            )
            h += 1
        for i in range(np.uint64(h0), np.uint64(h)):
            out_shoe[i] = shoe_index
            out_hand[i] = i - np.uint64(h0) + _U1
    return h


@kernel(nrt=False)
def deal_sequence(
    cards: np.ndarray,
    table: np.ndarray,
    values: np.ndarray,
    out_cards: np.ndarray,
    out_pt: np.ndarray,
    out_bt: np.ndarray,
    out_win: np.ndarray,
    out_nat: np.ndarray,
    out_ppair: np.ndarray,
    out_bpair: np.ndarray,
    out_pn: np.ndarray,
    out_bn: np.ndarray,
) -> tuple[int, int]:
    """Deal every complete hand from an ordered card sequence.

    Returns (hands written, cards used); cards after the last complete hand
    are left (an incomplete hand is not dealt).
    """
    n = cards.shape[0]
    pos = 0
    h = 0
    while pos + 4 <= n:
        c1 = cards[pos]
        c2 = cards[pos + 1]
        c3 = cards[pos + 2]
        c4 = cards[pos + 3]
        p2 = (values[c1 & 15] + values[c3 & 15]) % 10
        b2 = (values[c2 & 15] + values[c4 & 15]) % 10
        c5 = 0
        c6 = 0
        packed = table[p2, b2, 0, 0]
        if p2 < 8 and b2 < 8 and (p2 <= 5 or b2 <= 5):
            if pos + 4 >= n:
                break
            c5 = cards[pos + 4]
            v5 = values[c5 & 15]
            packed = table[p2, b2, v5, 0]
            if (packed >> 8) & 1 and (packed >> 9) & 1:
                if pos + 5 >= n:
                    break
                c6 = cards[pos + 5]
                packed = table[p2, b2, v5, values[c6 & 15]]
        pos += _write_hand(
            h,
            c1,
            c2,
            c3,
            c4,
            c5,
            c6,
            packed,
            out_cards,
            out_pt,
            out_bt,
            out_win,
            out_nat,
            out_ppair,
            out_bpair,
            out_pn,
            out_bn,
        )
        h += 1
    return h, pos


_SIX = np.arange(6)


@deal_shoes.in_python
def _deal_shoes_python(  # type: ignore[no-untyped-def]
    pack, key, shoe_ids, cut_card, extra_hands, burn, cut_mode, cut_at, table, values,
    max_hands, out_shoe, out_hand, out_cards, out_pt, out_bt, out_win, out_nat, out_ppair,
    out_bpair, out_pn, out_bn, out_burn, shuffled, cut, keys, state,
):  # fmt: skip
    """`deal_shoes` for `interpreted` runs: every shoe shuffled at once, in
    whole-array operations over the shoes (`shuffle_lanes`), each shoe's
    chain of hands walked in Python's integers, then every hand written at
    once (element by element, in numpy's scalars, the writes cost several
    times the walk). The same hands, and the same work arrays after, checked
    against the compiled form."""
    n = pack.shape[0]
    m = shoe_ids.shape[0]
    if m == 0:
        return 0
    limit = n - cut_card
    flat = table.reshape(table.size).tolist()
    top = n - 6
    lanes = seed_lanes(key, shoe_ids)
    shoes_cards = np.tile(pack, (m, 1))
    shuffle_lanes(shoes_cards, lanes)
    if cut_mode == 2:
        cuts = bounded_lanes(lanes, n + 1).tolist()
    else:
        cuts = [cut_at if cut_mode == 1 else 0] * m
    last_cut = None  # the last shoe cut, as `cut` holds it
    packs = []  # each hand's table entry
    sixes = []  # each shoe's hands' first six cards
    shoes = []  # (shoe number, its hands)
    for k in range(m):
        shoe_index = int(shoe_ids[k])
        dealt = shoes_cards[k]
        c = cuts[k]
        if 0 < c < n:
            # the top c cards go to the bottom
            dealt = last_cut = np.concatenate((dealt[c:], dealt[:c]))
        _hand_keys(dealt, keys)
        keys_l = keys.tolist()
        pos = 0
        if burn:
            v = int(values[dealt[0]])
            pos = 1 + (10 if v == 0 else v)
        out_burn[k] = pos
        room = max_hands
        starts = []  # where each of its hands starts
        while pos <= top and room > 0:
            entry = flat[keys_l[pos]]
            starts.append(pos)
            packs.append(entry)
            pos += 4 + ((entry >> 8) & 1) + ((entry >> 9) & 1)
            room -= 1
            if pos > limit:
                break
        for _ in range(extra_hands):
            if pos + 6 > n or room <= 0:
                break
            entry = flat[keys_l[pos]]
            starts.append(pos)
            packs.append(entry)
            pos += 4 + ((entry >> 8) & 1) + ((entry >> 9) & 1)
            room -= 1
        if starts:
            sixes.append(dealt[np.add.outer(np.array(starts), _SIX)])
        shoes.append((shoe_index, len(starts)))
    # the work arrays as the compiled deal leaves them: the last shoe's
    shuffled[:] = shoes_cards[m - 1]
    if last_cut is not None:
        cut[:] = last_cut
    state[:] = lanes[:, m - 1]
    h = len(packs)
    if h == 0:
        return 0
    six = np.concatenate(sixes)
    entry = np.array(packs, np.int64)
    c1, c2, c3, c4, c5, c6 = (six[:, j] for j in range(6))
    pdrew = (entry >> 8) & 1
    bdrew = (entry >> 9) & 1
    cards = out_cards[:h]
    cards[:, 0] = c1
    cards[:, 1] = c3
    cards[:, 2] = np.where(pdrew == 1, c5, 0)
    cards[:, 3] = c2
    cards[:, 4] = c4
    cards[:, 5] = np.where(bdrew == 1, np.where(pdrew == 1, c6, c5), 0)
    out_pt[:h] = entry & 15
    out_bt[:h] = (entry >> 4) & 15
    out_win[:h] = (entry >> 12) & 3
    out_nat[:h] = (entry & 0x800) != 0
    out_ppair[:h] = (c1 & 15) == (c3 & 15)
    out_bpair[:h] = (c2 & 15) == (c4 & 15)
    out_pn[:h] = 2 + pdrew
    out_bn[:h] = 2 + bdrew
    counts = [m for _, m in shoes]
    out_shoe[:h] = np.repeat(np.array([s for s, _ in shoes], dtype=np.int64), counts)
    first = np.repeat(np.cumsum([0] + counts[:-1]), counts)
    out_hand[:h] = np.arange(h) - first + 1
    return h
