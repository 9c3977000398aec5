//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// running holds the process groups of every component started, so that an
// interrupt stops them all before the test binary exits (t.Cleanup does not
// run then). Each component also dies with the test binary (Pdeathsig).
var running struct {
	sync.Mutex
	pgids map[int]string
}

func killAll() {
	running.Lock()
	defer running.Unlock()
	for pgid := range running.pgids {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func TestMain(m *testing.M) {
	running.pgids = map[int]string{}
	ctrllog.SetLogger(logr.Discard()) // the tests' client logs nothing worth seeing
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		killAll()
		fmt.Fprintf(os.Stderr, "e2e: %v: stopped every component\n", s)
		os.Exit(2)
	}()
	code := m.Run()
	killAll()
	if err := writeSummary(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: writing the summary: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// process is one component of a cluster, running in its own process group
// with its output in Dir/<name>.log.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
	stopped atomic.Bool
}

// start runs bin with args and env (added to the test's environment) as
// component name. The cleanup kills its process group; if it exits on its
// own before that, the cluster is marked broken so that waits fail at once.
func (c *Cluster) start(name, bin string, env []string, args ...string) {
	t := c.t
	t.Helper()
	logPath := filepath.Join(c.Dir, name+".log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting %s (%s): %v", name, bin, err)
	}
	pgid := cmd.Process.Pid
	running.Lock()
	running.pgids[pgid] = name
	running.Unlock()

	p := &process{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
		if !p.stopped.Load() {
			c.breakWith(fmt.Sprintf("%s exited: %v; log: %s\n%s", name, p.err, logPath, tailFile(logPath, 3000)))
		}
	}()
	t.Cleanup(func() {
		p.stopped.Store(true)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
		running.Lock()
		delete(running.pgids, pgid)
		running.Unlock()
	})
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
