// Command testprogress reads `go test -json` on stdin and says how the run
// goes while it goes: a line per package as it finishes (not in import
// order, as plain go test prints them, so a slow package first in the list
// does not hide the rest), every minute the packages still running and for
// how long, and the whole output of every failed test, build failure and
// panic. It exits 1 when a package failed or did not finish.
//
//	go test -json ./... | go run ./hack/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

type pkgState struct {
	started time.Time
	output  map[string][]string // test ("" for the package) → its output lines
	order   []string            // tests in the order they first printed
}

type progress struct {
	mu      sync.Mutex
	out     io.Writer
	pkgs    map[string]*pkgState
	builds  map[string][]string // import path → build output
	failed  []string
	passed  int
	skipped int
}

func main() {
	p := &progress{out: os.Stdout, pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	stop := make(chan struct{})
	go p.heartbeat(time.Minute, stop)
	err := p.read(os.Stdin)
	close(stop)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	if !p.summary() {
		os.Exit(1)
	}
}

func (p *progress) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not test2json: go test's own messages (a package that does not
			// compile, a setup failure). Shown as they are.
			p.mu.Lock()
			fmt.Fprintf(p.out, "%s\n", line)
			p.mu.Unlock()
			continue
		}
		p.handle(e)
	}
	return sc.Err()
}

func (p *progress) state(pkg string, at time.Time) *pkgState {
	s := p.pkgs[pkg]
	if s == nil {
		s = &pkgState{started: at, output: map[string][]string{}}
		p.pkgs[pkg] = s
	}
	return s
}

func (p *progress) handle(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Action {
	case "build-output":
		p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		fmt.Fprintf(p.out, "FAIL build %s\n%s", e.ImportPath, strings.Join(p.builds[e.ImportPath], ""))
		return
	}
	if e.Package == "" {
		return
	}
	s := p.state(e.Package, e.Time)
	switch e.Action {
	case "start":
		s.started = e.Time
	case "output":
		if _, seen := s.output[e.Test]; !seen && e.Test != "" {
			s.order = append(s.order, e.Test)
		}
		s.output[e.Test] = append(s.output[e.Test], e.Output)
	case "fail":
		if e.Test != "" {
			return // its output is printed with its package's verdict
		}
		p.failed = append(p.failed, e.Package)
		fmt.Fprintf(p.out, "FAIL %s (%.1fs)\n", e.Package, e.Elapsed)
		p.printFailures(s)
		delete(p.pkgs, e.Package)
	case "pass", "skip":
		if e.Test != "" {
			delete(s.output, e.Test) // a passed test's output is not needed
			return
		}
		if e.Action == "skip" { // no test files
			p.skipped++
		} else {
			p.passed++
			fmt.Fprintf(p.out, "ok   %s (%.1fs)\n", e.Package, e.Elapsed)
		}
		delete(p.pkgs, e.Package)
	}
}

// printFailures prints the output of every test of a package that did not
// pass (failed, or was still running when a timeout killed the binary), in
// the order they ran, then the package's own output (a panic, TestMain's
// messages).
func (p *progress) printFailures(s *pkgState) {
	for _, t := range s.order {
		if out, ok := s.output[t]; ok {
			fmt.Fprint(p.out, strings.Join(out, ""))
		}
	}
	fmt.Fprint(p.out, strings.Join(s.output[""], ""))
}

func (p *progress) heartbeat(every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			if line := p.running(now); line != "" {
				fmt.Fprintln(p.out, line)
			}
			p.mu.Unlock()
		}
	}
}

// running says which packages run and for how long, longest first.
func (p *progress) running(now time.Time) string {
	type run struct {
		pkg string
		d   time.Duration
	}
	var runs []run
	for pkg, s := range p.pkgs {
		runs = append(runs, run{pkg, now.Sub(s.started).Truncate(time.Second)})
	}
	if len(runs) == 0 {
		return ""
	}
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].d != runs[j].d {
			return runs[i].d > runs[j].d
		}
		return runs[i].pkg < runs[j].pkg
	})
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%s (%s)", r.pkg, r.d)
	}
	return "...  still running: " + strings.Join(parts, ", ")
}

// summary prints the last line and reports whether the run passed: no
// package failed, and none started without finishing (a killed run).
func (p *progress) summary() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var unfinished []string
	for pkg, s := range p.pkgs {
		unfinished = append(unfinished, pkg)
		p.printFailures(s)
	}
	sort.Strings(unfinished)
	for _, pkg := range unfinished {
		fmt.Fprintf(p.out, "FAIL %s (did not finish)\n", pkg)
	}
	fmt.Fprintf(p.out, "%d packages passed, %d failed, %d without tests\n", p.passed, len(p.failed)+len(unfinished), p.skipped)
	return len(p.failed) == 0 && len(unfinished) == 0
}
