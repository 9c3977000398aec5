//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	notifyv1 "github.com/fluxcd/notification-controller/api/v1"
	notifyv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// fluxNamespace is where the Flux controllers run and the root objects live.
const fluxNamespace = "flux-system"

// Deadlines are failure bounds for a slow, shared machine, never
// measurements: a healthy run is far below each.
const (
	startDeadline     = 2 * time.Minute // one component to become ready
	reconcileDeadline = 8 * time.Minute // a case's layers to become Ready (stock flags: 30s per edge without wake)
)

// Cluster is a control plane with Flux, running on 127.0.0.1 for one test.
type Cluster struct {
	t *testing.T
	// Dir holds every component's data, certificates and log.
	Dir string
	// Config reaches kube-apiserver as an admin (system:masters).
	Config *rest.Config
	// Client is a controller-runtime client knowing the core, CRD and Flux
	// types.
	Client client.WithWatch
	// Registry is a real registry server (plain HTTP on loopback).
	Registry *testutil.Distribution
	// Mode is how the Flux controllers were started.
	Mode Mode
	// ReceiverURL is where notification-controller's webhook receiver
	// answers (what a wake Secret's address starts with).
	ReceiverURL string
	// eventsURL is notification-controller's event endpoint, which the
	// other controllers post their events to, as in a Flux install.
	eventsURL string

	broken     chan struct{}
	brokenOnce sync.Once
	brokenMsg  string
}

// scheme knows every type the tests read or write.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, sourcev1.AddToScheme, kustomizev1.AddToScheme,
		helmv2.AddToScheme, notifyv1.AddToScheme, notifyv1beta3.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// Mode is how a cluster's Flux controllers are started: Stock is what users
// run (every flag at its default: kustomize- and helm-controller poll a
// dependency that is not Ready every 30s); Fast sets
// --requeue-dependency=1s on both, as a platform team may, and as the e2e
// did until issue 17. Every case runs in both.
type Mode struct {
	Name string
	// RequeueDependency is the --requeue-dependency flag, or "" for the
	// controllers' default.
	RequeueDependency string
	// NoCrossNamespaceRefs starts kustomize- and helm-controller with
	// their stock flag --no-cross-namespace-refs=true (Flux's
	// multi-tenancy lockdown): a source in another namespace is refused.
	NoCrossNamespaceRefs bool
}

var (
	Stock = Mode{Name: "stock"}
	Fast  = Mode{Name: "fast", RequeueDependency: "1s"}
	modes = []Mode{Stock, Fast}
)

// forEachMode runs f as a parallel subtest per Mode, stock first.
func forEachMode(t *testing.T, f func(t *testing.T, m Mode)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			f(t, m)
		})
	}
}

// StartCluster starts etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok with one fake node, the Flux CRDs, source-controller,
// kustomize-controller, helm-controller and notification-controller (the
// first three posting their events to the last, as in a Flux install),
// started as m says, and a registry, and stops them all when the test ends.
// Logs of a failed test are copied to e2e/logs/<test>/.
func StartCluster(t *testing.T, m Mode) *Cluster {
	t.Helper()
	bins := map[string]string{}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "source-controller", "kustomize-controller", "helm-controller", "notification-controller"} {
		bins[name] = testutil.Tool(t, name)
	}
	c := &Cluster{t: t, Dir: t.TempDir(), broken: make(chan struct{}), Mode: m}
	t.Cleanup(c.keepLogs) // registered after TempDir: runs before its removal, after the processes stop
	started := time.Now()

	etcdURL := c.startEtcd(bins["etcd"])
	c.startAPIServer(bins["kube-apiserver"], etcdURL)
	t.Cleanup(c.dumpObjects) // runs first: while the API server still answers
	kubeconfig := c.writeKubeconfig()

	c.start("kube-controller-manager", bins["kube-controller-manager"], nil,
		"--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--service-account-private-key-file="+c.path("sa.key"), "--root-ca-file="+c.path("ca.pem"),
		"--use-service-account-credentials=false", "--controllers=*,-nodeipam")
	c.start("kube-scheduler", bins["kube-scheduler"], nil,
		"--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0")
	c.startKwok(bins["kwok"], kubeconfig)

	c.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}})
	for _, ctl := range []string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller"} {
		c.installCRDs(filepath.Join(resolvedDir(t, bins[ctl]), "crds"))
	}
	c.startNotificationController(bins["notification-controller"], kubeconfig)
	c.startSourceController(bins["source-controller"], kubeconfig)
	c.startKustomizeController(bins["kustomize-controller"], kubeconfig)
	c.startHelmController(bins["helm-controller"], kubeconfig)
	c.waitWorkers(map[string][]string{
		"notification-controller": {"receiver", "alert", "provider"},
		"source-controller":       {"ocirepository", "helmrepository", "helmchart", "gitrepository", "bucket"},
		"kustomize-controller":    {"kustomization"},
		"helm-controller":         {"helmrelease"},
	})
	c.Registry = testutil.StartDistribution(t, testutil.DistributionOptions{})
	t.Logf("cluster (%s flags) up in %s (%s)", m.Name, time.Since(started).Round(10*time.Millisecond), c.Dir)
	return c
}

