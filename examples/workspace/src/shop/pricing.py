"""Prices in cents, and the discounts applied to them."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    """Something in the shop, priced in cents."""

    name: str
    price_cents: int


def apply_discount(price_cents: int, percent: int) -> int:
    """The price after taking ``percent`` off, rounded down to whole cents."""
    return price_cents * (100 - percent) // 100
