"""The installed distribution's version (``vertex_training.__version__``).

Its own module, read on first use: reading the distribution's metadata costs tens of
milliseconds, which every process importing the package (the program, the provider host,
each local job's supervisor) would otherwise pay.
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("vertex-training")
except metadata.PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0+unknown"
