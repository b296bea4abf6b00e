// Command sdkgen-java writes the plugin's Java SDK from its schema with pulumi-java's code
// generator, as its language host's GeneratePackage does: the types deduplicated as Java
// names them, the schema bound, the package generated. pulumi-java is a module of its own
// (the newest release the Go module proxy serves is v1.17.0, on Pulumi v3.205.0), hence
// this program beside sdkgen (docs/release.md).
//
//	sdkgen-java SCHEMA OUT
//
// writes OUT (emptied first).
package main

import (
	"fmt"
	"os"

	javagen "github.com/pulumi/pulumi-java/pkg/codegen/java"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"vertex-training/tools/sdkwrite"
)

func run(schemaPath, out string) error {
	spec, err := sdkwrite.ReadSpec(schemaPath)
	if err != nil {
		return err
	}
	deduplicated, diags, err := javagen.DeduplicateTypes(spec)
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return diags
	}
	pkg, err := sdkwrite.Bind(*deduplicated, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return err
	}
	files, err := javagen.GeneratePackage(sdkwrite.Tool, pkg, nil, nil, false, false)
	if err != nil {
		return err
	}
	return sdkwrite.Write(out, files)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen-java SCHEMA OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen-java:", err)
		os.Exit(1)
	}
}
