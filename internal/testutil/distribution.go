package testutil

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Distribution is a real CNCF distribution registry server (the `registry`
// binary hack/tools.sh builds), started on 127.0.0.1 by a test and stopped by
// its cleanup.
type Distribution struct {
	// Host is 127.0.0.1:port.
	Host string
	// CAFile is the PEM file of the CA that signed the server's certificate
	// (TLS only).
	CAFile string
	// Dir holds the config, the storage and the log.
	Dir string
}

// DistributionOptions choose how the server is set up.
type DistributionOptions struct {
	// TLS serves HTTPS with a certificate for 127.0.0.1 signed by a CA made
	// for the test.
	TLS bool
	// Users, when set, turns on htpasswd basic auth with these user → password.
	Users map[string]string
}

// StartDistribution starts a registry server and waits until it answers.
func StartDistribution(t testing.TB, o DistributionOptions) *Distribution {
	t.Helper()
	bin := Tool(t, "registry")
	d := &Distribution{Dir: t.TempDir()}
	port := FreePort(t)
	d.Host = fmt.Sprintf("127.0.0.1:%d", port)

	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, filepath.Join(d.Dir, "storage"), d.Host)
	if o.TLS {
		d.CAFile = filepath.Join(d.Dir, "ca.pem")
		cert, key := filepath.Join(d.Dir, "server.pem"), filepath.Join(d.Dir, "server-key.pem")
		writeCA(t, d.CAFile, cert, key)
		cfg += fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", cert, key)
	}
	if len(o.Users) > 0 {
		var htpasswd bytes.Buffer
		for _, u := range SortedKeys(o.Users) {
			h, err := bcrypt.GenerateFromPassword([]byte(o.Users[u]), bcrypt.MinCost)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&htpasswd, "%s:%s\n", u, h)
		}
		p := filepath.Join(d.Dir, "htpasswd")
		if err := os.WriteFile(p, htpasswd.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: fluxpack-test\n    path: %s\n", p)
	}
	cfgPath := filepath.Join(d.Dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(d.Dir, "registry.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("registry log (%s):\n%s", logPath, tail(b, 4000))
		}
	})
	d.waitReady(t, o.TLS, logPath)
	return d
}

func (d *Distribution) waitReady(t testing.TB, useTLS bool, logPath string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // readiness probe only
	scheme := "http"
	if useTLS {
		scheme = "https"
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Get(scheme + "://" + d.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(logPath)
	t.Fatalf("registry on %s did not answer within 30s; log:\n%s", d.Host, tail(b, 4000))
}

// handedOut holds every port FreePort returned in this process, so that
// tests running in parallel (several clusters at once) never get the same
// port while the first is still to bind it.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that no earlier call in this process returned.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no free port on 127.0.0.1 that was not handed out before")
	return 0
}

// writeCA makes a CA and a server certificate for 127.0.0.1 and localhost,
// and writes the CA's certificate and the server's certificate and key.
func writeCA(t testing.TB, caFile, certFile, keyFile string) {
	t.Helper()
	ca, caKey := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fluxpack test CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}, nil, nil)
	cert, key := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, caKey)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, caFile, "CERTIFICATE", ca.Raw)
	writePEM(t, certFile, "CERTIFICATE", cert.Raw)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
}

// WriteSelfSignedCA writes another CA's certificate to path, for tests that a
// wrong CA is refused.
func WriteSelfSignedCA(t testing.TB, path string) {
	t.Helper()
	dir := t.TempDir()
	writeCA(t, path, filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"))
}

// newCert makes an ECDSA P-256 key and a certificate for it from tmpl,
// valid from an hour ago for a day, signed by parent's parentKey, or
// self-signed when parent is nil.
func newCert(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
