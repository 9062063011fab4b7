"""The version, in a module of its own: packages inside Kairox read it from here, not from ``kairox``, whose
names reach into every layer."""

__version__ = "0.1.0"
