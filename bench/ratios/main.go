// Command ratios runs fluxpack's benchmarks beside Flux's own code in one
// `go test -bench` run and prints a table of ratios, fluxpack ÷ peer, with the
// medians of repeated runs, the goals (issues 6 and 17) and whether each
// holds, and the machine line. `make bench` runs it.
//
// The peers are Flux's libraries (what the flux CLI calls) and physical
// floors (gzip of the same bytes, reading and hashing the tree, a raw blob
// upload). The servers the benchmarks need are started and stopped by the
// benchmarks themselves; this program only runs `go test` and reads its
// output. Packages without benchmarks yet leave their rows marked "not run".
//
// Usage: go run ./bench/ratios [-count 5] [-benchtime 1s] [-raw FILE]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

func main() {
	count := flag.Int("count", 5, "runs of every benchmark; the table shows medians")
	benchtime := flag.String("benchtime", "1s", "go test -benchtime of every run")
	bench := flag.String("bench", ".", "go test -bench pattern")
	raw := flag.String("raw", "", "also write go test's raw output to this file")
	flag.Parse()
	if *count < 1 {
		fmt.Fprintln(os.Stderr, "ratios: -count must be at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *count, *benchtime, *bench, *raw, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "ratios: %v\n", err)
		stop()
		os.Exit(2)
	}
}

// benchPackages are the packages whose benchmarks fill the table, in order;
// those not in the checkout yet are skipped.
var benchPackages = []string{"./oci/", "./internal/preview/", "./layering/", "./lint/", "./fluxrepo/", "./review/", "./fleet/"}

func run(ctx context.Context, count int, benchtime, bench, raw string, stdout io.Writer) error {
	var pkgs []string
	for _, p := range benchPackages {
		if _, err := os.Stat(p); err == nil {
			pkgs = append(pkgs, p)
		}
	}
	load := loadAverage()
	goVersion, err := output(ctx, "go", "env", "GOVERSION")
	if err != nil {
		return err
	}
	procs := runtime.NumCPU()
	args := append([]string{"test", "-run", "^$", "-bench", bench, "-count", fmt.Sprint(count),
		"-benchtime", benchtime, "-cpu", fmt.Sprint(procs), "-timeout", "60m"}, pkgs...)
	fmt.Fprintf(os.Stderr, "ratios: go %s\n", strings.Join(args, " "))

	var rawOut io.Writer = io.Discard
	if raw != "" {
		f, err := os.Create(raw)
		if err != nil {
			return fmt.Errorf("creating %s: %w", raw, err)
		}
		defer f.Close()
		rawOut = f
	}
	res := newResults(procs)
	if err := goTest(ctx, args, func(line string) {
		fmt.Fprintln(rawOut, line)
		fmt.Fprintln(os.Stderr, line) // progress
		res.parse(line)
	}); err != nil {
		return err
	}
	m := machine{cores: procs, cpu: res.cpu, goVersion: goVersion, goos: runtime.GOOS, goarch: runtime.GOARCH, load: load, count: count, benchtime: benchtime}
	printTable(stdout, m, res, rows)
	return nil
}

// goTest runs go with args in its own process group, which an interrupt
// kills whole (the registries the benchmarks start die with their parent),
// and hands every line of its output to onLine.
func goTest(ctx context.Context, args []string, onLine func(string)) error {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting go test: %w", err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		onLine(sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("running go test (its output is above): %w", err)
	}
	return sc.Err()
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("running %s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// loadAverage returns the 1-minute load average, or "?".
func loadAverage() string {
	b, err := os.ReadFile(filepath.Join("/proc", "loadavg"))
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
