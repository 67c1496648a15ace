"""The game itself: cards, the rules, how each bet is settled, hands, errors."""
