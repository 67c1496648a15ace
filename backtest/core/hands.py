"""`Hands`: the one columnar shape every stage reads.

One row per hand: the shoe it came from, its number in that shoe, the cards of
each side (codes, 0 where a side took no third card or the cards were not
recorded), both totals, winner, and the flags the bets need. Generated shoes
and card-level recorded shoes fill every column; outcome-level recorded shoes
fill only what they record, and `known` says which columns that is, so a bet
that needs more fails with a clear error instead of a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from backtest.core.cards import cards_text
from backtest.core.errors import MissingDataError
from backtest.core.rules import Bet, Rules, Winner

#: columns every Hands has
ALWAYS = frozenset({"shoe", "hand", "winner"})
#: columns a source may or may not record
OPTIONAL = (
    "cards",
    "player_total",
    "banker_total",
    "natural",
    "player_pair",
    "banker_pair",
    "card_counts",
)
ALL_KNOWN = frozenset(OPTIONAL)
#: every column of `Hands`, in order
COLUMNS = (
    "shoe",
    "hand",
    "cards",
    "player_total",
    "banker_total",
    "winner",
    "natural",
    "player_pair",
    "banker_pair",
    "player_card_count",
    "banker_card_count",
)

# card matrix columns
P1, P2, P3, B1, B2, B3 = range(6)


@dataclass(frozen=True, eq=False)
class HandRecord:
    """One row of a Hands, readable by `settlement.settle` (None where not recorded)."""

    shoe: int
    hand: int
    winner: Winner
    player_total: int | None
    banker_total: int | None
    natural: bool | None
    player_pair: bool | None
    banker_pair: bool | None
    player_card_count: int | None
    banker_card_count: int | None
    player_cards: tuple[int, ...] = ()
    banker_cards: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class Hands:
    """Columnar hands. Arrays all have one entry per hand (cards: shape (n, 6),
    columns P1 P2 P3 B1 B2 B3). Columns not in `known` hold zeros."""

    shoe: np.ndarray  # int64, shoe number (0-based, in source order)
    hand: np.ndarray  # int32, hand number within its shoe (1-based)
    cards: np.ndarray  # uint8 (n, 6)
    player_total: np.ndarray  # int8
    banker_total: np.ndarray  # int8
    winner: np.ndarray  # int8: 0 player, 1 banker, 2 tie
    natural: np.ndarray  # bool
    player_pair: np.ndarray  # bool
    banker_pair: np.ndarray  # bool
    player_card_count: np.ndarray  # int8: 2 or 3
    banker_card_count: np.ndarray  # int8: 2 or 3
    known: frozenset[str] = ALL_KNOWN
    source: str = "generated"
    #: card codes removed before each shoe's first hand (burn), per shoe; optional
    burned: tuple[tuple[int, ...], ...] = field(default=())
    #: the source's own id of each shoe, by shoe number (as a CSV's shoe
    #: column has it); empty where the source has none
    labels: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.winner.shape[0])

    @property
    def n_shoes(self) -> int:
        return int(np.unique(self.shoe).size)

    def shoe_name(self, shoe: int) -> str:
        """How to name shoe number `shoe` (from 0) to a reader: the source's
        own id where it has one, else its place (from 1)."""
        return self.labels[shoe] if shoe < len(self.labels) else str(shoe + 1)

    # -- building

    @classmethod
    def empty(cls, known: frozenset[str] = ALL_KNOWN, source: str = "generated") -> Hands:
        return cls.from_columns(0, known=known, source=source)

    @classmethod
    def from_columns(
        cls, n: int, *, known: frozenset[str] = ALL_KNOWN, source: str = "generated", **columns: Any
    ) -> Hands:
        """Build from whichever columns are given; the rest are zero."""
        spec: dict[str, tuple[Any, tuple[int, ...]]] = {
            "shoe": (np.int64, (n,)),
            "hand": (np.int32, (n,)),
            "cards": (np.uint8, (n, 6)),
            "player_total": (np.int8, (n,)),
            "banker_total": (np.int8, (n,)),
            "winner": (np.int8, (n,)),
            "natural": (np.bool_, (n,)),
            "player_pair": (np.bool_, (n,)),
            "banker_pair": (np.bool_, (n,)),
            "player_card_count": (np.int8, (n,)),
            "banker_card_count": (np.int8, (n,)),
        }
        arrays: dict[str, Any] = {}
        for name, (dtype, shape) in spec.items():
            if name in columns:
                arr = np.ascontiguousarray(np.asarray(columns.pop(name), dtype=dtype))
                if arr.shape != shape:
                    raise ValueError(f"column {name} has shape {arr.shape}, expected {shape}")
            else:
                arr = np.zeros(shape, dtype=dtype)
            arrays[name] = arr
        return cls(**arrays, known=frozenset(known), source=source, **columns)

    @classmethod
    def concat(cls, parts: Sequence[Hands]) -> Hands:
        """Stack several Hands; shoe numbers are renumbered to stay distinct."""
        if not parts:
            return cls.empty()
        known = frozenset.intersection(*(p.known for p in parts))
        labelled = all(p.labels for p in parts)
        offset = 0
        shoes = []
        for p in parts:
            shoes.append(p.shoe.astype(np.int64) + offset)
            offset += int(p.shoe.max()) + 1 if len(p) else 0
        cols = {name: np.concatenate([getattr(p, name) for p in parts]) for name in COLUMNS[1:]}
        return cls.from_columns(
            sum(len(p) for p in parts),
            known=known,
            source=parts[0].source,
            shoe=np.concatenate(shoes),
            burned=tuple(b for p in parts for b in p.burned),
            labels=tuple(x for p in parts for x in p.labels) if labelled else (),
            **cols,
        )

    # -- reading

    def require(self, bets: Iterable[Bet], rules: Rules | None = None) -> None:
        """Raise MissingDataError if settling `bets` under `rules` (by default,
        at any table: `settlement.needs`) needs a column not recorded."""
        from backtest.core import settlement

        for bet in bets:
            for need in settlement.needs(bet, rules):
                if need not in self.known:
                    raise MissingDataError(
                        f"{self.source}: the {bet} bet needs the {describe_column(need)} of each hand, "
                        f"which this recorded shoe does not have (it records: "
                        f"{', '.join(sorted(self.known | ALWAYS)) or 'winner only'})"
                    )

    def record(self, i: int) -> HandRecord:
        k = self.known
        c = self.cards[i]
        return HandRecord(
            shoe=int(self.shoe[i]),
            hand=int(self.hand[i]),
            winner=Winner.from_code(int(self.winner[i])),
            player_total=int(self.player_total[i]) if "player_total" in k else None,
            banker_total=int(self.banker_total[i]) if "banker_total" in k else None,
            natural=bool(self.natural[i]) if "natural" in k else None,
            player_pair=bool(self.player_pair[i]) if "player_pair" in k else None,
            banker_pair=bool(self.banker_pair[i]) if "banker_pair" in k else None,
            player_card_count=int(self.player_card_count[i]) if "card_counts" in k else None,
            banker_card_count=int(self.banker_card_count[i]) if "card_counts" in k else None,
            player_cards=tuple(int(x) for x in c[:3] if x) if "cards" in k else (),
            banker_cards=tuple(int(x) for x in c[3:] if x) if "cards" in k else (),
        )

    def take(self, index: np.ndarray) -> Hands:
        """The hands at `index` (row numbers, or a boolean mask), in that order."""
        return self.select(index)

    def select(self, mask: np.ndarray) -> Hands:
        cols = {name: getattr(self, name)[mask] for name in COLUMNS}
        return Hands.from_columns(
            int(cols["winner"].shape[0]),
            known=self.known,
            source=self.source,
            burned=self.burned,
            labels=self.labels,
            **cols,
        )

    def shoe_slice(self, shoe: int) -> Hands:
        """The hands of one shoe (by its number)."""
        return self.select(self.shoe == shoe)

    def dealt_cards(self) -> np.ndarray:
        """Every card dealt into hands, in deal order (P1 B1 P2 B2 P3 B3 per hand)."""
        if "cards" not in self.known:
            raise MissingDataError(f"{self.source}: this recorded shoe has no cards")
        order = self.cards[:, [P1, B1, P2, B2, P3, B3]].reshape(-1)
        return order[order != 0]

    def to_frame(self) -> pl.DataFrame:
        """A polars frame: one row per hand, cards as normalised tokens."""
        k = self.known
        data: dict[str, Any] = {
            "shoe": self.shoe + 1,
            "hand": self.hand,
        }
        if "cards" in k:
            data["player_cards"] = [cards_text(r[:3]) for r in self.cards]
            data["banker_cards"] = [cards_text(r[3:]) for r in self.cards]
        if "player_total" in k:
            data["player_total"] = self.player_total
        if "banker_total" in k:
            data["banker_total"] = self.banker_total
        data["winner"] = pl.Series(self.winner.astype(np.int64)).replace_strict(
            {0: "player", 1: "banker", 2: "tie"}, return_dtype=pl.String
        )
        for name in ("natural", "player_pair", "banker_pair"):
            if name in k:
                data[name] = getattr(self, name)
        if "card_counts" in k:
            data["player_card_count"] = self.player_card_count
            data["banker_card_count"] = self.banker_card_count
        return pl.DataFrame(data)


def describe_column(need: str) -> str:
    """A recorded column in words, as an error names what a shoe lacks."""
    return {"card_counts": "number of cards (two or three) of each side", "cards": "cards"}.get(
        need, need.replace("_", " ")
    )
