"""kairox.runtime."""
