//go:build tools

// Package tools names the two programs this module builds, so that `go mod tidy`
// keeps their dependencies in go.sum.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
	_ "github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python"
)
