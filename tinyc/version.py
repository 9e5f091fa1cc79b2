"""tinyc's version, at the bottom of the layers: the on-disk caches key their entries with it."""

__version__ = "0.1.0"
