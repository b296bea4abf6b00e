// A training job, with its package, machine and epochs from each stack's
// Pulumi.<stack>.yaml: `local` runs it on this machine, `dev` on Vertex AI. Every key a
// job takes is in vertex-training's docs/config-shape.md (camelCase here);
// `vertex.TrainingJob` and its arguments are typed.
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const config = new pulumi.Config();

const example = new vertex.TrainingJob("example", {
    job: {
        pythonPackage: config.requireObject<vertex.types.input.PythonPackageArgs>("pythonPackage"),
        args: ["--epochs", config.get("epochs") ?? "4"],
        machine: config.get("machine") ?? "n1-standard-4",
        scheduling: { timeout: "30m" },
        // Where the trainer writes (AIP_MODEL_DIR is its model/ folder); on Vertex AI a
        // bucket's folder, which the model is registered from.
        baseOutputDirectory: config.get("outputDirectory"),
        wait: "succeeded",
        // The trained model becomes a version of this model in the Model Registry (on
        // `local`, in this machine's registry): version 1, then one per retrain.
        model: {
            id: "example",
            aliases: ["candidate"],
            serving: { framework: { name: "sklearn", version: "1.6" } },
        },
    },
});

// Waits for the jobs it lists to reach the state their `wait` asks for, and fails the
// update with each failed job's error and last log lines.
const waiter = new vertex.JobWaiter("wait-for-jobs", { jobs: [example.waiterEntry] });

export const state = waiter.states.apply((states) => states["example"]);
export const outputDirectory = example.outputDirectory;
export const logs = example.logsUrl;
export const modelVersion = waiter.models.apply((models) => models?.["example"]?.versionName);
