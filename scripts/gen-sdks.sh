#!/usr/bin/env bash
# Writes the plugin's SDKs under OUT (sdk/ by `make sdks`) from its schema
# (provider/vertex_training/plugin/schema.json): TypeScript in OUT/nodejs, Go in OUT/go,
# Python in OUT/python, Java in OUT/java, C# in OUT/dotnet, each with the repository's
# LICENSE. The code is the Pulumi code generators' (tools/sdkgen for the first three,
# tools/sdkgen-java and tools/sdkgen-dotnet for the others, docs/release.md); written
# here: the Go module's go.mod (requiring the Go SDK of the Pulumi release
# requirements.txt pins, and tidied) and the Java SDK's pom.xml (the generator's Gradle
# files are left out: they name package hosts).
#
#   bash scripts/gen-sdks.sh OUT
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gen-sdks.sh OUT}
tools=${VERTEX_TOOLS_DIR:-$root/.tools}
schema=$root/provider/vertex_training/plugin/schema.json
for generator in sdkgen sdkgen-java sdkgen-dotnet; do
  [ -x "$tools/bin/$generator" ] || { echo "no $tools/bin/$generator: run \`make tools\`" >&2; exit 1; }
done

"$tools/bin/sdkgen" "$schema" "$out" nodejs go python
"$tools/bin/sdkgen-java" "$schema" "$out/java"
"$tools/bin/sdkgen-dotnet" "$schema" "$out/dotnet"
for language in nodejs go python java dotnet; do
  cp "$root/LICENSE" "$out/$language/LICENSE"
done

# The Java SDK's Maven build: the Java SDK of Pulumi that the generator's release writes
# for (pulumi-java v1.17.0), Java 11 as the generator targets.
version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$schema")
cat > "$out/java/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by scripts/gen-sdks.sh: the Maven build of the generated Java SDK. -->
<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.github.vertex-training</groupId>
  <artifactId>vertex-training</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <description>Google Cloud training jobs as Pulumi resources: the Java SDK.</description>
  <licenses>
    <license>
      <name>Apache-2.0</name>
    </license>
  </licenses>
  <properties>
    <maven.compiler.release>11</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>com.pulumi</groupId>
      <artifactId>pulumi</artifactId>
      <version>1.17.0</version>
    </dependency>
    <dependency>
      <groupId>com.google.code.gson</groupId>
      <artifactId>gson</artifactId>
      <version>2.8.9</version>
    </dependency>
    <dependency>
      <groupId>com.google.code.findbugs</groupId>
      <artifactId>jsr305</artifactId>
      <version>3.0.2</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
    </plugins>
  </build>
</project>
POM

module=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["language"]["go"]["modulePath"])' "$schema")
pulumi=$(sed -n 's/^pulumi==\([0-9.]*\).*/\1/p' "$root/requirements.txt")
go=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$root/tools/sdkgen/go.mod")
cat > "$out/go/go.mod" <<MOD
module $module

go $go

require github.com/pulumi/pulumi/sdk/v3 v$pulumi
MOD
export GOMODCACHE="${GOMODCACHE:-$tools/go/mod}" GOCACHE="${GOCACHE:-$tools/go/cache}"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
(cd "$out/go" && go mod tidy)
