"""The name this project's package had before 0.2.0 (``provider``), for state that names it.

Stacks deployed by a release before the package was ``vertex_training`` hold dynamic
providers pickled as ``provider.resources.training_job.TrainingJobProvider`` (and, from
before state schema 2, ``provider.training_job``). The engine's provider host starts in
this directory and finds this module first; it answers every ``provider.X`` with the
module ``vertex_training.X``, so those stacks refresh, update and destroy as before.
It is no part of the installed package.

Run as ``python -m provider ...`` (the command line before 0.2.0), it runs
``vertex-training ...``, saying so.
"""

import sys

from vertex_training._moved import serve_legacy_package

serve_legacy_package(globals())

if __name__ == "__main__":
    from vertex_training.__main__ import main

    print("note: `python -m provider` is `vertex-training` since 0.2.0", file=sys.stderr)
    sys.exit(main())
