"""vertex-training: Google Cloud training jobs as Pulumi resources."""
