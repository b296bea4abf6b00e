"""A review of any program's change, read from what the engine shows of it.

``resources``: each resource as the engine shows it (a preview's steps, a policy pack's
arguments) -> the jobs it declares, read from the resource's own inputs whatever host
made it (the plugin's types from TypeScript, Go, YAML or Python; the Python package's
dynamic resources from a stack file or from code), and the platform's grants and
buckets. ``review``: ``pulumi preview --json`` -> the plan ``vertex-training plan``
prints (``vertex_training.review.plan``), rendered by the same functions.
"""
