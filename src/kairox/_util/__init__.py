"""Tiny pure helpers shared by every layer: names, ``${VAR}`` expansion, JSON aliases, bounded decoding.

A private package with no API of its own: importers name the module that defines what they use."""
