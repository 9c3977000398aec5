// Command release builds fluxpack's Flux CLI plugin release into a folder:
// flux-pack_<version>_<os>_<arch>.tar.gz per platform, checksums.txt, and
// the plugin manifest pack.yaml and catalog.yaml the flux CLI installs from
// (make release). Usage:
//
//	go run ./hack/release -version v0.3.0 -base-url https://…/download/v0.3.0/ -d dist
//
// With -archive it only writes the release archive of a binary built
// already (make test-bins, for the action's tests):
//
//	go run ./hack/release -archive bin/test/fluxpack -o bin/test/flux-pack.tar.gz
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/fluxpack/fluxpack/internal/release"
)

func main() {
	version := flag.String("version", "", "the version fluxpack prints (e.g. v0.3.0)")
	baseURL := flag.String("base-url", "", "where the archives are downloaded from (a folder URL)")
	dir := flag.String("d", "dist", "output folder")
	platforms := flag.String("platforms", "", "comma-separated os/arch list (default: linux and darwin, amd64 and arm64)")
	archive := flag.String("archive", "", "write only the release archive of this binary (to -o)")
	out := flag.String("o", "", "with -archive: the archive's path")
	flag.Parse()

	if *archive != "" {
		if err := writeArchive(*archive, *out); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			os.Exit(1)
		}
		return
	}

	o := release.Options{Version: *version, BaseURL: *baseURL, Dir: *dir, Module: "."}
	if o.BaseURL != "" && !strings.HasSuffix(o.BaseURL, "/") {
		o.BaseURL += "/"
	}
	if *platforms != "" {
		for _, p := range strings.Split(*platforms, ",") {
			goos, goarch, ok := strings.Cut(p, "/")
			if !ok {
				fmt.Fprintf(os.Stderr, "release: platform %q is not os/arch\n", p)
				os.Exit(2)
			}
			o.Platforms = append(o.Platforms, release.Platform{OS: goos, Arch: goarch})
		}
	}
	res, err := release.Build(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, a := range res.Artifacts {
		fmt.Printf("%s  %s\n", a.SHA256, a.Name)
	}
	fmt.Println(res.Manifest)
	fmt.Println(res.Catalog)
}

// writeArchive writes release.Archive of the binary at bin to out.
func writeArchive(bin, out string) error {
	if out == "" {
		return fmt.Errorf("-archive needs -o")
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	a, err := release.Archive(release.BinaryName, exe)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", bin, err)
	}
	return os.WriteFile(out, a, 0o644)
}
