"""kairox.registry."""
