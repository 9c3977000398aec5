package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// DefaultAddr is where Listen listens without WithAddr.
const DefaultAddr = "127.0.0.1:5000"

// ShutdownGrace is how long Serve, once its context is done, waits for the
// requests in flight before it closes their connections.
const ShutdownGrace = 5 * time.Second

// ErrNotLoopback is wrapped by Listen's error for an address that is not
// on loopback, without WithAllowRemote.
var ErrNotLoopback = errors.New("not a loopback address")

// ErrInvalidOption is wrapped by the error of an option given a value it
// cannot use. It is the same value as oci.ErrInvalidOption.
var ErrInvalidOption = errdefs.ErrInvalidOption

// Option configures Listen. Invalid options make Listen fail; none are
// ignored.
type Option func(*options) error

type options struct {
	addr        string
	dir         string
	allowRemote bool
	logger      *slog.Logger
}

// WithAddr listens on addr, host:port: a loopback IP or "localhost" unless
// WithAllowRemote. Port 0 picks a free port (Server.Addr says which).
func WithAddr(addr string) Option {
	return func(o *options) error {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return errdefs.InvalidOption("WithAddr: %q: want host:port (%v)", addr, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return errdefs.InvalidOption("WithAddr: %q: want a port number from 0 to 65535", addr)
		}
		o.addr = addr
		return nil
	}
}

// WithDir keeps the blobs as files in dir (dir/sha256/<hex>), made if
// missing, where they outlive the server. Without it they are in memory.
func WithDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errdefs.InvalidOption("WithDir: empty path")
		}
		o.dir = dir
		return nil
	}
}

// WithAllowRemote lets WithAddr name an address that is not on loopback:
// anyone who reaches it can push, overwrite and pull, as the registry has
// no authentication.
func WithAllowRemote() Option {
	return func(o *options) error {
		o.allowRemote = true
		return nil
	}
}

// WithLogger logs each request the registry serves at debug level.
func WithLogger(l *slog.Logger) Option {
	return errdefs.NonNil("WithLogger", "logger", l, func(o *options) **slog.Logger { return &o.logger })
}

// Server is a registry listening on its address. Serve serves it; Close
// stops it.
type Server struct {
	ln  net.Listener
	srv *http.Server
	dir string
}

// Listen checks the options, makes the blob folder (WithDir) and binds the
// address, without serving yet: a program can say where the registry is
// (Addr) before it calls Serve.
func Listen(opts ...Option) (*Server, error) {
	o := &options{addr: DefaultAddr}
	var errs []error
	for _, opt := range opts {
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("serving a registry: %w", errors.Join(errs...))
	}
	host, _, _ := net.SplitHostPort(o.addr) // WithAddr checked it
	if !o.allowRemote && !isLoopback(host) {
		return nil, fmt.Errorf("serving a registry on %s: %w", o.addr, notLoopback(host))
	}
	blobs := ggcrregistry.NewInMemoryBlobHandler()
	if o.dir != "" {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return nil, fmt.Errorf("serving a registry: making its blob folder: %w", err)
		}
		blobs = ggcrregistry.NewDiskBlobHandler(o.dir)
	}
	logs := log.New(io.Discard, "", 0)
	if o.logger != nil {
		logs = slog.NewLogLogger(o.logger.Handler(), slog.LevelDebug)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("serving a registry on %s: %w", o.addr, err)
	}
	// "localhost" could resolve elsewhere: what was bound is what counts.
	if bound := ln.Addr().(*net.TCPAddr); !o.allowRemote && !bound.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("serving a registry on %s: %w", o.addr, notLoopback(bound.IP.String()))
	}
	h := ggcrregistry.New(
		ggcrregistry.WithBlobHandler(blobs),
		ggcrregistry.WithReferrersSupport(true),
		ggcrregistry.Logger(logs),
	)
	return &Server{
		ln:  ln,
		dir: o.dir,
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, ErrorLog: logs},
	}, nil
}

func notLoopback(host string) error {
	if host == "" {
		host = "every interface"
	}
	return errdefs.Kind(ErrNotLoopback, "%s is not a loopback address, and the registry has no authentication: anyone who reaches it could push and pull (allow it with WithAllowRemote)", host)
}

// isLoopback reports whether host is a loopback IP or "localhost".
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the address the server listens on, host:port, the port the one
// bound (for WithAddr's port 0). oci://Addr/REPOSITORY:TAG reaches it.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Dir is the folder that holds the blobs (WithDir), or "" when they are in
// memory.
func (s *Server) Dir() string { return s.dir }

// Serve serves the registry until ctx is done, then stops accepting
// connections, waits up to ShutdownGrace for the requests in flight, closes
// what is left and returns nil. It returns an error only if serving failed;
// after Close it returns nil at once.
func (s *Server) Serve(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serving a registry on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(grace); err != nil {
		s.srv.Close() // requests still running after the grace: cut them
	}
	<-served
	return nil
}

// Close stops the server at once, closing every connection.
func (s *Server) Close() error {
	err := s.srv.Close()
	if lerr := s.ln.Close(); lerr != nil && !errors.Is(lerr, net.ErrClosed) && err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("stopping the registry on %s: %w", s.Addr(), err)
	}
	return nil
}
