"""A tiny shop used to show Kairox's language-server tools."""
