"""vertex-training: Google Cloud training jobs as Pulumi resources.

The package is a Pulumi program's library, not a published one: import what you need
from the module that defines it (docs/layout.md lists them by layer). Importing the
package loads neither Pulumi nor a Google client library; it only lets stacks written by
earlier releases find the modules their state names (``provider._moved``).
"""

from __future__ import annotations

from provider import _moved

_moved.install()
