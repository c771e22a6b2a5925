// The gRPC side of the agent's HTTP/2 server: length-prefixed protobuf messages in the bodies,
// the status in the trailers. The sandbox service's client (runtime/agent-client.ts) speaks
// plain gRPC; unary, client, server and bidirectional streams all run on one handler shape.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The gRPC status codes the agent uses.
const (
	codeOK                 = 0
	codeCanceled           = 1
	codeUnknown            = 2
	codeInvalidArgument    = 3
	codeDeadlineExceeded   = 4
	codeNotFound           = 5
	codeAlreadyExists      = 6
	codePermissionDenied   = 7
	codeResourceExhausted  = 8
	codeFailedPrecondition = 9
	codeAborted            = 10
	codeOutOfRange         = 11
	codeUnimplemented      = 12
	codeInternal           = 13
	codeUnavailable        = 14
)

// rpcError is an error with a gRPC code; its message reaches the client.
type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{code: code, msg: fmt.Sprintf(format, args...)}
}

// asRPCError gives every error a code; an error without one is INTERNAL, with a message that
// never quotes anything a request carried.
func asRPCError(ctx context.Context, err error) *rpcError {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	if ctx != nil && ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorf(codeDeadlineExceeded, "the call's deadline passed")
		}
		return errorf(codeCanceled, "the call was cancelled")
	}
	return errorf(codeInternal, "unexpected error")
}

// stream is one call: messages in from the request body, out on the response.
type stream struct {
	ctx      context.Context
	body     io.Reader
	w        http.ResponseWriter
	maxBytes int
	sendMu   sync.Mutex
	sent     bool
	prefix   [5]byte
}

// recv reads the next request message; io.EOF when the client ended its side.
func (s *stream) recv() ([]byte, error) {
	if _, err := io.ReadFull(s.body, s.prefix[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		if s.ctx.Err() != nil {
			return nil, asRPCError(s.ctx, s.ctx.Err())
		}
		return nil, errorf(codeCanceled, "the request stream broke: %v", err)
	}
	if s.prefix[0]&1 != 0 {
		return nil, errorf(codeInternal, "compressed messages are not accepted")
	}
	n := binary.BigEndian.Uint32(s.prefix[1:])
	if int64(n) > int64(s.maxBytes) {
		return nil, errorf(codeResourceExhausted, "message of %d bytes is larger than the limit of %d", n, s.maxBytes)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(s.body, msg); err != nil {
		return nil, errorf(codeCanceled, "the request stream broke: %v", err)
	}
	return msg, nil
}

// recvRequest reads and decodes the next message.
func (s *stream) recvRequest() (request, error) {
	b, err := s.recv()
	if err != nil {
		return nil, err
	}
	r, err := decodeRequest(b)
	if err != nil {
		return nil, errorf(codeInvalidArgument, "%v", err)
	}
	return r, nil
}

// send writes one response message and flushes it; safe from several goroutines.
func (s *stream) send(msg []byte) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if len(msg) > s.maxBytes {
		return errorf(codeResourceExhausted, "response of %d bytes is larger than the limit of %d", len(msg), s.maxBytes)
	}
	var prefix [5]byte
	binary.BigEndian.PutUint32(prefix[1:], uint32(len(msg)))
	s.sent = true
	if _, err := s.w.Write(prefix[:]); err != nil {
		return asRPCError(s.ctx, err)
	}
	if _, err := s.w.Write(msg); err != nil {
		return asRPCError(s.ctx, err)
	}
	s.w.(http.Flusher).Flush()
	return nil
}

type handler func(s *stream) error

// unary turns a function of one request into a handler; the function runs in a turn at
// blocking work (see threads.go).
func unary(fn func(ctx context.Context, r request) ([]byte, error)) handler {
	return waitingUnary(func(ctx context.Context, r request) ([]byte, error) {
		done := blocking()
		defer done()
		return fn(ctx, r)
	})
}

// waitingUnary is unary for a function that waits rather than works: it takes no turn, so
// that waits never hold up other calls.
func waitingUnary(fn func(ctx context.Context, r request) ([]byte, error)) handler {
	return func(s *stream) error {
		r, err := s.recvRequest()
		if err == io.EOF {
			return errorf(codeInvalidArgument, "the request has no message")
		}
		if err != nil {
			return err
		}
		out, err := fn(s.ctx, r)
		if err != nil {
			return err
		}
		return s.send(out)
	}
}

// grpcTimeout parses the grpc-timeout header: digits and a unit.
func grpcTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second, 'm': time.Millisecond, 'u': time.Microsecond, 'n': time.Nanosecond}[v[len(v)-1]]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// percentEncode encodes a grpc-message value.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '%' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

const servicePrefix = "/enginemanager.agent.v1.AgentService/"

// serveGRPC runs the method the request names.
func serveGRPC(w http.ResponseWriter, r *http.Request, methods map[string]handler, maxBytes int) {
	ctx := r.Context()
	if t, ok := grpcTimeout(r.Header.Get("grpc-timeout")); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	contentType := r.Header.Get("content-type")
	if !strings.HasPrefix(contentType, "application/grpc") {
		http.Error(w, "only gRPC is served here", http.StatusUnsupportedMediaType)
		return
	}
	w.Header().Set("content-type", contentType)
	s := &stream{ctx: ctx, body: r.Body, w: w, maxBytes: maxBytes}
	var err error
	h, ok := methods[strings.TrimPrefix(r.URL.Path, servicePrefix)]
	if !ok || !strings.HasPrefix(r.URL.Path, servicePrefix) {
		err = errorf(codeUnimplemented, "%s is not implemented", r.URL.Path)
	} else {
		err = h(s)
	}
	code, msg := codeOK, ""
	if err != nil {
		re := asRPCError(ctx, err)
		code, msg = re.code, re.msg
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	w.Header().Set(http.TrailerPrefix+"grpc-status", strconv.Itoa(code))
	if msg != "" {
		w.Header().Set(http.TrailerPrefix+"grpc-message", percentEncode(msg))
	}
}