func (c *Cluster) path(name string) string { return filepath.Join(c.Dir, name) }

func (c *Cluster) write(name string, data []byte) string {
	c.t.Helper()
	p := c.path(name)
	require.NoError(c.t, os.WriteFile(p, data, 0o600))
	return p
}

// breakWith marks the cluster broken (a component died): every wait fails.
func (c *Cluster) breakWith(msg string) {
	c.brokenOnce.Do(func() {
		c.brokenMsg = msg
		close(c.broken)
	})
}

// poll calls cond every 100ms until it is true; it fails the test when the
// deadline passes or a component dies, with the last error cond returned.
func (c *Cluster) poll(what string, deadline time.Duration, cond func(context.Context) (bool, error)) {
	c.t.Helper()
	waitFor(c.t, c, what, deadline, cond)
}

// waitFor is Cluster.poll for any test (a subtest, say): it calls cond every 100ms until it
// is true, and fails t when the deadline passes or a component dies.
func waitFor(t *testing.T, c *Cluster, what string, deadline time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-c.broken:
			t.Fatalf("waiting for %s: %s", what, c.brokenMsg)
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not done within %s (last error: %v)", what, deadline, last)
		case <-tick.C:
		}
	}
}

func (c *Cluster) startEtcd(bin string) string {
	client, peer := testutil.FreePort(c.t), testutil.FreePort(c.t)
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	c.start("etcd", bin, nil,
		"--name=e2e", "--data-dir="+c.path("etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	c.poll("etcd", startDeadline, func(ctx context.Context) (bool, error) {
		body, err := httpGet(ctx, http.DefaultClient, clientURL+"/health", "")
		return err == nil && strings.Contains(body, `"health":"true"`), err
	})
	return clientURL
}

// adminToken authenticates every client as a member of system:masters.
const adminToken = "fluxpack-e2e-admin-token"

