module ${PROJECT}

go 1.25.11

require (
	github.com/pulumi/pulumi/sdk/v3 v3.259.0
	github.com/vertex-training/vertex-training/sdk/go v0.3.0
)
