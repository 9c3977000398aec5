package sources_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fluxpack/fluxpack/sources"
)

// sshGitServer serves the bare repositories under root over SSH on
// loopback, as a Git host does (git upload-pack behind an exec request),
// to the client key given; it returns the server's address and host key.
func sshGitServer(t *testing.T, root string, client ssh.PublicKey) (string, ssh.PublicKey) {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	host, err := ssh.NewSignerFromKey(hostPriv)
	require.NoError(t, err)
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(k.Marshal(), client.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	cfg.AddHostKey(host)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serveSSH(conn, cfg, root)
		}
	}()
	return l.Addr().String(), host.PublicKey()
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, root string) {
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range requests {
				if req.Type != "exec" || len(req.Payload) < 4 {
					_ = req.Reply(false, nil)
					continue
				}
				command := string(req.Payload[4:])
				repo, ok := strings.CutPrefix(command, "git-upload-pack ")
				if !ok {
					_ = req.Reply(false, nil)
					return
				}
				_ = req.Reply(true, nil)
				cmd := exec.Command("git", "upload-pack", filepath.Join(root, strings.Trim(repo, "'/")))
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				status := uint32(0)
				if err := cmd.Run(); err != nil {
					status = 1
				}
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
				return
			}
		}()
	}
}

// A GitRepository over SSH, with an identity and known hosts as its
// secretRef would give them.
func TestGitRepositoryOverSSH(t *testing.T) {
	root := t.TempDir()
	commits := platformRepo(t, root)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	clientPub, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "")
	require.NoError(t, err)
	key := pem.EncodeToMemory(block)
	addr, hostKey := sshGitServer(t, root, clientPub)
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	require.NoError(t, os.WriteFile(knownHosts, []byte(knownhosts.Line([]string{addr}, hostKey)+"\n"), 0o600))
	url := "ssh://git@" + addr + "/platform.git"

	f, err := sources.New(t.TempDir(), sources.WithGitSSHKey(key, knownHosts))
	require.NoError(t, err)
	a, err := f.GitRepository(t.Context(), gitRepository(url, &sourcev1.GitRepositoryRef{Tag: "v1.1.0"}))
	require.NoError(t, err)
	assert.Equal(t, "v1.1.0@sha1:"+commits["v1.1.0"], a.Revision)
	assert.FileExists(t, filepath.Join(a.Dir, "apps", "web.yaml"))

	t.Run("a host not in known_hosts is refused", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "known_hosts")
		_, otherKey, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		s, err := ssh.NewSignerFromKey(otherKey)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(other, []byte(knownhosts.Line([]string{addr}, s.PublicKey())+"\n"), 0o600))
		f, err := sources.New(t.TempDir(), sources.WithGitSSHKey(key, other))
		require.NoError(t, err)
		_, err = f.GitRepository(t.Context(), gitRepository(url, &sourcev1.GitRepositoryRef{Tag: "v1.1.0"}))
		require.Error(t, err)
		assert.False(t, sources.IsNotFound(err), "%v", err)
		assert.Contains(t, err.Error(), "key mismatch")
	})

	t.Run("a bad key is refused when given", func(t *testing.T) {
		_, err := sources.New(t.TempDir(), sources.WithGitSSHKey([]byte("not a key"), ""))
		require.ErrorIs(t, err, sources.ErrInvalidOption)
	})
}
