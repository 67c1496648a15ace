"""Shoes: the random streams, generated shoes and their deal, recorded shoes, roads."""
