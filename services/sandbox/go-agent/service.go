// The AgentService: filesystem, processes, output streams and tunnels of one sandbox. It never
// logs requests: they carry process environments, which hold secret values.
package main

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type agentOptions struct {
	version          string
	root             string
	outputLimit      int64
	totalOutputLimit int64
	keepAlive        time.Duration
	drainTimeout     time.Duration
	maxReadBytes     int64
	maxMessageBytes  int
	oomScoreAdj      *int
	rlimitAs         int64
	rlimitFsize      int64
	// cgroupRoot: where memory and CPU come from the agent's own cgroup (a container's), the
	// filesystem root holding /proc and /sys; empty to sum the process tree instead.
	cgroupRoot string
}

// streamMessageBytes is the largest data message of an output stream.
const streamMessageBytes = 1 << 20

type agent struct {
	opts      agentOptions
	started   time.Time
	fs        *filesystem
	processes *processManager
}

func newAgent(opts agentOptions) *agent {
	return &agent{
		opts:    opts,
		started: time.Now(),
		fs:      &filesystem{root: opts.root, maxReadBytes: opts.maxReadBytes, maxFileBytes: opts.rlimitFsize},
		processes: newProcessManager(processOptions{
			root: opts.root, outputLimit: opts.outputLimit, totalOutputLimit: opts.totalOutputLimit,
			drainTimeout: opts.drainTimeout, oomScoreAdj: opts.oomScoreAdj, rlimitAs: opts.rlimitAs, rlimitFsize: opts.rlimitFsize,
		}),
	}
}

func fileInfoResponse(info fileInfo, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var e encoder
	e.message(1, info.encode())
	return e.b, nil
}

func exitMessage(x *exitInfo) []byte {
	var e encoder
	e.int(1, int64(x.code))
	if x.signal != 0 {
		e.optionalInt(2, int64(x.signal))
	}
	e.message(3, timestampMessage(x.end))
	return e.b
}

func (a *agent) methods() map[string]handler {
	return map[string]handler{
		"Health": unary(func(context.Context, request) ([]byte, error) {
			var e encoder
			e.string(1, a.opts.version)
			e.message(2, durationMessage(time.Since(a.started)))
			return e.b, nil
		}),
		"Stat": unary(func(_ context.Context, r request) ([]byte, error) {
			return fileInfoResponse(a.fs.stat(r.str(1)))
		}),
		"ListDirectory": unary(func(_ context.Context, r request) ([]byte, error) {
			entries, err := a.fs.listDirectory(r.str(1))
			if err != nil {
				return nil, err
			}
			var e encoder
			for _, info := range entries {
				e.message(1, info.encode())
			}
			return e.b, nil
		}),
		"MakeDirectory": unary(func(_ context.Context, r request) ([]byte, error) {
			return fileInfoResponse(a.fs.makeDirectory(r.str(1), r.bool(2), r.bool(3)))
		}),
		"WriteFile": unary(func(_ context.Context, r request) ([]byte, error) {
			content := r.bytes(2)
			if a.fs.maxFileBytes > 0 && int64(len(content)) > a.fs.maxFileBytes {
				return nil, errorf(codeResourceExhausted, "%s: larger than the sandbox's file size limit of %d bytes", r.str(1), a.fs.maxFileBytes)
			}
			return fileInfoResponse(a.fs.writeFile(r.str(1), bytesSource(content), r.bool(3), r.bool(4), optionalMode(r, 5)))
		}),
		"WriteFileStream": a.writeFileStream,
		"ReadFile": unary(func(_ context.Context, r request) ([]byte, error) {
			content, eof, info, err := a.fs.readFile(r.str(1), r.int64(2), r.int64(3))
			if err != nil {
				return nil, err
			}
			var e encoder
			e.bytes(1, content)
			e.bool(2, eof)
			if info != nil {
				e.message(3, info.encode())
			}
			return e.b, nil
		}),
		"Remove": unary(func(_ context.Context, r request) ([]byte, error) {
			return nil, a.fs.remove(r.str(1), r.bool(2))
		}),
		"Move": unary(func(_ context.Context, r request) ([]byte, error) {
			return fileInfoResponse(a.fs.move(r.str(1), r.str(2), r.bool(3), r.bool(4)))
		}),
		"StartProcess": unary(func(_ context.Context, r request) ([]byte, error) {
			env, err := r.stringMap(5)
			if err != nil {
				return nil, errorf(codeInvalidArgument, "environment: malformed")
			}
			p, err := a.processes.start(startRequest{processID: r.str(1), command: r.str(2), args: r.strings(3), cwd: r.str(4), env: env})
			if err != nil {
				return nil, err
			}
			var e encoder
			e.int(1, int64(p.pid))
			return e.b, nil
		}),
		"SignalProcess": unary(func(_ context.Context, r request) ([]byte, error) {
			return nil, a.processes.signal(r.str(1), r.int32(2))
		}),
		"WaitProcess": waitingUnary(func(ctx context.Context, r request) ([]byte, error) {
			p, err := a.processes.wait(ctx, r.str(1))
			if err != nil {
				return nil, err
			}
			for r.bool(2) {
				_, _, sealed, changed := p.log.state()
				if sealed {
					break
				}
				select {
				case <-changed:
				case <-ctx.Done():
					return nil, asRPCError(ctx, ctx.Err())
				}
			}
			var e encoder
			e.message(1, exitMessage(p.exit))
			e.bool(2, p.log.isSealed())
			return e.b, nil
		}),
		"GetProcess": unary(func(_ context.Context, r request) ([]byte, error) {
			p, err := a.processes.get(r.str(1))
			if err != nil {
				return nil, err
			}
			x := p.exited()
			var e encoder
			e.bool(1, x == nil)
			e.int(2, int64(p.pid))
			if x != nil {
				e.message(3, exitMessage(x))
			}
			return e.b, nil
		}),
		"ReadOutput": unary(func(_ context.Context, r request) ([]byte, error) {
			p, err := a.processes.get(r.str(1))
			if err != nil {
				return nil, err
			}
			which := streamStdout
			switch r.int32(2) {
			case streamStderr:
				which = streamStderr
			case streamCombined:
				which = streamCombined
			}
			data, dropped := p.log.collect(which)
			var e encoder
			e.bytes(1, data)
			e.int(2, dropped)
			return e.b, nil
		}),
		"ReadOutputFrames": unary(func(_ context.Context, r request) ([]byte, error) {
			p, err := a.processes.get(r.str(1))
			if err != nil {
				return nil, err
			}
			start, _, _, _ := p.log.state()
			var e encoder
			for _, c := range p.log.read(start, 1<<62) {
				var f encoder
				f.uint(1, uint64(c.stream))
				f.bytes(2, c.data)
				f.int(3, c.offset)
				e.message(1, f.b)
			}
			e.int(2, start)
			return e.b, nil
		}),
		"ReadUsage": unary(func(context.Context, request) ([]byte, error) {
			return readUsage(a.opts.root, a.opts.cgroupRoot)
		}),
		"StreamOutput": a.streamOutput,
		"Tunnel":       a.tunnel,
	}
}

