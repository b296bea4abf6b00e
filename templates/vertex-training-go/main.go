// A training job, with its package, machine and epochs from each stack's
// Pulumi.<stack>.yaml: `local` runs it on this machine, `dev` on Vertex AI. Every key a
// job takes is in vertex-training's docs/config-shape.md (camelCase here).
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
	vertex "github.com/vertex-training/vertex-training/sdk/go/vertextraining"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		var pkg vertex.PythonPackage
		config.RequireObject(ctx, "pythonPackage", &pkg)
		epochs := config.Get(ctx, "epochs")
		if epochs == "" {
			epochs = "4"
		}
		machine := config.Get(ctx, "machine")
		if machine == "" {
			machine = "n1-standard-4"
		}
		var outputDirectory *string
		if named := config.Get(ctx, "outputDirectory"); named != "" {
			outputDirectory = &named
		}

		example, err := vertex.NewTrainingJob(ctx, "example", &vertex.TrainingJobArgs{
			Job: &vertex.JobArgs{
				PythonPackage: &vertex.PythonPackageArgs{
					PackageUris:   pulumi.ToStringArray(pkg.PackageUris),
					Module:        pulumi.String(pkg.Module),
					ExecutorImage: pulumi.StringPtrFromPtr(pkg.ExecutorImage),
				},
				Args:       pulumi.StringArray{pulumi.String("--epochs"), pulumi.String(epochs)},
				Machine:    pulumi.String(machine),
				Scheduling: &vertex.SchedulingArgs{Timeout: pulumi.String("30m")},
				// Where the trainer writes (AIP_MODEL_DIR is its model/ folder); on Vertex AI
				// a bucket's folder, which the model is registered from.
				BaseOutputDirectory: pulumi.StringPtrFromPtr(outputDirectory),
				Wait:                pulumi.String("succeeded"),
				// The trained model becomes a version of this model in the Model Registry
				// (on `local`, in this machine's registry): version 1, then one per retrain.
				Model: &vertex.ModelArgs{
					Id:      pulumi.String("example"),
					Aliases: pulumi.StringArray{pulumi.String("candidate")},
					Serving: &vertex.ServingArgs{
						Framework: &vertex.ServingFrameworkArgs{
							Name:    pulumi.String("sklearn"),
							Version: pulumi.String("1.6"),
						},
					},
				},
			},
		})
		if err != nil {
			return err
		}

		// Waits for the jobs it lists to reach the state their `wait` asks for, and fails
		// the update with each failed job's error and last log lines.
		waiter, err := vertex.NewJobWaiter(ctx, "wait-for-jobs", &vertex.JobWaiterArgs{
			Jobs: vertex.WaiterEntryArray{example.WaiterEntry},
		})
		if err != nil {
			return err
		}

		ctx.Export("state", waiter.States.MapIndex(pulumi.String("example")))
		ctx.Export("outputDirectory", example.OutputDirectory)
		ctx.Export("logs", example.LogsUrl)
		ctx.Export("modelVersion", waiter.Models.MapIndex(pulumi.String("example")).VersionName())
		return nil
	})
}