func (c *Cluster) startAPIServer(bin, etcdURL string) {
	t := c.t
	ca := newAuthority(t, "fluxpack e2e cluster CA")
	certPEM, keyPEM := ca.serving(t, "kube-apiserver")
	saKey, saPub := signingKey(t)
	c.write("ca.pem", ca.certPEM)
	c.write("sa.key", saKey)
	c.write("sa.pub", saPub)
	c.write("tokens.csv", []byte(adminToken+",admin,admin-uid,system:masters\n"))
	port := testutil.FreePort(t)
	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	c.start("kube-apiserver", bin, nil,
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+c.write("apiserver.pem", certPEM), "--tls-private-key-file="+c.write("apiserver-key.pem", keyPEM),
		"--client-ca-file="+c.path("ca.pem"),
		"--token-auth-file="+c.path("tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer="+host, "--service-account-key-file="+c.path("sa.pub"),
		"--service-account-signing-key-file="+c.path("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24", "--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none", "--cert-dir="+c.path("apiserver-certs"))

	c.Config = &rest.Config{
		Host: host, BearerToken: adminToken, QPS: 200, Burst: 400,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.certPEM},
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.certPEM)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	c.poll("kube-apiserver /readyz", startDeadline, func(ctx context.Context) (bool, error) {
		body, err := httpGet(ctx, hc, host+"/readyz", adminToken)
		return err == nil && body == "ok", err
	})
	cl, err := client.NewWithWatch(c.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	c.Client = cl
}

func (c *Cluster) writeKubeconfig() string {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: adminToken}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	cfg.CurrentContext = "e2e"
	p := c.path("kubeconfig")
	require.NoError(c.t, clientcmd.WriteToFile(*cfg, p))
	return p
}

// podGateAnnotation holds a pod back from Ready while its value is
// "closed": the test opens it, as a container that has finished starting.
const podGateAnnotation = "e2e.fluxpack.io/gate"

// startKwok starts kwok with the Stages hack/tools.sh wrote (nodes initialise
// and keep their lease, pods become Ready), the pod-ready Stage restricted to
// pods whose gate is not closed, and registers one fake node.
func (c *Cluster) startKwok(bin, kubeconfig string) {
	t := c.t
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "kwok-stages.yaml"))
	require.NoError(t, err, "reading the kwok Stages: run `hack/tools.sh kwok`")
	var out bytes.Buffer
	gated := false
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		var stage map[string]any
		require.NoError(t, sigyaml.Unmarshal(doc, &stage))
		if stage == nil {
			continue
		}
		if name, _, _ := unstructuredString(stage, "metadata", "name"); name == "pod-ready" {
			sel := stage["spec"].(map[string]any)["selector"].(map[string]any)
			sel["matchExpressions"] = append(sel["matchExpressions"].([]any), map[string]any{
				"key": fmt.Sprintf(".metadata.annotations[%q]", podGateAnnotation), "operator": "NotIn", "values": []any{"closed"},
			})
			gated = true
		}
		b, err := sigyaml.Marshal(stage)
		require.NoError(t, err)
		out.WriteString("---\n")
		out.Write(b)
	}
	require.True(t, gated, "no pod-ready Stage in the kwok Stages")
	c.start("kwok", bin, nil,
		"--kubeconfig="+kubeconfig, "--config="+c.write("kwok-stages.yaml", out.Bytes()),
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-lease-duration-seconds=40", "--cidr=10.0.1.0/24", "--node-ip=127.0.0.1",
		fmt.Sprintf("--server-address=127.0.0.1:%d", testutil.FreePort(t)))

	list := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("250"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "kwok-node-0",
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"kubernetes.io/hostname": "kwok-node-0", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
		},
		Status: corev1.NodeStatus{Allocatable: list, Capacity: list},
	}
	c.create(node)
	c.poll("node kwok-node-0 Ready", startDeadline, func(ctx context.Context) (bool, error) {
		var n corev1.Node
		if err := c.Client.Get(ctx, client.ObjectKey{Name: node.Name}, &n); err != nil {
			return false, err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return len(n.Spec.Taints) == 0, fmt.Errorf("taints %v", n.Spec.Taints)
			}
		}
		return false, errors.New("not Ready yet")
	})
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, fmt.Errorf("%s is not an object", f)
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// installCRDs creates every CRD in dir and waits until each is Established.
func (c *Cluster) installCRDs(dir string) {
	t := c.t
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no CRDs in %s: run `hack/tools.sh e2e`", dir)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, sigyaml.Unmarshal(raw, &crd), "decoding %s", f)
		c.create(&crd)
		c.poll("CustomResourceDefinition/"+crd.Name+" Established", startDeadline, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Client.Get(ctx, client.ObjectKeyFromObject(&crd), &got); err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	}
}

