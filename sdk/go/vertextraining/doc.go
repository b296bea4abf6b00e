// Google Cloud training jobs (Vertex AI CustomJobs and hyperparameter tuning jobs) as Pulumi resources.
package vertextraining