func optionalMode(r request, n int) *uint32 {
	if !r.has(n) {
		return nil
	}
	v := r.uint32(n)
	return &v
}

func (a *agent) writeFileStream(s *stream) error {
	first, err := s.recvRequest()
	if err == io.EOF {
		return errorf(codeInvalidArgument, "the first message must have a header")
	}
	if err != nil {
		return err
	}
	header, ok, err := first.message(1)
	if err != nil || !ok {
		return errorf(codeInvalidArgument, "the first message must have a header")
	}
	fill := func(file *os.File, display string) error {
		var total int64
		write := func(b []byte) error {
			total += int64(len(b))
			if a.fs.maxFileBytes > 0 && total > a.fs.maxFileBytes {
				return errorf(codeResourceExhausted, "%s: larger than the sandbox's file size limit of %d bytes", display, a.fs.maxFileBytes)
			}
			done := blocking()
			_, err := file.Write(b)
			done()
			return err
		}
		if err := write(header.bytes(2)); err != nil {
			return err
		}
		if err := write(first.bytes(2)); err != nil {
			return err
		}
		for {
			next, err := s.recvRequest()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if next.has(1) {
				return errorf(codeInvalidArgument, "only the first message may have a header")
			}
			if err := write(next.bytes(2)); err != nil {
				return err
			}
		}
	}
	out, err := fileInfoResponse(a.fs.writeFile(header.str(1), fill, header.bool(3), header.bool(4), optionalMode(header, 5)))
	if err != nil {
		return err
	}
	return s.send(out)
}

func chunkMessage(stream int, data []byte, offset, dropped int64, keepAlive, end bool) []byte {
	var c encoder
	c.uint(1, uint64(stream))
	c.bytes(2, data)
	c.int(3, offset)
	c.int(4, dropped)
	c.bool(5, keepAlive)
	c.bool(6, end)
	var e encoder
	e.message(1, c.b)
	return e.b
}

