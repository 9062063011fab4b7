"""kairox.hooks."""
