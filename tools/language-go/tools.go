//go:build tools

// Package tools names the program this module builds, so that `go mod tidy` keeps its
// dependencies in go.sum.
package tools

import _ "github.com/pulumi/pulumi/sdk/v3/go/pulumi-language-go"
