// Command sdkgen-dotnet writes the plugin's C# SDK from its schema with the .NET code
// generator of github.com/pulumi/pulumi/pkg/v3 v3.225.1, the newest release the Go module
// proxy serves that still carries it (it moved to pulumi-dotnet, which the proxy does not
// serve), hence this program beside sdkgen (docs/release.md).
//
//	sdkgen-dotnet SCHEMA OUT
//
// writes OUT (emptied first). The generator downloads the package's logo for the NuGet
// package's icon (the schema's logoUrl, else Pulumi's); the project has no logo, so its
// requests get the one logo.png beside this file, and nothing reaches the network.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/pulumi/pulumi/pkg/v3/codegen/dotnet"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"vertex-training/tools/sdkwrite"
)

//go:embed logo.png
var logo []byte

// localLogo answers every request with logo.png.
type localLogo struct{}

func (localLogo) RoundTrip(request *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    http.StatusOK,
		Status:        "200 OK",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"image/png"}},
		Body:          io.NopCloser(bytes.NewReader(logo)),
		ContentLength: int64(len(logo)),
		Request:       request,
	}, nil
}

func run(schemaPath, out string) error {
	spec, err := sdkwrite.ReadSpec(schemaPath)
	if err != nil {
		return err
	}
	pkg, err := sdkwrite.Bind(*spec, schema.ValidationOptions{})
	if err != nil {
		return err
	}
	files, err := dotnet.GeneratePackage(sdkwrite.Tool, pkg, nil, nil)
	if err != nil {
		return err
	}
	return sdkwrite.Write(out, files)
}

func main() {
	http.DefaultTransport = localLogo{}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen-dotnet SCHEMA OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen-dotnet:", err)
		os.Exit(1)
	}
}
