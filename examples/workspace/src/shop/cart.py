"""A shopping cart that totals its items."""

from shop.pricing import Item, apply_discount


class Cart:
    """Items a customer is about to buy."""

    def __init__(self) -> None:
        self.items: list[Item] = []

    def add(self, item: Item) -> None:
        """Put one item in the cart."""
        self.items.append(item)

    def total(self, discount_percent: int = 0) -> int:
        """The sum of the prices, with the discount applied to each item."""
        return sum(apply_discount(item.price_cents, discount_percent) for item in self.items)
