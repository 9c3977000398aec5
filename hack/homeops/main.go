// Command homeops writes a repository shaped like the public home-ops
// repositories (see testutil.GenerateHomeOps) into a new git repository, as
// two commits: the tree, then one renovate-style image bump. The review
// benchmark against flate uses the same tree; this command is for timing
// by hand: go run ./hack/homeops -d DIR [-namespaces 12 -apps 12].
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func main() {
	dir := flag.String("d", "", "directory to write (must not exist)")
	namespaces := flag.Int("namespaces", 12, "namespaces under kubernetes/apps")
	apps := flag.Int("apps", 12, "apps per namespace")
	flag.Parse()
	if err := run(*dir, *namespaces, *apps); err != nil {
		fmt.Fprintf(os.Stderr, "homeops: %v\n", err)
		os.Exit(2)
	}
}

func run(dir string, namespaces, apps int) error {
	if dir == "" {
		return fmt.Errorf("give -d DIR")
	}
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists", dir)
	}
	h, err := testutil.GenerateHomeOps(dir, namespaces, apps)
	if err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=homeops", "-c", "user.email=homeops@example.com"}, args...)...)
		cmd.Stderr = os.Stderr
		return cmd.Run()
	}
	if err := git("init", "-q"); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	if err := git("commit", "-q", "-m", "the cluster"); err != nil {
		return err
	}
	p := dir + "/" + h.Release
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	bumped := strings.Replace(string(data), "tag: 1.", "tag: 2.", 1)
	if err := os.WriteFile(p, []byte(bumped), 0o644); err != nil {
		return err
	}
	if err := git("commit", "-q", "-am", "fix(container): update image"); err != nil {
		return err
	}
	fmt.Printf("%s: entry %s, HEAD bumps the image of %s\n", dir, h.Entry, h.Release)
	return nil
}
