"""The reference project's program: everything its stack config declares.

Each stack file (stacks/Pulumi.<stack>.yaml) declares a platform and jobs under
``vertex-training:*`` keys; ``deploy_stack_config`` makes them (docs/library.md shows
the same resources made from a program's own arguments).
"""

from vertex_training import deploy_stack_config

deploy_stack_config()
