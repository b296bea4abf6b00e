"""Training jobs, declared per environment in Pulumi.<stack>.yaml.

The `local` stack runs its jobs on this machine (no Google Cloud account needed); the
`dev` stack runs them on Vertex AI in its gcp:project, with a platform made for them (the
APIs, a staging bucket, a Docker repository, the jobs' service account). Every key a job
takes is in vertex-training's docs/config-shape.md; `vertex-training render
Pulumi.dev.yaml` prints the requests a stack would submit, with no cloud call.

To add jobs to resources of your own instead, make them here with vertex_training's
TrainingJob (docs/library.md).
"""

import vertex_training as vt

vt.deploy_stack_config()
