"""The name this project's package had before 0.2.0 (``provider``), for state that names it.

Stacks deployed by a release before the package was ``vertex_training`` hold dynamic
providers pickled as ``provider.resources.training_job.TrainingJobProvider`` (and, from
before state schema 2, ``provider.training_job``). The engine's provider host starts in
this directory and finds this module first; it answers every ``provider.X`` with the
module ``vertex_training.X``, so those stacks refresh, update and destroy as before.
Nothing else imports it, and it is no part of the installed package.
"""

from vertex_training._moved import serve_legacy_package

serve_legacy_package(globals())
