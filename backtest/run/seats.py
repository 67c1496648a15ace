"""What is checked of a run's seats and money before any hand: the bets
each can place at this table and on these shoes, stakes off the table's
limits, and amounts that could outgrow the integers money is counted in."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from backtest.core.errors import ConfigError, MissingDataError, StrategyError
from backtest.core.hands import Hands, describe_column
from backtest.core.rules import Bet, bet_mask, combination
from backtest.loop import payouts
from backtest.run.config import MONEY_LIMIT, RunConfig, ticks
from backtest.run.plan import hands_bound
from strategies.base import Builtin, Strategy, head_params
from strategies.slots import P_SIDE


def _possible_bets(strat: Strategy, where: str) -> set[Bet]:
    """What a strategy says it may bet (a user's class may say it wrongly)."""
    said = strat.possible_bets()
    try:
        ok = all(isinstance(b, Bet) for b in said)
    except TypeError:  # not a collection
        ok = False
    if not ok:
        raise StrategyError(
            f"{where}: possible_bets() must return a set of backtest.core.rules.Bet "
            f"members, got {said!r}"
        )
    return set(said)


def check_seats(config: RunConfig, strategies: Sequence[Strategy], hands: Hands) -> None:
    """Before any hand: every bet a seat may place is offered and settleable."""
    rules = config.rules
    for i, (seat, strat) in enumerate(zip(config.seats, strategies)):
        where = f"{config.source}: seats[{i}] ({seat.label})"
        for bet in sorted(_possible_bets(strat, where), key=lambda b: b.code):
            if (
                isinstance(strat, Builtin)
                or type(strat).possible_bets is not Strategy.possible_bets
            ):
                if rules.payout(bet) is None:
                    raise StrategyError(
                        f"{where}: the {rules.name} table does not offer the {bet} "
                        f"bet (it offers {', '.join(rules.offered_bets())})"
                    )
                if payouts.missing_for(bet, hands, rules):
                    try:
                        hands.require([bet])  # what the bet needs at any table
                    except MissingDataError as exc:
                        raise MissingDataError(f"{where}: {exc}") from None
                    lacking = " and the ".join(
                        describe_column(c) for c in payouts.missing_columns(bet, hands, rules)
                    )
                    raise MissingDataError(
                        f"{where}: the {bet} bet under the {rules.name} rules "
                        f"needs the {lacking}, which {hands.source} "
                        "does not record"
                    )
        try:  # the common head every loop reads: the edges and the side bets
            head = head_params(strat)
        except StrategyError as exc:
            raise StrategyError(f"{where}: {exc}") from None
        for bet in Bet:
            stake, top = float(head[P_SIDE + bet.code]), config.limits.maximum[bet]
            if stake > top:
                # over it, every hand would count as over the maximum and restart
                # the progression the side bet stands beside
                raise ConfigError(
                    f"{where}: params.side_bets.{bet}: {stake:g} is over the "
                    f"table maximum for {bet} ({top:g}); give at most {top:g}"
                )
        fixed = strat.fixed_stakes() if isinstance(strat, Builtin) else None
        side = {bet: float(head[P_SIDE + bet.code]) for bet in Bet}
        _warn_off_limits(config, strat, fixed, side, where)
        if fixed:
            from fractions import Fraction

            from backtest.core.errors import RulesError
            from backtest.core.rules import check_bets

            try:
                check_bets({b: Fraction(str(v)) for b, v in fixed.items()}, rules)
            except RulesError as exc:
                raise StrategyError(f"{where}: {exc}") from None
        if strat.uses_cards and "cards" not in hands.known:
            raise MissingDataError(
                f"{where}: this strategy counts cards, but {hands.source} records no cards"
            )
        bets = strat.possible_bets()
        if (
            bets
            and not any(side.values())
            and all(combination(bet_mask([b]), True, rules.pairs_need_main_bet) for b in bets)
        ):
            warnings.warn(
                f"{where}: may bet only {' and '.join(sorted(b.value for b in bets))}, "
                f"and at the {rules.name} table a pair bet needs a Player, Banker or "
                "Tie bet beside it: this seat will never bet (let it bet a main bet "
                "too, or choose a table that takes pair bets alone)",
                NeverBetsWarning,
                stacklevel=2,
            )


class NeverBetsWarning(UserWarning):
    """A seat the table's rules leave no bet to place."""


class BelowMinimumWarning(UserWarning):
    """A built-in's stake is under the table minimum: the table raises it."""


class OverMaximumWarning(UserWarning):
    """A built-in's base or flat stake is over the table maximum."""


def _warn_off_limits(
    config: RunConfig,
    strat: Strategy,
    fixed: dict[Bet, float] | None,
    side: dict[Bet, float],
    where: str,
) -> None:
    """Say when a built-in's base stake, a flat stake or a side bet is under the
    table minimum (raised to it on every hand), or a base or flat stake over
    the maximum (played at the maximum on every hand): either way the system
    does not run as written."""
    if not isinstance(strat, Builtin):
        return
    base = getattr(strat.params, "base", None)
    asked = dict(fixed or {})
    if isinstance(base, (int, float)):
        asked.update({b: float(base) for b in strat.main_bets()})
    limits = config.limits
    ordered = sorted(asked.items(), key=lambda i: i[0].code)
    low = [(b, x, "") for b, x in ordered if 0 < x < limits.minimum[b]]
    if fixed is None:  # (fixed stakes hold the side bets already; one on a main bet adds to it)
        mains = strat.main_bets()
        low += [
            (b, x, "side bet ")
            for b, x in side.items()
            if b not in mains and 0 < x < limits.minimum[b]
        ]
    if low:
        said = ", ".join(
            f"{kind}{x:g} on {b} (minimum {limits.minimum[b]:g})" for b, x, kind in low
        )
        warnings.warn(
            f"{where}: stakes under the table minimum are raised to it, so the "
            f"system does not run as written: {said}",
            BelowMinimumWarning,
            stacklevel=2,
        )
    high = [(b, x) for b, x in ordered if x > limits.maximum[b]]
    if high:
        said = ", ".join(f"{x:g} on {b} (maximum {limits.maximum[b]:g})" for b, x in high)
        warnings.warn(
            f"{where}: stakes over the table maximum are played at the maximum on "
            f"every hand, so the system does not run as written: {said}",
            OverMaximumWarning,
            stacklevel=2,
        )


def _below(x: float) -> str:
    """x rounded down to three significant digits, for advice to stay under it."""
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return f"{math.floor(x / step) * step:.3g}"


def check_money(config: RunConfig, sessions: int | None = None) -> None:
    """Refuse amounts too large to count exactly. The engine keeps money in
    ticks of 1 / (100 * D) of a currency unit (D, the rules' money
    denominator) in 64-bit integers, and in one hand a bankroll can grow by
    at most every bet at its table maximum, won at the best payout."""
    rules = config.rules
    den = rules.money_denominator
    s = config.session

    def in_ticks(amount: float | None) -> int:
        return 0 if amount is None else ticks(amount, den)

    start = in_ticks(s.bankroll) + in_ticks(s.win_goal)
    if start >= MONEY_LIMIT:
        key = "session.bankroll" if in_ticks(s.bankroll) >= MONEY_LIMIT // 2 else "session.win_goal"
        raise ConfigError(
            f"{config.source}: {key}: a bankroll of {s.bankroll:g}"
            + (f" and a win goal of {s.win_goal:g}" if s.win_goal else "")
            + f" is too much to count to the cent under these rules (in 1/{den} units); "
            f"keep {'their sum' if s.win_goal else 'it'} below {_below(MONEY_LIMIT / (100 * den))}"
        )
    hands = hands_bound(config, sessions)
    best = max([1.0] + [float(rules.payout(b) or 0) for b in Bet])
    per_hand = sum(in_ticks(config.limits.maximum[b]) for b in Bet) * (1 + best)
    if start + hands * per_hand >= MONEY_LIMIT:
        room = (MONEY_LIMIT - start) / (hands * len(Bet) * (1 + best) * 100 * den)
        raise ConfigError(
            f"{config.source}: table.max (or table.limits): with table maxima up to "
            f"{max(config.limits.maximum.values()):g} and sessions of up to {hands:,} hands, "
            f"a bankroll could grow past what is counted to the cent; keep every table "
            f"maximum below {_below(room)}, or shorten the sessions"
        )