// controllerEnv is how a Flux controller finds the cluster (it takes no
// --kubeconfig flag), with a temp dir of its own, as a pod has: at start
// kustomize-controller deletes every kustomization-* dir in its temp dir,
// which in a shared /tmp are the working dirs of the other clusters'
// controllers, running at the same time.
func (c *Cluster) controllerEnv(name, kubeconfig string) []string {
	tmp := c.path("tmp-" + name)
	require.NoError(c.t, os.MkdirAll(tmp, 0o755))
	return []string{"KUBECONFIG=" + kubeconfig, "RUNTIME_NAMESPACE=" + fluxNamespace, "TMPDIR=" + tmp}
}

func (c *Cluster) startSourceController(bin, kubeconfig string) {
	storage := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	health := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	require.NoError(c.t, os.MkdirAll(c.path("storage"), 0o755)) // it refuses a missing storage path
	c.start("source-controller", bin, c.controllerEnv("source-controller", kubeconfig),
		"--storage-path="+c.path("storage"), "--storage-addr="+storage, "--storage-adv-addr="+storage,
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", testutil.FreePort(c.t)), "--health-addr="+health,
		"--watch-all-namespaces=true", "--enable-leader-election=false", "--events-addr="+c.eventsURL)
	c.waitHealthy("source-controller", health)
}

// startNotificationController starts notification-controller with its
// event endpoint and webhook receiver on loopback (in a cluster: the
// notification-controller and webhook-receiver Services).
func (c *Cluster) startNotificationController(bin, kubeconfig string) {
	health := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	events := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	receiver := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	c.start("notification-controller", bin, c.controllerEnv("notification-controller", kubeconfig),
		"--events-addr="+events, "--receiverAddr="+receiver,
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", testutil.FreePort(c.t)), "--health-addr="+health,
		"--watch-all-namespaces=true", "--enable-leader-election=false")
	c.waitHealthy("notification-controller", health)
	c.eventsURL, c.ReceiverURL = "http://"+events+"/", "http://"+receiver
}

// modeFlags are the flags m adds to kustomize- and helm-controller.
func (c *Cluster) modeFlags() []string {
	var flags []string
	if c.Mode.RequeueDependency != "" {
		flags = append(flags, "--requeue-dependency="+c.Mode.RequeueDependency)
	}
	if c.Mode.NoCrossNamespaceRefs {
		flags = append(flags, "--no-cross-namespace-refs=true")
	}
	return flags
}

func (c *Cluster) startKustomizeController(bin, kubeconfig string) {
	health := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	c.start("kustomize-controller", bin, c.controllerEnv("kustomize-controller", kubeconfig),
		append(c.modeFlags(), "--no-remote-bases=true",
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", testutil.FreePort(c.t)), "--health-addr="+health,
			"--watch-all-namespaces=true", "--enable-leader-election=false", "--events-addr="+c.eventsURL)...)
	c.waitHealthy("kustomize-controller", health)
}

// startHelmController starts helm-controller, which fetches charts from
// source-controller's storage (its advertised address) and installs them with
// the admin kubeconfig. Like kustomize-controller it re-checks dependencies
// and sources that are not ready every --requeue-dependency (the Mode's).
func (c *Cluster) startHelmController(bin, kubeconfig string) {
	health := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(c.t))
	c.start("helm-controller", bin, c.controllerEnv("helm-controller", kubeconfig),
		append(c.modeFlags(),
			fmt.Sprintf("--metrics-addr=127.0.0.1:%d", testutil.FreePort(c.t)), "--health-addr="+health,
			"--watch-all-namespaces=true", "--enable-leader-election=false", "--events-addr="+c.eventsURL)...)
	c.waitHealthy("helm-controller", health)
}

