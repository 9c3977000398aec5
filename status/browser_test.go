package status_test

import (
	"bytes"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/status"
)

// chromium is the browser TestTimelineInChromium runs: $FLUXPACK_CHROMIUM,
// else Debian's /usr/bin/chromium (make chromium installs it).
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("FLUXPACK_CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("FLUXPACK_REQUIRE_REAL") == "1" {
			t.Fatalf("no chromium at %s: run `make chromium` (FLUXPACK_REQUIRE_REAL=1 forbids skipping)", bin)
		}
		t.Skipf("no chromium at %s: run `make chromium` (apt-get install chromium) to open the timeline page in a real browser", bin)
	}
	return bin
}

// proxy is an HTTP proxy that records every request a browser sends it.
type proxy struct {
	mu   sync.Mutex
	seen []string
}

// browserOwn are the hosts chromium itself reaches whatever the page,
// flags or not (its updater, sign-in): not the page's requests.
var browserOwn = map[string]bool{"update.googleapis.com": true, "accounts.google.com": true}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if !browserOwn[host] {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.Host+" "+r.URL.String())
		p.mu.Unlock()
	}
	http.Error(w, "no network for the page", http.StatusForbidden)
}

func (p *proxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// openPage runs chromium headless on the file page, every request it sends
// going to a recording proxy; it returns the screenshot, the DOM and the
// requests the proxy saw.
func openPage(t *testing.T, bin, page string) ([]byte, string, []string) {
	t.Helper()
	p := &proxy{}
	srv := httptest.NewServer(p)
	defer srv.Close()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--proxy-server=" + srv.URL, "--proxy-bypass-list=<-loopback>", "--window-size=1280,600",
		// Fewer of the browser's own requests (its clock, sign-in,
		// component updates), which are not the page's.
		"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
		"--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-default-browser-check", "--no-pings",
		"--metrics-recording-only", "--disable-default-apps", "--disable-extensions"}
	run := func(args ...string) []byte {
		cmd := exec.CommandContext(t.Context(), bin, append(append(base, args...), "file://"+page)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "chromium %v: %s", args, stderr.String())
		return stdout.Bytes()
	}
	run("--screenshot=" + shot)
	dom := run("--dump-dom", "--virtual-time-budget=2000")
	img, err := os.ReadFile(shot)
	require.NoError(t, err, "chromium wrote no screenshot")
	return img, string(dom), p.requests()
}

// nonBlank is the share of pixels of a PNG that are not white.
func nonBlank(t *testing.T, img []byte) float64 {
	t.Helper()
	m, err := png.Decode(bytes.NewReader(img))
	require.NoError(t, err)
	b := m.Bounds()
	var colored, all int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := m.At(x, y).RGBA()
			all++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				colored++
			}
		}
	}
	return float64(colored) / float64(all)
}

// TestTimelineInChromium opens the timeline page in a real browser: the
// screenshot is not blank, the DOM has one bar per layer, and no request
// leaves the page. A page that does load something from the network is
// seen doing so (the check can fail).
func TestTimelineInChromium(t *testing.T) {
	bin := chromium(t)
	rec := status.NewRecorder(t0)
	names := []string{"namespaces", "crds", "crossplane", "epis", "security", "infrastructure", "observability", "apps"}
	layer := func(i int, state status.State) status.Layer {
		l := status.Layer{Ref: status.Ref{Kind: status.KindKustomization, Namespace: "flux-system", Name: names[i]}, State: state, Current: true}
		if i > 0 {
			l.DependsOn = []string{"flux-system/" + names[i-1]}
		}
		if state == status.StateReady {
			l.Applied, l.Ready = rev, true
		}
		if state == status.StateReconciling {
			l.Step = status.StepHealthChecking
		}
		l.SourceRevision = rev
		return l
	}
	// Each layer waits, health-checks for 3s once its dependency is Ready
	// after a 10s poll gap, then is Ready.
	readyAt := func(i int) int { return 13 * (i + 1) }
	for sec := 0; sec <= readyAt(len(names)-1); sec++ {
		var ls []status.Layer
		for i := range names {
			switch {
			case sec >= readyAt(i):
				ls = append(ls, layer(i, status.StateReady))
			case sec >= readyAt(i)-3:
				ls = append(ls, layer(i, status.StateReconciling))
			default:
				ls = append(ls, layer(i, status.StateWaitingOn))
			}
		}
		rec.Add(&status.Snapshot{At: t0.Add(time.Duration(sec) * time.Second), Layers: ls})
	}
	tl := rec.Timeline()
	require.True(t, tl.Complete)
	var page bytes.Buffer
	require.NoError(t, tl.WriteHTML(&page))
	file := filepath.Join(t.TempDir(), "timeline.html")
	require.NoError(t, os.WriteFile(file, page.Bytes(), 0o644))

	img, dom, requests := openPage(t, bin, file)
	share := nonBlank(t, img)
	t.Logf("screenshot: %d bytes, %.1f%% of its pixels not white", len(img), 100*share)
	assert.Greater(t, share, 0.02, "the screenshot is blank")
	bars := regexp.MustCompile(`<g class="bar" data-layer="([^"]+)"`).FindAllStringSubmatch(dom, -1)
	var got []string
	for _, b := range bars {
		got = append(got, b[1])
	}
	var want []string
	for _, n := range names {
		want = append(want, "flux-system/"+n)
	}
	assert.Equal(t, want, got, "one bar per layer in the DOM chromium built")
	assert.Empty(t, requests, "requests left the page")

	// The control: a page loading an image from the network is caught.
	leaky := filepath.Join(t.TempDir(), "leaky.html")
	require.NoError(t, os.WriteFile(leaky, []byte(`<!DOCTYPE html><html><body><img src="http://example.invalid/pixel.png"><p>leaky</p></body></html>`), 0o644))
	_, _, requests = openPage(t, bin, leaky)
	assert.NotEmpty(t, requests, "the proxy did not see the leaky page's request: the check cannot fail")
}
