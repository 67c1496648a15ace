"""The table over hands: unit results, the one session loop, its plain-Python form."""
