"""kairox.skills."""
