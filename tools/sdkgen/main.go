// Command sdkgen writes the plugin's SDKs from its schema, with the code generators the
// Pulumi CLI's language hosts run for `pulumi package gen-sdk`, at the release the CLI is
// built from (tools/pulumi-cli). The language hosts that carry those generators are not
// served by the Go module proxy, so `make sdks` runs them through this program instead.
//
//	sdkgen SCHEMA OUT LANGUAGE...
//
// writes OUT/LANGUAGE for each of nodejs, go and python, each folder emptied first.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// The tool name the generators write into each file's header.
const tool = "pulumi-vertex-training-sdkgen"

// noPackages loads no other package: the schema refers to none.
type noPackages struct{}

var errNoPackages = errors.New("the vertex-training schema refers to no other package")

func (noPackages) LoadPackage(string, *semver.Version) (*schema.Package, error) {
	return nil, errNoPackages
}

func (noPackages) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errNoPackages
}

func (noPackages) LoadPackageReference(string, *semver.Version) (schema.PackageReference, error) {
	return nil, errNoPackages
}

func (noPackages) LoadPackageReferenceV2(
	context.Context, *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, errNoPackages
}

func generate(language string, pkg *schema.Package) (map[string][]byte, error) {
	switch language {
	case "nodejs":
		return nodejs.GeneratePackage(tool, pkg, nil, nil, false, noPackages{})
	case "go":
		return gogen.GeneratePackage(tool, pkg, nil)
	case "python":
		return python.GeneratePackage(tool, pkg, nil, noPackages{})
	}
	return nil, fmt.Errorf("no generator for %q here: nodejs, go or python", language)
}

func run(schemaPath, out string, languages []string) error {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	for _, language := range languages {
		// Each generator records what it reads in the package: bind it anew for each.
		var spec schema.PackageSpec
		if err := json.Unmarshal(data, &spec); err != nil {
			return fmt.Errorf("%s: %w", schemaPath, err)
		}
		pkg, diags, err := schema.BindSpec(spec, noPackages{}, schema.ValidationOptions{})
		if err != nil {
			return err
		}
		if diags.HasErrors() {
			return fmt.Errorf("%s: %w", schemaPath, diags)
		}
		files, err := generate(language, pkg)
		if err != nil {
			return fmt.Errorf("%s SDK: %w", language, err)
		}
		root := filepath.Join(out, language)
		if err := os.RemoveAll(root); err != nil {
			return err
		}
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			path := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, files[name], 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %d files in %s\n", language, len(names), root)
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
