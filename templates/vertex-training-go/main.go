// A training job, with its package, machine and epochs from each stack's
// Pulumi.<stack>.yaml: `local` runs it on this machine, `dev` on Vertex AI. Every key a
// job takes is in vertex-training's docs/plugin.md.
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
				Wait:       pulumi.String("succeeded"),
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
		return nil
	})
}
