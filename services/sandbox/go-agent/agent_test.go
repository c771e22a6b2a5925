package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testAgent serves an agent on a unix socket over a temporary root, with a gRPC client.
type testAgent struct {
	t      *testing.T
	root   string
	client *http.Client
	agent  *agent
}

func startTestAgent(t *testing.T) *testAgent {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "agent.sock")
	listener, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	opts := config{Root: root, Version: "test", KeepAliveMs: 100, DrainTimeoutMs: 200}.options()
	a := newAgent(opts)
	server := newServer(a, "")
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(func() {
		a.processes.forward(9)
		server.Close()
		a.processes.close()
	})
	return &testAgent{t: t, root: root, client: unixClient(socket), agent: a}
}

// unixClient speaks HTTP/2 without TLS, as the runtime does, to the agent on `socket`.
func unixClient(socket string) *http.Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{
		Protocols: &protocols,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
}

func frame(msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// call runs a method with the given request messages; it returns the response messages and
// the status.
func (ta *testAgent) call(method string, messages ...[]byte) ([]request, int, string) {
	ta.t.Helper()
	var body bytes.Buffer
	for _, m := range messages {
		body.Write(frame(m))
	}
	req, _ := http.NewRequest(http.MethodPost, "http://agent"+servicePrefix+method, &body)
	req.Header.Set("content-type", "application/grpc+proto")
	req.Header.Set("te", "trailers")
	res, err := ta.client.Do(req)
	if err != nil {
		ta.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		ta.t.Fatal(err)
	}
	var out []request
	for len(data) >= 5 {
		n := binary.BigEndian.Uint32(data[1:5])
		r, err := decodeRequest(data[5 : 5+n])
		if err != nil {
			ta.t.Fatal(err)
		}
		out = append(out, r)
		data = data[5+n:]
	}
	code, _ := strconv.Atoi(res.Trailer.Get("grpc-status"))
	return out, code, res.Trailer.Get("grpc-message")
}

func (ta *testAgent) ok(method string, messages ...[]byte) request {
	ta.t.Helper()
	out, code, msg := ta.call(method, messages...)
	if code != codeOK || len(out) != 1 {
		ta.t.Fatalf("%s: code %d %q, %d messages", method, code, msg, len(out))
	}
	return out[0]
}

type msg struct{ e encoder }

func m() *msg                             { return &msg{} }
func (x *msg) s(n int, v string) *msg     { x.e.string(n, v); return x }
func (x *msg) i(n int, v int64) *msg      { x.e.int(n, v); return x }
func (x *msg) b(n int, v bool) *msg       { x.e.bool(n, v); return x }
func (x *msg) by(n int, v []byte) *msg    { x.e.bytes(n, v); return x }
func (x *msg) sub(n int, v []byte) *msg   { x.e.message(n, v); return x }
func (x *msg) kv(n int, k, v string) *msg { return x.sub(n, m().s(1, k).s(2, v).e.b) }
func (x *msg) done() []byte               { return x.e.b }

func TestHealthReportsVersion(t *testing.T) {
	ta := startTestAgent(t)
	r := ta.ok("Health", nil)
	if r.str(1) != "test" || !r.has(2) {
		t.Fatalf("health: %v", r)
	}
}

func TestUnknownMethodIsUnimplemented(t *testing.T) {
	ta := startTestAgent(t)
	_, code, _ := ta.call("Nope", nil)
	if code != codeUnimplemented {
		t.Fatalf("code %d", code)
	}
}

func TestWriteReadStatListMoveRemove(t *testing.T) {
	ta := startTestAgent(t)
	w := ta.ok("WriteFile", m().s(1, "dir/a.txt").by(2, []byte("hello")).b(3, true).done())
	info, _, _ := w.message(1)
	if info.str(1) != "/workspace/dir/a.txt" || info.int64(2) != 5 || info.str(5) != "0644" {
		t.Fatalf("file info %v", info)
	}
	_, code, _ := ta.call("WriteFile", m().s(1, "dir/a.txt").by(2, []byte("x")).done())
	if code != codeAlreadyExists {
		t.Fatalf("overwrite refused: code %d", code)
	}
	r := ta.ok("ReadFile", m().s(1, "/workspace/dir/a.txt").done())
	if string(r.bytes(1)) != "hello" || !r.bool(2) {
		t.Fatalf("read %q eof %v", r.bytes(1), r.bool(2))
	}
	r = ta.ok("ReadFile", m().s(1, "dir/a.txt").i(2, 1).i(3, 2).done())
	if string(r.bytes(1)) != "el" || r.bool(2) || r.has(3) {
		t.Fatalf("partial read %q", r.bytes(1))
	}
	list := ta.ok("ListDirectory", m().s(1, "dir").done())
	if len(list[1]) != 1 {
		t.Fatalf("list: %d entries", len(list[1]))
	}
	ta.ok("Move", m().s(1, "dir/a.txt").s(2, "other/b.txt").b(4, true).done())
	_, code, _ = ta.call("Stat", m().s(1, "dir/a.txt").done())
	if code != codeNotFound {
		t.Fatalf("moved source: code %d", code)
	}
	_, code, _ = ta.call("Remove", m().s(1, "other").done())
	if code != codeFailedPrecondition {
		t.Fatalf("non-recursive remove: code %d", code)
	}
	ta.ok("Remove", m().s(1, "other").b(2, true).done())
	if _, err := os.Stat(filepath.Join(ta.root, "workspace/other")); !os.IsNotExist(err) {
		t.Fatalf("not removed: %v", err)
	}
}

func TestPathRules(t *testing.T) {
	ta := startTestAgent(t)
	if err := os.Symlink("/etc", filepath.Join(ta.root, "workspace/out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../..", filepath.Join(ta.root, "workspace/up")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		code int
	}{
		{"../x", codeInvalidArgument},
		{"", codeInvalidArgument},
		{"up/x", codePermissionDenied},
		{"/usr/x", codePermissionDenied},
		{"/.aiem/x", codePermissionDenied},
	}
	for _, c := range cases {
		_, code, msg := ta.call("WriteFile", m().s(1, c.path).by(2, []byte("x")).b(3, true).done())
		if code != c.code {
			t.Errorf("%q: code %d (%s), want %d", c.path, code, msg, c.code)
		}
		if strings.Contains(msg, ta.root) {
			t.Errorf("%q: message names a host path: %s", c.path, msg)
		}
	}
	// An absolute link target starts at the sandbox root, not the host's.
	_, code, _ := ta.call("Stat", m().s(1, "out/passwd").done())
	if code != codeNotFound {
		t.Fatalf("link outside: code %d", code)
	}
}

func startProcess(ta *testAgent, id string, args ...string) int64 {
	ta.t.Helper()
	x := m().s(1, id).s(2, args[0])
	for _, a := range args[1:] {
		x.s(3, a)
	}
	return ta.ok("StartProcess", x.kv(5, "AIEM_TEST", "secret").done()).int64(1)
}

// Back-to-back writes to stdout and then stderr, with no pause between them, keep that order in
// the combined output: both pipes are often readable by the time the agent looks.
func TestCombinedOutputKeepsTheWriteOrder(t *testing.T) {
	ta := startTestAgent(t)
	for i := range 20 {
		id := "o" + strconv.Itoa(i)
		startProcess(ta, id, "/bin/sh", "-c", `echo out; echo err >&2`)
		ta.ok("WaitProcess", m().s(1, id).b(2, true).done())
		combined := ta.ok("ReadOutput", m().s(1, id).i(2, streamCombined).done())
		if string(combined.bytes(1)) != "out\nerr\n" {
			t.Fatalf("run %d: combined %q", i, combined.bytes(1))
		}
	}
}

func TestProcessOutputInOrderAndExit(t *testing.T) {
	ta := startTestAgent(t)
	startProcess(ta, "p1", "/bin/sh", "-c", `printf one; sleep 0.05; printf two >&2; sleep 0.05; printf "$AIEM_TEST"; exit 3`)
	w := ta.ok("WaitProcess", m().s(1, "p1").b(2, true).done())
	exit, _, _ := w.message(1)
	if exit.int32(1) != 3 || exit.has(2) || !w.bool(2) {
		t.Fatalf("exit %v complete %v", exit, w.bool(2))
	}
	combined := ta.ok("ReadOutput", m().s(1, "p1").i(2, streamCombined).done())
	if string(combined.bytes(1)) != "onetwosecret" {
		t.Fatalf("combined %q", combined.bytes(1))
	}
	stderr := ta.ok("ReadOutput", m().s(1, "p1").i(2, streamStderr).done())
	if string(stderr.bytes(1)) != "two" {
		t.Fatalf("stderr %q", stderr.bytes(1))
	}
	frames := ta.ok("ReadOutputFrames", m().s(1, "p1").done())
	var offsets []int64
	for _, f := range frames[1] {
		c, _ := decodeRequest(f.data)
		offsets = append(offsets, c.int64(3))
	}
	if len(offsets) != 3 || offsets[0] != 0 || offsets[1] != 3 || offsets[2] != 6 {
		t.Fatalf("frame offsets %v", offsets)
	}
}

func TestSignalExitCodesIncludeRealTimeSignals(t *testing.T) {
	ta := startTestAgent(t)
	startProcess(ta, "s", "/bin/sleep", "30")
	ta.ok("SignalProcess", m().s(1, "s").i(2, 40).done())
	w := ta.ok("WaitProcess", m().s(1, "s").done())
	exit, _, _ := w.message(1)
	if exit.int32(1) != 168 || exit.int32(2) != 40 {
		t.Fatalf("exit %d signal %d", exit.int32(1), exit.int32(2))
	}
	_, code, _ := ta.call("SignalProcess", m().s(1, "s").i(2, 9).done())
	if code != codeFailedPrecondition {
		t.Fatalf("signal after end: code %d", code)
	}
}

func TestStartErrors(t *testing.T) {
	ta := startTestAgent(t)
	for _, c := range []struct {
		cmd  string
		code int
	}{{"no-such-program", codeNotFound}, {"/etc/passwd", codePermissionDenied}, {"", codeInvalidArgument}} {
		_, code, _ := ta.call("StartProcess", m().s(1, "x-"+c.cmd).s(2, c.cmd).done())
		if code != c.code {
			t.Errorf("%q: code %d want %d", c.cmd, code, c.code)
		}
	}
	startProcess(ta, "dup", "/bin/true")
	_, code, _ := ta.call("StartProcess", m().s(1, "dup").s(2, "/bin/true").done())
	if code != codeAlreadyExists {
		t.Fatalf("duplicate: code %d", code)
	}
	_, code, _ = ta.call("GetProcess", m().s(1, "missing").done())
	if code != codeNotFound {
		t.Fatalf("missing: code %d", code)
	}
}

func TestOrphansAreReaped(t *testing.T) {
	ta := startTestAgent(t)
	startProcess(ta, "o", "/bin/sh", "-c", "sleep 0.1 & echo $!")
	ta.ok("WaitProcess", m().s(1, "o").b(2, true).done())
	out := ta.ok("ReadOutput", m().s(1, "o").done())
	pid := strings.TrimSpace(string(out.bytes(1)))
	// The orphan is the agent's to reap (subreaper in a sandbox; here its parent shell's
	// parent is the test): it must not stay a zombie of the agent's table forever.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat("/proc/" + pid); os.IsNotExist(err) {
			return
		}
		stat, _ := os.ReadFile("/proc/" + pid + "/stat")
		if p, ok := parseProcStat(string(stat)); ok && p.ppid != os.Getpid() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("orphan %s still there", pid)
}

func TestStreamOutputResumesAndEnds(t *testing.T) {
	ta := startTestAgent(t)
	startProcess(ta, "st", "/bin/sh", "-c", "printf abc; sleep 0.3; printf def")
	// Resuming needs the offset to have been written: wait for the first bytes.
	for deadline := time.Now().Add(5 * time.Second); len(ta.ok("ReadOutput", m().s(1, "st").done()).bytes(1)) < 3; {
		if time.Now().After(deadline) {
			t.Fatal("no output")
		}
		time.Sleep(5 * time.Millisecond)
	}
	out, code, msg := ta.call("StreamOutput", m().s(1, "st").i(2, 2).done())
	if code != codeOK {
		t.Fatalf("code %d %s", code, msg)
	}
	var data []byte
	ended, keepAlive := false, false
	for _, r := range out {
		c, _, _ := r.message(1)
		data = append(data, c.bytes(2)...)
		ended = ended || c.bool(6)
		keepAlive = keepAlive || c.bool(5)
	}
	if string(data) != "cdef" || !ended || !keepAlive {
		t.Fatalf("data %q end %v keep-alive %v", data, ended, keepAlive)
	}
	_, code, _ = ta.call("StreamOutput", m().s(1, "st").i(2, 100).done())
	if code != codeOutOfRange {
		t.Fatalf("beyond: code %d", code)
	}
}

func TestTunnelCarriesBytesBothWays(t *testing.T) {
	ta := startTestAgent(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		b, _ := io.ReadAll(c)
		_, _ = c.Write(bytes.ToUpper(b))
		c.Close()
	}()
	port := l.Addr().(*net.TCPAddr).Port
	out, code, msg := ta.call("Tunnel", m().sub(1, m().i(1, int64(port)).done()).done(), m().by(2, []byte("ping")).done())
	if code != codeOK {
		t.Fatalf("code %d %s", code, msg)
	}
	if len(out) < 2 || !out[0].has(1) || string(out[1].bytes(2)) != "PING" {
		t.Fatalf("tunnel answered %v", out)
	}
	_, code, _ = ta.call("Tunnel", m().sub(1, m().i(1, 70000).done()).done())
	if code != codeInvalidArgument {
		t.Fatalf("bad port: code %d", code)
	}
}

func TestFileRoutes(t *testing.T) {
	ta := startTestAgent(t)
	body := strings.NewReader("raw bytes")
	req, _ := http.NewRequest(http.MethodPut, "http://agent"+filesPrefix+"write?path=r.bin&create_parents=1", io.NopCloser(body))
	req.Trailer = http.Header{completeTrailer: nil}
	req.ContentLength = -1
	req.Trailer.Set(completeTrailer, "1")
	res, err := ta.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get(fileInfoHeader) == "" {
		t.Fatalf("write: %d %v", res.StatusCode, res.Header)
	}
	res, err = ta.client.Get("http://agent" + filesPrefix + "read?path=r.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != "raw bytes" {
		t.Fatalf("read %q", got)
	}
	if err := os.WriteFile(filepath.Join(ta.root, "secret"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ta.root, ".aiem"), 0o700); err != nil {
		t.Fatal(err)
	}
	res, err = ta.client.Get("http://agent" + filesPrefix + "read?path=/.aiem/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 || res.Header.Get(errorCodeHeader) != strconv.Itoa(codePermissionDenied) {
		t.Fatalf("agent dir: %d %v", res.StatusCode, res.Header)
	}
}

func TestReadUsageCountsTheAgent(t *testing.T) {
	ta := startTestAgent(t)
	r := ta.ok("ReadUsage", nil)
	if r.int64(1) <= 0 || r.int64(3) <= 0 {
		t.Fatalf("usage %v", r)
	}
}

// An agent serving TCP (a sandbox's pod) answers only requests carrying its token.
func TestTokenGuardsEveryRequest(t *testing.T) {
	a := newAgent(config{Root: t.TempDir(), Version: "test"}.options())
	server := newServer(a, "s3cret")
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(func() {
		server.Close()
		a.processes.close()
	})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	status := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+listener.Addr().String()+filesPrefix+"probe", nil)
		if token != "" {
			req.Header.Set("aiem-agent-token", token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := status(""); got != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", got)
	}
	if got := status("wrong"); got != http.StatusUnauthorized {
		t.Fatalf("with another token: %d, want 401", got)
	}
	if got := status("s3cret"); got != http.StatusNoContent {
		t.Fatalf("with the token: %d, want 204", got)
	}
}
