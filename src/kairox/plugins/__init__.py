"""kairox.plugins."""