func (a *agent) streamOutput(s *stream) error {
	r, err := s.recvRequest()
	if err != nil {
		return errorf(codeInvalidArgument, "the request has no message")
	}
	startOffset, skipReplay := r.int64(2), r.bool(3)
	if skipReplay && startOffset != 0 {
		return errorf(codeInvalidArgument, "skip_replay cannot be combined with a start_offset")
	}
	if startOffset < 0 {
		return errorf(codeInvalidArgument, "start_offset: must not be negative")
	}
	p, err := a.processes.get(r.str(1))
	if err != nil {
		return err
	}
	log := p.log
	start, end, _, _ := log.state()
	if startOffset > end {
		return errorf(codeOutOfRange, "start_offset: %d is beyond the %d bytes written so far", startOffset, end)
	}
	offset := startOffset
	if skipReplay {
		offset = end
	}
	var dropped int64
	if offset < start {
		dropped = start - offset
		offset = start
	}
	for {
		if s.ctx.Err() != nil {
			return nil
		}
		start, end, sealed, changed := log.state()
		if offset < start {
			// A reader slower than the process fell behind the retention window mid-stream.
			return errorf(codeAborted, "output from offset %d was discarded before it could be sent; resume from offset %d", offset, offset)
		}
		chunks := log.read(offset, streamMessageBytes)
		if len(chunks) > 0 {
			for i := 0; i < len(chunks); {
				first := chunks[i]
				j, size := i+1, len(first.data)
				for j < len(chunks) && chunks[j].stream == first.stream && size < streamMessageBytes {
					size += len(chunks[j].data)
					j++
				}
				data := first.data
				if j-i > 1 {
					data = make([]byte, 0, size)
					for _, c := range chunks[i:j] {
						data = append(data, c.data...)
					}
				}
				if err := s.send(chunkMessage(first.stream, data, first.offset, dropped, false, false)); err != nil {
					return err
				}
				dropped = 0
				offset = first.offset + int64(size)
				i = j
			}
			continue
		}
		if sealed && offset >= end {
			return s.send(chunkMessage(0, nil, offset, dropped, false, true))
		}
		timer := time.NewTimer(a.opts.keepAlive)
		select {
		case <-changed:
			timer.Stop()
		case <-s.ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
			if err := s.send(chunkMessage(0, nil, offset, dropped, true, false)); err != nil {
				return err
			}
			dropped = 0
		}
	}
}

func (a *agent) tunnel(s *stream) error {
	first, err := s.recvRequest()
	if err != nil && err != io.EOF {
		return err
	}
	open, ok, _ := first.message(1)
	if err == io.EOF || !ok {
		return errorf(codeInvalidArgument, "the first tunnel message must be open")
	}
	port := open.int32(1)
	if port < 1 || port > 65535 {
		return errorf(codeInvalidArgument, "open.port: must be between 1 and 65535")
	}
	var d net.Dialer
	conn, err := d.DialContext(s.ctx, "tcp", "127.0.0.1:"+strconv.Itoa(int(port)))
	if err != nil {
		return errorf(codeUnavailable, "nothing accepts connections on port %d: %s", port, errnoText(err))
	}
	tcp := conn.(*net.TCPConn)
	defer tcp.Close()
	_ = tcp.SetNoDelay(true)
	var opened encoder
	opened.message(1, nil)
	if err := s.send(opened.b); err != nil {
		return err
	}
	failed := make(chan error, 1)
	// Client to program; the end of the request stream half-closes the connection.
	go func() {
		for {
			msg, err := s.recvRequest()
			if err == io.EOF {
				_ = tcp.CloseWrite()
				return
			}
			if err != nil {
				failed <- err
				_ = tcp.SetLinger(0)
				tcp.Close()
				return
			}
			if !msg.has(2) {
				failed <- errorf(codeInvalidArgument, "after open, tunnel messages must carry data")
				tcp.Close()
				return
			}
			if _, err := tcp.Write(msg.bytes(2)); err != nil {
				failed <- errorf(codeUnavailable, "connection failed: %s", errnoText(err))
				tcp.Close()
				return
			}
		}
	}()
	go func() {
		<-s.ctx.Done()
		// A cancelled call resets the connection.
		_ = tcp.SetLinger(0)
		tcp.Close()
	}()
	buf := make([]byte, 256<<10)
	for {
		n, err := tcp.Read(buf)
		if n > 0 {
			var e encoder
			e.tag(2, wireBytes)
			e.b = append(e.b, encodeLen(n)...)
			e.b = append(e.b, buf[:n]...)
			if err := s.send(e.b); err != nil {
				return err
			}
		}
		if err != nil {
			select {
			case f := <-failed:
				return f
			default:
			}
			if err == io.EOF || s.ctx.Err() != nil {
				return nil
			}
			return errorf(codeUnavailable, "connection failed: %s", errnoText(err))
		}
	}
}

func encodeLen(n int) []byte {
	var e encoder
	e.b = appendUvarint(e.b, uint64(n))
	return e.b
}

func errnoText(err error) string {
	switch errnoOf(err) {
	case syscall.ECONNREFUSED:
		return "ECONNREFUSED"
	case syscall.ECONNRESET:
		return "ECONNRESET"
	case syscall.EPIPE:
		return "EPIPE"
	case 0:
		return "error"
	default:
		return strings.ToUpper(errnoOf(err).Error())
	}
}
