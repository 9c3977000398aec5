package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(t *testing.T, stream string) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	p := &progress{out: &out, pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
	require.NoError(t, p.read(strings.NewReader(stream)))
	ok := p.summary()
	return out.String(), ok
}

func TestProgress(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		ok     bool
		want   []string
		absent []string
	}{{
		name: "passing packages are one line each, their tests' output dropped",
		stream: `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestA"}
{"Action":"output","Package":"a","Test":"TestA","Output":"noise of a passing test\n"}
{"Action":"pass","Package":"a","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"a","Elapsed":1.5}
{"Action":"skip","Package":"b"}
`,
		ok:     true,
		want:   []string{"ok   a (1.5s)", "1 packages passed, 0 failed, 1 without tests"},
		absent: []string{"noise"},
	}, {
		name: "a failed test's output is printed whole",
		stream: `{"Action":"start","Package":"a"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"fine\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestBad","Output":"    bad_test.go:12: wanted 1, got 2\n"}
{"Action":"fail","Package":"a","Test":"TestBad"}
{"Action":"output","Package":"a","Output":"FAIL\n"}
{"Action":"fail","Package":"a","Elapsed":2}
`,
		want:   []string{"FAIL a (2.0s)", "bad_test.go:12: wanted 1, got 2", "0 packages passed, 1 failed"},
		absent: []string{"fine"},
	}, {
		name: "a test a timeout killed is printed with its package's failure",
		stream: `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestSlow"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"    slow_test.go:9: step 3 of 5\n"}
{"Action":"output","Package":"a","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"a","Output":"\trunning tests:\n\t\tTestSlow (10m0s)\n"}
{"Action":"fail","Package":"a","Elapsed":600}
`,
		want: []string{"FAIL a (600.0s)", "slow_test.go:9: step 3 of 5", "panic: test timed out", "TestSlow (10m0s)"},
	}, {
		name: "a package that never finishes fails the run",
		stream: `{"Action":"start","Package":"slow"}
{"Action":"output","Package":"slow","Output":"panic: test timed out after 10m0s\n"}
`,
		want: []string{"panic: test timed out", "FAIL slow (did not finish)"},
	}, {
		name: "a build failure is shown with its output",
		stream: `{"ImportPath":"a [a.test]","Action":"build-output","Output":"a/x_test.go:3:1: syntax error\n"}
{"ImportPath":"a [a.test]","Action":"build-fail"}
{"Action":"start","Package":"a"}
{"Action":"output","Package":"a","Output":"FAIL\ta [build failed]\n"}
{"Action":"fail","Package":"a","Elapsed":0}
`,
		want: []string{"FAIL build a [a.test]", "syntax error", "1 failed"},
	}, {
		name:   "lines that are not JSON pass through",
		stream: "go: downloading example.com/m v1.0.0\n",
		ok:     true,
		want:   []string{"go: downloading example.com/m v1.0.0"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := run(t, tt.stream)
			assert.Equal(t, tt.ok, ok, "summary's verdict\n%s", out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, out, a)
			}
		})
	}
}

func TestRunningNamesTheLongestFirst(t *testing.T) {
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	p := &progress{pkgs: map[string]*pkgState{
		"fast": {started: now.Add(-10 * time.Second)},
		"slow": {started: now.Add(-3 * time.Minute)},
	}}
	assert.Equal(t, "...  still running: slow (3m0s), fast (10s)", p.running(now))
	assert.Empty(t, (&progress{pkgs: map[string]*pkgState{}}).running(now))
}