// waitWorkers waits until each Flux controller has started the workers of
// each of its reconcilers, as its log says ("Starting workers"). /readyz
// answers as soon as the manager's probe server is up, before its caches
// have synced and its reconcilers run: an object created then waits for the
// controller's own start-up (0.1 to 2 s on a fresh cluster), time that is
// no layout's and would be measured as the first layer's. A controller
// that runs for long, as in a cluster bootstrapped before the push, has
// long started them.
func (c *Cluster) waitWorkers(controllers map[string][]string) {
	for _, name := range slices.Sorted(maps.Keys(controllers)) {
		logPath := c.path(name + ".log")
		c.poll(name+" workers of "+strings.Join(controllers[name], ", "), startDeadline, func(context.Context) (bool, error) {
			b, err := os.ReadFile(logPath)
			if err != nil {
				return false, err
			}
			for _, r := range controllers[name] {
				if !startedWorkers(b, r) {
					return false, fmt.Errorf("%s: no workers of %s yet", logPath, r)
				}
			}
			return true, nil
		})
	}
}

// startedWorkers reports whether a controller-runtime JSON log holds the
// "Starting workers" line of the reconciler named controller.
func startedWorkers(log []byte, controller string) bool {
	for line := range bytes.Lines(log) {
		if bytes.Contains(line, []byte(`"msg":"Starting workers"`)) && bytes.Contains(line, []byte(`"controller":"`+controller+`"`)) {
			return true
		}
	}
	return false
}

func (c *Cluster) waitHealthy(name, addr string) {
	c.poll(name+" /readyz", startDeadline, func(ctx context.Context) (bool, error) {
		_, err := httpGet(ctx, http.DefaultClient, "http://"+addr+"/readyz", "")
		return err == nil, err
	})
}

// create creates obj, failing the test on error.
func (c *Cluster) create(obj client.Object) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), time.Minute)
	defer cancel()
	require.NoError(c.t, c.Client.Create(ctx, obj), "creating %T %s", obj, obj.GetName())
}

func httpGet(ctx context.Context, hc *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b), nil
}

// resolvedDir is the folder of the file a .cache/bin link points at, where
// hack/tools.sh keeps what belongs with the binary (the Flux CRDs).
func resolvedDir(t *testing.T, bin string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(bin)
	require.NoError(t, err)
	return filepath.Dir(p)
}

// dumpObjects writes the Flux objects, workloads and events of a failed test
// to Dir/objects.yaml, which keepLogs then keeps.
func (c *Cluster) dumpObjects() {
	if !c.t.Failed() || c.Client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.t.Context()), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	for _, list := range []client.ObjectList{
		&sourcev1.OCIRepositoryList{}, &kustomizev1.KustomizationList{}, &helmv2.HelmReleaseList{}, &appsv1.DeploymentList{},
		&corev1.PodList{}, &corev1.EventList{},
	} {
		if err := c.Client.List(ctx, list); err != nil {
			fmt.Fprintf(&out, "# listing %T: %v\n", list, err)
			continue
		}
		items, _ := apimeta.ExtractList(list)
		for _, item := range items {
			b, _ := sigyaml.Marshal(item)
			fmt.Fprintf(&out, "---\n# %T\n%s", item, b)
		}
	}
	_ = os.WriteFile(c.path("objects.yaml"), out.Bytes(), 0o600)
}

// keepLogs copies the logs and the object dump of a failed test to
// e2e/logs/<test>/ in the checkout (git-ignored); with
// FLUXPACK_E2E_KEEP_LOGS=1, the logs of a passing test too (to read where
// a run's time went).
func (c *Cluster) keepLogs() {
	if !c.t.Failed() && os.Getenv("FLUXPACK_E2E_KEEP_LOGS") != "1" {
		return
	}
	dst := filepath.Join(testutil.RepoRoot(c.t), "e2e", "logs", strings.ReplaceAll(c.t.Name(), "/", "_"))
	_ = os.RemoveAll(dst)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		c.t.Logf("keeping logs: %v", err)
		return
	}
	files, _ := filepath.Glob(c.path("*.log"))
	files = append(files, c.path("objects.yaml"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			_ = os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644)
		}
	}
	c.t.Logf("component logs and objects kept in %s", dst)
}
