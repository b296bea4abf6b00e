"""An example training application for Vertex AI custom jobs (run: python -m trainer.task)."""
