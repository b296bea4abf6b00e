// Command sdkgen writes the plugin's SDKs for TypeScript, Go and Python from its schema,
// with the code generators the Pulumi CLI's language hosts run for `pulumi package
// gen-sdk`, at the release the CLI is built from (tools/pulumi-cli). The language hosts
// that carry those generators are not served by the Go module proxy, so `make sdks` runs
// them through this program instead (docs/release.md).
//
//	sdkgen SCHEMA OUT LANGUAGE...
//
// writes OUT/LANGUAGE for each of nodejs, go and python, each folder emptied first.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"vertex-training/tools/sdkwrite"
)

func generate(language string, pkg *schema.Package) (map[string][]byte, error) {
	switch language {
	case "nodejs":
		return nodejs.GeneratePackage(sdkwrite.Tool, pkg, nil, nil, false, sdkwrite.NoPackages{})
	case "go":
		return gogen.GeneratePackage(sdkwrite.Tool, pkg, nil)
	case "python":
		return python.GeneratePackage(sdkwrite.Tool, pkg, nil, sdkwrite.NoPackages{})
	}
	return nil, fmt.Errorf("no generator for %q here: nodejs, go or python", language)
}

func run(schemaPath, out string, languages []string) error {
	for _, language := range languages {
		// Each generator records what it reads in the package: bind it anew for each.
		spec, err := sdkwrite.ReadSpec(schemaPath)
		if err != nil {
			return err
		}
		pkg, err := sdkwrite.Bind(*spec, schema.ValidationOptions{})
		if err != nil {
			return err
		}
		files, err := generate(language, pkg)
		if err != nil {
			return fmt.Errorf("%s SDK: %w", language, err)
		}
		if err := sdkwrite.Write(filepath.Join(out, language), files); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen SCHEMA OUT LANGUAGE...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}
