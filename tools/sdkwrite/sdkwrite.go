// Package sdkwrite is what the SDK generators of tools/ (sdkgen, sdkgen-java,
// sdkgen-dotnet) share: reading and binding the plugin's schema, and writing an SDK's
// files into a folder emptied first. Each generator is a module of its own because each
// needs the Pulumi release its code generator is served at.
package sdkwrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// Tool is the name the generators write into each file's header.
const Tool = "pulumi-vertex-training-sdkgen"

// NoPackages loads no other package: the schema refers to none.
type NoPackages struct{}

var errNoPackages = errors.New("the vertex-training schema refers to no other package")

func (NoPackages) LoadPackage(string, *semver.Version) (*schema.Package, error) {
	return nil, errNoPackages
}

func (NoPackages) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errNoPackages
}

func (NoPackages) LoadPackageReference(string, *semver.Version) (schema.PackageReference, error) {
	return nil, errNoPackages
}

func (NoPackages) LoadPackageReferenceV2(
	context.Context, *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, errNoPackages
}

// ReadSpec reads the schema at path.
func ReadSpec(path string) (*schema.PackageSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &spec, nil
}

// Bind binds a schema, which refers to no other package.
func Bind(spec schema.PackageSpec, options schema.ValidationOptions) (*schema.Package, error) {
	pkg, diags, err := schema.BindSpec(spec, NoPackages{}, options)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return pkg, nil
}

// Write empties root and writes files into it, by their paths.
func Write(root string, files map[string][]byte) error {
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
	fmt.Fprintf(os.Stderr, "%d files in %s\n", len(names), root)
	return nil
}
