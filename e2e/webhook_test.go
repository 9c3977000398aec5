//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Webhook is the stand-in operator's admission webhook: a server run by the
// test on 127.0.0.1, over TLS with a CA made for the test. Its port is bound
// up front but not listened on until Serve, so until then the API server's
// calls are refused (connect: connection refused), as they are by a webhook
// pod still starting, and no other process can take the port meanwhile.
type Webhook struct {
	t        *testing.T
	addr     string
	ca       *authority
	tls      *tls.Config
	requests atomic.Int64

	mu sync.Mutex
	fd int // the bound socket until Serve listens on it or the test ends; then -1
}

func NewWebhook(t *testing.T) *Webhook {
	ca := newAuthority(t, "fluxpack e2e webhook CA")
	fd, port, err := boundSocket()
	require.NoError(t, err, "webhook: binding a port on 127.0.0.1")
	w := &Webhook{t: t, fd: fd, ca: ca, tls: ca.tlsConfig(t, "webhook"), addr: fmt.Sprintf("127.0.0.1:%d", port)}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.fd >= 0 {
			_ = syscall.Close(w.fd)
			w.fd = -1
		}
	})
	return w
}

// boundSocket is a TCP socket bound to a port of 127.0.0.1 the kernel
// chooses, not listening: a connection to it is refused, and the port is
// not handed to anyone else (not even as the local port of a connection).
func boundSocket() (fd, port int, err error) {
	syscall.ForkLock.RLock() // close-on-exec before any child can inherit it
	fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return 0, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return 0, 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

// Serve starts answering admission reviews (allowing every object) on the
// bound port; it is stopped when the test ends. Calling it again, or after
// the test ended, does nothing.
func (w *Webhook) Serve() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	fd := w.fd
	w.fd = -1
	f := os.NewFile(uintptr(fd), "webhook") // owns fd from here
	defer f.Close()
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		w.t.Errorf("webhook: listening on %s: %v", w.addr, err)
		return
	}
	l, err := net.FileListener(f) // a copy of the socket
	if err != nil {
		w.t.Errorf("webhook: listening on %s: %v", w.addr, err)
		return
	}
	srv := &http.Server{Handler: http.HandlerFunc(w.review), TLSConfig: w.tls, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	w.t.Cleanup(func() { _ = srv.Close() })
}

func (w *Webhook) review(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "bad admission review", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&review)
}

// Requests is how many admission reviews it answered.
func (w *Webhook) Requests() int64 { return w.requests.Load() }

// URL is where the API server reaches the server, without a path (any path
// is served): what a chart's webhook clientConfig.url starts with.
func (w *Webhook) URL() string { return "https://" + w.addr }

// CABundle is the PEM of the CA that signed the server's certificate: a
// webhook's clientConfig.caBundle.
func (w *Webhook) CABundle() []byte { return w.ca.certPEM }

// Configuration is the ValidatingWebhookConfiguration the stand-in operator
// ships: External Secrets' two validating webhooks, failurePolicy Fail,
// reaching the test's server through clientConfig.url.
func (w *Webhook) Configuration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	hook := func(name, resource string) admissionregistrationv1.ValidatingWebhook {
		url := "https://" + w.addr + "/validate-external-secrets-io-v1-" + resource
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.ca.certPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"external-secrets.io"}, APIVersions: []string{"v1"}, Resources: []string{resource}},
			}},
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "externalsecret-validate"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("validate.externalsecret.external-secrets.io", "externalsecrets"),
			hook("validate.clustersecretstore.external-secrets.io", "clustersecretstores"),
		},
	}
}

// RunGatedPods plays the container runtime for pods whose gate annotation is
// "closed" (kwok holds them back from Ready): once such a pod is bound to the
// node, it waits startup (the container starting) and, when hold is not
// nil, until hold is closed (the test has seen the order its case forces),
// calls started (the process now serves), and only then opens the gate, so
// the pod turns Ready, and its Deployment Available, strictly after started
// returned.
func (c *Cluster) RunGatedPods(startup time.Duration, hold <-chan struct{}, started func()) {
	c.runGatedPods(func(*corev1.Pod) (podStart, error) {
		return podStart{startup: startup, hold: hold, started: started}, nil
	})
}

// podStart is how the test starts one gated pod: after startup and once
// hold (if not nil) is closed, it calls started (if not nil), then opens
// the gate.
type podStart struct {
	startup time.Duration
	hold    <-chan struct{}
	started func()
}

// runGatedPods is RunGatedPods with a start per pod; an error breaks the
// cluster.
func (c *Cluster) runGatedPods(start func(*corev1.Pod) (podStart, error)) {
	seen := map[types.UID]bool{}
	c.WatchEach(&corev1.PodList{}, func(ctx context.Context, obj client.Object) {
		pod := obj.(*corev1.Pod)
		if pod.Annotations[podGateAnnotation] != "closed" || pod.Spec.NodeName == "" || seen[pod.UID] {
			return
		}
		seen[pod.UID] = true
		key := client.ObjectKeyFromObject(pod)
		s, err := start(pod)
		if err != nil {
			c.breakWith(fmt.Sprintf("Pod/%s: %v", key, err))
			return
		}
		go func() {
			select {
			case <-time.After(s.startup):
			case <-ctx.Done():
				return
			}
			if s.hold != nil {
				select {
				case <-s.hold:
				case <-ctx.Done():
					return
				}
			}
			if s.started != nil {
				s.started()
			}
			patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"open"}}}`, podGateAnnotation))
			var p corev1.Pod
			p.Name, p.Namespace = key.Name, key.Namespace
			if err := c.Client.Patch(ctx, &p, client.RawPatch(types.MergePatchType, patch)); err != nil && ctx.Err() == nil {
				c.breakWith(fmt.Sprintf("opening the gate of Pod/%s: %v", key, err))
			}
		}()
	})
}

// WatchEach calls fn, one call at a time, with every object of list's type
// that exists or is added or changed, from now until the test ends. fn's
// context ends with the test.
func (c *Cluster) WatchEach(list client.ObjectList, fn func(context.Context, client.Object)) {
	t := c.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	stop, err := c.startWatch(ctx, list, fn)
	if err != nil {
		cancel()
		t.Fatalf("watching %T: %v", list, err)
	}
	t.Cleanup(func() {
		cancel()
		stop()
	})
}

// startWatch is WatchEach until ctx ends or stop is called, for callers that
// are not the test's goroutine.
func (c *Cluster) startWatch(ctx context.Context, list client.ObjectList, fn func(context.Context, client.Object)) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	if err := c.Client.List(ctx, list); err != nil {
		cancel()
		return nil, err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		cancel()
		return nil, err
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return c.Client.Watch(ctx, list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Raw: &opts})
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), lw)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, item := range items {
			if obj, ok := item.(client.Object); ok {
				fn(ctx, obj)
			}
		}
		for ev := range w.ResultChan() {
			if obj, ok := ev.Object.(client.Object); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				fn(ctx, obj)
			}
		}
	}()
	return func() {
		cancel()
		w.Stop()
		<-done
	}, nil
}
